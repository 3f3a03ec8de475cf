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

Arguments of :func:`enumerate_family`: ``r_ptr, r_el, r_cnt`` (int64,
int32, int64) and ``c_ptr, c_el, c_cnt`` the rows and columns of the
subproblem; ``n_elem``, ``n_truth`` the elements (K + L) and truth elements
(K, first); ``base_truth``, ``base_pred`` the truth and pred members of B;
``min_elem``: children use elements ≥ it only; ``resp_above``: a node is
responsible (counted in the moments) when its smallest element outside B
is > resp_above, or it is B itself; ``store``: keep every node (for the
MOCICE-BCubed transforms); ``cap``, ``hint``: the largest number of stored
nodes (``STATUS_FULL`` beyond) and the expected one; ``rnd``: a random
uint64 word per element (a node's key is the sum of its elements' words,
mod 2**64; empty: no keys); ``moments_lo``, ``moments_hi``: (K + 1, L + 1)
uint64 accumulators of the factorial moments; ``pair_limit``: without
``store``, a node whose rows times columns are at most this many finishes
its subtree from those pairs (the sets below it are the subsets of each
pair's common elements, so a pair adds ``w C(a, p) C(b, q)``; ``binom`` the
binomial table); ``stats`` (int64, 2): incremented by the nodes visited and
the pairs finished that way.

The walk's steps are module-level numba helpers (count and fill passes
shared by rows and columns, children laid out, links to W - a); numba
compiles each once and links it into the walk.

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


@njit(cache=True, nogil=True)
def _count_side(ptr, el, cnt, item, pos, lo, hi, first, flag, bit, n_items, n_w, touched, n_t):
    """Count pass of one side: list entries and weight of each child element (elements ≥ first after
    each entry's position); new elements are appended to ``touched``.  Returns (n_t, entries read)."""
    work = 0
    for q in range(lo, hi):
        i = item[q]
        wi = cnt[i]
        start = pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first:
            start += 1
        for kk in range(start, stop):
            e = el[kk]
            if flag[e] == 0:
                touched[n_t] = e
                n_t += 1
            flag[e] |= bit
            n_items[e] += 1
            n_w[e] += wi
        work += stop - start
    return n_t, work


@njit(cache=True, nogil=True)
def _fill_side(ptr, el, item, pos, lo, hi, first, off):
    """Fill pass of one side: each entry of item/pos[lo:hi] into the bucket of each of its child elements
    (``off[e]``: next free slot of e's bucket, -1 if e is not a child), positioned at that element."""
    for q in range(lo, hi):
        i = item[q]
        start = pos[q] + 1
        stop = ptr[i + 1]
        while start < stop and el[start] < first:
            start += 1
        for kk in range(start, stop):
            o = off[el[kk]]
            if o >= 0:
                item[o] = i
                pos[o] = kk
                off[el[kk]] = o + 1


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
def _clear(touched, n_t, kids, n_kids, flag, scratch, off):
    """Resets the per-element scratch the count and fill passes used."""
    for t in range(n_t):
        e = touched[t]
        flag[e] = 0
        for r in range(4):
            scratch[r, e] = 0
    for t in range(n_kids):
        off[0, kids[t]] = -1
        off[1, kids[t]] = -1


@njit(cache=True, nogil=True)
def _lay_out(kids, n_kids, scratch, off, ch_el, ch, chtop, o_r, o_c):
    """Children ``chtop:chtop + n_kids``: element, list ranges ``ch[0:4]``, rows and columns ``ch[4:6]``."""
    for t in range(n_kids):
        e = kids[t]
        c = chtop + t
        ch_el[c] = e
        ch[0, c] = o_r
        ch[2, c] = o_c
        off[0, e] = o_r
        off[1, e] = o_c
        o_r += scratch[0, e]
        o_c += scratch[2, e]
        ch[1, c] = o_r
        ch[3, c] = o_c
        ch[4, c] = scratch[1, e]
        ch[5, c] = scratch[3, e]
    return o_r, o_c


@njit(cache=True, nogil=True)
def _grow_rows(a, need):
    """A 2-D array with at least ``need`` columns (twice as many at least), the old ones copied."""
    out = np.empty((a.shape[0], max(a.shape[1] * 2, need)), a.dtype)
    for r in range(a.shape[0]):
        for i in range(a.shape[1]):
            out[r, i] = a[r, i]
    return out


@njit(cache=True, nogil=True)
def _deliver(r, c, arena, lo_r, hi_r, lo_c, hi_c, first, rtop, ctop, chtop, work, ch_el, ch):
    """All children of a node: their elements and lists, delivered in one count and one fill pass.

    ``r``/``c``: (ptr, el, cnt) of the rows and columns; ``arena``: item and
    position of the row entries and of the column entries in use up to
    ``rtop``/``ctop``; ``work``: per-element scratch (flags, counts, bucket
    offsets, touched elements, children); ``ch_el``/``ch``: the children in use
    up to ``chtop``.  Returns (children, new tops, entries read, grown arenas).
    """
    ar_item, ar_pos, ac_item, ac_pos = arena
    flag, scratch, off, touched, kids = work
    n_t, dl_r = _count_side(r[0], r[1], r[2], ar_item, ar_pos, lo_r, hi_r, first, flag, 1, scratch[0],
                            scratch[1], touched, 0)
    n_t, dl_c = _count_side(c[0], c[1], c[2], ac_item, ac_pos, lo_c, hi_c, first, flag, 2, scratch[2],
                            scratch[3], touched, n_t)
    n_kids = _kids_of(touched, n_t, flag, kids)
    need_r = rtop
    need_c = ctop
    for t in range(n_kids):
        need_r += scratch[0, kids[t]]
        need_c += scratch[2, kids[t]]
    if need_r > ar_item.shape[0]:
        ar_item = _grow(ar_item, need_r)
        ar_pos = _grow(ar_pos, need_r)
    if need_c > ac_item.shape[0]:
        ac_item = _grow(ac_item, need_c)
        ac_pos = _grow(ac_pos, need_c)
    if chtop + n_kids > ch_el.shape[0]:
        ch_el = _grow(ch_el, chtop + n_kids)
        ch = _grow_rows(ch, chtop + n_kids)
    o_r, o_c = _lay_out(kids, n_kids, scratch, off, ch_el, ch, chtop, rtop, ctop)
    if n_kids > 0:
        _fill_side(r[0], r[1], ar_item, ar_pos, lo_r, hi_r, first, off[0])
        _fill_side(c[0], c[1], ac_item, ac_pos, lo_c, hi_c, first, off[1])
    _clear(touched, n_t, kids, n_kids, flag, scratch, off)
    return n_kids, o_r, o_c, dl_r + dl_c, (ar_item, ar_pos, ac_item, ac_pos), ch_el, ch


@njit(cache=True, nogil=True)
def _link_down(k, e, p, d, dptr, down, cstart, ccount, cb_elem, cb_node):
    """Records node k (= node p plus element e, depth d) minus each of its members (module docstring).

    W - a for every member a of W: the parent for a = e, else the child e of
    (parent - a), visited earlier because children go from the largest element down.
    Returns ``down`` (grown if needed).
    """
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
    return down


@njit(cache=True, nogil=True)
def _arena(ptr, n):
    """Entries (item, position before its first element) of the n lists, room for twice as many."""
    item = np.empty(max(16, 2 * n), np.int32)
    pos = np.empty(max(16, 2 * n), np.int32)
    for i in range(n):
        item[i] = i
        pos[i] = ptr[i] - 1
    return item, pos


@njit(cache=True, nogil=True)
def _grow_store(need, keys, elem, parent, end, ncell, key, dptr, cstart, ccount):
    """The node store's per-node arrays, grown to at least ``need`` nodes."""
    key = _grow(key, need) if keys else key
    return (_grow(elem, need), _grow(parent, need), _grow(end, need), _grow(ncell, need), key,
            _grow(dptr, need), _grow(cstart, need), _grow(ccount, need))


@njit(cache=True, nogil=True)
def _list_children(node, kids, n_kids, cstart, ccount, cb_elem, cb_node, cb_top):
    """Stores the children's elements of ``node`` (searched by :func:`_link_down`); returns the grown lists."""
    if cb_top + n_kids > cb_elem.shape[0]:
        cb_elem = _grow(cb_elem, cb_top + n_kids)
        cb_node = _grow(cb_node, cb_top + n_kids)
    cstart[node] = cb_top
    ccount[node] = n_kids
    for t in range(n_kids):
        cb_elem[cb_top + t] = kids[t]
    return cb_elem, cb_node


@njit(cache=True, nogil=True)
def _total(cnt):
    t = np.int64(0)
    for i in range(cnt.shape[0]):
        t += cnt[i]
    return t


@njit(cache=True, nogil=True)
def enumerate_family(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, n_elem, n_truth, base_truth, base_pred,
                     min_elem, resp_above, store, cap, hint, rnd, moments_lo, moments_hi, pair_limit, binom, stats):
    """Depth-first walk of the family of a subproblem (module docstring, "Arguments" for each argument).

    Rows of the subproblem: row i has the ascending elements
    ``r_el[r_ptr[i]:r_ptr[i + 1]]`` (B removed) and stands for ``r_cnt[i]``
    identical rows; columns likewise.  Updates ``moments_lo/hi`` and
    ``stats`` in place.

    Returns
    -------
    status, n_nodes, deliveries, elem, parent, end, cells, key, dptr, down
        ``deliveries`` counts the work (list entries moved); ``cells[k]`` is
        N(W_k); the node arrays are in depth-first preorder, node 0 being B
        itself (elem -1); ``down[dptr[k]:dptr[k + 1]]`` are the nodes of W_k
        minus each of its members outside B, in the order of those members.
    """
    r, c = (r_ptr, r_el, r_cnt), (c_ptr, c_el, c_cnt)
    n_rows, n_cols = r_cnt.shape[0], c_cnt.shape[0]
    arena = _arena(r[0], n_rows) + _arena(c[0], n_cols)
    work = (np.zeros(n_elem, np.int8), np.zeros((4, n_elem), np.int64), np.full((2, n_elem), -1, np.int64),
            np.empty(n_elem, np.int64), np.empty(n_elem, np.int64))
    ch_el, ch = np.empty(4 * n_elem + 64, np.int32), np.empty((6, 4 * n_elem + 64), np.int64)
    st = np.empty((8, n_elem + 2), np.int64)  # per depth: node, children begin, next, end, rtop, ctop, nt, np
    st_resp, st_key = np.empty(n_elem + 2, np.bool_), np.empty(n_elem + 2, np.uint64)
    pairs = np.empty((3, max(pair_limit, 1)), np.int64)
    size0 = max(1024, min(cap, hint) + 2) if store else 1
    keys = store and rnd.shape[0] > 0
    elem, parent, end = np.empty(size0, np.int32), np.empty(size0, np.int32), np.empty(size0, np.int32)
    ncell, key = np.empty(size0, np.int64), np.empty(size0 if keys else 1, np.uint64)
    dptr, down = np.zeros(size0 + 1, np.int64), np.empty(4 * size0 if store else 1, np.int32)
    cstart, ccount = np.empty(size0, np.int32), np.empty(size0, np.int32)
    cb_elem, cb_node = np.empty(size0, np.int32), np.empty(size0, np.int32)
    total_r, total_c = _total(r[2]), _total(c[2])
    deliveries, n_nodes, cb_top = np.int64(0), 0, np.int64(0)
    if total_r == 0 or total_c == 0:
        return (STATUS_OK, 0, deliveries, elem[:0], parent[:0], end[:0], ncell[:0], key[:0], dptr[:1], down[:0])
    if store:  # the root: B itself
        elem[0], parent[0], ncell[0], dptr[0], dptr[1], ccount[0] = -1, -1, total_r * total_c, 0, 0, 0
        if keys:
            key[0] = np.uint64(0)
    n_nodes = 1
    _add_product(moments_lo, moments_hi, base_truth, base_pred, total_r, total_c)
    d = 0
    st[0, 0], st[6, 0], st[7, 0], st_resp[0], st_key[0] = 0, base_truth, base_pred, True, np.uint64(0)
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(n_rows), np.int64(0), np.int64(n_cols)
    rtop, ctop, chtop = np.int64(n_rows), np.int64(n_cols), np.int64(0)
    first_elem = min_elem
    while True:
        # ---- deliver the lists of the node on top of the stack to its children (or finish it from pairs)
        finished = False
        if (not store) and d > 0 and st_resp[d] and (hi_r - lo_r) * (hi_c - lo_c) <= pair_limit:
            finished, dl = _finish_by_pairs(r[0], r[1], r[2], c[0], c[1], c[2], arena[0], arena[1], lo_r, hi_r,
                                            arena[2], arena[3], lo_c, hi_c, n_truth, st[6, d], st[7, d], binom,
                                            moments_lo, moments_hi, pairs[0], pairs[1], pairs[2])
            deliveries += dl
            stats[1] += 1 if finished else 0
        n_kids, o_r, o_c = 0, rtop, ctop
        if not finished:
            n_kids, o_r, o_c, dl, arena, ch_el, ch = _deliver(r, c, arena, lo_r, hi_r, lo_c, hi_c, first_elem, rtop,
                                                              ctop, chtop, work, ch_el, ch)
            deliveries += dl
            if store:
                cb_elem, cb_node = _list_children(st[0, d], work[4], n_kids, cstart, ccount, cb_elem, cb_node,
                                                  cb_top)
                cb_top += n_kids
        # children are visited from the largest element down
        st[1, d], st[2, d], st[3, d], st[4, d], st[5, d] = chtop, chtop + n_kids, chtop + n_kids, o_r, o_c
        chtop += n_kids
        first_elem = 0
        # ---- next node: the next unvisited child, popping finished nodes
        while d >= 0 and st[2, d] == st[1, d]:
            if store:
                end[st[0, d]] = n_nodes
            d -= 1
            if d >= 0:
                chtop = st[3, d]
        if d < 0:
            break
        ci = st[2, d] - 1
        st[2, d] = ci
        e = ch_el[ci]
        k = n_nodes
        if store:
            if k >= cap:
                return STATUS_FULL, n_nodes, deliveries, elem, parent, end, ncell, key, dptr, down
            if k + 1 >= elem.shape[0]:
                elem, parent, end, ncell, key, dptr, cstart, ccount = _grow_store(k + 2, keys, elem, parent, end,
                                                                                  ncell, key, dptr, cstart, ccount)
            p = st[0, d]
            elem[k], parent[k], ncell[k], ccount[k] = e, p, ch[4, ci] * ch[5, ci], 0
            if keys:
                key[k] = st_key[d] + rnd[e]
            cb_node[cstart[p] + (ci - st[1, d])] = k
            down = _link_down(k, e, p, d, dptr, down, cstart, ccount, cb_elem, cb_node)
        n_nodes = k + 1
        is_t = e < n_truth
        nt, npr = st[6, d] + (1 if is_t else 0), st[7, d] + (0 if is_t else 1)
        resp = st_resp[d] if d > 0 else e > resp_above
        if resp:
            _add_product(moments_lo, moments_hi, nt, npr, ch[4, ci], ch[5, ci])
        d += 1
        st[0, d], st[6, d], st[7, d], st_resp[d] = k, nt, npr, resp
        if keys:
            st_key[d] = st_key[d - 1] + rnd[e]
        lo_r, hi_r, lo_c, hi_c = ch[0, ci], ch[1, ci], ch[2, ci], ch[3, ci]
        rtop, ctop = st[4, d - 1], st[5, d - 1]
    stats[0] += n_nodes
    if not store:  # nothing was stored: the node arrays have one slot (reading dptr[n_nodes] was out of bounds)
        return (STATUS_OK, n_nodes, deliveries, elem[:0], parent[:0], end[:0], ncell[:0], key[:0], dptr[:1],
                down[:0])
    return (STATUS_OK, n_nodes, deliveries, elem[:n_nodes], parent[:n_nodes], end[:n_nodes],
            ncell[:n_nodes], key[: n_nodes if keys else 0], dptr[: n_nodes + 1], down[: dptr[n_nodes]])
