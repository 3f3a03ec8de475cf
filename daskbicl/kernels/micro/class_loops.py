"""The loops of the cell-class method, in plain Python over numpy arrays (see :mod:`~.class_traces`).

One source, two ways to run it: :mod:`~daskbicl.kernels.micro.class_kernels`
compiles these functions with numba (``cache=True``, ``nogil=True``) for
large inputs; :func:`~daskbicl.kernels.micro.class_traces.run_kernel` calls
them as they are for small ones (no numba imported, nothing compiled).  The
values are the same bit for bit: the same integer counts and floating-point
operations in the same order (numba compiles without ``fastmath``), as long
as no integer leaves int64 (counts below 2**62); the tests check it on many
random inputs.  Only numpy operations on scalars and arrays that numba
compiles alike are used here; unsigned 64-bit products wrap (the callers
silence numpy's overflow warning, as the compiled loops never warn).

Signatures and classes are rows of 64-bit words (bit e: bicluster e).  A
*trace* of a signature on a class S is the signature restricted to S,
re-coded on |S| ≤ 63 local bits (bit j: the j-th smallest element of S).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ENTRIES", "bcubed_of_classes", "classes_of_pairs", "pair_weights", "trace_pairs", "trailing_zeros"]

#: The kernels a caller runs (compiled by :mod:`~daskbicl.kernels.micro.class_kernels`).
ENTRIES = ("classes_of_pairs", "pair_weights", "bcubed_of_classes", "trace_pairs")

#: Classes of at most this many elements count their traces in a dense table.
_DENSE_BITS = 16

#: Largest class summed by the subset transform (2^d entries).
TRANSFORM_BITS = 20

#: Largest class whose subsets are counted from the element bit sets.
BITSET_BITS = 16

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(key.shape[0]):
        h = (h ^ key[w]) * _M1
        h = (h ^ (h >> np.uint64(29))) * _M2
    return h ^ (h >> np.uint64(32))


def _find(keys, used, key, mask):
    """Slot of ``key`` in the open-addressing table (a free slot if absent)."""
    h = np.int64(_hash(key) & np.uint64(mask))
    while used[h]:
        same = True
        for w in range(key.shape[0]):
            if keys[h, w] != key[w]:
                same = False
                break
        if same:
            return h
        h = (h + 1) & mask
    return h


def _grow(keys, used, vals):
    cap = 2 * keys.shape[0]
    nk = np.zeros((cap, keys.shape[1]), np.uint64)
    nu = np.zeros(cap, np.bool_)
    nv = np.zeros(cap, np.int64)
    for s in range(keys.shape[0]):
        if used[s]:
            h = _find(nk, nu, keys[s], cap - 1)
            nu[h] = True
            for w in range(keys.shape[1]):  # plain loops: a row assignment compiles numpy's broadcasting
                nk[h, w] = keys[s, w]
            nv[h] = vals[s]
    return nk, nu, nv


def classes_of_pairs(rsig, rcnt, csig, ccnt, limit):
    """Distinct non-empty R ∩ C over every pair of signatures, with summed cell counts.

    Stops when more than ``limit`` distinct classes are found (returns
    ``ok = False``; the arrays are then empty).
    """
    n_words = rsig.shape[1]
    cap = 1024
    keys = np.zeros((cap, n_words), np.uint64)
    used = np.zeros(cap, np.bool_)
    vals = np.zeros(cap, np.int64)
    n = 0
    tmp = np.zeros(n_words, np.uint64)
    for i in range(rsig.shape[0]):
        for j in range(csig.shape[0]):
            nz = False
            for w in range(n_words):
                tmp[w] = rsig[i, w] & csig[j, w]
                if tmp[w] != 0:
                    nz = True
            if not nz:
                continue
            h = _find(keys, used, tmp, cap - 1)
            if not used[h]:
                used[h] = True
                for w in range(n_words):
                    keys[h, w] = tmp[w]
                n += 1
            vals[h] += rcnt[i] * ccnt[j]
            if n > limit:
                return np.zeros((0, n_words), np.uint64), np.zeros(0, np.int64), False
            if 2 * n > cap:
                keys, used, vals = _grow(keys, used, vals)
                cap = keys.shape[0]
    out_k = np.zeros((n, n_words), np.uint64)
    out_v = np.zeros(n, np.int64)
    m = 0
    for s in range(cap):
        if used[s]:
            for w in range(n_words):
                out_k[m, w] = keys[s, w]
            out_v[m] = vals[s]
            m += 1
    return out_k, out_v, True


def _argsort(vals, n):
    """Stable ascending order of ``vals[:n]`` (bottom-up merge sort in plain loops).

    The same order as ``np.argsort(vals[:n], kind="mergesort")``, which numba
    compiles several times slower.
    """
    idx = np.empty(n, np.int64)
    tmp = np.empty(n, np.int64)
    for t in range(n):
        idx[t] = t
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            for k in range(lo, hi):
                if i < mid and (j >= hi or vals[idx[j]] >= vals[idx[i]]):
                    tmp[k] = idx[i]
                    i += 1
                else:
                    tmp[k] = idx[j]
                    j += 1
        idx, tmp = tmp, idx
        width *= 2
    return idx


def _elements(key):
    d = 0
    for w in range(key.shape[0]):
        x = key[w]
        while x:
            x &= x - np.uint64(1)
            d += 1
    out = np.zeros(d, np.int64)
    m = 0
    for w in range(key.shape[0]):
        for b in range(64):
            if (key[w] >> np.uint64(b)) & np.uint64(1):
                out[m] = 64 * w + b
                m += 1
    return out


def _traces(elems, eptr, esig, cnt, code, touched, dense):
    """Distinct non-empty traces of the signatures on the class ``elems``, with their counts.

    ``eptr``/``esig`` list the signatures containing each element, so only
    the signatures meeting the class are read; ``code`` (zeros, one per
    signature), ``touched`` and ``dense`` (zeros, 2^16) are work buffers,
    left as found.
    """
    m = 0
    for j in range(elems.shape[0]):
        e = elems[j]
        for t in range(eptr[e], eptr[e + 1]):
            i = esig[t]
            if code[i] == 0:
                touched[m] = i
                m += 1
            code[i] |= 1 << j
    if elems.shape[0] <= _DENSE_BITS:  # counts by code in a table of 2^d entries: no sort
        out_c = np.zeros(m, np.int64)
        k = 0
        for t in range(m):
            i = touched[t]
            c = code[i]
            if dense[c] == 0:
                out_c[k] = c
                k += 1
            dense[c] += cnt[i]
            code[i] = 0
        out_n = np.zeros(k, np.int64)
        for t in range(k):
            out_n[t] = dense[out_c[t]]
            dense[out_c[t]] = 0
        return out_c[:k], out_n
    vals = np.zeros(m, np.int64)
    for t in range(m):
        vals[t] = code[touched[t]]
    order = _argsort(vals, m)
    out_c = np.zeros(m, np.int64)
    out_n = np.zeros(m, np.int64)
    k = -1
    prev = -1
    for t in range(m):
        i = touched[order[t]]
        if vals[order[t]] != prev:
            k += 1
            prev = vals[order[t]]
            out_c[k] = prev
        out_n[k] += cnt[i]
    for t in range(m):
        code[touched[t]] = 0
    return out_c[: k + 1], out_n[: k + 1]


def pair_weights(key, rptr, rsig, rcnt, cptr, csig, ccnt):
    """(elements of S, distinct Q = a ∩ b ≠ ∅ as local bits, cells y with S ∩ S(y) = Q)."""
    elems = _elements(key)
    dense = np.zeros(1 << _DENSE_BITS, np.int64)
    ra, na = _traces(elems, rptr, rsig, rcnt, np.zeros(len(rcnt), np.int64), np.zeros(len(rcnt), np.int64), dense)
    cb, nb = _traces(elems, cptr, csig, ccnt, np.zeros(len(ccnt), np.int64), np.zeros(len(ccnt), np.int64), dense)
    qs = np.zeros(len(ra) * len(cb), np.int64)
    ws = np.zeros(len(ra) * len(cb), np.int64)
    m = 0
    for x in range(len(ra)):
        for y in range(len(cb)):
            q = ra[x] & cb[y]
            if q:
                qs[m] = q
                ws[m] = na[x] * nb[y]
                m += 1
    order = _argsort(qs, m)
    out_q = np.zeros(m, np.int64)
    out_w = np.zeros(m, np.int64)
    k = -1
    prev = 0
    for t in range(m):
        i = order[t]
        if qs[i] != prev:
            k += 1
            out_q[k] = qs[i]
            prev = qs[i]
        out_w[k] += ws[i]
    return elems, out_q[: k + 1], out_w[: k + 1]


def _add(acc, x):
    """Neumaier's compensated sum: acc = (sum, compensation)."""
    t = acc[0] + x
    if abs(acc[0]) >= abs(x):
        acc[1] += (acc[0] - t) + x
    else:
        acc[1] += (x - t) + acc[0]
    acc[0] = t


def _popcount_word(v):
    """Set bits of a uint64 (SWAR)."""
    v = v - ((v >> np.uint64(1)) & np.uint64(0x5555555555555555))
    v = (v & np.uint64(0x3333333333333333)) + ((v >> np.uint64(2)) & np.uint64(0x3333333333333333))
    v = (v + (v >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((v * np.uint64(0x0101010101010101)) >> np.uint64(56))


def _popcount(x):
    """Set bits of a non-negative int64."""
    return _popcount_word(np.uint64(x))


def _weight(q, mloc, unit):
    """Biclusters (with multiplicity) of the local set q."""
    if unit:
        return _popcount(q)
    n = 0
    while q:
        n += mloc[trailing_zeros(q)]
        q &= q - 1
    return n


def _sigma_tau(qp, qt, cl):
    """ς(Q) and τ(Q) of the local set Q, pred part qp, truth part qt (tables ``cl``: :func:`_class_tables`).

    For each pred j of Q the best Jaccard over the truth of Q is the first
    truth of Q in j's list sorted by decreasing Jaccard, so a pred costs a
    step or two, not |S|; the values are those of the plain maximum, added
    in the same order (ascending j).
    """
    mloc, order, jv, olen, unit = cl
    ng = _weight(qp, mloc, unit)
    nc = _weight(qt, mloc, unit)
    tot = 0.0
    while qp:
        j = trailing_zeros(qp)
        qp &= qp - 1
        best = 0.0
        for u in range(olen[j]):
            if (qt >> order[j, u]) & 1:
                best = jv[j, u]
                break
        tot += mloc[j] * best
    mn = min(ng, nc)
    return tot * mn / (ng * ng), tot * mn / (ng * nc)


def _side_bits(side):
    b = 0
    for t in range(side.shape[0]):
        b |= 1 << side[t]
    return b


def _class_tables(elems, tm, pm, mult, jac):
    """Local tables of a class: pred and truth local indices, multiplicities, Jaccard lists.

    ``order[j]`` lists the truth locals with a positive Jaccard to pred j by
    decreasing Jaccard (``jv[j]`` the values, ``olen[j]`` their number);
    ``unit`` is True when every multiplicity is 1 (counts by popcount).
    """
    d = elems.shape[0]
    is_p = np.zeros(d, np.bool_)
    mloc = np.zeros(d, np.int64)
    n_p = 0
    unit = True
    for j in range(d):
        e = elems[j]
        is_p[j] = ((pm[e >> 6] >> np.uint64(e & 63)) & np.uint64(1)) != 0
        n_p += is_p[j]
        mloc[j] = mult[e]
        unit = unit and mult[e] == 1
    plist = np.zeros(n_p, np.int64)
    tlist = np.zeros(d - n_p, np.int64)
    a = 0
    b = 0
    for j in range(d):
        if is_p[j]:
            plist[a] = j
            a += 1
        else:
            tlist[b] = j
            b += 1
    order = np.zeros((d, max(d - n_p, 1)), np.int64)
    jv = np.zeros((d, max(d - n_p, 1)), np.float64)
    olen = np.zeros(d, np.int64)
    vals = np.zeros(d - n_p, np.float64)
    for t in range(n_p):
        j = plist[t]
        for u in range(d - n_p):
            vals[u] = -jac[elems[j], elems[tlist[u]]]
        srt = _argsort(vals, d - n_p)
        for u in range(d - n_p):
            if vals[srt[u]] < 0.0:
                order[j, olen[j]] = tlist[srt[u]]
                jv[j, olen[j]] = -vals[srt[u]]
                olen[j] += 1
    return plist, tlist, (mloc, order, jv, olen, unit)


def _book(q, w, tl, pl, cl, cnt, sums):
    """Adds the w cells of S ∩ S(y) = q: normalisers cnt[0:2] (ints), numerators sums (compensated)."""
    g = q & pl
    t = q & tl
    if g:
        cnt[0] += w
    if t:
        cnt[1] += w
    if g and t:
        s, u = _sigma_tau(g, t, cl)
        _add(sums[0], w * s)
        _add(sums[1], w * u)


def _superset_sums(f, d, sign):
    for j in range(d):
        bit = 1 << j
        for mask in range(1 << d):
            if not mask & bit:
                f[mask] += sign * f[mask | bit]


def _pred_steps(ra, cb, plist):
    """Sum over the pairs of distinct traces of the preds in a ∩ b (the steps of the ς's)."""
    steps = 0.0
    for t in range(plist.shape[0]):
        bit = 1 << plist[t]
        na = 0
        nb = 0
        for x in range(len(ra)):
            na += (ra[x] & bit) != 0
        for y in range(len(cb)):
            nb += (cb[y] & bit) != 0
        steps += float(na) * float(nb)
    return steps


def inner_work(d, pairs, steps, units):
    """(direct, transform) work units of a class's inner sum: d elements, pairs of traces, pred steps.

    ``units``: the work units of a pair of traces, a pred step and a subset
    (budget.py; passed, not read as globals, because numba's cache would keep
    the values it was compiled with).  The transform books at most
    min(2^d, pairs) sets; beyond :data:`TRANSFORM_BITS` it is not used.
    """
    direct = units[0] * pairs + units[1] * steps
    if d > TRANSFORM_BITS:
        return direct, np.inf
    sub = float(1 << d)
    booked = min(sub, pairs)
    return direct, units[2] * sub * max(d, 1) + booked * (direct / max(pairs, 1.0))


def bitset_work(d, n_p, words, units):
    """Work units of a class's cells by element bit sets (:func:`_subset_counts`; inf when unavailable).

    ``words``: 64-bit words of a row and a column bit set together (0: none
    were built); up to 2^d subsets, each an AND and a popcount of those
    words, the Möbius transform (2^d d) and up to 2^d sets booked, each a
    pair's cost with half the class's preds.
    """
    if words == 0 or d > BITSET_BITS:
        return np.inf
    sub = float(1 << d)
    return sub * (units[3] * words + units[2] * d + units[0] + units[1] * n_p / 2.0)


def _and_count(out, a, b):
    n = 0
    for w in range(out.shape[0]):
        out[w] = a[w] & b[w]
        n += _popcount_word(out[w])
    return n


def _subset_counts(elems, rbits, cbits):
    """f[A] = N(A), the cells inside every element of A, for the non-empty subsets A of the class.

    A depth-first walk over the subsets (element bits ascending) ANDs the
    element bit sets of the rows and of the columns (an item per bit, a
    signature as many bits as items) and stops below a subset with no row
    or no column: its supersets have none either (f stays 0).
    """
    d = elems.shape[0]
    f = np.zeros(1 << d, np.int64)
    sr = np.zeros((d + 1, rbits.shape[1]), np.uint64)
    sc = np.zeros((d + 1, cbits.shape[1]), np.uint64)
    for w in range(rbits.shape[1]):
        sr[0, w] = ~np.uint64(0)
    for w in range(cbits.shape[1]):
        sc[0, w] = ~np.uint64(0)
    mask = np.zeros(d + 1, np.int64)
    nxt = np.zeros(d + 1, np.int64)
    level = 0
    while level >= 0:
        b = nxt[level]
        if b >= d:
            level -= 1
            continue
        nxt[level] = b + 1
        nr = _and_count(sr[level + 1], sr[level], rbits[elems[b]])
        if nr == 0:
            continue
        nc = _and_count(sc[level + 1], sc[level], cbits[elems[b]])
        if nc == 0:
            continue
        m = mask[level] | (1 << b)
        f[m] = nr * nc
        mask[level + 1] = m
        nxt[level + 1] = b + 1
        level += 1
    return f


def _book_exact(f, d, tl, pl, cl, cnt, sums):
    """Möbius of f (cells inside every element of Q) to cells with S ∩ S(y) = Q exactly, then books each Q."""
    _superset_sums(f, d, -1)
    for q in range(1, 1 << d):
        if f[q]:
            _book(q, f[q], tl, pl, cl, cnt, sums)


def _one_class(key, rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode, units, bits, cnt, sums, rbuf, cbuf,
               dense):
    """Books the cells y of every set S ∩ S(y) of the class ``key`` (mode: 0 cheapest, 1 pairs, 2 transform, 3 bit sets)."""
    elems = _elements(key)
    d = elems.shape[0]
    plist, tlist, cl = _class_tables(elems, tm, pm, mult, jac)
    pl = _side_bits(plist)
    tl = _side_bits(tlist)
    listed = 0
    for j in range(d):
        listed += rptr[elems[j] + 1] - rptr[elems[j]] + cptr[elems[j] + 1] - cptr[elems[j]]
    by_bits = bitset_work(d, plist.shape[0], bits[0].shape[1] + bits[1].shape[1], units)
    if mode == 3 or (mode == 0 and by_bits <= units[4] * listed):
        _book_exact(_subset_counts(elems, bits[0], bits[1]), d, tl, pl, cl, cnt, sums)
        return d
    ra, na = _traces(elems, rptr, rsig, rcnt, rbuf[0], rbuf[1], dense)
    cb, nb = _traces(elems, cptr, csig, ccnt, cbuf[0], cbuf[1], dense)
    direct, transform = inner_work(d, float(len(ra)) * float(len(cb)), _pred_steps(ra, cb, plist), units)
    if mode == 1 or (mode == 0 and direct <= transform) or d > TRANSFORM_BITS:
        for x in range(len(ra)):
            for y in range(len(cb)):
                q = ra[x] & cb[y]
                if q:
                    _book(q, na[x] * nb[y], tl, pl, cl, cnt, sums)
        return d
    f = np.zeros(1 << d, np.int64)
    g = np.zeros(1 << d, np.int64)
    for x in range(len(ra)):
        f[ra[x]] += na[x]
    for y in range(len(cb)):
        g[cb[y]] += nb[y]
    _superset_sums(f, d, 1)  # rows whose trace contains Q
    _superset_sums(g, d, 1)
    for q in range(1 << d):
        f[q] *= g[q]  # pairs whose a ∩ b contains Q: at most I J < 2**62
    _book_exact(f, d, tl, pl, cl, cnt, sums)
    return d


def bcubed_of_classes(keys, counts, lo, hi, rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode, units,
                      bits):
    """(Σ n(S) Σς / |E_G(S)|, Σ n(S) Στ / |E_C(S)|) over the classes lo:hi, compensated.

    ``rptr``/``rsig`` (``cptr``/``csig``): the row (column) signatures
    containing each element; ``bits``: the elements' row and column bit sets
    (zero words: not built).
    """
    total = np.zeros((2, 2), np.float64)
    rbuf = np.zeros((2, len(rcnt)), np.int64)  # the traces' work buffers (a list of arrays compiles slowly)
    cbuf = np.zeros((2, len(ccnt)), np.int64)
    dense = np.zeros(1 << _DENSE_BITS, np.int64)
    for s in range(lo, hi):
        cnt = np.zeros(2, np.int64)
        sums = np.zeros((2, 2), np.float64)
        _one_class(keys[s], rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode, units, bits, cnt, sums,
                   rbuf, cbuf, dense)
        n_s = float(counts[s])
        if cnt[0]:
            _add(total[0], n_s * ((sums[0, 0] + sums[0, 1]) / float(cnt[0])))
        if cnt[1]:
            _add(total[1], n_s * ((sums[1, 0] + sums[1, 1]) / float(cnt[1])))
    out = np.empty(2, np.float64)
    out[0] = total[0, 0] + total[0, 1]
    out[1] = total[1, 0] + total[1, 1]
    return out


def trace_pairs(keys, idx, rptr, rsig, rcnt, cptr, csig, ccnt, pm):
    """Per class of ``idx`` (the plan's sample): pairs of distinct row and column traces, and pred steps."""
    out = np.zeros((2, len(idx)), np.float64)
    rbuf = np.zeros((2, len(rcnt)), np.int64)
    cbuf = np.zeros((2, len(ccnt)), np.int64)
    dense = np.zeros(1 << _DENSE_BITS, np.int64)
    for t in range(len(idx)):
        elems = _elements(keys[idx[t]])
        ra, _ = _traces(elems, rptr, rsig, rcnt, rbuf[0], rbuf[1], dense)
        cb, _ = _traces(elems, cptr, csig, ccnt, cbuf[0], cbuf[1], dense)
        n_p = 0
        for j in range(elems.shape[0]):
            n_p += ((pm[elems[j] >> 6] >> np.uint64(elems[j] & 63)) & np.uint64(1)) != 0
        plist = np.zeros(n_p, np.int64)
        m = 0
        for j in range(elems.shape[0]):
            if (pm[elems[j] >> 6] >> np.uint64(elems[j] & 63)) & np.uint64(1):
                plist[m] = j
                m += 1
        out[0, t] = float(len(ra)) * float(len(cb))
        out[1, t] = _pred_steps(ra, cb, plist)
    return out


def trailing_zeros(x):
    """Zero bits below the lowest set bit of a non-zero integer (numba's intrinsic when compiled)."""
    x = int(x)
    return (x & -x).bit_length() - 1
