"""Shared members of every truth and pred bicluster on one chunk of sparse masks (compiled with numba).

For masks ``t`` (K, m) and ``p`` (L, m) with few True entries, the table
``shared[k, l] = #{i : t[k, i] and p[l, i]}`` is the sum over the chunk's
elements ``i`` of one count for each (truth, pred) pair of biclusters
holding ``i``.  :func:`shared_members` reads each mask once, row by row,
and lists per element the biclusters that hold it (element-major, like a
CSR of the transposed mask, with int32 entries), then adds the pairs.  The cost
is one pass over the masks plus ``sum_i |T_i|·|P_i|`` increments, with no
sort and no numeric copy of a mask (the scipy route it replaces built two
COO matrices, converted them to CSR and multiplied).

The compiled loops use scalar code only; numpy makes every array (numba
compiles its own version of each numpy function a kernel calls, which
would lengthen the first compile).  Counts are exact int64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["shared_members"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)


@njit(cache=True, nogil=True)
def _element_lists(mask, row_start, where, ptr, cursor, members):
    """Per element ``i``, the rows ``k`` with ``mask[k, i]``: ``members[ptr[i]:ptr[i + 1]]``, rows ascending.

    One pass over the mask notes where each row's True entries are
    (``where[row_start[k]:row_start[k + 1]]``, from the row sums) and how
    many each element has (``ptr``, zeros on entry); the lists are then
    filled from those positions.  ``cursor`` (m) is scratch.
    """
    rows, m = mask.shape
    for k in range(rows):
        a = row_start[k]
        for i in range(m):
            if mask[k, i]:
                where[a] = i
                a += 1
                ptr[i + 1] += 1
    for i in range(m):
        ptr[i + 1] += ptr[i]
        cursor[i] = ptr[i]
    for k in range(rows):
        for a in range(row_start[k], row_start[k + 1]):
            i = where[a]
            members[cursor[i]] = k
            cursor[i] += 1


@njit(cache=True, nogil=True)
def _add_pairs(t_ptr, t_members, p_ptr, p_members, shared):
    """``shared[k, l] += 1`` for every element and every truth ``k`` and pred ``l`` listed for it."""
    for i in range(t_ptr.shape[0] - 1):
        for a in range(t_ptr[i], t_ptr[i + 1]):
            k = t_members[a]
            for b in range(p_ptr[i], p_ptr[i + 1]):
                shared[k, p_members[b]] += 1


def _lists(mask: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = mask.shape[1]
    row_start = np.zeros(mask.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=row_start[1:])
    entries = int(row_start[-1])
    ptr = np.zeros(m + 1, np.int64)
    members = np.empty(entries, np.int32)
    _element_lists(mask, row_start, np.empty(entries, np.int32), ptr, np.empty(m, np.int64), members)
    return ptr, members


def shared_members(t: np.ndarray, p: np.ndarray, t_sizes: np.ndarray, p_sizes: np.ndarray) -> np.ndarray:
    """The (K, L) int64 table of shared members of two C-contiguous bool masks (K, m) and (L, m).

    ``t_sizes`` and ``p_sizes`` are the masks' row sums (their True entries).
    """
    shared = np.zeros((t.shape[0], p.shape[0]), np.int64)
    if t.shape[1] == 0 or not t_sizes.sum() or not p_sizes.sum():
        return shared
    t_ptr, t_members = _lists(t, t_sizes)
    p_ptr, p_members = _lists(p, p_sizes)
    _add_pairs(t_ptr, t_members, p_ptr, p_members, shared)
    return shared
