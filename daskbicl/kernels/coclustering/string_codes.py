"""Exact codes of the rows of a word matrix (compiled with numba): fixed-width strings without Python strings.

A label that is a fixed number of words -- a numpy ``U`` string as its
UTF-32 code units, ASCII bytes read four at a time, a ``StringDType``
element as the two 64-bit words numpy stores for it -- is coded by an
open-addressing hash table.  Each row is hashed, probed linearly and
compared with the words of the row that first took the slot's code, kept
beside the table (:func:`row_codes` reads 32-bit words two at a time as
64-bit key words; :func:`pair_codes` is its two-word form).  Codes are
therefore exact (a hash collision only costs a probe), given in order of
first appearance, and one pass over the rows builds them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["pair_codes", "row_codes"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)


@njit(cache=True, nogil=True)
def _key_word(words, i, j):
    """Key word ``j`` of row ``i``: its 32-bit words ``2j`` and ``2j + 1``, one 64-bit value."""
    return np.uint64(words[i, 2 * j]) | (np.uint64(words[i, 2 * j + 1]) << np.uint64(32))


@njit(cache=True, nogil=True)
def _row_hash(words, i, weights):
    """``sum (w[2j] + k[2j])·(w[2j+1] + k[2j+1])`` modulo 2**64 (the NH hash; its top bits pick the slot)."""
    width = len(weights)
    h = np.uint64(0)
    for j in range(width // 2):
        h += (np.uint64(words[i, 2 * j]) + np.uint64(weights[2 * j])) * (
            np.uint64(words[i, 2 * j + 1]) + np.uint64(weights[2 * j + 1]))
    if width % 2:
        h += np.uint64(words[i, width - 1]) * np.uint64(weights[width - 1])
    return h


@njit(cache=True, nogil=True)
def _is_key(words, i, keys, c, weights):
    width = len(weights)
    for j in range(width // 2):
        if _key_word(words, i, j) != keys[c, j]:
            return False
    return width % 2 == 0 or np.uint64(words[i, width - 1]) == keys[c, width // 2]


@njit(cache=True, nogil=True)
def _rehash(hashes, k, bits):
    """A table of ``1 << bits`` slots holding codes ``0 .. k - 1`` at their hashes (linear probing)."""
    table = np.full(1 << bits, -1, np.int64)
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    for c in range(k):
        s = np.int64(hashes[c] >> shift)
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = c
    return table


@njit(cache=True, nogil=True)
def _doubled(a, k):
    """A copy of the first ``k`` entries of the 1-D ``a`` in an array twice as long (room for more distinct rows)."""
    out = np.empty(2 * k, a.dtype)
    out[:k] = a[:k]
    return out


@njit(cache=True, nogil=True)
def row_codes(words, weights):
    """``(codes, first)`` of the rows of a C-contiguous 2-D uint32 matrix.

    ``codes[i]`` (int64) is the code of row ``i``: equal rows, and only
    equal rows, share a code; codes count up from 0 in order of first
    appearance, and ``first[c]`` is the first row with code ``c``.
    ``weights`` holds one odd weight below 2**63 per column (any values
    give exact codes: rows are compared whole; the weights only spread the
    hash).  Given as a tuple, its length is part of the compiled type, so
    the loops over a row's words have a fixed count (unrolled): one
    compiled kernel per width.
    """
    n, width = words.shape
    bits = 10
    table = np.full(1 << bits, -1, np.int64)
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    keys = np.empty((64, (width + 1) // 2), np.uint64)
    first = np.empty(64, np.int64)
    hashes = np.empty(64, np.uint64)
    codes = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        h = _row_hash(words, i, weights)
        s = np.int64(h >> shift)
        while True:
            c = table[s]
            if c < 0 or _is_key(words, i, keys, c, weights):
                break
            s = (s + 1) & mask
        if c >= 0:
            codes[i] = c
            continue
        if k == first.shape[0]:  # room for more distinct rows
            grown_keys = np.empty((2 * k, keys.shape[1]), np.uint64)
            grown_keys[:k] = keys
            keys = grown_keys
            first = _doubled(first, k)
            hashes = _doubled(hashes, k)
        for j in range(width // 2):
            keys[k, j] = _key_word(words, i, j)
        if width % 2:
            keys[k, width // 2] = np.uint64(words[i, width - 1])
        first[k] = i
        hashes[k] = h
        table[s] = k
        codes[i] = k
        k += 1
        if 2 * k > table.shape[0]:  # keep the table at most half full: rehash into 4x the slots
            bits += 2
            mask = (1 << bits) - 1
            shift = np.uint64(64 - bits)
            table = _rehash(hashes, k, bits)
    return codes, first[:k].copy()


@njit(cache=True, nogil=True)
def pair_codes(words):
    """:func:`row_codes` of the rows of a C-contiguous ``(n, 2)`` uint64 matrix (a ``StringDType`` element's words).

    The two words of each distinct row are kept in two arrays beside the
    table; the hash is ``(w0·k0 + w1)·k1`` modulo 2**64 (its top bits pick the slot).
    """
    n = words.shape[0]
    bits = 10
    table = np.full(1 << bits, -1, np.int64)
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    key0 = np.empty(64, np.uint64)
    key1 = np.empty(64, np.uint64)
    first = np.empty(64, np.int64)
    hashes = np.empty(64, np.uint64)
    codes = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        a = words[i, 0]
        b = words[i, 1]
        h = (a * np.uint64(0x9E3779B97F4A7C15) + b) * np.uint64(0xC2B2AE3D27D4EB4F)
        s = np.int64(h >> shift)
        while True:
            c = table[s]
            if c < 0 or (key0[c] == a and key1[c] == b):
                break
            s = (s + 1) & mask
        if c >= 0:
            codes[i] = c
            continue
        if k == first.shape[0]:  # room for more distinct rows
            key0 = _doubled(key0, k)
            key1 = _doubled(key1, k)
            first = _doubled(first, k)
            hashes = _doubled(hashes, k)
        key0[k] = a
        key1[k] = b
        first[k] = i
        hashes[k] = h
        table[s] = k
        codes[i] = k
        k += 1
        if 2 * k > table.shape[0]:  # keep the table at most half full: rehash into 4x the slots
            bits += 2
            mask = (1 << bits) - 1
            shift = np.uint64(64 - bits)
            table = _rehash(hashes, k, bits)
    return codes, first[:k].copy()
