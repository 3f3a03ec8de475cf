"""Exact codes of the rows of a word matrix (compiled with numba): fixed-width strings without Python strings.

A label that is a fixed number of machine words -- a numpy ``U`` string as
its UTF-32 code units, a ``StringDType`` element as the 16 bytes numpy
stores for it -- is coded by an open-addressing hash table: each row is
hashed (a weighted sum of its words, then mixed), probed linearly, and
compared word by word with the row that first took the slot's code.  Codes
are therefore exact (a hash collision only costs a probe), given in order
of first appearance, and one pass over the rows builds them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["row_codes"]

@njit(cache=True, nogil=True)
def _row_hash(words, i, weights):
    h = np.uint64(0)
    for j in range(len(weights)):
        h += np.uint64(words[i, j]) * np.uint64(weights[j])
    return h


@njit(cache=True, nogil=True)
def _is_key(words, i, keys, c, weights):
    for j in range(len(weights)):
        if words[i, j] != keys[c, j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _rehash(keys, hashes, k, bits):
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
def row_codes(words, weights):
    """``(codes, first)`` of the rows of a C-contiguous 2-D unsigned integer matrix.

    ``codes[i]`` (int64) is the code of row ``i``: equal rows, and only
    equal rows, share a code; codes count up from 0 in order of first
    appearance, and ``first[c]`` is the first row with code ``c``.
    ``weights`` holds one odd weight below 2**63 per column (any values
    give exact codes: rows are compared whole; the weights only spread the
    hash).  Given as a tuple, its length is part of the compiled type, so
    the loops over a row's words have a fixed count (unrolled): one
    compiled kernel per width.  Each distinct row is kept in a small
    matrix beside the table, so a lookup reads the slot, then that row.
    """
    n, width = words.shape
    bits = 10
    table = np.full(1 << bits, -1, np.int64)
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
    keys = np.empty((64, width), words.dtype)
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
            grown_keys = np.empty((2 * k, width), words.dtype)
            grown_keys[:k] = keys
            keys = grown_keys
            grown = np.empty(2 * k, np.int64)
            grown[:k] = first
            first = grown
            grown_h = np.empty(2 * k, np.uint64)
            grown_h[:k] = hashes
            hashes = grown_h
        keys[k] = words[i]
        first[k] = i
        hashes[k] = h
        table[s] = k
        codes[i] = k
        k += 1
        if 2 * k > table.shape[0]:  # keep the table at most half full: rehash into 4x the slots
            bits += 2
            mask = (1 << bits) - 1
            shift = np.uint64(64 - bits)
            table = _rehash(keys, hashes, k, bits)
    return codes, first[:k].copy()
