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
lists and never a scan over every element.  Its two walks (two kernels,
:func:`_walk_nodes` and :func:`_walk_moments`; :class:`Walk` says which)

* accumulate the factorial moments ``m[p, q] += N(W)`` (p truth and q pred
  members) of the sets it is *responsible* for, exactly, in 128 bits
  (two uint64 words), and
* the *storing* walk also keeps every node in depth-first preorder (element, parent,
  end of its subtree, N), the input of the MOCICE-BCubed transforms
  (:mod:`daskbicl.kernels.micro.family_leaf`).  Children are then visited from the
  largest element down, so that every W - a (a a member of W) is stored
  before W: the walk records those links (W - a is the child "last member
  of W" of (parent of W) - a, found by a binary search among that node's
  children), and the transforms never look a set up by value;
* the *finishing* walk stores nothing and finishes the subtree of a node
  with few (row, column) pairs from those pairs.

``min_elem`` restricts children to elements ≥ ``min_elem`` (a subtree of the
global enumeration: no set is visited twice across subtrees); with 0 every
superset of B is visited (the closure MOCICE-BCubed needs).

The kernel takes NamedTuples (:class:`Lists`, :class:`Start`,
:class:`Moments`, :class:`Walk`) and returns :class:`Family`; each walk
unpacks them once.  The per-node steps are helpers inlined into the walks'
numba IR (``inline="always"``) that take the arrays themselves (a walk
passing tuples of arrays to helpers compiled apart ran 1.3-2x slower:
numba counts a reference to each array of a tuple it passes or reads).

numba is imported by the family modules only, and they are imported inside
functions: ``import daskbicl`` never loads it, the first micro-object
measure does (compiled once, then read from numba's on-disk cache:
``cache=True``; ``nogil=True`` so that threads run tasks in parallel).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..compiled import announce_compiles
from .budget import NODE_STEPS

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["NODE_STEPS", "NO_LIMIT", "enumerate_family", "Family", "Lists", "Moments", "Start", "Walk"]

_NO_WORDS = np.zeros(0, np.uint64)  # a walk that stores no hashes
#: No limit on a walk's steps (a node counts for :data:`~daskbicl.kernels.micro.budget.NODE_STEPS`).
NO_LIMIT = 2**62


class Lists(NamedTuple):
    """The rows and columns of a subproblem, as sparse membership lists.

    Row i has the (ascending) elements ``r_el[r_ptr[i]:r_ptr[i + 1]]`` (the
    required set B removed) and stands for ``r_cnt[i]`` identical rows
    (int64, int32, int64 arrays); the columns likewise.
    """

    r_ptr: np.ndarray
    r_el: np.ndarray
    r_cnt: np.ndarray
    c_ptr: np.ndarray
    c_el: np.ndarray
    c_cnt: np.ndarray


class Start(NamedTuple):
    """Where a walk starts.

    ``n_elem``, ``n_truth``: the elements (K + L) and truth elements (K,
    first); ``base_truth``, ``base_pred``: the truth and pred members of B;
    children use elements ≥ ``min_elem`` only; a node is *responsible*
    (counted in the moments) when its smallest element outside B is >
    ``resp_above``, or it is B itself.
    """

    n_elem: int
    n_truth: int
    base_truth: int = 0
    base_pred: int = 0
    min_elem: int = 0
    resp_above: int = -1


class Moments(NamedTuple):
    """Accumulators of the factorial moments ``m[p, q]`` in 128 bits: low and high uint64 words,
    (K + 1, L + 1) arrays (updated in place)."""

    lo: np.ndarray
    hi: np.ndarray


class Walk(NamedTuple):
    """Which walk: the storing walk (``store``) or the finishing walk, and their settings.

    Storing: every node is kept, at most ``cap`` (``Family.full`` beyond;
    the arrays start at ``hint`` nodes); ``rnd`` holds a random uint64 word
    per element (a node's hash is the sum of its elements' words, mod
    2**64), an empty array stores no hashes.  Finishing: nothing is stored;
    a responsible node below the root whose rows times columns (entries of
    its lists) are at most ``pair_limit`` finishes its subtree from those
    pairs (the sets below it are the subsets of each pair's common
    elements, so a pair adds ``w C(a, p) C(b, q)`` to the moments).
    Both stop as soon as their *steps* (deliveries, plus :data:`NODE_STEPS`
    per node) pass ``limit``: the work allowance (``Family.deliveries`` then
    exceeds it and nothing else is meaningful).
    """

    store: bool
    cap: int
    hint: int
    rnd: np.ndarray
    pair_limit: int
    limit: int = NO_LIMIT

    @classmethod
    def storing(cls, cap: int, hint: int, rnd: np.ndarray, limit: int = NO_LIMIT) -> Walk:
        """The storing walk (the input of the MOCICE-BCubed transforms and of the union tables)."""
        return cls(True, int(cap), int(hint), rnd, 0, int(min(limit, NO_LIMIT)))

    @classmethod
    def finishing(cls, pair_limit: int, limit: int = NO_LIMIT) -> Walk:
        """The finishing walk: moments only, a subtree of at most ``pair_limit`` pairs finished from them."""
        return cls(False, 0, 16, _NO_WORDS, int(pair_limit), int(min(limit, NO_LIMIT)))


class Family(NamedTuple):
    """What a walk returns; the nodes the storing walk kept, in depth-first preorder (node 0 is B itself,
    ``elem`` -1; none from the finishing walk).

    ``full``: the store reached its cap, ``spent``: the walk its
    ``limit`` (only ``n_nodes`` is then meaningful); ``n_nodes``: nodes visited; ``deliveries``: the work (list
    entries moved); ``cells[k]`` is N(W_k) = N_r(W_k) N_c(W_k); ``end[k]``
    ends the subtree of k; ``key[k]`` the hash of W_k (empty without words);
    ``down[dptr[k]:dptr[k + 1]]`` are the nodes of W_k minus each of its
    members outside B, in the order of those members (ascending).
    """

    full: bool
    spent: bool
    n_nodes: int
    deliveries: int
    elem: np.ndarray
    parent: np.ndarray
    end: np.ndarray
    cells: np.ndarray
    key: np.ndarray
    dptr: np.ndarray
    down: np.ndarray


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
#: Binomial coefficients C(a, b), a and b up to PAIR_DEPTH (a constant of the compiled finishing walk).
BINOM = np.array([[math.comb(a, b) for b in range(PAIR_DEPTH + 1)] for a in range(PAIR_DEPTH + 1)], np.int64)


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


@njit(cache=True, nogil=True, inline="always")
def _kids_of(touched, n_t, flag, kids, nr_items, nc_items, rtop, ctop):
    """The children of a node: the touched elements flagged by both its rows and its columns, ascending in
    ``kids``.  Returns their number and the arena tops once their lists are laid out from ``rtop``, ``ctop``."""
    n_kids = 0
    for t in range(n_t):
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
    need_r = rtop
    need_c = ctop
    for t in range(n_kids):
        e = kids[t]
        need_r += nr_items[e]
        need_c += nc_items[e]
    return n_kids, need_r, need_c


@njit(cache=True, nogil=True, inline="always")
def _lay_out(kids, n_kids, nr_items, nr_w, nc_items, nc_w, offr, offc, ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi,
             ch_nr, ch_nc, chtop, rtop, ctop):
    """Children ``chtop:chtop + n_kids``: element, list ranges in the arenas from ``rtop``, ``ctop`` (the
    next slot of each child's lists in ``offr``, ``offc``), rows and columns.  Returns the new arena tops."""
    o_r, o_c = rtop, ctop
    for t in range(n_kids):
        e = kids[t]
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
    return o_r, o_c


@njit(cache=True, nogil=True, inline="always")
def _clear(touched, n_t, kids, n_kids, flag, nr_items, nr_w, nc_items, nc_w, offr, offc):
    """Reset the per-element scratch of the ``n_t`` elements touched and the ``n_kids`` children."""
    for t in range(n_t):
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


@njit(cache=True, nogil=True, inline="always")
def _push(st_nt, st_np, st_resp, d, e, n_truth, resp_above, moments_lo, moments_hi, rows, cols):
    """Depth ``d + 1`` of the stack for the child ``e`` (``rows`` x ``cols`` cells) of the node at depth ``d``:
    its truth and pred members and whether it is responsible, its cells added to the moments if so."""
    is_t = e < n_truth
    nt = st_nt[d] + (1 if is_t else 0)
    npr = st_np[d] + (0 if is_t else 1)
    resp = st_resp[d] if d > 0 else e > resp_above
    if resp:
        _add_product(moments_lo, moments_hi, nt, npr, rows, cols)
    st_nt[d + 1] = nt
    st_np[d + 1] = npr
    st_resp[d + 1] = resp


@njit(cache=True, nogil=True)
def _arena(ptr, n):
    """The arena of one axis's (item, position before its first element) entries, room for twice its ``n``
    lists: the root's lists first."""
    item = np.empty(max(16, 2 * n), np.int32)
    pos = np.empty(max(16, 2 * n), np.int32)
    for i in range(n):
        item[i] = i
        pos[i] = ptr[i] - 1
    return item, pos


@njit(cache=True, nogil=True)
def _total(cnt):
    """Rows (or columns) of the subproblem: their weights summed."""
    total = np.int64(0)
    for i in range(cnt.shape[0]):
        total += cnt[i]
    return total


@njit(cache=True, nogil=True)
def _children(n_elem):
    """The children of the nodes on the stack: element, list ranges in the arenas, rows and columns."""
    size = 4 * n_elem + 64
    return (np.empty(size, np.int32), np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64),
            np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64))


@njit(cache=True, nogil=True)
def _grow_children(ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc, need):
    """The children's arrays with room for ``need`` children."""
    return (_grow(ch_el, need), _grow(ch_rlo, need), _grow(ch_rhi, need), _grow(ch_clo, need), _grow(ch_chi, need),
            _grow(ch_nr, need), _grow(ch_nc, need))


@njit(cache=True, nogil=True)
def _scratch(n_elem):
    """Per element: rows and columns delivered (items, weight), flags, next slots, touched, children."""
    return (np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int64),
            np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int8), np.full(n_elem, -1, np.int64),
            np.full(n_elem, -1, np.int64), np.empty(n_elem, np.int64), np.empty(n_elem, np.int64))


@njit(cache=True, nogil=True)
def _stack(start):
    """Per depth: node, children (cbeg:cend, next ci - 1), arena tops, members, responsible, hash; depth 0
    holds B itself."""
    depth = start.n_elem + 2
    st = (np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64),
          np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64),
          np.empty(depth, np.bool_), np.empty(depth, np.uint64))
    st[0][0] = 0
    st[6][0] = start.base_truth
    st[7][0] = start.base_pred
    st[8][0] = True
    st[9][0] = np.uint64(0)
    return st


@njit(cache=True, nogil=True)
def _store(size, keys, cells):
    """A node store for ``size`` nodes (hashes only with ``keys``), its links and children lists, holding the
    root (B itself, ``cells`` cells)."""
    store = (np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int64),
             np.empty(size if keys else 1, np.uint64), np.zeros(size + 1, np.int64), np.empty(4 * size, np.int32),
             np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int32))
    store[0][0] = -1
    store[1][0] = -1
    store[3][0] = cells
    if keys:
        store[4][0] = np.uint64(0)
    store[8][0] = 0
    return store


@njit(cache=True, nogil=True)
def _grow_store(elem, parent, end, ncell, key, dptr, cstart, ccount, keys, need):
    """The node store's per-node arrays with room for ``need`` nodes."""
    return (_grow(elem, need), _grow(parent, need), _grow(end, need), _grow(ncell, need),
            _grow(key, need) if keys else key, _grow(dptr, need), _grow(cstart, need), _grow(ccount, need))


@njit(cache=True, nogil=True)
def enumerate_family(lists, start, moments, walk):
    """Depth-first walk of the family of a subproblem (module docstring): :class:`Lists` ``lists`` walked
    from :class:`Start` ``start`` as :class:`Walk` ``walk`` says, the moments of the responsible sets added
    to :class:`Moments` ``moments``.  Returns :class:`Family`."""
    if walk.store:
        return _walk_nodes(lists, start, moments, walk.cap, walk.hint, walk.rnd, walk.limit)
    return _walk_moments(lists, start, moments, walk.pair_limit, walk.limit)


@njit(cache=True, nogil=True)
def _walk_nodes(lists, start, moments, cap, hint, rnd, limit):
    """The storing walk (:class:`Walk`): every node kept, with its links to the sets one member smaller."""
    r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt = lists
    moments_lo, moments_hi = moments
    n_truth, resp_above = start.n_truth, start.resp_above
    ar_item, ar_pos = _arena(r_ptr, r_cnt.shape[0])
    ac_item, ac_pos = _arena(c_ptr, c_cnt.shape[0])
    ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = _children(start.n_elem)
    st_node, st_cbeg, st_ci, st_cend, st_rtop, st_ctop, st_nt, st_np, st_resp, st_key = _stack(start)
    nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, kids = _scratch(start.n_elem)
    total_r, total_c = _total(r_cnt), _total(c_cnt)
    deliveries = np.int64(0)
    if total_r == 0 or total_c == 0:
        return _nothing(0, deliveries, False)
    keys = rnd.shape[0] > 0
    elem, parent, end, ncell, key, dptr, down, cstart, ccount, cb_elem, cb_node = _store(
        max(1024, min(cap, hint) + 2), keys, total_r * total_c)
    cb_top = np.int64(0)
    n_nodes = 1
    _add_product(moments_lo, moments_hi, start.base_truth, start.base_pred, total_r, total_c)
    d = 0
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(r_cnt.shape[0]), np.int64(0), np.int64(c_cnt.shape[0])
    rtop, ctop = hi_r, hi_c
    chtop = np.int64(0)
    first_elem = start.min_elem
    while True:
        # deliver the lists of the node on top of the stack to its children, then go to the next node
        n_t, moved = _tally(r_ptr, r_el, r_cnt, ar_item, ar_pos, lo_r, hi_r, first_elem, 1, flag, touched, 0,
                            nr_items, nr_w)
        deliveries += moved
        n_t, moved = _tally(c_ptr, c_el, c_cnt, ac_item, ac_pos, lo_c, hi_c, first_elem, 2, flag, touched, n_t,
                            nc_items, nc_w)
        deliveries += moved
        n_kids, need_r, need_c = _kids_of(touched, n_t, flag, kids, nr_items, nc_items, rtop, ctop)
        if need_r > ar_item.shape[0]:
            ar_item, ar_pos = _grow(ar_item, need_r), _grow(ar_pos, need_r)
        if need_c > ac_item.shape[0]:
            ac_item, ac_pos = _grow(ac_item, need_c), _grow(ac_pos, need_c)
        if chtop + n_kids > ch_el.shape[0]:
            ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = _grow_children(
                ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc, chtop + n_kids)
        o_r, o_c = _lay_out(kids, n_kids, nr_items, nr_w, nc_items, nc_w, offr, offc, ch_el, ch_rlo, ch_rhi, ch_clo,
                            ch_chi, ch_nr, ch_nc, chtop, rtop, ctop)
        if n_kids > 0:
            _place(r_ptr, r_el, ar_item, ar_pos, lo_r, hi_r, first_elem, offr)
            _place(c_ptr, c_el, ac_item, ac_pos, lo_c, hi_c, first_elem, offc)
        _clear(touched, n_t, kids, n_kids, flag, nr_items, nr_w, nc_items, nc_w, offr, offc)
        st_cbeg[d] = chtop
        st_ci[d] = chtop + n_kids  # children are visited from the largest element down
        st_cend[d] = chtop + n_kids
        st_rtop[d] = o_r
        st_ctop[d] = o_c
        node = st_node[d]
        if cb_top + n_kids > cb_elem.shape[0]:
            cb_elem, cb_node = _grow(cb_elem, cb_top + n_kids), _grow(cb_node, cb_top + n_kids)
        cstart[node] = cb_top
        ccount[node] = n_kids
        for t in range(n_kids):
            cb_elem[cb_top + t] = kids[t]
        cb_top += n_kids
        chtop += n_kids
        first_elem = 0
        while d >= 0 and st_ci[d] == st_cbeg[d]:  # the next unvisited child, popping finished nodes
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
        if k >= cap or deliveries + NODE_STEPS * k > limit:
            return Family(k >= cap, k < cap, n_nodes, deliveries, elem, parent, end, ncell, key, dptr, down)
        if k + 1 >= elem.shape[0]:
            elem, parent, end, ncell, key, dptr, cstart, ccount = _grow_store(elem, parent, end, ncell, key, dptr,
                                                                              cstart, ccount, keys, k + 2)
        p = st_node[d]
        elem[k] = e
        parent[k] = p
        ncell[k] = ch_nr[c] * ch_nc[c]
        if keys:
            key[k] = st_key[d] + rnd[e]
        ccount[k] = 0
        cb_node[cstart[p] + (c - st_cbeg[d])] = k
        if dptr[k] + d + 1 > down.shape[0]:
            down = _grow(down, dptr[k] + d + 1)
        top = dptr[k]
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
        st_nt[d + 1] = nt
        st_np[d + 1] = npr
        st_resp[d + 1] = resp
        d += 1
        st_node[d] = k
        if keys:
            st_key[d] = st_key[d - 1] + rnd[e]
        lo_r, hi_r, lo_c, hi_c = ch_rlo[c], ch_rhi[c], ch_clo[c], ch_chi[c]
        rtop, ctop = st_rtop[d - 1], st_ctop[d - 1]
    return Family(False, False, n_nodes, deliveries, elem[:n_nodes], parent[:n_nodes], end[:n_nodes], ncell[:n_nodes],
                  key[: n_nodes if keys else 0], dptr[: n_nodes + 1], down[: dptr[n_nodes]])


@njit(cache=True, nogil=True)
def _walk_moments(lists, start, moments, pair_limit, limit):
    """The finishing walk (:class:`Walk`): moments only, nothing stored."""
    r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt = lists
    moments_lo, moments_hi = moments
    n_truth, resp_above = start.n_truth, start.resp_above
    ar_item, ar_pos = _arena(r_ptr, r_cnt.shape[0])
    ac_item, ac_pos = _arena(c_ptr, c_cnt.shape[0])
    ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = _children(start.n_elem)
    _, st_cbeg, st_ci, st_cend, st_rtop, st_ctop, st_nt, st_np, st_resp, _ = _stack(start)
    nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, kids = _scratch(start.n_elem)
    pair_w = np.empty(max(pair_limit, 1), np.int64)  # the pairs of a node finished from its rows and columns
    pair_a = np.empty(max(pair_limit, 1), np.int64)
    pair_b = np.empty(max(pair_limit, 1), np.int64)
    total_r, total_c = _total(r_cnt), _total(c_cnt)
    deliveries = np.int64(0)
    if total_r == 0 or total_c == 0:
        return _nothing(0, deliveries, False)
    n_nodes = 1  # the root: B itself
    _add_product(moments_lo, moments_hi, start.base_truth, start.base_pred, total_r, total_c)
    d = 0
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(r_cnt.shape[0]), np.int64(0), np.int64(c_cnt.shape[0])
    rtop, ctop = hi_r, hi_c
    chtop = np.int64(0)
    first_elem = start.min_elem
    while True:
        # ---- finish the node's subtree from its pairs, or deliver its lists to its children
        finished = False
        if d > 0 and st_resp[d] and (hi_r - lo_r) * (hi_c - lo_c) <= pair_limit:
            finished, dl = _finish_by_pairs(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, ar_item, ar_pos, lo_r,
                                            hi_r, ac_item, ac_pos, lo_c, hi_c, n_truth, st_nt[d], st_np[d],
                                            BINOM, moments_lo, moments_hi, pair_w, pair_a, pair_b)
            deliveries += dl
        if finished:
            st_cbeg[d] = chtop
            st_ci[d] = chtop
            st_cend[d] = chtop
            st_rtop[d] = rtop
            st_ctop[d] = ctop
        else:
            n_t, moved = _tally(r_ptr, r_el, r_cnt, ar_item, ar_pos, lo_r, hi_r, first_elem, 1, flag, touched, 0,
                                nr_items, nr_w)
            deliveries += moved
            n_t, moved = _tally(c_ptr, c_el, c_cnt, ac_item, ac_pos, lo_c, hi_c, first_elem, 2, flag, touched, n_t,
                                nc_items, nc_w)
            deliveries += moved
            n_kids, need_r, need_c = _kids_of(touched, n_t, flag, kids, nr_items, nc_items, rtop, ctop)
            if need_r > ar_item.shape[0]:
                ar_item, ar_pos = _grow(ar_item, need_r), _grow(ar_pos, need_r)
            if need_c > ac_item.shape[0]:
                ac_item, ac_pos = _grow(ac_item, need_c), _grow(ac_pos, need_c)
            if chtop + n_kids > ch_el.shape[0]:
                ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = _grow_children(
                    ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc, chtop + n_kids)
            o_r, o_c = _lay_out(kids, n_kids, nr_items, nr_w, nc_items, nc_w, offr, offc, ch_el, ch_rlo, ch_rhi,
                                ch_clo, ch_chi, ch_nr, ch_nc, chtop, rtop, ctop)
            if n_kids > 0:
                _place(r_ptr, r_el, ar_item, ar_pos, lo_r, hi_r, first_elem, offr)
                _place(c_ptr, c_el, ac_item, ac_pos, lo_c, hi_c, first_elem, offc)
            _clear(touched, n_t, kids, n_kids, flag, nr_items, nr_w, nc_items, nc_w, offr, offc)
            st_cbeg[d] = chtop
            st_ci[d] = chtop + n_kids  # children are visited from the largest element down
            st_cend[d] = chtop + n_kids
            st_rtop[d] = o_r
            st_ctop[d] = o_c
            chtop += n_kids
        first_elem = 0
        # ---- next node: the next unvisited child, popping finished nodes
        while d >= 0 and st_ci[d] == st_cbeg[d]:
            d -= 1
            if d >= 0:
                chtop = st_cend[d]
        if d < 0:
            break
        if deliveries + NODE_STEPS * n_nodes > limit:
            return _nothing(n_nodes, deliveries, True)
        c = st_ci[d] - 1
        st_ci[d] = c
        n_nodes += 1
        _push(st_nt, st_np, st_resp, d, ch_el[c], n_truth, resp_above, moments_lo, moments_hi, ch_nr[c], ch_nc[c])
        d += 1
        lo_r, hi_r, lo_c, hi_c = ch_rlo[c], ch_rhi[c], ch_clo[c], ch_chi[c]
        rtop, ctop = st_rtop[d - 1], st_ctop[d - 1]
    return _nothing(n_nodes, deliveries, False)


@njit(cache=True, nogil=True)
def _nothing(n_nodes, deliveries, spent):
    """The finishing walk's :class:`Family`: no node stored."""
    return Family(False, spent, n_nodes, deliveries, np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.int32),
                  np.empty(0, np.int64), np.empty(0, np.uint64), np.zeros(1, np.int64), np.empty(0, np.int32))
