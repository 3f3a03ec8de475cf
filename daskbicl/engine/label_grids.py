"""Chunks counted as dense blocks over their own labels, merged by adding where their label vectors agree.

A chunk whose labels are spread over a wide range (database keys, hashes)
or are not integers (strings, objects) is compacted before it is counted,
so its counts fit a dense block indexed by the chunk's own distinct labels
(:class:`~daskbicl.kernels.coclustering.contingency.LabelledCounts`).
Chunks are merged block by block: the label vectors of the parts are
united once (a hash of a few thousand labels at most), each part's block is
added into the united block at the rows and columns of its labels, and
parts whose vectors equal the united one are added as they are.  No step
works per pair of labels, so merging costs what the blocks' cells cost,
whatever the labels look like.  Used by :mod:`daskbicl.engine.labels`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..kernels.coclustering.contingency import DENSE_CELLS, DenseCounts, LabelledCounts

__all__ = ["as_object", "merge_grids", "with_values"]


def _as_grid(part: DenseCounts | LabelledCounts) -> LabelledCounts:
    """A dense block over a label range as a block over its label vector (``lo, lo + 1, ...``)."""
    if isinstance(part, LabelledCounts):
        return part
    rows, cols = part.table.shape
    return LabelledCounts(np.arange(part.truth_lo, part.truth_lo + rows, dtype=np.int64),
                          np.arange(part.pred_lo, part.pred_lo + cols, dtype=np.int64), part.table)


def _values(codes: np.ndarray, uniques: np.ndarray | None) -> np.ndarray:
    """The label of each code (an object array, None for the unassigned code -1); the codes when no values."""
    if uniques is None:
        return codes
    out = np.empty(codes.size, dtype=object)
    ok = codes >= 0
    out[ok] = uniques[codes[ok]]
    return out


def with_values(part: DenseCounts | LabelledCounts, truth_uniques, pred_uniques) -> LabelledCounts:
    """A chunk counted over codes as a block over the label values of its codes (``None``: the side's codes
    are its labels)."""
    grid = _as_grid(part)
    return LabelledCounts(_values(grid.truth_labels, truth_uniques), _values(grid.pred_labels, pred_uniques),
                          grid.table)


def as_object(labels: np.ndarray) -> np.ndarray:
    """Labels as an object array, codes below 0 (unassigned) as None."""
    if labels.dtype == object:
        return labels
    out = labels.astype(object)
    out[labels < 0] = None
    return out


def _union(vectors: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """``(united labels, where each vector's labels sit in it)``; None for a vector equal to the united one.

    Object labels are united by value (``pandas.factorize``: equal values,
    even stored apart, are one label; NaN, None and NA are the unassigned
    label None); integer labels by value too, -1 being the unassigned one.
    """
    first = vectors[0]
    if all(v.dtype == first.dtype and v.shape == first.shape and np.array_equal(v, first) for v in vectors[1:]):
        return first, [None] * len(vectors)
    if any(v.dtype == object for v in vectors):
        vectors = [as_object(v) for v in vectors]
        codes, united = pd.factorize(np.concatenate(vectors), use_na_sentinel=True)
        united = np.asarray(united, dtype=object)
        if (codes < 0).any():
            codes = np.where(codes < 0, united.size, codes)
            united = np.append(united, np.array([None], dtype=object))
    else:
        codes, united = pd.factorize(np.concatenate([v.astype(np.int64, copy=False) for v in vectors]))
        united = np.asarray(united)
    bounds = np.cumsum([0] + [v.size for v in vectors])
    return united, [codes[a:b] for a, b in zip(bounds, bounds[1:])]


def _add(out: np.ndarray, rows: np.ndarray | None, cols: np.ndarray | None, table: np.ndarray) -> None:
    """``out[rows, cols] += table`` (``None``: all of that axis, in order), exact when indices repeat."""
    if rows is None and cols is None:
        out += table
        return
    rows = np.arange(out.shape[0]) if rows is None else rows
    cols = np.arange(out.shape[1]) if cols is None else cols
    if np.unique(rows).size == rows.size and np.unique(cols).size == cols.size:
        out[np.ix_(rows, cols)] += table
    else:  # two labels of one part united into one (never for labels that were compacted): add one by one
        np.add.at(out, np.ix_(rows, cols), table)


def merge_grids(parts) -> LabelledCounts | None:
    """The sum of chunks counted as dense blocks, when at least one is over its own labels and the united
    block has at most ``DENSE_CELLS`` cells; else None (the caller merges pairs)."""
    if not parts or not all(isinstance(p, (DenseCounts, LabelledCounts)) for p in parts) \
            or not any(isinstance(p, LabelledCounts) for p in parts):
        return None
    grids = [_as_grid(p) for p in parts]
    truth, row_index = _union([g.truth_labels for g in grids])
    pred, col_index = _union([g.pred_labels for g in grids])
    if truth.size * pred.size > DENSE_CELLS:
        return None
    out = np.zeros((truth.size, pred.size), dtype=np.int64)
    for grid, rows, cols in zip(grids, row_index, col_index):
        _add(out, rows, cols, grid.table)
    return LabelledCounts(truth, pred, out)
