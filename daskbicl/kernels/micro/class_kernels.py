"""Compiled kernels of the cell-class method (numba; see :mod:`daskbicl.kernels.micro.class_traces`).

Signatures and classes are rows of 64-bit words (bit e: bicluster e).  A
*trace* of a signature on a class S is the signature restricted to S,
re-coded on |S| ≤ 63 local bits (bit j: the j-th smallest element of S).

Imported inside functions only (numba is loaded by the first micro-object
measure); ``cache=True`` and ``nogil=True`` as the family kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["bcubed_of_classes", "classes_of_pairs", "pair_weights"]

#: Classes of at most this many elements count their traces in a dense table.
_DENSE_BITS = 16

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True)
def _hash(key):
    h = np.uint64(0x9E3779B97F4A7C15)
    for w in range(key.shape[0]):
        h = (h ^ key[w]) * _M1
        h = (h ^ (h >> np.uint64(29))) * _M2
    return h ^ (h >> np.uint64(32))


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _grow(keys, used, vals):
    cap = 2 * keys.shape[0]
    nk = np.zeros((cap, keys.shape[1]), np.uint64)
    nu = np.zeros(cap, np.bool_)
    nv = np.zeros(cap, np.int64)
    for s in range(keys.shape[0]):
        if used[s]:
            h = _find(nk, nu, keys[s], cap - 1)
            nu[h] = True
            nk[h] = keys[s]
            nv[h] = vals[s]
    return nk, nu, nv


@njit(cache=True, nogil=True)
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
                keys[h] = tmp
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
            out_k[m] = keys[s]
            out_v[m] = vals[s]
            m += 1
    return out_k, out_v, True


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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
    order = np.argsort(vals, kind="mergesort")
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


@njit(cache=True, nogil=True)
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
    order = np.argsort(qs[:m], kind="mergesort")
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


@njit(cache=True, nogil=True)
def _add(acc, x):
    """Neumaier's compensated sum: acc = (sum, compensation)."""
    t = acc[0] + x
    if abs(acc[0]) >= abs(x):
        acc[1] += (acc[0] - t) + x
    else:
        acc[1] += (x - t) + acc[0]
    acc[0] = t


@njit(cache=True, nogil=True)
def _sigma_tau(q, d, tl, pl, mloc, jl):
    """ς(Q) and τ(Q) of the local set q (multiplicities ``mloc``, Jaccard ``jl[pred j, truth i]``)."""
    ng = 0
    nc = 0
    for i in range(d):
        if (q >> i) & 1:
            if (pl >> i) & 1:
                ng += mloc[i]
            else:
                nc += mloc[i]
    tot = 0.0
    for j in range(d):
        if (q >> j) & 1 and (pl >> j) & 1:
            best = 0.0
            for i in range(d):
                if (q >> i) & 1 and (tl >> i) & 1 and jl[j, i] > best:
                    best = jl[j, i]
            tot += mloc[j] * best
    mn = min(ng, nc)
    return tot * mn / (ng * ng), tot * mn / (ng * nc)


@njit(cache=True, nogil=True)
def _book(q, w, d, tl, pl, mloc, jl, cnt, sums):
    """Adds the w cells of S ∩ S(y) = q: normalisers cnt[0:2] (ints), numerators sums (compensated)."""
    g = q & pl
    t = q & tl
    if g:
        cnt[0] += w
    if t:
        cnt[1] += w
    if g and t:
        s, u = _sigma_tau(q, d, tl, pl, mloc, jl)
        _add(sums[0], w * s)
        _add(sums[1], w * u)


@njit(cache=True, nogil=True)
def _superset_sums(f, d, sign):
    for j in range(d):
        bit = 1 << j
        for mask in range(1 << d):
            if not mask & bit:
                f[mask] += sign * f[mask | bit]


@njit(cache=True, nogil=True)
def _one_class(key, rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode, cnt, sums, buf):
    elems = _elements(key)
    d = elems.shape[0]
    tl = 0
    pl = 0
    mloc = np.zeros(d, np.int64)
    for j in range(d):
        e = elems[j]
        if (tm[e >> 6] >> np.uint64(e & 63)) & np.uint64(1):
            tl |= 1 << j
        if (pm[e >> 6] >> np.uint64(e & 63)) & np.uint64(1):
            pl |= 1 << j
        mloc[j] = mult[e]
    jl = np.zeros((d, d), np.float64)
    for j in range(d):
        for i in range(d):
            jl[j, i] = jac[elems[j], elems[i]]
    ra, na = _traces(elems, rptr, rsig, rcnt, buf[0], buf[1], buf[4])
    cb, nb = _traces(elems, cptr, csig, ccnt, buf[2], buf[3], buf[4])
    direct = float(len(ra)) * float(len(cb)) * (1.0 + d / 8.0)
    transform = float(1 << min(d, 40)) * max(d, 1) if d <= 20 else 1e300
    if mode == 1 or (mode == 0 and direct <= transform) or d > 20:
        for x in range(len(ra)):
            for y in range(len(cb)):
                q = ra[x] & cb[y]
                if q:
                    _book(q, na[x] * nb[y], d, tl, pl, mloc, jl, cnt, sums)
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
    _superset_sums(f, d, -1)  # ... exactly Q (Möbius)
    for q in range(1, 1 << d):
        if f[q]:
            _book(q, f[q], d, tl, pl, mloc, jl, cnt, sums)
    return d


@njit(cache=True, nogil=True)
def bcubed_of_classes(keys, counts, lo, hi, rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode):
    """(Σ n(S) Σς / |E_G(S)|, Σ n(S) Στ / |E_C(S)|) over the classes lo:hi, compensated.

    ``rptr``/``rsig`` (``cptr``/``csig``): the row (column) signatures containing each element.
    """
    total = np.zeros((2, 2), np.float64)
    buf = [np.zeros(len(rcnt), np.int64), np.zeros(len(rcnt), np.int64),
           np.zeros(len(ccnt), np.int64), np.zeros(len(ccnt), np.int64), np.zeros(1 << _DENSE_BITS, np.int64)]
    for s in range(lo, hi):
        cnt = np.zeros(2, np.int64)
        sums = np.zeros((2, 2), np.float64)
        _one_class(keys[s], rptr, rsig, rcnt, cptr, csig, ccnt, tm, pm, mult, jac, mode, cnt, sums, buf)
        n_s = float(counts[s])
        if cnt[0]:
            _add(total[0], n_s * ((sums[0, 0] + sums[0, 1]) / float(cnt[0])))
        if cnt[1]:
            _add(total[1], n_s * ((sums[1, 0] + sums[1, 1]) / float(cnt[1])))
    return np.array([total[0, 0] + total[0, 1], total[1, 0] + total[1, 1]])


@njit(cache=True, nogil=True)
def trace_pairs(keys, idx, rptr, rsig, rcnt, cptr, csig, ccnt):
    """(distinct row traces) x (distinct column traces) of the classes ``idx`` (the plan's sample)."""
    out = np.zeros(len(idx), np.float64)
    buf = [np.zeros(len(rcnt), np.int64), np.zeros(len(rcnt), np.int64),
           np.zeros(len(ccnt), np.int64), np.zeros(len(ccnt), np.int64), np.zeros(1 << _DENSE_BITS, np.int64)]
    for t in range(len(idx)):
        elems = _elements(keys[idx[t]])
        ra, _ = _traces(elems, rptr, rsig, rcnt, buf[0], buf[1], buf[4])
        cb, _ = _traces(elems, cptr, csig, ccnt, buf[2], buf[3], buf[4])
        out[t] = float(len(ra)) * float(len(cb))
    return out
