"""Shared members of sparse bicluster masks from the positions of their True entries (compiled with numba).

A chunk of masks ``(rows, m)`` is scanned eight bytes at a time (the bool
bytes read as 64-bit words): a word of eight False entries, most of them
in a sparse mask, costs one comparison, and only the bytes of the other
words are looked at, so the True entries' positions, row by row and
ascending, come out of one pass (``np.flatnonzero`` row by row, before,
scanned the bytes about three times slower).  Those positions are turned
into per-element lists of the biclusters holding each element (a counting
sort: one pass to count, one to place) and every (truth, pred) pair of
biclusters listed for an element gets one count.  The cost is the words
of the chunk, the True entries, and ``sum_i |T_i|·|P_i|`` increments.
Scalar code only (numba compiles it quickly); counts are exact int64.
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["shared_from_positions"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)


@njit(cache=True, nogil=True)
def _by_element(where, row_start, ptr, cursor, members):
    """``members[ptr[i]:ptr[i + 1]]``: the rows listing element ``i`` (ascending), from each row's positions
    ``where[row_start[k]:row_start[k + 1]]``; ``ptr`` (m + 1) is zeros on entry, ``cursor`` (m) scratch."""
    for a in range(where.shape[0]):
        ptr[where[a] + 1] += 1
    for i in range(ptr.shape[0] - 1):
        ptr[i + 1] += ptr[i]
        cursor[i] = ptr[i]
    for k in range(row_start.shape[0] - 1):
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


_ONES = np.uint64(0x0101010101010101)


@njit(cache=True, nogil=True)
def _byte_run(flat, lo, start, stop, where, out, end):
    """The non-zero bytes of ``flat[start:stop]`` as positions from ``lo`` into ``where[out:end]``; the new ``out``."""
    for pos in range(start, stop):
        if flat[pos] != 0:
            if out < end:
                where[out] = pos - lo
            out += 1
    return out


@njit(cache=True, nogil=True)
def _positions(flat, words, m, row_start, where):
    """``where[row_start[k]:row_start[k + 1]]`` = the ascending positions of the non-zero bytes of row ``k``
    of ``flat`` (rows of ``m`` bytes, one after the other; ``words`` is its first ``8·len(words)`` bytes as
    64-bit words).  Returns how many positions were found (the caller checks it is ``row_start[-1]``;
    none is written past a row's end).

    A non-zero word's bytes are folded to one bit each (bit 0 of each byte:
    the OR of the byte's bits), then its set bits are taken lowest first;
    the byte of the lowest set bit ``b`` is the number of whole bytes below
    it, ``popcount((b - 1) & ONES)``, summed by one multiplication.  No
    branch per byte, so a sparse mask's few True bytes cost no mispredicted
    jumps.  (Little-endian byte order; the caller checks.)
    """
    found = 0
    for k in range(row_start.shape[0] - 1):
        lo, hi = k * m, k * m + m
        out, end = row_start[k], row_start[k + 1]
        first = min((lo + 7) // 8, hi // 8)  # the row's whole words: [first, last)
        last = min(hi // 8, words.shape[0])
        if last <= first:
            out = _byte_run(flat, lo, lo, hi, where, out, end)
        else:
            out = _byte_run(flat, lo, lo, 8 * first, where, out, end)
            for j in range(first, last):
                w = words[j]
                if w != 0:
                    w |= w >> np.uint64(4)
                    w |= w >> np.uint64(2)
                    w |= w >> np.uint64(1)
                    w &= _ONES
                    base = 8 * j - lo
                    while w != 0:
                        low = w & (~w + np.uint64(1))
                        byte = ((low - np.uint64(1)) & _ONES) * _ONES >> np.uint64(56)
                        if out < end:
                            where[out] = base + np.intp(byte)
                        out += 1
                        w ^= low
            out = _byte_run(flat, lo, 8 * last, hi, where, out, end)
        found += out - row_start[k]
    return found


def _row_positions(mask: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(where, row_start)``: the True entries' positions (int32) of each row of a bool mask, row by row."""
    mask = np.ascontiguousarray(mask)
    row_start = np.zeros(mask.shape[0] + 1, np.int64)
    np.cumsum(sizes, out=row_start[1:])
    where = np.empty(int(row_start[-1]), np.int32)
    flat = mask.reshape(-1).view(np.uint8)
    whole = flat.size - flat.size % 8 if sys.byteorder == "little" else 0  # (else byte by byte)
    words = flat[:whole].view(np.uint64)
    found = _positions(flat, words, mask.shape[1], row_start, where)
    if found != where.size:
        raise ValueError(f"a mask chunk has {found} True entries, its row sizes say {where.size}")
    return where, row_start


def _lists(mask: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ptr, members)`` of a bool mask (rows, m) with ``sizes`` True entries a row: per element, the rows
    that hold it."""
    where, row_start = _row_positions(mask, sizes)
    ptr = np.zeros(mask.shape[1] + 1, np.int64)
    members = np.empty(where.size, np.int32)
    _by_element(where, row_start, ptr, np.empty(mask.shape[1], np.int64), members)
    return ptr, members


def shared_from_positions(t: np.ndarray, p: np.ndarray, t_sizes: np.ndarray | None = None,
                          p_sizes: np.ndarray | None = None) -> np.ndarray:
    """The (K, L) int64 table ``shared[k, l] = #{i : t[k, i] and p[l, i]}`` of two bool masks (K, m), (L, m).

    ``t_sizes``, ``p_sizes``: the True entries of each row, when the caller
    counted them (``np.count_nonzero`` row by row otherwise).
    """
    shared = np.zeros((t.shape[0], p.shape[0]), np.int64)
    if t.shape[1] == 0 or not t.shape[0] or not p.shape[0]:
        return shared
    t_ptr, t_members = _lists(t, _sizes(t) if t_sizes is None else t_sizes)
    p_ptr, p_members = _lists(p, _sizes(p) if p_sizes is None else p_sizes)
    _add_pairs(t_ptr, t_members, p_ptr, p_members, shared)
    return shared


def _sizes(mask: np.ndarray) -> np.ndarray:
    return np.fromiter((np.count_nonzero(row) for row in mask), dtype=np.int64, count=mask.shape[0])
