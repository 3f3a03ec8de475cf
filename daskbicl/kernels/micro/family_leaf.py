"""MOCICE-BCubed on one part of the family: transforms over the stored nodes (compiled with numba).

A *leaf* is a required set B of biclusters.  :func:`~daskbicl.kernels.micro.family_walk.enumerate_family`
stores every superset W of B with N(W) > 0 (the nodes, in depth-first
preorder, keyed by the additive hash of W \\ B); this module then runs, over
those nodes only:

1. the exact cell classes ``E(S) = sum_{W ⊇ S} (-1)^{|W - S|} N(W)`` (int64; every
   intermediate value is a number of cells, so nothing overflows or cancels);
2. ``Ω(W) = sum_{S ⊇ W} E(S) / |E_G(S)|`` (and the recall analogue with
   ``|E_C(S)|``), the sum of the weights 1/|E_G(x)| of the cells containing W;
3. ``Λ(Q) = sum_{W ⊇ Q} (-1)^{|W - Q|} N(W) Ω(W)``, the weight of the pairs of
   cells whose memberships intersect in exactly Q;
4. ``sum_Q ς(Q) Λ(Q)`` over the sets Q the leaf is responsible for (those
   whose elements below max(B) are exactly B), the precision numerator
   (recall alike with τ).

Each transform is done one element at a time (``val[W - a] ±= val[W]`` for
every W containing a), through the links to W - a the walk records, so no
set is ever looked up by value; only the normalisers are found through
open-addressing hash tables of the keys of one side's sets.
All supersets of a set containing B contain B, so the leaf's nodes are all
these transforms need.  The normalisers |E_G(S)| and |E_C(S)| (sizes of
unions of rectangles) come from :func:`union_table` over the pred-only and
truth-only families.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["build_table", "find", "leaf_bcubed", "union_table", "STATUS_COLLISION"]

#: Two sets of a leaf have the same hash: draw new random words and retry.
STATUS_COLLISION = 2


@njit(cache=True, nogil=True)
def build_table(keys):
    """Open-addressing table of distinct uint64 keys: (slots, shift), or slots[0] = -2 on a duplicate."""
    n = keys.shape[0]
    bits = 4
    while (1 << bits) < 2 * n + 2:
        bits += 1
    slots = np.full(1 << bits, -1, np.int64)
    shift = np.uint64(64 - bits)
    mask = (1 << bits) - 1
    for k in range(n):
        h = np.int64((keys[k] * np.uint64(0x9E3779B97F4A7C15)) >> shift)
        while slots[h] >= 0:
            if keys[slots[h]] == keys[k]:
                slots[0] = -2
                return slots, shift
            h = (h + 1) & mask
        slots[h] = k
    return slots, shift


@njit(cache=True, nogil=True)
def find(slots, shift, keys, key):
    """Index of ``key`` among ``keys`` through :func:`build_table`'s slots, or -1."""
    mask = slots.shape[0] - 1
    h = np.int64((key * np.uint64(0x9E3779B97F4A7C15)) >> shift)
    while True:
        s = slots[h]
        if s < 0:
            return -1
        if keys[s] == key:
            return s
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def _by_edge(elem, n_elem):
    """Nodes grouped by the element of their edge: ``order[starts[a]:starts[a + 1]]``."""
    n = elem.shape[0]
    starts = np.zeros(n_elem + 1, np.int64)
    for k in range(1, n):
        starts[elem[k] + 1] += 1
    for a in range(n_elem):
        starts[a + 1] += starts[a]
    fill = starts[:-1].copy()
    order = np.empty(max(n - 1, 0), np.int64)
    for k in range(1, n):
        order[fill[elem[k]]] = k
        fill[elem[k]] += 1
    return starts, order


@njit(cache=True, nogil=True)
def union_table(elem, parent, end, ncell, dptr, down, n_elem):
    """Sizes of unions of rectangles over a one-sided family (pred-only or truth-only).

    ``U(V) = |∪_{b ∈ V} B_b| = sum_{∅ ≠ V' ⊆ V} (-1)^{|V'|+1} N(V')`` for every
    node V, by the subset transform one element at a time (int64: every
    intermediate value is, up to sign, a number of cells).  U[0] = 0 for
    the empty set.
    """
    starts, order = _by_edge(elem, n_elem)
    n = elem.shape[0]
    u = np.empty(n, np.int64)
    u[0] = 0
    for k in range(1, n):
        v = ncell[k]
        u[k] = v if (dptr[k + 1] - dptr[k]) % 2 == 1 else -v
    for a in range(n_elem):
        for o in range(starts[a], starts[a + 1]):
            k = order[o]
            rank = dptr[k + 1] - dptr[k] - 1
            for w in range(k, end[k]):
                u[w] += u[down[dptr[w] + rank]]
    return u


@njit(cache=True, nogil=True)
def _sigma_tau(members, m, n_truth, jac):
    """ς and τ of a set given by its ``m`` members (docs/measures/micro.md)."""
    n_c = 0
    for i in range(m):
        if members[i] < n_truth:
            n_c += 1
    n_g = m - n_c
    if n_c == 0 or n_g == 0:
        return 0.0, 0.0
    tot = 0.0
    for i in range(m):
        g = members[i]
        if g >= n_truth:
            best = 0.0
            for j in range(m):
                c = members[j]
                if c < n_truth:
                    v = jac[g - n_truth, c]
                    if v > best:
                        best = v
            tot += best
    mn = min(n_c, n_g)
    return tot * mn / (n_g * n_g), tot * mn / (n_g * n_c)


@njit(cache=True, nogil=True)
def _sweep(vals, sign, links):
    """Adds (sign 1) or subtracts (sign -1) every set's value into the set one member smaller, edge by
    edge (the superset sums and their Möbius inverse over the stored sets; ``links`` from the walk)."""
    starts, order, dptr, end, down, n_elem = links
    for a in range(n_elem):
        for o in range(starts[a], starts[a + 1]):
            k = order[o]
            rank = dptr[k + 1] - dptr[k] - 1
            for w in range(k, end[k]):
                j = down[dptr[w] + rank]
                if sign > 0:
                    vals[j] += vals[w]
                else:
                    vals[j] -= vals[w]


@njit(cache=True, nogil=True)
def _weights(cells, elem, dptr, n_elem, n_truth, base, pred_words, pred_keys, pred_union,
             truth_words, truth_keys, truth_union):
    """E / |E_G| and E / |E_C| of every stored set W = B ∪ D (the union sizes found by the keys of the
    pred part and the truth part of W, summed down a stack in preorder).  The first is written over
    ``cells`` (E is read once, where its weight is written)."""
    n = elem.shape[0]
    pslots, pshift = build_table(pred_keys)
    tslots, tshift = build_table(truth_keys)
    op = cells.view(np.float64)
    orc = np.zeros(n, np.float64)
    sk_p = np.zeros(n_elem + 2, np.uint64)
    sk_t = np.zeros(n_elem + 2, np.uint64)
    sh_p = np.zeros(n_elem + 2, np.bool_)
    sh_t = np.zeros(n_elem + 2, np.bool_)
    for b in base:
        if b < n_truth:
            sk_t[0] += truth_words[b]
            sh_t[0] = True
        else:
            sk_p[0] += pred_words[b]
            sh_p[0] = True
    for k in range(n):
        dk = dptr[k + 1] - dptr[k]
        if k > 0:
            e = elem[k]
            sk_p[dk] = sk_p[dk - 1]
            sk_t[dk] = sk_t[dk - 1]
            sh_p[dk] = sh_p[dk - 1]
            sh_t[dk] = sh_t[dk - 1]
            if e < n_truth:
                sk_t[dk] += truth_words[e]
                sh_t[dk] = True
            else:
                sk_p[dk] += pred_words[e]
                sh_p[dk] = True
        ek = cells[k]
        wp = 0.0
        wr = 0.0
        if ek != 0:
            if sh_p[dk]:
                wp = ek / pred_union[find(pslots, pshift, pred_keys, sk_p[dk])]
            if sh_t[dk]:
                wr = ek / truth_union[find(tslots, tshift, truth_keys, sk_t[dk])]
        op[k] = wp
        orc[k] = wr
    return op, orc


@njit(cache=True, nogil=True)
def _responsible(elem, parent, n_elem, n_truth, base, jac, op, orc, xp, xr, bound):
    """Σ ς Λ and Σ τ Λ over the sets this leaf is responsible for (compensated), and the bound's sums."""
    n = elem.shape[0]
    nb = base.shape[0]
    max_b = base[-1]
    members = np.empty(n_elem + 1, np.int64)
    p_num = 0.0
    p_comp = 0.0
    r_num = 0.0
    r_comp = 0.0
    p_abs = 0.0
    r_abs = 0.0
    for k in range(n):
        # the smallest element outside B is the one below the root on the path
        j = k
        m = 0
        first = -1
        while j > 0:
            members[m] = elem[j]
            m += 1
            first = elem[j]
            j = parent[j]
        if first >= 0 and first < max_b:
            continue
        for b in range(nb):
            members[m] = base[b]
            m += 1
        s, tau = _sigma_tau(members, m, n_truth, jac)
        if s != 0.0:  # Neumaier's compensated sums
            x = s * op[k]
            t_ = p_num + x
            p_comp += (p_num - t_) + x if abs(p_num) >= abs(x) else (x - t_) + p_num
            p_num = t_
            x = tau * orc[k]
            t_ = r_num + x
            r_comp += (r_num - t_) + x if abs(r_num) >= abs(x) else (x - t_) + r_num
            r_num = t_
            if bound:
                p_abs += s * xp[k]
                r_abs += tau * xr[k]
    return p_num + p_comp, r_num + r_comp, p_abs, r_abs


@njit(cache=True, nogil=True)
def leaf_bcubed(elem, parent, end, ncell, dptr, down, n_elem, n_truth, base, jac,
                pred_words, pred_keys, pred_union, truth_words, truth_keys, truth_union, bound):
    """Precision and recall numerators of one leaf (module docstring).

    Parameters
    ----------
    elem, parent, end, ncell, dptr, down
        The leaf's stored nodes and their links to the sets one member
        smaller (:func:`~daskbicl.kernels.micro.family_walk.enumerate_family`).
    base : int array
        The elements of B, ascending.
    jac : float64 array (L, K)
        Jaccard index of every pred / truth bicluster pair.
    pred_words, pred_keys, pred_union, truth_words, truth_keys, truth_union
        :func:`union_table` of the pred-only and truth-only families: the
        random words of their hashes, the keys (hashes of the sets) and the
        union sizes.
    bound : bool
        Also return the sums the float error bound needs (one more pass).

    Returns
    -------
    status, p_num, r_num, p_abs, r_abs, depth
        ``p_abs`` (``r_abs``) is ``sum_Q ς(Q) sum_{W ⊇ Q} N(W) Ω(W)``, the
        size of the terms the signed transform adds (0 without ``bound``);
        ``depth`` the largest set.
    """
    n = elem.shape[0]
    starts, order = _by_edge(elem, n_elem)
    links = (starts, order, dptr, end, down, n_elem)
    # 1. exact cell classes E (int64; every intermediate value is a number of cells)
    cells = ncell.copy()
    _sweep(cells, -1, links)
    # 2. weights E / |E_G|, E / |E_C|, and their superset sums Ω
    op, orc = _weights(cells, elem, dptr, n_elem, n_truth, base, pred_words, pred_keys, pred_union,
                       truth_words, truth_keys, truth_union)
    _sweep(op, 1, links)
    _sweep(orc, 1, links)
    # 3. X = N Ω, then Λ = superset Möbius of X (and, for the bound, the same sums without signs)
    nb = base.shape[0]
    depth_max = nb
    for k in range(n):
        v = float(ncell[k])
        op[k] *= v
        orc[k] *= v
        depth_max = max(depth_max, nb + dptr[k + 1] - dptr[k])
    xp = op.copy() if bound else op[:0]
    xr = orc.copy() if bound else orc[:0]
    _sweep(op, -1, links)
    _sweep(orc, -1, links)
    if bound:
        _sweep(xp, 1, links)
        _sweep(xr, 1, links)
    # 4. the responsible sets: ς Λ and τ Λ
    p_num, r_num, p_abs, r_abs = _responsible(elem, parent, n_elem, n_truth, base, jac, op, orc, xp, xr, bound)
    return 0, p_num, r_num, p_abs, r_abs, depth_max
