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

__all__ = ["SLOT_KERNEL_MIN", "rank_codes"]


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
    step = max(1, values.size // _SAMPLE)
    sample = np.unique(values[::step])
    found = _slot_hash(sample.astype(np.uint64)) if sample.size <= _FEW and values.dtype.itemsize == 8 else None
    if found is None:
        codes, uniques = pd.factorize(values)
        return codes, np.asarray(uniques)
    codes = _slot_codes(values, sample, *found)
    missed = codes < 0
    if not missed.any():
        return codes, sample
    codes = codes.astype(np.int64)
    more_codes, more = pd.factorize(values[missed])
    codes[missed] = more_codes + sample.size
    return codes, np.concatenate([sample, np.asarray(more, dtype=sample.dtype)])


#: Labels are looked up in blocks of this many, through scratch buffers that stay in cache.
_LOOKUP_BLOCK = 1 << 16


#: Chunks of at least this many spread labels are looked up by the compiled kernel
#: (:mod:`~daskbicl.kernels.coclustering.slot_lookup`, one pass); smaller ones never load numba.
SLOT_KERNEL_MIN = 1 << 16


def _slot_codes(values: np.ndarray, sample: np.ndarray, mult, shift, table) -> np.ndarray:
    """The rank of each label among ``sample`` (intp), -1 for a label not in it.

    Block by block: slot = multiply-shift hash, code = table[slot], and the
    sample label at that code compared with the label (a label not in the
    sample lands on another label's slot or an empty one, never its own).
    """
    n = values.size
    if n >= SLOT_KERNEL_MIN and values.flags.c_contiguous:
        from ..kernels.coclustering.slot_lookup import slot_ranks

        out = np.empty(n, dtype=np.intp)
        slot_ranks(values.view(np.uint64), np.ascontiguousarray(sample).view(np.uint64), np.uint64(mult),
                   np.uint64(shift), table.astype(np.intp, copy=False), out)
        return out
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
    return codes
