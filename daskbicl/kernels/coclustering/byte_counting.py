"""The contingency table of a chunk of one-byte codes, counted in one pass (compiled with numba).

A store written by daskbicl holds labels as one-byte codes (up to 256
clusters a side), so a chunk's table has at most 256 x 256 cells.  numpy
counts it with ``np.bincount`` of int64 pair keys ``t * width + p``: one pass
writing eight bytes a label, then one reading them.  Here each pair goes
straight into a ``(width_t, width_p)`` table, the labels read as bytes and
nothing written per label; four tables take turns (label ``i`` goes to table
``i % 4``), so consecutive equal pairs, common in sorted or clustered data,
do not wait on each other's increment.  The four are added at the end.
Counts are exact: int32 per table, and a call counts fewer than 2**31 labels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compiled import announce_compiles

__all__ = ["MAX_LABELS", "count_byte_pairs"]

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

#: A call counts at most this many labels (int32 sub-tables cannot overflow).
MAX_LABELS = 2**31 - 1


@njit(cache=True, nogil=True)
def count_byte_pairs(t, t_lo, width_t, p, p_lo, width_p):
    """``table[a, b]`` = number of ``i`` with ``t[i] - t_lo == a`` and ``p[i] - p_lo == b`` (int64).

    ``t`` and ``p`` are 1-D uint8 arrays of one length (below
    :data:`MAX_LABELS`) whose values lie in ``[t_lo, t_lo + width_t)`` and
    ``[p_lo, p_lo + width_p)``: the caller knows their bounds.
    """
    tables = np.zeros((4, width_t, width_p), np.int32)
    n = t.shape[0]
    whole = n - n % 4
    for i in range(0, whole, 4):
        tables[0, np.intp(t[i]) - t_lo, np.intp(p[i]) - p_lo] += 1
        tables[1, np.intp(t[i + 1]) - t_lo, np.intp(p[i + 1]) - p_lo] += 1
        tables[2, np.intp(t[i + 2]) - t_lo, np.intp(p[i + 2]) - p_lo] += 1
        tables[3, np.intp(t[i + 3]) - t_lo, np.intp(p[i + 3]) - p_lo] += 1
    for i in range(whole, n):
        tables[0, np.intp(t[i]) - t_lo, np.intp(p[i]) - p_lo] += 1
    out = np.zeros((width_t, width_p), np.int64)
    for k in range(4):
        for a in range(width_t):
            for b in range(width_p):
                out[a, b] += tables[k, a, b]
    return out
