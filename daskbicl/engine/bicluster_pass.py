"""The biclustering counting pass: shared rows and shared columns (K x L).

One chunked pass over the row masks and one over the column masks; each
chunk gives a small fixed-shape (K, L) int64 table
(:func:`daskbicl.kernels.bicluster.mask_counting.intersect_counts`) and the tables are summed
in a tree.  Two co-clusterings need no mask pass: their bicluster tables are
derived from the contingency tables (:func:`tables_from_partitions`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..kernels.bicluster.mask_counting import (
    BiclusterTables,
    intersect_counts,
    merge_mask_counts,
    tables_from_partitions,
)
from .blocks import as_biclustering
from .contingency_pass import partition_tables
from .core import ChunkPass, counting_pass, shared_pass, task

__all__ = ["INTERSECT_MASKS", "bicluster_tables", "mask_counts_graph"]


#: Shared items of K truth and L pred masks along one axis: a (K, L) table per chunk, the tables summed.
INTERSECT_MASKS = ChunkPass("masks", chunk=intersect_counts, combine=merge_mask_counts, axis=-1)


def mask_counts_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed :class:`~daskbicl.kernels.bicluster.mask_counting.MaskCounts` of two (K, n) and (L, n) masks."""
    def build():
        return counting_pass(INTERSECT_MASKS, (truth_mask, pred_mask), split_every=split_every)

    return shared_pass(f"masks-{split_every}", (truth_mask, pred_mask), build)


def _ids(ds: xr.Dataset) -> np.ndarray:
    if "bicluster" in ds.coords:
        return np.asarray(ds["bicluster"].values)
    return np.arange(ds.sizes["bicluster"])


def bicluster_tables(truth: xr.Dataset, pred: xr.Dataset, *, split_every: int = 8):
    """Delayed :class:`~daskbicl.kernels.bicluster.mask_counting.BiclusterTables` for two aligned inputs."""
    if truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition":
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return task(tables_from_partitions)(rows, cols)
    truth = as_biclustering(truth, "truth")
    pred = as_biclustering(pred, "pred")
    rows = mask_counts_graph(truth.row_mask.data, pred.row_mask.data, split_every=split_every)
    cols = mask_counts_graph(truth.col_mask.data, pred.col_mask.data, split_every=split_every)
    return task(BiclusterTables)(rows, cols, _ids(truth), _ids(pred))
