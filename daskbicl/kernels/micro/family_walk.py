"""The family of bicluster sets that share a cell, enumerated depth first (compiled with numba).

For a set W of biclusters (truth and pred numbered together, truth first),
``N(W) = N_r(W) N_c(W)`` is the number of cells inside every bicluster of W:
``N_r(W)`` rows are in the row set of every member, ``N_c(W)`` columns in
the column set of every member.  The *family* F is every W with N(W) > 0; it
is closed under subsets, and every cell statistic of the micro-object
measures is a sum over it (docs/measures/micro.md, "How the engine works").

:func:`enumerate_family` walks F depth first, adding elements in increasing
order, from the rows and columns of a *subproblem*: the rows and columns
that contain a required set B (given as sparse membership lists without B's
own elements).  Each node's rows and columns are *delivered* to its children
in one pass over their membership lists (occurrence delivering, as in the
LCM frequent-itemset miners), so a node costs the sizes of its children's
lists and never a scan over every element.  It

* accumulates the factorial moments ``m[p, q] += N(W)`` (p truth and q pred
  members) of the sets it is *responsible* for, exactly, in 128 bits
  (two uint64 words), and
* optionally stores every node in depth-first preorder (element, parent,
  end of its subtree, N), the input of the MOCICE-BCubed transforms
  (:mod:`daskbicl.kernels.micro.family_leaf`).  Children are then visited from the
  largest element down, so that every W - a (a a member of W) is stored
  before W: the walk records those links (W - a is the child "last member
  of W" of (parent of W) - a, found by a binary search among that node's
  children), and the transforms never look a set up by value.

``min_elem`` restricts children to elements ≥ ``min_elem`` (a subtree of the
global enumeration: no set is visited twice across subtrees); with 0 every
superset of B is visited (the closure MOCICE-BCubed needs).

numba is imported by the family modules only, and they are imported inside
functions: ``import daskbicl`` never loads it, the first micro-object
measure does (compiled once, then read from numba's on-disk cache:
``cache=True``; ``nogil=True`` so that threads run tasks in parallel).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["enumerate_family", "STATUS_OK", "STATUS_FULL"]

#: Return status of :func:`enumerate_family`: finished.
STATUS_OK = 0
#: The node store reached ``cap`` nodes; nothing else is valid.
STATUS_FULL = 1


@njit(cache=True, nogil=True)
def _add_product(lo, hi, i, j, w, c):
    """(hi, lo)[i, j] += w * c exactly, for w, c < 2**63 (a 64 x 64 -> 128-bit product)."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    w = np.uint64(w)
    c = np.uint64(c)
    ll = (w & m32) * (c & m32)
    lh = (w & m32) * (c >> s32)
    hl = (w >> s32) * (c & m32)
    hh = (w >> s32) * (c >> s32)
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    low = (ll & m32) | (mid << s32)
    high = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    old = lo[i, j]
    new = old + low
    lo[i, j] = new
    if new < old:
        high += np.uint64(1)
    hi[i, j] += high


@njit(cache=True, nogil=True)
def _grow(a, need):
    """``a`` copied into an array of at least ``need`` entries (twice as long at least); numba
    compiles one version per dtype, so one helper serves the int32, int64 and uint64 arrays."""
    size = max(a.shape[0] * 2, need)
    out = np.empty(size, a.dtype)
    for i in range(a.shape[0]):  # a loop: a slice assignment compiles numpy's broadcasting machinery
        out[i] = a[i]
    return out


#: Largest number of common truth (or pred) elements of a row and a column
#: for which a subtree is finished from its pairs (C(30, 15)**2 < 2**63).
PAIR_DEPTH = 30


@njit(cache=True, nogil=True)
def _finish_by_pairs(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, ar_item, ar_pos, lo_r, hi_r, ac_item, ac_pos,
                     lo_c, hi_c, n_truth, nt0, np0, binom, moments_lo, moments_hi, pair_w, pair_a, pair_b):
    """Moments of the subtree below a node from its (row, column) pairs; False if a pair is too deep.

    The sets strictly below the node are the non-empty subsets of the
    elements a row and a column of its lists share beyond the node's last
    element; a pair with a common truth and b common pred elements adds
    ``w C(a, p) C(b, q)`` cells to ``m[nt0 + p, np0 + q]`` (p + q > 0).
    """
    n = 0
    work = 0
    for q in range(lo_r, hi_r):
        i = ar_item[q]
        ka = ar_pos[q] + 1
        kend = r_ptr[i + 1]
        for q2 in range(lo_c, hi_c):
            j = ac_item[q2]
            x = ka
            y = ac_pos[q2] + 1
            yend = c_ptr[j + 1]
            work += (kend - x) + (yend - y)
            a = 0
            b = 0
            while x < kend and y < yend:
                ex = r_el[x]
                ey = c_el[y]
                if ex == ey:
                    if ex < n_truth:
                        a += 1
                    else:
                        b += 1
                    x += 1
                    y += 1
                elif ex < ey:
                    x += 1
                else:
                    y += 1
            if a > PAIR_DEPTH or b > PAIR_DEPTH:
                return False, work
            if a + b > 0:
                pair_w[n] = r_cnt[i] * c_cnt[j]
                pair_a[n] = a
                pair_b[n] = b
                n += 1
    for t in range(n):
        a = pair_a[t]
        b = pair_b[t]
        for p in range(a + 1):
            for q in range(b + 1):
                if p + q > 0:
                    _add_product(moments_lo, moments_hi, nt0 + p, np0 + q, pair_w[t], binom[a, p] * binom[b, q])
    return True, work


# The row and column loops of the walk share these two helpers; inline="always" (numba inlines them into the
# walk's IR) keeps the walk as fast as the copied loops were (benchmarks/micro.py --walk, round 6: 0.98-1.00x).
@njit(cache=True, nogil=True, inline="always")
def _tally(ptr, el, cnt, a_item, a_pos, lo, hi, first_elem, bit, flag, touched, n_t, n_items, n_w):
    """Count the entries ≥ ``first_elem`` of the lists ``lo:hi`` of one axis (rows or columns) per element.

    Marks each element with ``bit`` in ``flag`` (appending newly seen ones to
    ``touched``) and adds to its number of items and their weight.  Returns
    the new length of ``touched`` and the number of entries read.
    """
    moved = 0
    for q in range(lo, hi):
        i = a_item[q]
        wi = cnt[i]
        start = a_pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first_elem:
            start += 1
        for kk in range(start, stop):
            e = el[kk]
            if flag[e] == 0:
                touched[n_t] = e
                n_t += 1
            flag[e] |= bit
            n_items[e] += 1
            n_w[e] += wi
        moved += stop - start
    return n_t, moved


@njit(cache=True, nogil=True, inline="always")
def _place(ptr, el, a_item, a_pos, lo, hi, first_elem, off):
    """Copy each entry ≥ ``first_elem`` of the lists ``lo:hi`` to its child's list (next slot ``off[e]``, -1: none)."""
    for q in range(lo, hi):
        i = a_item[q]
        start = a_pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first_elem:
            start += 1
        for kk in range(start, stop):
            e = el[kk]
            o = off[e]
            if o >= 0:
                a_item[o] = i
                a_pos[o] = kk
                off[e] = o + 1


@njit(cache=True, nogil=True)
def enumerate_family(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, n_elem, n_truth, base_truth, base_pred,
                     min_elem, resp_above, store, cap, hint, rnd, moments_lo, moments_hi, pair_limit, binom, stats):
    """Depth-first walk of the family of a subproblem (module docstring).

    Parameters
    ----------
    r_ptr, r_el, r_cnt : int64, int32, int64 arrays
        Rows of the subproblem: row i has the (ascending) elements
        ``r_el[r_ptr[i]:r_ptr[i + 1]]`` (the required set B removed) and stands
        for ``r_cnt[i]`` identical rows.
    c_ptr, c_el, c_cnt
        The columns, likewise.
    n_elem, n_truth : int
        Number of elements (K + L) and of truth elements (K; they come first).
    base_truth, base_pred : int
        Truth and pred members of B.
    min_elem : int
        Children use elements ≥ min_elem only.
    resp_above : int
        A node is responsible (counted in the moments) when its smallest
        element outside B is > resp_above, or it is B itself.
    store : bool
        Keep every node (for the MOCICE-BCubed transforms).
    cap, hint : int
        Largest number of stored nodes (``STATUS_FULL`` beyond), and the
        expected number (the arrays start at that size).
    rnd : uint64 array
        Random word of each element (additive hash of a node: the sum of its
        elements' words, mod 2**64); an empty array stores no hashes.
    moments_lo, moments_hi : uint64 arrays (K + 1, L + 1)
        Accumulators of the factorial moments (updated in place).
    pair_limit : int
        Without ``store``: a node whose rows times columns (entries of its
        lists) are at most this many finishes its whole subtree from those
        pairs: the sets below it are the subsets of each pair's common
        elements, so each pair adds ``w C(a, p) C(b, q)`` to the moments
        (``binom``, a table of binomial coefficients) — no enumeration.
    stats : int64 array (2,)
        Incremented: [0] nodes visited, [1] pairs finished that way.

    Returns
    -------
    status, n_nodes, deliveries, elem, parent, end, cells, key, dptr, down
        ``deliveries`` counts the work (list entries moved); ``cells[k]`` is
        N(W_k) = N_r(W_k) N_c(W_k); the node arrays
        are in depth-first preorder, node 0 being B itself (elem -1);
        ``down[dptr[k]:dptr[k + 1]]`` are the nodes of W_k minus each of its
        members outside B, in the order of those members (ascending).
    """
    n_rows = r_cnt.shape[0]
    n_cols = c_cnt.shape[0]
    # arenas of (item, position) entries: the lists of the nodes on the stack
    ar_item = np.empty(max(16, 2 * n_rows), np.int32)
    ar_pos = np.empty(max(16, 2 * n_rows), np.int32)
    ac_item = np.empty(max(16, 2 * n_cols), np.int32)
    ac_pos = np.empty(max(16, 2 * n_cols), np.int32)
    for i in range(n_rows):
        ar_item[i] = i
        ar_pos[i] = r_ptr[i] - 1
    for j in range(n_cols):
        ac_item[j] = j
        ac_pos[j] = c_ptr[j] - 1
    # children arena: per child, element and its list ranges
    ch_cap = 4 * n_elem + 64
    ch_el = np.empty(ch_cap, np.int32)
    ch_rlo = np.empty(ch_cap, np.int64)
    ch_rhi = np.empty(ch_cap, np.int64)
    ch_clo = np.empty(ch_cap, np.int64)
    ch_chi = np.empty(ch_cap, np.int64)
    ch_nr = np.empty(ch_cap, np.int64)
    ch_nc = np.empty(ch_cap, np.int64)
    # per-depth stack
    depth_cap = n_elem + 2
    st_node = np.empty(depth_cap, np.int64)
    st_cbeg = np.empty(depth_cap, np.int64)
    st_ci = np.empty(depth_cap, np.int64)
    st_cend = np.empty(depth_cap, np.int64)
    st_rtop = np.empty(depth_cap, np.int64)
    st_ctop = np.empty(depth_cap, np.int64)
    st_nt = np.empty(depth_cap, np.int64)
    st_np = np.empty(depth_cap, np.int64)
    st_resp = np.empty(depth_cap, np.bool_)
    st_key = np.empty(depth_cap, np.uint64)
    # per-element scratch
    nr_items = np.zeros(n_elem, np.int64)
    nr_w = np.zeros(n_elem, np.int64)
    nc_items = np.zeros(n_elem, np.int64)
    nc_w = np.zeros(n_elem, np.int64)
    flag = np.zeros(n_elem, np.int8)
    offr = np.full(n_elem, -1, np.int64)
    offc = np.full(n_elem, -1, np.int64)
    touched = np.empty(n_elem, np.int64)
    kids = np.empty(n_elem, np.int64)
    # pairs of a node finished from its rows and columns
    pair_w = np.empty(max(pair_limit, 1), np.int64)
    pair_a = np.empty(max(pair_limit, 1), np.int64)
    pair_b = np.empty(max(pair_limit, 1), np.int64)
    # node store
    size0 = max(1024, min(cap, hint) + 2) if store else 1
    keys = store and rnd.shape[0] > 0
    elem = np.empty(size0, np.int32)
    parent = np.empty(size0, np.int32)
    end = np.empty(size0, np.int32)
    ncell = np.empty(size0, np.int64)
    key = np.empty(size0 if keys else 1, np.uint64)
    # links to the sets one member smaller (see the module docstring)
    dptr = np.zeros(size0 + 1, np.int64)
    down = np.empty(4 * size0 if store else 1, np.int32)
    cstart = np.empty(size0, np.int32)
    ccount = np.empty(size0, np.int32)
    cb_elem = np.empty(size0, np.int32)
    cb_node = np.empty(size0, np.int32)
    cb_top = np.int64(0)

    total_r = np.int64(0)
    for i in range(n_rows):
        total_r += r_cnt[i]
    total_c = np.int64(0)
    for j in range(n_cols):
        total_c += c_cnt[j]
    deliveries = np.int64(0)
    n_nodes = 0
    if total_r == 0 or total_c == 0:
        return (STATUS_OK, 0, deliveries, elem[:0], parent[:0], end[:0], ncell[:0], key[:0], dptr[:1],
                down[:0])

    # the root: B itself
    if store:
        elem[0] = -1
        parent[0] = -1
        ncell[0] = total_r * total_c
        if keys:
            key[0] = np.uint64(0)
        dptr[0] = 0
        dptr[1] = 0
        ccount[0] = 0
    n_nodes = 1
    _add_product(moments_lo, moments_hi, base_truth, base_pred, total_r, total_c)
    d = 0
    st_node[0] = 0
    st_nt[0] = base_truth
    st_np[0] = base_pred
    st_resp[0] = True
    st_key[0] = np.uint64(0)
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(n_rows), np.int64(0), np.int64(n_cols)
    rtop, ctop = np.int64(n_rows), np.int64(n_cols)
    chtop = np.int64(0)
    first_elem = min_elem
    while True:
        # ---- deliver the lists of the node on top of the stack to its children
        finished = False
        if (not store) and d > 0 and st_resp[d] and (hi_r - lo_r) * (hi_c - lo_c) <= pair_limit:
            finished, dl = _finish_by_pairs(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, ar_item, ar_pos, lo_r,
                                            hi_r, ac_item, ac_pos, lo_c, hi_c, n_truth, st_nt[d], st_np[d],
                                            binom, moments_lo, moments_hi, pair_w, pair_a, pair_b)
            deliveries += dl
            stats[1] += 1 if finished else 0
        if finished:
            st_cbeg[d] = chtop
            st_ci[d] = chtop
            st_cend[d] = chtop
            st_rtop[d] = rtop
            st_ctop[d] = ctop
            first_elem = 0
        else:
            n_t2, moved = _tally(r_ptr, r_el, r_cnt, ar_item, ar_pos, lo_r, hi_r, first_elem, 1, flag, touched, 0,
                                 nr_items, nr_w)
            deliveries += moved
            n_t2, moved = _tally(c_ptr, c_el, c_cnt, ac_item, ac_pos, lo_c, hi_c, first_elem, 2, flag, touched, n_t2,
                                 nc_items, nc_w)
            deliveries += moved
            n_kids = 0
            for t in range(n_t2):
                e = touched[t]
                if flag[e] == 3:
                    kids[n_kids] = e
                    n_kids += 1
            for t in range(1, n_kids):  # insertion sort: few children
                v = kids[t]
                u = t - 1
                while u >= 0 and kids[u] > v:
                    kids[u + 1] = kids[u]
                    u -= 1
                kids[u + 1] = v
            kids_view = kids
            need_r = rtop
            need_c = ctop
            for t in range(n_kids):
                e = kids_view[t]
                need_r += nr_items[e]
                need_c += nc_items[e]
            if need_r > ar_item.shape[0]:
                ar_item = _grow(ar_item, need_r)
                ar_pos = _grow(ar_pos, need_r)
            if need_c > ac_item.shape[0]:
                ac_item = _grow(ac_item, need_c)
                ac_pos = _grow(ac_pos, need_c)
            if chtop + n_kids > ch_el.shape[0]:
                ch_el = _grow(ch_el, chtop + n_kids)
                ch_rlo = _grow(ch_rlo, chtop + n_kids)
                ch_rhi = _grow(ch_rhi, chtop + n_kids)
                ch_clo = _grow(ch_clo, chtop + n_kids)
                ch_chi = _grow(ch_chi, chtop + n_kids)
                ch_nr = _grow(ch_nr, chtop + n_kids)
                ch_nc = _grow(ch_nc, chtop + n_kids)
            o_r, o_c = rtop, ctop
            for t in range(n_kids):
                e = kids_view[t]
                c = chtop + t
                ch_el[c] = e
                ch_rlo[c] = o_r
                ch_clo[c] = o_c
                offr[e] = o_r
                offc[e] = o_c
                o_r += nr_items[e]
                o_c += nc_items[e]
                ch_rhi[c] = o_r
                ch_chi[c] = o_c
                ch_nr[c] = nr_w[e]
                ch_nc[c] = nc_w[e]
            if n_kids > 0:
                _place(r_ptr, r_el, ar_item, ar_pos, lo_r, hi_r, first_elem, offr)
                _place(c_ptr, c_el, ac_item, ac_pos, lo_c, hi_c, first_elem, offc)
            for t in range(n_t2):
                e = touched[t]
                flag[e] = 0
                nr_items[e] = 0
                nr_w[e] = 0
                nc_items[e] = 0
                nc_w[e] = 0
            for t in range(n_kids):
                e = kids[t]
                offr[e] = -1
                offc[e] = -1
            st_cbeg[d] = chtop
            st_ci[d] = chtop + n_kids  # children are visited from the largest element down
            st_cend[d] = chtop + n_kids
            st_rtop[d] = o_r
            st_ctop[d] = o_c
            if store:
                node = st_node[d]
                if cb_top + n_kids > cb_elem.shape[0]:
                    cb_elem = _grow(cb_elem, cb_top + n_kids)
                    cb_node = _grow(cb_node, cb_top + n_kids)
                cstart[node] = cb_top
                ccount[node] = n_kids
                for t in range(n_kids):
                    cb_elem[cb_top + t] = kids_view[t]
                cb_top += n_kids
            chtop += n_kids
            first_elem = 0
        # ---- next node: the next unvisited child, popping finished nodes
        while d >= 0 and st_ci[d] == st_cbeg[d]:
            if store:
                end[st_node[d]] = n_nodes
            d -= 1
            if d >= 0:
                chtop = st_cend[d]
        if d < 0:
            break
        c = st_ci[d] - 1
        st_ci[d] = c
        e = ch_el[c]
        k = n_nodes
        if store:
            if k >= cap:
                return STATUS_FULL, n_nodes, deliveries, elem, parent, end, ncell, key, dptr, down
            if k + 1 >= elem.shape[0]:
                elem = _grow(elem, k + 2)
                parent = _grow(parent, k + 2)
                end = _grow(end, k + 2)
                ncell = _grow(ncell, k + 2)
                if keys:
                    key = _grow(key, k + 2)
                dptr = _grow(dptr, k + 2)
                cstart = _grow(cstart, k + 2)
                ccount = _grow(ccount, k + 2)
            p = st_node[d]
            elem[k] = e
            parent[k] = p
            ncell[k] = ch_nr[c] * ch_nc[c]
            if keys:
                key[k] = st_key[d] + rnd[e]
            ccount[k] = 0
            cb_node[cstart[p] + (c - st_cbeg[d])] = k
            # W - a for every member a of W: the parent for a = e, else the child e of (parent - a),
            # visited earlier because children go from the largest element down
            top = dptr[k]
            if top + d + 1 > down.shape[0]:
                down = _grow(down, top + d + 1)
            for i in range(d):
                m = down[dptr[p] + i]
                lo_b = cstart[m]
                hi_b = lo_b + ccount[m]
                while hi_b - lo_b > 1:  # binary search of e among m's children
                    mid = (lo_b + hi_b) // 2
                    if cb_elem[mid] <= e:
                        lo_b = mid
                    else:
                        hi_b = mid
                down[top + i] = cb_node[lo_b]
            down[top + d] = p
            dptr[k + 1] = top + d + 1
        n_nodes = k + 1
        is_t = e < n_truth
        nt = st_nt[d] + (1 if is_t else 0)
        npr = st_np[d] + (0 if is_t else 1)
        resp = st_resp[d] if d > 0 else e > resp_above
        if resp:
            _add_product(moments_lo, moments_hi, nt, npr, ch_nr[c], ch_nc[c])
        d += 1
        st_node[d] = k
        st_nt[d] = nt
        st_np[d] = npr
        st_resp[d] = resp
        if keys:
            st_key[d] = st_key[d - 1] + rnd[e]
        lo_r, hi_r = ch_rlo[c], ch_rhi[c]
        lo_c, hi_c = ch_clo[c], ch_chi[c]
        rtop, ctop = st_rtop[d - 1], st_ctop[d - 1]
    stats[0] += n_nodes
    if not store:  # nothing was stored: the node arrays have one slot (reading dptr[n_nodes] was out of bounds)
        return (STATUS_OK, n_nodes, deliveries, elem[:0], parent[:0], end[:0], ncell[:0], key[:0], dptr[:1],
                down[:0])
    return (STATUS_OK, n_nodes, deliveries, elem[:n_nodes], parent[:n_nodes], end[:n_nodes],
            ncell[:n_nodes], key[: n_nodes if keys else 0], dptr[: n_nodes + 1], down[: dptr[n_nodes]])
