"""How big is each part of the family?  Sampling its search tree (compiled with numba).

The depth-first walk of :func:`~daskbicl.kernels.micro.family_walk.enumerate_family`
is a tree whose size is only known once walked.  :func:`profile_family`
estimates it by sampling, as Knuth (1975, "Estimating the efficiency of
backtrack programs") and Chen (1992, "Heuristic sampling") do: the first two
levels are delivered exactly, deeper ones are sampled level by level, one
node kept per stratum of similar nodes with the weight of the nodes it
stands for.  Every node met is booked to each part the plan may make of the
family (coverage parts {e} and {e, g}, closure parts {x} and {x, y}), so a
plan costs one pass whatever the number of parts: a small fraction of the
walk (about 1 s for 10^5 x 10^5 cells and 20 + 20 dense biclusters).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles
from .family_walk import _arena, _grow

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["profile_family"]


@njit(cache=True, nogil=True)
def _kids_of(touched, n_t, flag, kids):
    """The touched elements met on both sides (children), ascending (insertion sort: few children)."""
    n_kids = 0
    for t in range(n_t):
        e = touched[t]
        if flag[e] == 3:
            kids[n_kids] = e
            n_kids += 1
    for t in range(1, n_kids):
        v = kids[t]
        u = t - 1
        while u >= 0 and kids[u] > v:
            kids[u + 1] = kids[u]
            u -= 1
        kids[u + 1] = v
    return n_kids


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _pairs_finish(r_ptr, r_el, r_item, r_pos, nr, c_ptr, c_el, c_item, c_pos, nc):
    """Work of finishing a node from its pairs (list lengths merged)."""
    w = 0
    for q in range(nr):
        i = r_item[q]
        for q2 in range(nc):
            j = c_item[q2]
            w += (r_ptr[i + 1] - r_pos[q] - 1) + (c_ptr[j + 1] - c_pos[q2] - 1)
    return w


@njit(cache=True, nogil=True)
def _deliver(ptr, el, item, pos, lo, hi, first, kids, n_kids, slot, out_item, out_pos, off):
    """Fill pass: the entries of item/pos[lo:hi] into the buckets of ``kids`` (slot[e] = bucket index).

    ``off[b]`` is the start of bucket b in out_*; returns the entries moved.
    """
    fill = np.empty(n_kids, np.int64)
    for b in range(n_kids):
        fill[b] = off[b]
    work = 0
    for q in range(lo, hi):
        i = item[q]
        start = pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first:
            start += 1
        for k in range(start, stop):
            b = slot[el[k]]
            if b >= 0:
                out_item[fill[b]] = i
                out_pos[fill[b]] = k
                fill[b] += 1
        work += stop - start
    return work


@njit(cache=True, nogil=True)
def _split(sides, arena, bounds, first, scratch, out):
    """All children of a node at once: their elements (ascending) and lists; returns (n_kids, work).

    ``sides``: (r_ptr, r_el, c_ptr, c_el); the node's lists are the entries
    ``rlo:rhi`` of the row arena (items, positions) and ``clo:chi`` of the
    column arena, ``arena`` = (ri, rp, ci, cp), ``bounds`` = (rlo, rhi, clo,
    chi); children use elements ≥ ``first``; ``scratch``: (flag, cr, cc,
    touched, kids, slot) of :func:`profile_family`; ``out``: the children's
    arenas and where each child's lists start, (r_out, rp_out, c_out,
    cp_out, roff, coff).
    """
    r_ptr, r_el, c_ptr, c_el = sides
    ri, rp, ci, cp = arena
    rlo, rhi, clo, chi = bounds
    flag, cr, cc, touched, kids, slot = scratch
    r_out, rp_out, c_out, cp_out, roff, coff = out
    nt, w1 = _children(r_ptr, r_el, ri[rlo:rhi], rp[rlo:rhi], rhi - rlo, first, cr, touched, 0, flag, np.int8(1))
    nt, w2 = _children(c_ptr, c_el, ci[clo:chi], cp[clo:chi], chi - clo, first, cc, touched, nt, flag, np.int8(2))
    nk = _kids_of(touched, nt, flag, kids)
    o_r = 0
    o_c = 0
    for t in range(nk):
        e = kids[t]
        slot[e] = t
        roff[t] = o_r
        coff[t] = o_c
        o_r += cr[e]
        o_c += cc[e]
    roff[nk] = o_r
    coff[nk] = o_c
    for t in range(nt):
        e = touched[t]
        flag[e] = 0
        cr[e] = 0
        cc[e] = 0
    if nk:
        _deliver(r_ptr, r_el, ri, rp, rlo, rhi, first, kids, nk, slot, r_out, rp_out, roff)
        _deliver(c_ptr, c_el, ci, cp, clo, chi, first, kids, nk, slot, c_out, cp_out, coff)
    for t in range(nk):
        slot[kids[t]] = -1
    return nk, w1 + w2


@njit(cache=True, nogil=True)
def _account(path, m, w, dl, clo_nodes, clo_deliv, clo_members, clo2_nodes, clo2_deliv, pairs_ok):
    """Add a node of the walk (members ``path[:m]``, weight w, delivery dl) to the closure counts."""
    for i in range(m):
        x = path[i]
        clo_nodes[x] += w
        clo_deliv[x] += w * dl
        clo_members[x] += w * m
        if pairs_ok:
            for j in range(i + 1, m):
                y = path[j]
                clo2_nodes[x, y] += w
                clo2_deliv[x, y] += w * dl


#: Representatives kept per stratum and level by :func:`profile_family`.
_SLOTS = 4


@njit(cache=True, nogil=True)
def _lg(x):
    """floor(log2(x)) for x >= 1, else 0."""
    r = 0
    while x > 1:
        x >>= 1
        r += 1
    return r


@njit(cache=True, nogil=True)
def profile_family(r_ptr, r_el, c_ptr, c_el, n_elem, pair_limit, repeats, seed, limit, pairs_ok):
    """One sampling pass over the whole family: the size of every part the plan may make.

    The root is the empty set; its children (one per bicluster e) and their
    children are delivered exactly.  Below, the nodes are sampled level by
    level with Chen's stratified sampling (Chen 1992, "Heuristic sampling: a
    method for predicting the performance of tree searching programs"): the
    children of the kept nodes are grouped into strata by the sizes of their
    row and column lists, and one child per stratum, drawn in proportion to
    the weights, is kept with the stratum's total weight.  Large rectangles
    (whose subtrees are large) thus never hide among small ones, which keeps
    the estimate's spread small; ``repeats`` independent samples are averaged.
    Every node met, with its weight, is added to

    * ``sub[0..2][e]`` (nodes, deliveries, pair work) of the coverage part
      {e} it belongs to (its smallest member; nodes below the first one that
      a coverage walk finishes from pairs count as that pair work only;
      ``sub[3][e]`` counts them all: the sets of the family with smallest
      member e), and
      ``sub2[.][e, g]`` of part {e, g} (its two smallest members);
    * ``clo[0..2][x]`` (nodes, deliveries, node-member pairs) of the closure
      part {x} of *every* member x, and ``clo2[.][x, y]`` of every pair of
      members (with ``pairs_ok``; the n x n tables are 1 x 1 otherwise).

    Returns (sub, sub2, clo, clo2, stopped); ``stopped`` when the sampled
    family passed ``limit`` nodes plus deliveries (the numbers are then lower
    bounds).
    """
    np.random.seed(seed)
    n_rows = r_ptr.shape[0] - 1
    n_cols = c_ptr.shape[0] - 1
    nn = n_elem if pairs_ok else 1
    out = (np.zeros((4, n_elem)), np.zeros((3, nn, nn)), np.zeros((3, n_elem)), np.zeros((2, nn, nn)))
    if n_rows == 0 or n_cols == 0:
        return out[0], out[1], out[2], out[3], False
    sub, clo = out[0], out[2]
    scratch = (np.zeros(n_elem, np.int8), np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int64),
               np.empty(n_elem, np.int64), np.empty(n_elem, np.int64), np.full(n_elem, -1, np.int64))
    flag, cr, cc, touched, kids, slot = scratch
    ri, rp = _arena(r_ptr, n_rows)
    ci, cp = _arena(c_ptr, n_cols)
    n_r1, n_c1 = r_el.shape[0], c_el.shape[0]
    lv1 = (np.empty(n_r1, np.int32), np.empty(n_r1, np.int32), np.empty(n_c1, np.int32), np.empty(n_c1, np.int32),
           np.empty(n_elem + 1, np.int64), np.empty(n_elem + 1, np.int64))
    lv2 = (np.empty(n_r1, np.int32), np.empty(n_r1, np.int32), np.empty(n_c1, np.int32), np.empty(n_c1, np.int32),
           np.empty(n_elem + 1, np.int64), np.empty(n_elem + 1, np.int64))
    sides = (r_ptr, r_el, c_ptr, c_el)
    nk1, _ = _split(sides, (ri, rp, ci, cp), (0, n_rows, 0, n_cols), 0, scratch, lv1)
    kids1 = kids[:nk1].copy()
    kept, lists, strata = _sample_buffers(r_ptr, c_ptr, n_elem, n_r1, n_c1)
    total = 0.0
    for t in range(nk1):
        e = kids1[t]
        rlo, rhi = lv1[4][t], lv1[4][t + 1]
        clo_, chi = lv1[5][t], lv1[5][t + 1]
        nk2, dl = _split(sides, (lv1[0], lv1[1], lv1[2], lv1[3]), (rlo, rhi, clo_, chi), 0, scratch, lv2)
        # the part's root {e} is always delivered (as the family walk does)
        sub[0, e] += 1.0
        sub[3, e] += 1.0
        sub[1, e] += dl
        clo[0, e] += 1.0
        clo[1, e] += dl
        clo[2, e] += 1.0
        total += 1.0 + dl
        if nk2 == 0:
            continue
        for _ in range(repeats):  # a stratified sample of the subtree of {e}, level by level from level 2
            _level_two(e, kids, nk2, lv2, repeats, kept, lists)
            cur, n_cur, m = 0, nk2, 2
            while n_cur > 0:
                n_used, total, stopped = _visit_level(cur, n_cur, m, e, sides, pair_limit, pairs_ok, limit, out,
                                                      scratch, kept, lists, strata, total)
                if stopped or total > limit:
                    return out[0], out[1], out[2], out[3], True
                n_cur, lists = _next_level(cur, 1 - cur, n_used, m, sides, kept, lists, strata)
                lists = (lists[2], lists[3], lists[0], lists[1], lists[6], lists[7], lists[4], lists[5])
                cur = 1 - cur
                m += 1
    return out[0], out[1], out[2], out[3], False


@njit(cache=True, nogil=True)
def _sample_buffers(r_ptr, c_ptr, n_elem, n_r1, n_c1):
    """The kept nodes of two levels, their lists (this level and the next) and the strata."""
    n_strata = 2 * 64 * 64
    cap = n_strata * _SLOTS + n_elem
    # a set is no longer than the longest row list or column list
    longest_r = 0
    for i in range(r_ptr.shape[0] - 1):
        longest_r = max(longest_r, r_ptr[i + 1] - r_ptr[i])
    longest_c = 0
    for j in range(c_ptr.shape[0] - 1):
        longest_c = max(longest_c, c_ptr[j + 1] - c_ptr[j])
    depth_cap = min(n_elem, longest_r, longest_c) + 1
    kept = (np.empty((2, cap), np.int64), np.empty((2, cap), np.int64), np.empty((2, cap), np.int64),
            np.empty((2, cap), np.int64), np.empty((2, cap), np.float64), np.empty((2, cap), np.bool_),
            np.empty((2, cap, depth_cap), np.int32))
    nr, nc = max(16, n_r1), max(16, n_c1)
    lists = (np.empty(nr, np.int32), np.empty(nr, np.int32), np.empty(nr, np.int32), np.empty(nr, np.int32),
             np.empty(nc, np.int32), np.empty(nc, np.int32), np.empty(nc, np.int32), np.empty(nc, np.int32))
    strata = (np.zeros(n_strata), np.empty((n_strata, _SLOTS), np.int64), np.empty((n_strata, _SLOTS), np.int64),
              np.empty(n_strata, np.int64))
    return kept, lists, strata


@njit(cache=True, nogil=True)
def _level_two(e, kids2, nk2, lv2, repeats, kept, lists):
    """Every child g of {e} kept, weight 1 / repeats, its lists copied into this level's arenas."""
    r2, r2p, c2, c2p, off2r, off2c = lv2
    k_rlo, k_rhi, k_clo, k_chi, k_w, k_pair, k_path = kept
    ra_i, ra_p, _, _, ca_i, ca_p, _, _ = lists
    top_r = 0
    top_c = 0
    for g in range(nk2):
        k_rlo[0, g] = top_r
        k_clo[0, g] = top_c
        for q in range(off2r[g], off2r[g + 1]):
            ra_i[top_r] = r2[q]
            ra_p[top_r] = r2p[q]
            top_r += 1
        for q in range(off2c[g], off2c[g + 1]):
            ca_i[top_c] = c2[q]
            ca_p[top_c] = c2p[q]
            top_c += 1
        k_rhi[0, g] = top_r
        k_chi[0, g] = top_c
        k_w[0, g] = 1.0 / repeats
        k_pair[0, g] = False
        k_path[0, g, 0] = e
        k_path[0, g, 1] = kids2[g]


@njit(cache=True, nogil=True)
def _visit_level(cur, n_cur, m, e, inputs, pair_limit, pairs_ok, limit, out, scratch, kept, lists, strata, total):
    """Books the kept nodes of a level (depth m) and deals their children into strata (weighted reservoirs).

    Returns (strata used, total, stopped: a node alone passes ``limit``).
    """
    r_ptr, r_el, c_ptr, c_el = inputs
    sub, sub2, clo, clo2 = out
    flag, cr, cc, touched, _, _ = scratch
    k_rlo, k_rhi, k_clo, k_chi, k_w, k_pair, k_path = kept
    ra_i, ra_p, _, _, ca_i, ca_p, _, _ = lists
    s_w, s_parent, s_elem, s_used = strata
    n_used = 0
    for i in range(n_cur):
        w = k_w[cur, i]
        a_i = ra_i[k_rlo[cur, i] : k_rhi[cur, i]]
        a_p = ra_p[k_rlo[cur, i] : k_rhi[cur, i]]
        x_i = ca_i[k_clo[cur, i] : k_chi[cur, i]]
        x_p = ca_p[k_clo[cur, i] : k_chi[cur, i]]
        n_a = a_i.shape[0]
        n_x = x_i.shape[0]
        if w > limit:  # this node alone makes the family pass the limit
            return n_used, total, True
        g = k_path[cur, i, 1]
        if not k_pair[cur, i] and pair_limit > 0 and n_a * n_x <= pair_limit:
            pw = w * _pairs_finish(r_ptr, r_el, a_i, a_p, n_a, c_ptr, c_el, x_i, x_p, n_x)
            sub[0, e] += w  # the node itself is walked, its subtree finished from pairs
            sub[2, e] += pw
            if pairs_ok:
                sub2[0, e, g] += w
                sub2[2, e, g] += pw
            k_pair[cur, i] = True
        nt, w1 = _children(r_ptr, r_el, a_i, a_p, n_a, 0, cr, touched, 0, flag, np.int8(1))
        nt, w2 = _children(c_ptr, c_el, x_i, x_p, n_x, 0, cc, touched, nt, flag, np.int8(2))
        dl = float(w1 + w2)
        sub[3, e] += w
        if not k_pair[cur, i]:
            sub[0, e] += w
            sub[1, e] += w * dl
            if pairs_ok:
                sub2[0, e, g] += w
                sub2[1, e, g] += w * dl
        _account(k_path[cur, i], m, w, dl, clo[0], clo[1], clo[2], clo2[0], clo2[1], pairs_ok)
        total += w * (1.0 + dl)
        # the children, into strata (weighted reservoir: one representative each)
        for u in range(nt):
            x = touched[u]
            if flag[x] == 3:
                st = (_lg(cr[x]) * 64 + _lg(cc[x])) % 4096
                if k_pair[cur, i]:
                    st += 4096
                if s_w[st] == 0.0:
                    s_used[n_used] = st
                    n_used += 1
                s_w[st] += w
                for slot_ in range(_SLOTS):  # independent weighted reservoirs
                    if np.random.random() * s_w[st] < w:
                        s_parent[st, slot_] = i
                        s_elem[st, slot_] = x
            flag[x] = 0
            cr[x] = 0
            cc[x] = 0
    return n_used, total, False


@njit(cache=True, nogil=True)
def _next_level(cur, nxt, n_used, m, inputs, kept, lists, strata):
    """The next level: the strata's representatives, their lists restricted from their parents'."""
    r_ptr, r_el, c_ptr, c_el = inputs
    k_rlo, k_rhi, k_clo, k_chi, k_w, k_pair, k_path = kept
    ra_i, ra_p, rb_i, rb_p, ca_i, ca_p, cb_i, cb_p = lists
    s_w, s_parent, s_elem, s_used = strata
    top_r = 0
    top_c = 0
    n_next = 0
    for jj in range(n_used * _SLOTS):
        st = s_used[jj // _SLOTS]
        i = s_parent[st, jj % _SLOTS]
        x = s_elem[st, jj % _SLOTS]
        j = n_next
        n_next += 1
        lo_r, hi_r = k_rlo[cur, i], k_rhi[cur, i]
        lo_c, hi_c = k_clo[cur, i], k_chi[cur, i]
        if top_r + (hi_r - lo_r) > rb_i.shape[0]:
            rb_i = _grow(rb_i, top_r + (hi_r - lo_r))
            rb_p = _grow(rb_p, top_r + (hi_r - lo_r))
        if top_c + (hi_c - lo_c) > cb_i.shape[0]:
            cb_i = _grow(cb_i, top_c + (hi_c - lo_c))
            cb_p = _grow(cb_p, top_c + (hi_c - lo_c))
        nb = _restrict(r_ptr, r_el, ra_i[lo_r:hi_r], ra_p[lo_r:hi_r], hi_r - lo_r, 0, x, rb_i[top_r:], rb_p[top_r:])
        ny = _restrict(c_ptr, c_el, ca_i[lo_c:hi_c], ca_p[lo_c:hi_c], hi_c - lo_c, 0, x, cb_i[top_c:], cb_p[top_c:])
        k_rlo[nxt, j] = top_r
        k_rhi[nxt, j] = top_r + nb
        k_clo[nxt, j] = top_c
        k_chi[nxt, j] = top_c + ny
        top_r += nb
        top_c += ny
        k_w[nxt, j] = s_w[st] / _SLOTS
        k_pair[nxt, j] = k_pair[cur, i]
        for u in range(m):
            k_path[nxt, j, u] = k_path[cur, i, u]
        k_path[nxt, j, m] = x
    for jj in range(n_used):
        s_w[s_used[jj]] = 0.0
    return n_next, (ra_i, ra_p, rb_i, rb_p, ca_i, ca_p, cb_i, cb_p)
