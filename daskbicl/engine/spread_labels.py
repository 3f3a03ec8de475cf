"""Integer labels spread over a wide range (database keys, hashes, ``k * 1000003 + 7``), coded by rank per chunk.

:func:`rank_codes` gives each label of a chunk its rank among the distinct
labels of an evenly spaced sample of the chunk, through a multiply-shift
hash that is one-to-one on the sample (compiled, one pass, for large
chunks: :mod:`daskbicl.kernels.coclustering.slot_lookup`); labels the
sample missed are hashed after it.  Used by :mod:`daskbicl.engine.labels`
for chunks and for merges of chunks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SLOT_KERNEL_MIN", "narrow_string_codes", "rank_codes"]


#: A chunk side is rank-coded from a sample of this many labels when the sample
#: has at most :data:`_FEW` distinct labels (else it is hashed whole).
_SAMPLE = 4096
_FEW = 1024


#: Odd 64-bit multipliers tried for a multiply-shift hash that is one-to-one on a sample's labels.
_MULTIPLIERS = np.random.default_rng(0xC0DE5).integers(1, 2**63, 8, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _slot_hash(sample: np.ndarray) -> tuple[np.uint64, np.uint64, np.ndarray] | None:
    """``(multiplier, shift, slot -> code table)`` of a multiply-shift hash one-to-one on ``sample``.

    ``(x·multiplier mod 2**64) >> shift`` maps each distinct sorted sample
    label to its own slot; the table gives its rank (-1: no label).  A
    random odd multiplier is one-to-one on k labels in k² slots more than
    half the time, so a few tries with at most 2k² slots find one.
    """
    k = sample.size
    lo = max(1, int(np.ceil(np.log2(k))) + 1)
    for bits in range(lo, min(max(lo, int(np.ceil(np.log2(k * k))) + 2), 22) + 1):
        shift = np.uint64(64 - bits)
        for mult in _MULTIPLIERS:
            slots = (sample * mult) >> shift
            if np.unique(slots).size == k:
                table = np.full(1 << bits, -1, dtype=np.intp)
                table[slots.astype(np.intp)] = np.arange(k)
                return mult, shift, table
    return None


def rank_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Compact codes of one chunk of integer labels spread over a wide range: per-chunk rank factorisation.

    The distinct labels of an evenly spaced sample are sorted, and each
    label's code is its rank among them, found with a multiply-shift hash
    that is one-to-one on the sample (two arithmetic passes and a table
    lookup) and checked against the sample label it points to.  Labels the
    sample missed are factorised by hashing (``pandas.factorize``) and get
    the codes after those.  Exact whatever the sample; with few distinct
    labels (cluster ids that are hashes or database keys) it costs a few
    passes over the chunk.  With many distinct labels the chunk is hashed
    whole.

    Examples
    --------
    >>> codes, uniques = rank_codes(np.array([7_000_007, 3, 7_000_007, 2**62]))
    >>> uniques[codes].tolist() == [7_000_007, 3, 7_000_007, 2**62]
    True
    """
    values = np.asarray(values).reshape(-1)
    sample = _distinct(values[:: max(1, values.size // _RANK_SAMPLE)])
    found = _slot_hash(sample.astype(np.uint64)) if sample.size <= _FEW and values.dtype.itemsize == 8 else None
    if found is None:
        codes, uniques = pd.factorize(values)
        return codes, np.asarray(uniques)
    codes, missed = _slot_codes(values, sample, *found)
    return _with_missed(codes, sample, lambda where: values[where], missed)


def _distinct(sample: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a sample: hashed first (``pandas.unique``), then only those sorted."""
    return np.sort(pd.unique(sample))


#: A chunk is rank-coded from an evenly spaced sample of this many labels: a label that
#: covers 1/1000 of the chunk is missed by it once in 10^7 chunks (then hashed after it).
_RANK_SAMPLE = 1 << 14


def _with_missed(codes: np.ndarray, sample: np.ndarray, missed_values,
                 count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, labels)`` with the labels the sample missed (code -1) factorised after it
    (``missed_values(mask)``: the labels where ``mask`` is set; ``count``: how many, when known)."""
    if count == 0:
        return codes, sample
    missed = codes < 0
    if not missed.any():
        return codes, sample
    codes = codes.astype(np.int64, copy=False)
    more_codes, more = pd.factorize(missed_values(missed))
    codes[missed] = more_codes + sample.size
    return codes, np.concatenate([sample, np.asarray(more, dtype=sample.dtype)])


#: Labels are looked up in blocks of this many, through scratch buffers that stay in cache.
_LOOKUP_BLOCK = 1 << 16


#: Chunks of at least this many spread labels are looked up by the compiled kernel
#: (:mod:`~daskbicl.kernels.coclustering.slot_lookup`, one pass); smaller ones never load numba.
SLOT_KERNEL_MIN = 1 << 16


def _slot_codes(values: np.ndarray, sample: np.ndarray, mult, shift, table) -> tuple[np.ndarray, int | None]:
    """The rank of each label among ``sample`` (intp), -1 for a label not in it; how many are -1 (None:
    not counted).

    Block by block: slot = multiply-shift hash, code = table[slot], and the
    sample label at that code compared with the label (a label not in the
    sample lands on another label's slot or an empty one, never its own).
    """
    n = values.size
    if n >= SLOT_KERNEL_MIN and values.flags.c_contiguous:
        from ..kernels.coclustering.slot_lookup import slot_ranks

        out = np.empty(n, dtype=np.intp)
        missed = slot_ranks(values.view(np.uint64), np.ascontiguousarray(sample).view(np.uint64), np.uint64(mult),
                            np.uint64(shift), table.astype(np.intp, copy=False), out)
        return out, int(missed)
    codes: Any = np.empty(n, dtype=np.intp)
    u = values.view(np.uint64)
    slots = np.empty(min(n, _LOOKUP_BLOCK), dtype=np.uint64)
    check = np.empty(slots.size, dtype=values.dtype)
    differ = np.empty(slots.size, dtype=bool)
    for start in range(0, n, _LOOKUP_BLOCK):
        stop = min(start + _LOOKUP_BLOCK, n)
        m = stop - start
        s = np.multiply(u[start:stop], mult, out=slots[:m])
        s >>= shift
        block = codes[start:stop]
        table.take(s.view(np.intp), out=block, mode="clip")
        sample.take(block, axis=None, out=check[:m], mode="clip")
        if np.not_equal(check[:m], values[start:stop], out=differ[:m]).any():
            block[differ[:m]] = -1
    return codes, None


#: numpy ``U`` strings of at most this many characters, every one Latin-1, are coded as integers.
NARROW_CHARS = 8


def narrow_string_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Codes of a chunk of short numpy ``U`` strings, as integers: ``(codes, distinct strings)``, else None.

    A string of at most :data:`NARROW_CHARS` characters, each below 256
    (every ASCII label: ``"c00123"``, ``"gene_17"``), is its characters as
    the bytes of one 64-bit integer (one compiled pass,
    :func:`~daskbicl.kernels.coclustering.string_codes.pack_narrow`, or numpy
    for a chunk of fewer than :data:`SLOT_KERNEL_MIN` labels: the same
    integers, and no numba to load for a small first score); the
    integers are rank-coded (:func:`rank_codes`: a lookup per label, no
    hash table of strings), and the few distinct integers turned back into
    strings.  Exact: numpy stores a ``U`` string padded with NUL characters
    and compares strings so, and equal padded characters are equal integers.
    None for wider strings or another character (the caller hashes words).

    >>> codes, uniques = narrow_string_codes(np.array(["b", "a", "b", "c"] * 5))
    >>> uniques[codes[:4]].tolist()
    ['b', 'a', 'b', 'c']
    """
    width = values.dtype.itemsize // 4
    if values.dtype.kind != "U" or not 0 < width <= NARROW_CHARS or values.size == 0:
        return None
    values = np.ascontiguousarray(values).reshape(-1)
    words = values.view(np.uint32).reshape(values.size, width)
    if values.size < SLOT_KERNEL_MIN:  # a small chunk: packed and looked up by numpy, numba never loaded
        packed = _pack_by_numpy(words)
        if packed is None:
            return None
        codes, distinct = rank_codes(packed)
        return codes, _strings(distinct, width)
    from ..kernels.coclustering.string_codes import narrow_slot_ranks, pack_narrow

    spaced = np.ascontiguousarray(words[:: max(1, values.size // _RANK_SAMPLE)])
    keys = np.empty(spaced.shape[0], dtype=np.uint64)
    if not pack_narrow(spaced, keys):
        return None
    sample = _distinct(keys)
    found = _slot_hash(sample) if sample.size <= _FEW else None
    if found is None:  # many distinct strings: their integers hashed
        keys = np.empty(values.size, dtype=np.uint64)
        if not pack_narrow(words, keys):
            return None
        codes, distinct = pd.factorize(keys)
        return codes, _strings(np.asarray(distinct), width)
    mult, shift, table = found
    codes = np.empty(values.size, dtype=np.intp)
    missed = narrow_slot_ranks(words, sample, mult, shift, table, codes)
    if missed < 0:
        return None
    codes, distinct = _with_missed(codes, sample, lambda where: _packed(words[where]), missed)
    return codes, _strings(distinct, width)


def _pack_by_numpy(words: np.ndarray) -> np.ndarray | None:
    """:func:`~daskbicl.kernels.coclustering.string_codes.pack_narrow` in numpy: the same integers (None: a
    character above 255).  Character ``j`` is byte ``j`` of a little-endian 64-bit word."""
    if words.size and int(words.max()) > 255:
        return None
    out = np.zeros((words.shape[0], 8), dtype=np.uint8)
    out[:, : words.shape[1]] = words
    return out.view("<u8").reshape(-1).astype(np.uint64, copy=False)


def _packed(words: np.ndarray) -> np.ndarray:
    from ..kernels.coclustering.string_codes import pack_narrow

    keys = np.empty(words.shape[0], dtype=np.uint64)
    pack_narrow(np.ascontiguousarray(words), keys)
    return keys


def _strings(keys: np.ndarray, width: int) -> np.ndarray:
    """The ``U{width}`` strings (as Python strings) whose characters are the bytes of ``keys``."""
    chars = np.ascontiguousarray(keys.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :width], dtype="<u4")
    return chars.view(f"<U{width}").reshape(-1).astype(object)
