"""Each cell's element-centric score, as a lazy DataArray over (row, col) (docs/measures/field.md).

The counting is done first (one pass, on the cluster when a Client is
active): the row and column contingency tables of two co-clusterings, or
the row and column membership signatures otherwise.  Each row then gets the
index of its table entry (signature class), each column likewise, as dask
arrays chunked like the input; a block of cells is the outer lookup of the
two, computed when asked for.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import xarray as xr

from ..engine.blocks import as_biclustering
from ..engine.core import shared_passes
from ..engine.micro_pass import memberships_graph
from ..kernels.bicluster.element_centric_cells import cell_pair_scores, signature_bits
from ..scheduling import compute

__all__ = ["cell_scores"]

# Rows (columns) of one output block at most: 2048 x 2048 float64 = 32 MiB.
_EDGE = 2048


def _edge(a):
    return a.rechunk(_EDGE) if max(a.chunks[0], default=0) > _EDGE else a


def _entries(index, truth_block: np.ndarray, pred_block: np.ndarray) -> np.ndarray:
    """Each label pair's position in the table (every pair is an entry: the table was counted from them)."""
    import pandas as pd

    return index.get_indexer(pd.MultiIndex.from_arrays([truth_block.astype(object), pred_block.astype(object)]))


def _partition_cells(plan):
    import functools

    import pandas as pd

    from .plan import run_tables

    tables = plan.tables_of(run_tables([plan])[0], "partition")
    per_axis = []
    for table, variable in zip(tables, ("row_labels", "col_labels")):
        index = pd.MultiIndex.from_arrays([np.asarray(table.truth_labels, object)[table.rows],
                                           np.asarray(table.pred_labels, object)[table.cols]])
        t = da.asarray(plan.truth[variable].data)
        p = da.asarray(plan.pred[variable].data).rechunk(t.chunks)
        at = da.map_blocks(functools.partial(_entries, index), t, p, dtype=np.int64)
        values = np.stack([table.counts, table.truth_sizes()[table.rows], table.pred_sizes()[table.cols]])
        per_axis.append((_edge(at), values.astype(np.float64)))
    (r_at, r_val), (c_at, c_val) = per_axis

    return da.blockwise(_partition_block, "ij", r_at, "i", c_at, "j", _one_chunk(r_val), "xp", _one_chunk(c_val), "yq",
                        concatenate=True, dtype=np.float64)


def _one_chunk(values: np.ndarray):
    """A table as one dask chunk: one key of the graph every block reads, not a copy in each task."""
    return da.from_array(values, chunks=values.shape)


def _partition_block(ri: np.ndarray, ci: np.ndarray, r_val: np.ndarray, c_val: np.ndarray) -> np.ndarray:
    """Cells of rows ``ri`` x columns ``ci`` (table entries): ``c_p c_q / max(a_p a_q, b_p b_q)``."""
    c, a, b = (np.multiply.outer(r_val[x][ri], c_val[x][ci]) for x in range(3))
    return c / np.maximum(a, b)


def _pair_block(ri: np.ndarray, ci: np.ndarray, table: np.ndarray) -> np.ndarray:
    return table[np.ix_(ri, ci)]


def _classes(keys: np.ndarray, truth_block: np.ndarray, pred_block: np.ndarray) -> np.ndarray:
    """Each item's signature class: its (truth, pred) memberships looked up among the packed ``keys``."""
    bits = np.packbits(np.concatenate([truth_block, pred_block], axis=0).T, axis=1)
    uniq, inverse = np.unique(bits, axis=0, return_inverse=True)
    where = {bytes(k): i for i, k in enumerate(keys)}
    return np.array([where[bytes(u)] for u in uniq], np.int64)[inverse.ravel()]


def _bicluster_cells(plan):
    t, p = as_biclustering(plan.truth, "truth"), as_biclustering(plan.pred, "pred")
    with shared_passes():
        graphs = [memberships_graph(getattr(t, v).data, getattr(p, v).data) for v in ("row_mask", "col_mask")]
    rows, cols = compute(*graphs)
    table = cell_pair_scores(rows, cols)
    per_axis = []
    for m, v in ((rows, "row_mask"), (cols, "col_mask")):
        keys = np.packbits(signature_bits(m)[0], axis=1)
        tm = da.asarray(getattr(t, v).data).rechunk({0: -1})
        pm = da.asarray(getattr(p, v).data).rechunk({0: -1, 1: tm.chunks[1]})
        at = da.map_blocks(lambda a, b, keys=keys: _classes(keys, a, b), tm, pm, drop_axis=0, dtype=np.int64)
        per_axis.append(_edge(at))
    return da.blockwise(_pair_block, "ij", per_axis[0], "i", per_axis[1], "j", _one_chunk(table), "xy",
                        concatenate=True, dtype=np.float64)


def cell_scores(truth, pred) -> xr.DataArray:
    """The score of every cell, dims ``(row, col)``, named ``ecs``; its mean is :func:`daskbicl.ecs`."""
    from ..io.validate import PARTITION
    from .plan import ScorePlan

    plan = ScorePlan.build(truth, pred, measures=[], tables=["cell_ecs"])  # checks and aligns any two kinds
    if plan.truth.attrs["daskbicl_kind"] == plan.pred.attrs["daskbicl_kind"] == PARTITION:
        data = _partition_cells(ScorePlan.build(plan.truth, plan.pred, measures=[], tables=["partition"]))
    else:
        data = _bicluster_cells(plan)
    coords = {d: plan.truth[d] for d in ("row", "col") if d in plan.truth.coords}
    return xr.DataArray(data, dims=("row", "col"), coords=coords, name="ecs")
