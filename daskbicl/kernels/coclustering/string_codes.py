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

Labels of up to 8 Latin-1 characters (every short ASCII label) skip the
table: :func:`pack_narrow` makes each one 64-bit integer and
:func:`narrow_slot_ranks` looks those up among a sample's, as spread
integer labels are (:mod:`daskbicl.engine.spread_labels`).

Built to compile quickly (a first compile is most of a user's first
string-label score): the compiled loops use scalar arithmetic and indexing
only.  Every array is made by numpy, in Python: when the table or the key
store is full the compiled loop stops, :class:`_Table` grows it and the loop
resumes at the row it stopped on.  numba compiles an implementation of each
numpy function a kernel calls (``np.full``, ``np.empty``, slice copies) the
first time it meets it, and those made up most of the compile time
(benchmarks/latency.py, first use).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["narrow_slot_ranks", "pack_narrow", "pair_codes", "row_codes"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

#: Slots of a new table (a power of two); distinct rows a new key store holds.
_FIRST_BITS = 10
_FIRST_ROOM = 64


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
def _rehash(hashes, k, table, shift):
    """Put codes ``0 .. k - 1`` at their hashes in ``table`` (all -1, a power of two long; linear probing)."""
    mask = table.shape[0] - 1
    for c in range(k):
        s = np.int64(hashes[c] >> shift)
        while table[s] >= 0:
            s = (s + 1) & mask
        table[s] = c


@njit(cache=True, nogil=True)
def _code_rows(words, weights, start, k, codes, table, shift, keys, first, hashes):
    """Code rows ``start ..`` of ``words``, ``k`` codes given so far; ``(row stopped at, codes given)``.

    Stops before a new distinct row when the key store is full or the
    table would be more than half full (the caller grows them).
    """
    n, width = words.shape
    mask = table.shape[0] - 1
    for i in range(start, n):
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
        if k == first.shape[0] or 2 * (k + 1) > table.shape[0]:
            return i, k
        for j in range(width // 2):
            keys[k, j] = _key_word(words, i, j)
        if width % 2:
            keys[k, width // 2] = np.uint64(words[i, width - 1])
        first[k] = i
        hashes[k] = h
        table[s] = k
        codes[i] = k
        k += 1
    return n, k


@njit(cache=True, nogil=True)
def _code_pairs(words, start, k, codes, table, shift, keys, first, hashes):
    """:func:`_code_rows` of an ``(n, 2)`` uint64 matrix; the hash is ``(w0·k0 + w1)·k1`` modulo 2**64."""
    n = words.shape[0]
    mask = table.shape[0] - 1
    for i in range(start, n):
        a = words[i, 0]
        b = words[i, 1]
        h = (a * np.uint64(0x9E3779B97F4A7C15) + b) * np.uint64(0xC2B2AE3D27D4EB4F)
        s = np.int64(h >> shift)
        while True:
            c = table[s]
            if c < 0 or (keys[c, 0] == a and keys[c, 1] == b):
                break
            s = (s + 1) & mask
        if c >= 0:
            codes[i] = c
            continue
        if k == first.shape[0] or 2 * (k + 1) > table.shape[0]:
            return i, k
        keys[k, 0] = a
        keys[k, 1] = b
        first[k] = i
        hashes[k] = h
        table[s] = k
        codes[i] = k
        k += 1
    return n, k


@njit(cache=True, nogil=True)
def pack_narrow(words, out):
    """``out[i]``: the 32-bit words of row ``i`` (at most 8) as the bytes of one uint64, word ``j`` in byte ``j``
    (``8·j`` bits up); False, and ``out`` unfinished, at the first word above 255.

    Rows of Latin-1 characters (every ASCII label) of up to 8 characters
    fit: equal rows, and only equal rows, give equal integers, which
    :func:`daskbicl.engine.spread_labels.rank_codes` then codes like spread integer labels.
    """
    n, width = words.shape
    for i in range(n):
        v = np.uint64(0)
        high = np.uint32(0)
        for j in range(width):
            w = words[i, j]
            high |= w
            v |= np.uint64(w) << np.uint64(8 * j)
        if high > 255:
            return False
        out[i] = v
    return True


@njit(cache=True, nogil=True)
def narrow_slot_ranks(words, sample, mult, shift, table, codes):
    """:func:`~daskbicl.kernels.coclustering.slot_lookup.slot_ranks` of short strings: row ``i`` of ``words`` (32-bit characters, at most 8) read as the
    uint64 whose byte ``j`` is character ``j`` (:func:`pack_narrow`);
    how many rows are not in ``sample``, or -1 (``codes`` unfinished) at a character above 255."""
    n, width = words.shape
    missed = 0
    for i in range(n):
        v = np.uint64(0)
        high = np.uint32(0)
        for j in range(width):
            w = words[i, j]
            high |= w
            v |= np.uint64(w) << np.uint64(8 * j)
        if high > 255:
            return -1
        c = table[(v * mult) >> shift]
        if c < 0 or sample[c] != v:
            c = -1
            missed += 1
        codes[i] = c
    return missed


class _Table:
    """The hash table's arrays, made and grown by numpy: slots, distinct rows' key words, first rows, hashes."""

    def __init__(self, key_words: int):
        self.bits = _FIRST_BITS
        self.table = np.full(1 << self.bits, -1, np.int64)
        self.keys = np.empty((_FIRST_ROOM, key_words), np.uint64)
        self.first = np.empty(_FIRST_ROOM, np.int64)
        self.hashes = np.empty(_FIRST_ROOM, np.uint64)

    @property
    def shift(self) -> np.uint64:
        return np.uint64(64 - self.bits)

    def grow(self, k: int) -> None:
        """Room for a new distinct row after ``k``: twice the key store, four times the slots (then rehashed)."""
        if k == self.first.shape[0]:
            self.keys = np.concatenate([self.keys, np.empty_like(self.keys)])
            self.first = np.concatenate([self.first, np.empty_like(self.first)])
            self.hashes = np.concatenate([self.hashes, np.empty_like(self.hashes)])
        if 2 * (k + 1) > self.table.shape[0]:
            self.bits += 2
            self.table = np.full(1 << self.bits, -1, np.int64)
            _rehash(self.hashes, k, self.table, self.shift)


def row_codes(words: np.ndarray, weights) -> tuple[np.ndarray, np.ndarray]:
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
    state = _Table((width + 1) // 2)
    codes = np.empty(n, np.int64)
    i = k = 0
    while True:
        i, k = _code_rows(words, weights, i, k, codes, state.table, state.shift, state.keys, state.first,
                          state.hashes)
        if i == n:
            return codes, state.first[:k].copy()
        state.grow(k)


def pair_codes(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`row_codes` of the rows of a C-contiguous ``(n, 2)`` uint64 matrix (a ``StringDType`` element's words)."""
    n = words.shape[0]
    state = _Table(2)
    codes = np.empty(n, np.int64)
    i = k = 0
    while True:
        i, k = _code_pairs(words, i, k, codes, state.table, state.shift, state.keys, state.first, state.hashes)
        if i == n:
            return codes, state.first[:k].copy()
        state.grow(k)
