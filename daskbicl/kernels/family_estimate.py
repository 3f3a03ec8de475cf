"""How big is a part of the family?  Random probes down its search tree (compiled with numba).

The depth-first walk of :func:`~daskbicl.kernels.family.enumerate_family`
is a tree whose size is only known once walked.  Knuth's estimator (Knuth
1975, "Estimating the efficiency of backtrack programs") walks one random
path from the root, choosing each child uniformly: the product of the
numbers of children met so far, summed along the path, is an unbiased
estimate of the number of nodes (and, weighting each node by its own cost,
of any additive cost).  :func:`estimate_family` averages such paths, with
the first level stratified (every child of the root gets its own probes),
and returns estimates of the nodes, of the list entries delivered (the
enumeration's work), of the (node, member) pairs (the transforms' work)
and of the subtrees finished from pairs.  Its own cost is the root's
delivery plus a few probes per child: a small fraction of the walk.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["estimate_family"]


@njit(cache=True)
def _children(ptr, el, item, pos, n, first, cnt_items, touched, n_touched, flag, bit):
    """Count pass: entries per child element (elements ≥ first after each entry's position)."""
    work = 0
    for q in range(n):
        i = item[q]
        start = pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first:
            start += 1
        for k in range(start, stop):
            e = el[k]
            if flag[e] == 0:
                touched[n_touched] = e
                n_touched += 1
            flag[e] |= bit
            cnt_items[e] += 1
        work += stop - start
    return n_touched, work


@njit(cache=True)
def _restrict(ptr, el, item, pos, n, first, e, out_item, out_pos):
    """The entries whose remaining elements contain e, positioned at e."""
    m = 0
    for q in range(n):
        i = item[q]
        start = pos[q] + 1
        stop = ptr[i + 1]
        for k in range(start, stop):
            x = el[k]
            if x == e:
                out_item[m] = i
                out_pos[m] = k
                m += 1
                break
            if x > e:
                break
    return m


@njit(cache=True)
def _pairs_finish(r_ptr, r_el, r_item, r_pos, nr, c_ptr, c_el, c_item, c_pos, nc):
    """Work of finishing a node from its pairs (list lengths merged)."""
    w = 0
    for q in range(nr):
        i = r_item[q]
        for q2 in range(nc):
            j = c_item[q2]
            w += (r_ptr[i + 1] - r_pos[q] - 1) + (c_ptr[j + 1] - c_pos[q2] - 1)
    return w


@njit(cache=True)
def estimate_family(r_ptr, r_el, c_ptr, c_el, n_elem, min_elem, pair_limit, probes, seed, limit):
    """Estimated (nodes, deliveries, member pairs, pair work, stopped) of a walk (module docstring).

    ``min_elem`` and ``pair_limit`` as for :func:`~daskbicl.kernels.family.enumerate_family`
    (``pair_limit`` 0 when the walk stores its nodes); ``probes`` random
    paths below every child of the root.  The estimate stops (``stopped``
    True, the counts then being lower bounds) as soon as it passes ``limit``
    nodes-plus-deliveries, so a hopelessly large family is recognised fast.
    """
    np.random.seed(seed)
    n_rows = r_ptr.shape[0] - 1
    n_cols = c_ptr.shape[0] - 1
    flag = np.zeros(n_elem, np.int8)
    cr = np.zeros(n_elem, np.int64)
    cc = np.zeros(n_elem, np.int64)
    touched = np.empty(n_elem, np.int64)
    kids = np.empty(n_elem, np.int64)
    # root lists
    ri = np.arange(n_rows).astype(np.int32)
    rp = (r_ptr[:-1] - 1).astype(np.int32)
    ci = np.arange(n_cols).astype(np.int32)
    cp = (c_ptr[:-1] - 1).astype(np.int32)
    if n_rows == 0 or n_cols == 0:
        return 0.0, 0.0, 0.0, 0.0, False
    nt, w1 = _children(r_ptr, r_el, ri, rp, n_rows, min_elem, cr, touched, 0, flag, np.int8(1))
    nt, w2 = _children(c_ptr, c_el, ci, cp, n_cols, min_elem, cc, touched, nt, flag, np.int8(2))
    nk = 0
    for t in range(nt):
        e = touched[t]
        if flag[e] == 3:
            kids[nk] = e
            nk += 1
    root_kids = kids[:nk].copy()
    root_cr = np.empty(nk, np.int64)
    root_cc = np.empty(nk, np.int64)
    for t in range(nk):
        root_cr[t] = cr[root_kids[t]]
        root_cc[t] = cc[root_kids[t]]
    for t in range(nt):
        e = touched[t]
        flag[e] = 0
        cr[e] = 0
        cc[e] = 0
    nodes = 1.0
    deliveries = float(w1 + w2)
    pairs = 0.0
    pair_work = 0.0
    # scratch lists for the probes
    a_item = np.empty(n_rows, np.int32)
    a_pos = np.empty(n_rows, np.int32)
    b_item = np.empty(n_rows, np.int32)
    b_pos = np.empty(n_rows, np.int32)
    x_item = np.empty(n_cols, np.int32)
    x_pos = np.empty(n_cols, np.int32)
    y_item = np.empty(n_cols, np.int32)
    y_pos = np.empty(n_cols, np.int32)
    r0_item = np.empty(n_rows, np.int32)
    r0_pos = np.empty(n_rows, np.int32)
    c0_item = np.empty(n_cols, np.int32)
    c0_pos = np.empty(n_cols, np.int32)
    for t in range(nk):
        e0 = root_kids[t]
        nodes += 1.0
        pairs += 1.0
        s_n = 0.0
        s_d = 0.0
        s_p = 0.0
        s_w = 0.0
        n_r0 = _restrict(r_ptr, r_el, ri, rp, n_rows, min_elem, e0, r0_item, r0_pos)
        n_c0 = _restrict(c_ptr, c_el, ci, cp, n_cols, min_elem, e0, c0_item, c0_pos)
        for _ in range(probes):
            a_item[:n_r0] = r0_item[:n_r0]
            a_pos[:n_r0] = r0_pos[:n_r0]
            x_item[:n_c0] = c0_item[:n_c0]
            x_pos[:n_c0] = c0_pos[:n_c0]
            n_a = n_r0
            n_x = n_c0
            weight = 1.0
            depth = 1
            while True:
                if weight > limit * probes:  # this path alone makes the estimate pass the limit
                    return nodes + s_n / probes + limit, deliveries, pairs, pair_work, True
                if pair_limit > 0 and n_a * n_x <= pair_limit:
                    s_w += weight * _pairs_finish(r_ptr, r_el, a_item, a_pos, n_a, c_ptr, c_el, x_item,
                                                  x_pos, n_x)
                    break
                nt, w1 = _children(r_ptr, r_el, a_item, a_pos, n_a, 0, cr, touched, 0, flag, np.int8(1))
                nt, w2 = _children(c_ptr, c_el, x_item, x_pos, n_x, 0, cc, touched, nt, flag, np.int8(2))
                s_d += weight * (w1 + w2)
                nk2 = 0
                for u in range(nt):
                    e = touched[u]
                    if flag[e] == 3:
                        kids[nk2] = e
                        nk2 += 1
                    flag[e] = 0
                    cr[e] = 0
                    cc[e] = 0
                if nk2 == 0:
                    break
                e = kids[np.random.randint(nk2)]
                weight *= nk2
                depth += 1
                s_n += weight
                s_p += weight * depth
                n_b = _restrict(r_ptr, r_el, a_item, a_pos, n_a, 0, e, b_item, b_pos)
                n_y = _restrict(c_ptr, c_el, x_item, x_pos, n_x, 0, e, y_item, y_pos)
                a_item, b_item = b_item, a_item
                a_pos, b_pos = b_pos, a_pos
                x_item, y_item = y_item, x_item
                x_pos, y_pos = y_pos, x_pos
                n_a = n_b
                n_x = n_y
        nodes += s_n / probes
        deliveries += s_d / probes
        pairs += s_p / probes
        pair_work += s_w / probes
        if nodes + deliveries + pair_work > limit:
            return nodes, deliveries, pairs, pair_work, True
    return nodes, deliveries, pairs, pair_work, False
