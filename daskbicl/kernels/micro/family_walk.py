"""The family of bicluster sets that share a cell, enumerated depth first (compiled with numba).

For a set W of biclusters (truth and pred numbered together, truth first),
``N(W) = N_r(W) N_c(W)`` is the number of cells inside every bicluster of W:
``N_r(W)`` rows are in the row set of every member, ``N_c(W)`` columns in
the column set of every member.  The *family* F is every W with N(W) > 0; it
is closed under subsets, and every cell statistic of the micro-object
measures is a sum over it (docs/measures/micro.md, "How the engine works").

:func:`walk_moments` and :func:`walk_nodes` walk F depth first, adding elements in increasing
order, from the rows and columns of a *subproblem*: the rows and columns
that contain a required set B (given as sparse membership lists without B's
own elements).  Each node's rows and columns are *delivered* to its children
in one pass over their membership lists (occurrence delivering, as in the
LCM frequent-itemset miners), so a node costs the sizes of its children's
lists and never a scan over every element.  Both walks

* accumulate the factorial moments ``m[p, q] += N(W)`` (p truth and q pred
  members) of the sets it is *responsible* for, exactly, in 128 bits
  (two uint64 words), and
* :func:`walk_nodes` also stores every node in depth-first preorder (element, parent,
  end of its subtree, N), the input of the MOCICE-BCubed transforms
  (:mod:`daskbicl.kernels.micro.family_leaf`).  Children are then visited from the
  largest element down, so that every W - a (a a member of W) is stored
  before W: the walk records those links (W - a is the child "last member
  of W" of (parent of W) - a, found by a binary search among that node's
  children), and the transforms never look a set up by value.

``min_elem`` restricts children to elements ≥ ``min_elem`` (a subtree of the
global enumeration: no set is visited twice across subtrees); with 0 every
superset of B is visited (the closure MOCICE-BCubed needs).

:func:`walk_moments` stores nothing and finishes a subtree from the (row,
column) pairs of its node when they are few (``pair_limit``).  The two
kernels take NamedTuples of arrays (:class:`Lists`, :class:`Start`,
:class:`Moments`; numba types them as tuples) and unpack them once: the
helpers they call for every node take the arrays they use, because numba
counts a reference to every array of a tuple it passes or reads a field
of, an atomic operation each (walks passing tuples to per-node helpers
ran 1.4-2x slower, benchmarks/micro.py --walk).

numba is imported by the family modules only, and they are imported inside
functions: ``import daskbicl`` never loads it, the first micro-object
measure does (compiled once, then read from numba's on-disk cache:
``cache=True``; ``nogil=True`` so that threads run tasks in parallel).
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
from numba import njit

from ..compiled import announce_compiles

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["Family", "Lists", "Moments", "Start", "Walked", "walk_moments", "walk_nodes"]


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
    """Where a walk starts (Python ints).

    ``n_elem``, ``n_truth``: number of elements (K + L) and of truth elements
    (K; they come first); ``base_truth``, ``base_pred``: the truth and pred
    members of B; children use elements ≥ ``min_elem`` only; a node is
    *responsible* (counted in the moments) when its smallest element outside
    B is > ``resp_above``, or it is B itself.
    """

    n_elem: int
    n_truth: int
    base_truth: int = 0
    base_pred: int = 0
    min_elem: int = 0
    resp_above: int = -1


class Moments(NamedTuple):
    """The factorial moments ``m[p, q]`` in 128 bits: low and high uint64 words, (K + 1, L + 1) arrays."""

    lo: np.ndarray
    hi: np.ndarray


class Walked(NamedTuple):
    """What :func:`walk_moments` did: nodes visited (the ones finished from their pairs not counted) and
    deliveries (list entries moved: the work)."""

    n_nodes: int
    deliveries: int


class Family(NamedTuple):
    """The nodes :func:`walk_nodes` stored, in depth-first preorder (node 0 is B itself, ``elem`` -1).

    ``full``: the store reached its cap (only ``n_nodes`` is then
    meaningful); ``cells[k]`` is N(W_k); ``end[k]`` ends the subtree of k;
    ``key[k]`` the hash of W_k (empty without words); ``down[dptr[k]:dptr[k +
    1]]`` are the nodes of W_k minus each of its members outside B, in the
    order of those members (ascending).
    """

    full: bool
    n_nodes: int
    deliveries: int
    elem: np.ndarray
    parent: np.ndarray
    end: np.ndarray
    cells: np.ndarray
    key: np.ndarray
    dptr: np.ndarray
    down: np.ndarray


# The walks' working arrays (namedtuple: one line each).  _Arena: the (item, position) entries of the lists of
# the nodes on the stack; _Kids: per child of a node on the stack, its element, list ranges, rows and columns;
# _Scratch: per element; _Stack: per depth (children cbeg:cend, the next one ci - 1); _Nodes: the node store
# of walk_nodes and the children of each node (cstart, ccount, cb_elem, cb_node) its links look up.
_Arena = namedtuple("_Arena", "r_item r_pos c_item c_pos")
_Kids = namedtuple("_Kids", "el rlo rhi clo chi nr nc")
_Scratch = namedtuple("_Scratch", "nr_items nr_w nc_items nc_w flag offr offc touched kids")
_Stack = namedtuple("_Stack", "node cbeg ci cend rtop ctop nt npred resp key")
_Nodes = namedtuple("_Nodes", "elem parent end cells key dptr down cstart ccount cb_elem cb_node")


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
def _finish_by_pairs(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, r_item, r_pos, c_item, c_pos, lo_r, hi_r, lo_c, hi_c,
                     n_truth, nt0, np0, binom, m_lo, m_hi, pair_w, pair_a, pair_b):
    """Moments of the subtree below a node from its (row, column) pairs; False if a pair is too deep.

    The sets strictly below the node are the non-empty subsets of the
    elements a row and a column of its lists share beyond the node's last
    element; a pair with a common truth and b common pred elements adds
    ``w C(a, p) C(b, q)`` cells to ``m[nt0 + p, np0 + q]`` (p + q > 0).
    """
    n = 0
    work = 0
    for q in range(lo_r, hi_r):
        i = r_item[q]
        ka = r_pos[q] + 1
        kend = r_ptr[i + 1]
        for q2 in range(lo_c, hi_c):
            j = c_item[q2]
            x = ka
            y = c_pos[q2] + 1
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
                    _add_product(m_lo, m_hi, nt0 + p, np0 + q, pair_w[t], binom[a, p] * binom[b, q])
    return True, work


# The row and column loops of the walk share these two helpers; the small per-node helpers are inlined into
# the walks' IR (inline="always"); _tally, called from one, is left to LLVM (nested forced inlining measured slower).
@njit(cache=True, nogil=True)
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
def _fit(a, need):
    """``a``, or a copy of it with room for ``need`` entries when it has fewer."""
    return a if a.shape[0] >= need else _grow(a, need)


@njit(cache=True, nogil=True)
def _setup(sub, n_elem):
    """The arena (holding the root's lists), the children, the per-element scratch and the stack of a walk."""
    n_rows = sub.r_cnt.shape[0]
    n_cols = sub.c_cnt.shape[0]
    ar = _Arena(np.empty(max(16, 2 * n_rows), np.int32), np.empty(max(16, 2 * n_rows), np.int32),
                np.empty(max(16, 2 * n_cols), np.int32), np.empty(max(16, 2 * n_cols), np.int32))
    for i in range(n_rows):
        ar.r_item[i] = i
        ar.r_pos[i] = sub.r_ptr[i] - 1
    for j in range(n_cols):
        ar.c_item[j] = j
        ar.c_pos[j] = sub.c_ptr[j] - 1
    ch_cap = 4 * n_elem + 64
    ch = _Kids(np.empty(ch_cap, np.int32), np.empty(ch_cap, np.int64), np.empty(ch_cap, np.int64),
               np.empty(ch_cap, np.int64), np.empty(ch_cap, np.int64), np.empty(ch_cap, np.int64),
               np.empty(ch_cap, np.int64))
    sc = _Scratch(np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int64),
                  np.zeros(n_elem, np.int64), np.zeros(n_elem, np.int8), np.full(n_elem, -1, np.int64),
                  np.full(n_elem, -1, np.int64), np.empty(n_elem, np.int64), np.empty(n_elem, np.int64))
    depth = n_elem + 2
    st = _Stack(np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64),
                np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.int64),
                np.empty(depth, np.int64), np.empty(depth, np.int64), np.empty(depth, np.bool_),
                np.empty(depth, np.uint64))
    return ar, ch, sc, st


@njit(cache=True, nogil=True)
def _totals(sub):
    """Rows and columns of the subproblem (their weights summed)."""
    total_r = np.int64(0)
    for i in range(sub.r_cnt.shape[0]):
        total_r += sub.r_cnt[i]
    total_c = np.int64(0)
    for j in range(sub.c_cnt.shape[0]):
        total_c += sub.c_cnt[j]
    return total_r, total_c


@njit(cache=True, nogil=True, inline="always")
def _count_kids(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, r_item, r_pos, c_item, c_pos, nr_items, nr_w, nc_items,
                nc_w, flag, touched, kids, lo_r, hi_r, lo_c, hi_c, first_elem, rtop, ctop):
    """Count what the lists ``lo_r:hi_r``, ``lo_c:hi_c`` of a node deliver to its children (elements ≥
    ``first_elem``): the children in ``sc.kids`` (ascending), their entries in ``sc``.  Returns the
    elements touched, the number of children, the arena tops they need and the entries read."""
    n_t, moved = _tally(r_ptr, r_el, r_cnt, r_item, r_pos, lo_r, hi_r, first_elem, 1, flag,
                        touched, 0, nr_items, nr_w)
    n_t, moved_c = _tally(c_ptr, c_el, c_cnt, c_item, c_pos, lo_c, hi_c, first_elem, 2,
                          flag, touched, n_t, nc_items, nc_w)
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
        need_r += nr_items[kids[t]]
        need_c += nc_items[kids[t]]
    return n_t, n_kids, need_r, need_c, moved + moved_c


@njit(cache=True, nogil=True)
def _grow_arena(ar, need_r, need_c):
    """The arena with room for ``need_r`` row and ``need_c`` column entries."""
    return _Arena(_fit(ar.r_item, need_r), _fit(ar.r_pos, need_r), _fit(ar.c_item, need_c), _fit(ar.c_pos, need_c))


@njit(cache=True, nogil=True)
def _grow_kids(ch, need):
    """The children's arrays with room for ``need`` children."""
    return _Kids(_fit(ch.el, need), _fit(ch.rlo, need), _fit(ch.rhi, need), _fit(ch.clo, need), _fit(ch.chi, need),
                 _fit(ch.nr, need), _fit(ch.nc, need))


@njit(cache=True, nogil=True, inline="always")
def _fill_kids(el, rlo, rhi, clo, chi, nr, nc, nr_items, nr_w, nc_items, nc_w, offr, offc, kids, n_kids, rtop, ctop,
               chtop):
    """The children counted by :func:`_count_kids` go to the children's arrays from ``chtop``, their lists'
    slots in the arena from ``rtop`` and ``ctop`` (``offr``, ``offc``).  Returns the new arena tops."""
    o_r, o_c = rtop, ctop
    for t in range(n_kids):
        e = kids[t]
        c = chtop + t
        el[c] = e
        rlo[c] = o_r
        clo[c] = o_c
        offr[e] = o_r
        offc[e] = o_c
        o_r += nr_items[e]
        o_c += nc_items[e]
        rhi[c] = o_r
        chi[c] = o_c
        nr[c] = nr_w[e]
        nc[c] = nc_w[e]
    return o_r, o_c


@njit(cache=True, nogil=True, inline="always")
def _clear(nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, n_t, kids, n_kids):
    """Clear the scratch of the ``n_t`` elements touched and the ``n_kids`` children."""
    for t in range(n_t):
        e = touched[t]
        flag[e] = 0
        nr_items[e] = 0
        nr_w[e] = 0
        nc_items[e] = 0
        nc_w[e] = 0
    for t in range(n_kids):
        offr[kids[t]] = -1
        offc[kids[t]] = -1


@njit(cache=True, nogil=True)
def _root(st, start):
    """Depth 0 of the stack: B itself (node 0), responsible, hash 0."""
    st.node[0] = 0
    st.nt[0] = start.base_truth
    st.npred[0] = start.base_pred
    st.resp[0] = True
    st.key[0] = np.uint64(0)


@njit(cache=True, nogil=True)
def walk_moments(sub, start, moments, pair_limit, binom):
    """Walk the family of a subproblem (:class:`Lists` ``sub`` from :class:`Start` ``start``), storing nothing.

    Adds the moments of the responsible sets to ``moments``
    (:class:`Moments`).  A responsible node below the root whose rows times
    columns (entries of its lists) are at most ``pair_limit`` finishes its
    whole subtree from those pairs: the sets below it are the subsets of
    each pair's common elements, so each pair adds ``w C(a, p) C(b, q)``
    (``binom``, a table of binomial coefficients) — no enumeration.
    Returns :class:`Walked`.
    """
    ar, ch, sc, st = _setup(sub, start.n_elem)
    size = max(pair_limit, 1)
    pair_w, pair_a, pair_b = np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size, np.int64)
    total_r, total_c = _totals(sub)
    deliveries = np.int64(0)
    if total_r == 0 or total_c == 0:
        return Walked(0, deliveries)
    _add_product(moments.lo, moments.hi, start.base_truth, start.base_pred, total_r, total_c)
    _root(st, start)
    st_node, st_cbeg, st_ci, st_cend, st_rtop, st_ctop, st_nt, st_np, st_resp, _ = st
    ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = ch
    m_lo, m_hi = moments
    r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt = sub
    r_item, r_pos, c_item, c_pos = ar
    nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, kids = sc
    n_nodes = 1
    d = 0
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(sub.r_cnt.shape[0]), np.int64(0), np.int64(sub.c_cnt.shape[0])
    rtop, ctop = hi_r, hi_c
    chtop = np.int64(0)
    first_elem = start.min_elem
    while True:
        finished = False
        if d > 0 and st_resp[d] and (hi_r - lo_r) * (hi_c - lo_c) <= pair_limit:
            finished, dl = _finish_by_pairs(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, r_item, r_pos, c_item, c_pos, lo_r,
                                            hi_r, lo_c, hi_c, start.n_truth, st_nt[d], st_np[d], binom, m_lo, m_hi,
                                            pair_w, pair_a, pair_b)
            deliveries += dl
        n_kids, o_r, o_c = 0, rtop, ctop
        if not finished:
            n_t, n_kids, need_r, need_c, moved = _count_kids(
                r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, r_item, r_pos, c_item, c_pos, nr_items, nr_w, nc_items, nc_w,
                flag, touched, kids, lo_r, hi_r, lo_c, hi_c, first_elem, rtop, ctop)
            deliveries += moved
            if need_r > r_item.shape[0] or need_c > c_item.shape[0]:
                r_item, r_pos, c_item, c_pos = _grow_arena(_Arena(r_item, r_pos, c_item, c_pos), need_r, need_c)
            if chtop + n_kids > ch_el.shape[0]:
                ch = _grow_kids(ch, chtop + n_kids)
                ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = ch
            o_r, o_c = _fill_kids(ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc, nr_items, nr_w, nc_items, nc_w,
                                  offr, offc, kids, n_kids, rtop, ctop, chtop)
            if n_kids > 0:
                _place(r_ptr, r_el, r_item, r_pos, lo_r, hi_r, first_elem, offr)
                _place(c_ptr, c_el, c_item, c_pos, lo_c, hi_c, first_elem, offc)
            _clear(nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, n_t, kids, n_kids)
        st_cbeg[d] = chtop
        st_ci[d] = chtop + n_kids  # children are visited from the largest element down
        st_cend[d] = chtop + n_kids
        st_rtop[d] = o_r
        st_ctop[d] = o_c
        chtop += n_kids
        first_elem = 0
        while d >= 0 and st_ci[d] == st_cbeg[d]:  # the next unvisited child, popping finished nodes
            d -= 1
            if d >= 0:
                chtop = st_cend[d]
        if d < 0:
            break
        c = st_ci[d] - 1
        st_ci[d] = c
        e = ch_el[c]
        is_t = e < start.n_truth
        nt = st_nt[d] + (1 if is_t else 0)
        npr = st_np[d] + (0 if is_t else 1)
        resp = st_resp[d] if d > 0 else e > start.resp_above
        if resp:
            _add_product(m_lo, m_hi, nt, npr, ch_nr[c], ch_nc[c])
        st_node[d + 1] = n_nodes
        st_nt[d + 1] = nt
        st_np[d + 1] = npr
        st_resp[d + 1] = resp
        n_nodes += 1
        d += 1
        lo_r, hi_r, lo_c, hi_c = ch_rlo[c], ch_rhi[c], ch_clo[c], ch_chi[c]
        rtop, ctop = st_rtop[d - 1], st_ctop[d - 1]
    return Walked(n_nodes, deliveries)


@njit(cache=True, nogil=True)
def _new_nodes(size, keys):
    """An empty node store for ``size`` nodes (hashes only with ``keys``)."""
    return _Nodes(np.empty(size, np.int32), np.empty(size, np.int32), np.empty(size, np.int32),
                  np.empty(size, np.int64), np.empty(size if keys else 1, np.uint64), np.zeros(size + 1, np.int64),
                  np.empty(4 * size, np.int32), np.empty(size, np.int32), np.empty(size, np.int32),
                  np.empty(size, np.int32), np.empty(size, np.int32))


@njit(cache=True, nogil=True)
def _grow_nodes(nodes, n, n_down, n_children):
    """The node store with room for ``n`` nodes (twice as many at least), ``n_down`` links and ``n_children``
    children."""
    n = max(2 * nodes.elem.shape[0], n) if n > nodes.elem.shape[0] else 0
    return _Nodes(_fit(nodes.elem, n), _fit(nodes.parent, n), _fit(nodes.end, n), _fit(nodes.cells, n),
                  nodes.key if nodes.key.shape[0] == 1 else _fit(nodes.key, n), _fit(nodes.dptr, n + 1),
                  _fit(nodes.down, n_down), _fit(nodes.cstart, n), _fit(nodes.ccount, n),
                  _fit(nodes.cb_elem, n_children), _fit(nodes.cb_node, n_children))


@njit(cache=True, nogil=True, inline="always")
def _record(elem, parent, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node, k, e, p, slot, d, n_cells, h):
    """Store node ``k`` (element ``e``, child ``slot`` of node ``p`` at depth ``d``; ``n_cells`` cells, hash
    ``h``, none if ``key`` has one slot) and its links to the sets one member smaller (the store has room)."""
    elem[k] = e
    parent[k] = p
    cells[k] = n_cells
    if key.shape[0] > 1:
        key[k] = h
    ccount[k] = 0
    cb_node[cstart[p] + slot] = k
    # W - a for every member a of W: the parent for a = e, else the child e of (parent - a),
    # visited earlier because children go from the largest element down
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


@njit(cache=True, nogil=True)
def _family(full, n_nodes, deliveries, nodes, keys):
    """The first ``n_nodes`` of the store as a :class:`Family`."""
    n = n_nodes
    return Family(full, n, deliveries, nodes.elem[:n], nodes.parent[:n], nodes.end[:n], nodes.cells[:n],
                  nodes.key[: n if keys else 0], nodes.dptr[: n + 1], nodes.down[: nodes.dptr[n]])


@njit(cache=True, nogil=True)
def walk_nodes(sub, start, moments, cap, hint, rnd):
    """Walk the family of a subproblem (:class:`Lists` ``sub`` from :class:`Start` ``start``), storing it.

    Adds the moments of the responsible sets to ``moments`` and stores every
    node, at most ``cap`` (``Family.full`` beyond; the arrays start at
    ``hint`` nodes).  ``rnd`` holds a random word per element: a node's hash
    is the sum of its elements' words, mod 2**64; an empty ``rnd`` stores
    no hashes.  Returns :class:`Family`.
    """
    ar, ch, sc, st = _setup(sub, start.n_elem)
    keys = rnd.shape[0] > 0
    nodes = _new_nodes(max(1024, min(cap, hint) + 2), keys)
    total_r, total_c = _totals(sub)
    deliveries = np.int64(0)
    if total_r == 0 or total_c == 0:
        return _family(False, 0, deliveries, nodes, keys)
    nodes.elem[0] = -1
    nodes.parent[0] = -1
    nodes.cells[0] = total_r * total_c
    if keys:
        nodes.key[0] = np.uint64(0)
    nodes.ccount[0] = 0
    _add_product(moments.lo, moments.hi, start.base_truth, start.base_pred, total_r, total_c)
    _root(st, start)
    st_node, st_cbeg, st_ci, st_cend, st_rtop, st_ctop, st_nt, st_np, st_resp, st_key = st
    elem, parent, end, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node = nodes
    m_lo, m_hi = moments
    ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = ch
    r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt = sub
    r_item, r_pos, c_item, c_pos = ar
    nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, kids = sc
    n_nodes = 1
    d = 0
    lo_r, hi_r, lo_c, hi_c = np.int64(0), np.int64(r_cnt.shape[0]), np.int64(0), np.int64(c_cnt.shape[0])
    rtop, ctop = hi_r, hi_c
    chtop = np.int64(0)
    cb_top = np.int64(0)
    first_elem = start.min_elem
    while True:
        n_t, n_kids, need_r, need_c, moved = _count_kids(
            r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt, r_item, r_pos, c_item, c_pos, nr_items, nr_w, nc_items, nc_w,
            flag, touched, kids, lo_r, hi_r, lo_c, hi_c, first_elem, rtop, ctop)
        deliveries += moved
        if need_r > r_item.shape[0] or need_c > c_item.shape[0]:
            r_item, r_pos, c_item, c_pos = _grow_arena(_Arena(r_item, r_pos, c_item, c_pos), need_r, need_c)
        if chtop + n_kids > ch_el.shape[0]:
            ch = _grow_kids(ch, chtop + n_kids)
            ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc = ch
        o_r, o_c = _fill_kids(ch_el, ch_rlo, ch_rhi, ch_clo, ch_chi, ch_nr, ch_nc, nr_items, nr_w, nc_items, nc_w,
                              offr, offc, kids, n_kids, rtop, ctop, chtop)
        if n_kids > 0:
            _place(r_ptr, r_el, r_item, r_pos, lo_r, hi_r, first_elem, offr)
            _place(c_ptr, c_el, c_item, c_pos, lo_c, hi_c, first_elem, offc)
        _clear(nr_items, nr_w, nc_items, nc_w, flag, offr, offc, touched, n_t, kids, n_kids)
        st_cbeg[d] = chtop
        st_ci[d] = chtop + n_kids  # children are visited from the largest element down
        st_cend[d] = chtop + n_kids
        st_rtop[d] = o_r
        st_ctop[d] = o_c
        if cb_top + n_kids > cb_elem.shape[0]:
            nodes = _grow_nodes(_Nodes(elem, parent, end, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node),
                                0, 0, cb_top + n_kids)
            elem, parent, end, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node = nodes
        cstart[st_node[d]] = cb_top
        ccount[st_node[d]] = n_kids
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
        if n_nodes >= cap:
            return _family(True, n_nodes, deliveries, _Nodes(elem, parent, end, cells, key, dptr, down, cstart,
                                                             ccount, cb_elem, cb_node), keys)
        if n_nodes + 1 >= elem.shape[0] or dptr[n_nodes] + d + 1 > down.shape[0]:
            nodes = _grow_nodes(_Nodes(elem, parent, end, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node),
                                n_nodes + 2, dptr[n_nodes] + d + 1, 0)
            elem, parent, end, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node = nodes
        e = ch_el[c]
        h = st_key[d] + rnd[e] if keys else np.uint64(0)
        _record(elem, parent, cells, key, dptr, down, cstart, ccount, cb_elem, cb_node, n_nodes, e, st_node[d],
                c - st_cbeg[d], d, ch_nr[c] * ch_nc[c], h)
        is_t = e < start.n_truth
        nt = st_nt[d] + (1 if is_t else 0)
        npr = st_np[d] + (0 if is_t else 1)
        resp = st_resp[d] if d > 0 else e > start.resp_above
        if resp:
            _add_product(m_lo, m_hi, nt, npr, ch_nr[c], ch_nc[c])
        st_node[d + 1] = n_nodes
        st_nt[d + 1] = nt
        st_np[d + 1] = npr
        st_resp[d + 1] = resp
        st_key[d + 1] = h
        n_nodes += 1
        d += 1
        lo_r, hi_r, lo_c, hi_c = ch_rlo[c], ch_rhi[c], ch_clo[c], ch_chi[c]
        rtop, ctop = st_rtop[d - 1], st_ctop[d - 1]
    return _family(False, n_nodes, deliveries, _Nodes(elem, parent, end, cells, key, dptr, down, cstart, ccount,
                                                       cb_elem, cb_node), keys)
