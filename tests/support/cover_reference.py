"""The cover engine's own builder before the cover provider became a record: the oracle of its tests.

A hand-built graph per axis (the membership pass over one-hot masks, or the
contingency tables of two co-clusterings), kept here, outside the package,
so the record's tables can be compared with it array by array.
"""

from __future__ import annotations

import xarray as xr

from daskbicl.engine.blocks import as_biclustering, cover_mask
from daskbicl.engine.contingency_pass import partition_tables
from daskbicl.engine.core import task
from daskbicl.engine.membership_pass import AXES, CoverTables, cell_counts, cover_counts
from daskbicl.engine.micro_pass import max_work, memberships_graph
from daskbicl.kernels.micro.memberships import memberships_of_table


def cover_tables(truth: xr.Dataset, pred: xr.Dataset, *, counts=AXES, pairs=frozenset(), cells: bool = False,
                 split_every: int = 8):
    """Delayed :class:`CoverTables` of two aligned inputs.

    Parameters
    ----------
    counts : set of {"rows", "cols"}
        Axes whose cover counts are needed.
    pairs : set of {"rows", "cols"}
        Axes whose pair histogram is needed too (the omega index).
    cells : bool
        Count cells and pairs of cells by the biclusters containing them
        (each block of a co-clustering is a bicluster here).
    """
    counts, pairs = frozenset(counts), frozenset(pairs)
    unknown = (counts | pairs) - AXES
    if unknown:
        raise ValueError(f"unknown axis {sorted(unknown)}; expected some of {sorted(AXES)}")
    limit = max_work()
    out = {}
    kinds = {truth.attrs["daskbicl_kind"], pred.attrs["daskbicl_kind"]}
    # two co-clusterings: each axis's signatures are the cells of its contingency table (the pass the
    # co-clustering measures count anyway), never one-hot masks
    tables = partition_tables(truth, pred, split_every=split_every) if kinds == {"partition"} else None
    for axis in sorted(counts | pairs):
        if tables is not None:
            graph = task(memberships_of_table)(tables[0 if axis == "rows" else 1])
        else:
            graph = memberships_graph(cover_mask(truth, axis, "truth"), cover_mask(pred, axis, "pred"),
                                      split_every=split_every)
        out[axis] = task(cover_counts)(graph, axis in pairs, limit)
    cell = None
    if cells:
        t, p = as_biclustering(truth, "truth"), as_biclustering(pred, "pred")
        rows = memberships_graph(t.row_mask.data, p.row_mask.data, split_every=split_every)
        cols = memberships_graph(t.col_mask.data, p.col_mask.data, split_every=split_every)
        cell = task(cell_counts)(rows, cols, limit)
    return task(CoverTables)(out.get("rows"), out.get("cols"), cell)
