"""Ranks of spread integer labels through a one-to-one multiply-shift hash, in one pass (compiled with numba).

:func:`daskbicl.engine.spread_labels.rank_codes` codes a chunk of labels spread over
a wide range (database keys, hashes, ``k * 1000003 + 7``) by their rank among
the distinct labels of a sample: a multiply-shift hash that is one-to-one on
the sample picks a slot, the slot gives a rank, and the sample label of
that rank is compared with the label.  numpy does it in five passes over
blocks of the chunk (multiply, shift, two lookups, compare); here each label
goes through the same steps at once, nothing written but its code.  Scalar
code only (numba compiles quickly what calls no numpy function).
"""

from __future__ import annotations

from numba import njit

from ..compiled import announce_compiles

__all__ = ["slot_ranks"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)


@njit(cache=True, nogil=True)
def slot_ranks(values, sample, mult, shift, table, codes):
    """``codes[i]``: the rank of ``values[i]`` among ``sample``, -1 when it is not there; how many are not.

    ``values`` and ``sample`` are uint64 (views of the labels' 8 bytes),
    ``table`` maps each slot ``(x·mult mod 2**64) >> shift`` to the rank of
    the sample label there, or -1.
    """
    missed = 0
    for i in range(values.shape[0]):
        v = values[i]
        c = table[(v * mult) >> shift]
        if c < 0 or sample[c] != v:
            c = -1
            missed += 1
        codes[i] = c
    return missed

