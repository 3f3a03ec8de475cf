"""The co-clustering counting pass: row and column contingency tables.

One chunked pass per axis: each chunk of (truth labels, pred labels) is
counted into sparse pair counts with
:func:`daskbicl.kernels.contingency.count_pairs` (which also validates the
label values), the chunk results are merged in a tree with
:func:`~daskbicl.kernels.contingency.merge_pairs`, and the root is compacted
into a :class:`~daskbicl.kernels.contingency.Table`.  Every co-clustering
measure is finalized from the two tables; nothing else touches the labels.
"""

from __future__ import annotations

import xarray as xr

from ..kernels.contingency import DenseCounts, PairCounts, Table, count_pairs, merge_pairs
from .core import aligned_blocks, map_blocks_delayed, shared_pass, tree_reduce

__all__ = ["contingency_graph", "partition_tables"]


def _count_block(names, truth, pred) -> PairCounts | DenseCounts:
    return count_pairs(truth, pred, names)


def _finalize(pairs: PairCounts) -> Table:
    return pairs.to_table()


def contingency_graph(truth_labels, pred_labels, *, names=("truth labels", "pred labels"), split_every: int = 8):
    """A Delayed :class:`Table` counting two aligned 1-D label arrays."""
    import dask

    blocks = aligned_blocks(truth_labels, pred_labels)
    parts = map_blocks_delayed(_count_block, blocks, names)
    root = tree_reduce(parts, merge_pairs, split_every=split_every)
    return dask.delayed(_finalize, pure=False)(root)


def partition_tables(truth: xr.Dataset, pred: xr.Dataset, *, split_every: int = 8):
    """Delayed ``(row_table, col_table)`` for two aligned co-clusterings.

    Inside :func:`~daskbicl.engine.core.shared_passes`, repeated calls for the
    same label arrays return the same graphs.
    """
    def build():
        rows = contingency_graph(
            truth.row_labels.data,
            pred.row_labels.data,
            names=("truth row_labels", "pred row_labels"),
            split_every=split_every,
        )
        cols = contingency_graph(
            truth.col_labels.data,
            pred.col_labels.data,
            names=("truth col_labels", "pred col_labels"),
            split_every=split_every,
        )
        return rows, cols

    arrays = (truth.row_labels.data, pred.row_labels.data, truth.col_labels.data, pred.col_labels.data)
    return shared_pass(f"partition-{split_every}", arrays, build)
