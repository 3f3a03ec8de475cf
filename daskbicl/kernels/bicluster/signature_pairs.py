"""Pairs of joint membership signatures that share a cluster, counted by (a, b) (compiled with numba).

The loop of :func:`daskbicl.kernels.bicluster.omega_index.pair_histogram`:
for every signature s, the signatures s2 > s listing one of its clusters
(found through the per-cluster index ``owner``) are visited once each, and
``cnt[s]·cnt[s2]`` pairs of items are added at (truth clusters shared, pred
clusters shared); the C(cnt[s], 2) pairs within s at its own lengths.
Compiled once with ``cache=True`` and imported only when a pair count runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["add_shared_pairs"]


@njit(cache=True, nogil=True)
def _shared(el, a0, a1, b0, b1, n_truth):
    """(truth, pred) elements common to the sorted lists el[a0:a1] and el[b0:b1]."""
    ta = 0
    pb = 0
    i = a0
    j = b0
    while i < a1 and j < b1:
        x = el[i]
        y = el[j]
        if x == y:
            if x < n_truth:
                ta += 1
            else:
                pb += 1
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    return ta, pb


@njit(cache=True, nogil=True)
def add_shared_pairs(ptr, el, cnt, owner_ptr, owner, n_truth, out):
    """Add the pairs of items with a non-empty shared signature to ``out[a, b]``."""
    n_sig = len(cnt)
    mark = np.full(n_sig, -1, np.int64)
    for s in range(n_sig):
        a0 = ptr[s]
        a1 = ptr[s + 1]
        t = 0
        for q in range(a0, a1):
            if el[q] < n_truth:
                t += 1
        c = cnt[s]
        out[t, a1 - a0 - t] += c * (c - 1) // 2
        for q in range(a0, a1):
            e = el[q]
            for r in range(owner_ptr[e], owner_ptr[e + 1]):
                s2 = owner[r]
                if s2 <= s or mark[s2] == s:
                    continue
                mark[s2] = s
                ta, pb = _shared(el, a0, a1, ptr[s2], ptr[s2 + 1], n_truth)
                out[ta, pb] += c * cnt[s2]


@njit(cache=True, nogil=True)
def _meet(el_a, a0, a1, el_b, b0, b1, out, at):
    """Write the elements common to two sorted lists at ``out[at:]``; return how many (out None: count only)."""
    n = 0
    i = a0
    j = b0
    while i < a1 and j < b1:
        x = el_a[i]
        y = el_b[j]
        if x == y:
            if out is not None:
                out[at + n] = x
            n += 1
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    return n


@njit(cache=True, nogil=True)
def cell_intersections(rptr, rel, rcnt, cptr, cel, ccnt):
    """CSR lists of the non-empty R_s ∩ C_t over every row signature s and column signature t.

    Returns ``(ptr, el, cnt)`` with ``cnt = rcnt[s]·ccnt[t]``, the cells whose
    membership is exactly that intersection (lists may repeat: the pair
    count does not need them merged).
    """
    n_pairs = 0
    n_el = 0
    for s in range(len(rcnt)):
        for t in range(len(ccnt)):
            m = _meet(rel, rptr[s], rptr[s + 1], cel, cptr[t], cptr[t + 1], None, 0)
            if m > 0:
                n_pairs += 1
                n_el += m
    ptr = np.zeros(n_pairs + 1, np.int64)
    el = np.zeros(n_el, np.int64)
    cnt = np.zeros(n_pairs, np.int64)
    q = 0
    for s in range(len(rcnt)):
        for t in range(len(ccnt)):
            m = _meet(rel, rptr[s], rptr[s + 1], cel, cptr[t], cptr[t + 1], el, ptr[q])
            if m > 0:
                cnt[q] = rcnt[s] * ccnt[t]
                ptr[q + 1] = ptr[q] + m
                q += 1
    return ptr, el, cnt
