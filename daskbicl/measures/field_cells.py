"""Element-centric similarity on cells, ``ecs``, and each row's or column's score (docs/measures/field.md).

Two co-clusterings: from the row and column contingency tables the
co-clustering measures count anyway (no cell visited, no pair of table
entries visited).  Otherwise: from the row and column membership
signatures (the pass of the micro-object and cover measures); overlapping
biclusters through the PageRank on signature classes.
"""

from __future__ import annotations

import functools

import numpy as np
import xarray as xr

from ..errors import InputError
from ..io.inputs import opened
from ..kernels.bicluster.element_centric_cells import cell_similarity_of_biclusterings
from ..kernels.coclustering import element_centric
from ..kernels.coclustering.element_centric import cell_similarity
from .registry import Measure, Provider, register, register_provider

__all__ = ["element_scores"]


register_provider(
    Provider(
        name="cell_ecs",
        kinds=("partition", "biclustering"),
        description="element-centric similarity of the cells: from the row and column contingency tables "
        "(two co-clusterings) or the membership signatures (biclusterings)",
        tables="memberships",
        finalize=cell_similarity_of_biclusterings,
        from_tables=cell_similarity,
    )
)

register(Measure(
    name="ecs",
    summary="Element-centric similarity of the cells (Gates et al. 2019; blocks or biclusters as cell clusters).",
    family="partition", provider="cell_ecs", default=False,
    finalize=lambda value: value,
    symmetric=True, bounds=(0.0, 1.0), perfect=1.0,
    doc=r"""
The elements are the cells of the matrix and the clusters the blocks of a
co-clustering (the biclusters of a biclustering, each cell no bicluster
covers a cluster of its own).  For a cell in truth cluster A and pred
cluster B, its score is :math:`|A \cap B| / \max(|A|, |B|)`, and

.. math::
    \mathrm{ECS} = \frac{1}{IJ} \sum_{p, q} \frac{c_p^2\, c_q^2}{\max(a_p a_q,\ b_p b_q)}

for two co-clusterings, over the non-zero entries p of the row table
(``c_p`` rows in truth row cluster of size ``a_p`` and pred row cluster of
size ``b_p``) and q of the column table.  As clusim's ``element_sim`` (any
α; 0.9 there) on the cell memberships.  Computed with one sort and prefix
sums, O((P + Q) log P), never pair by pair; for biclusterings from the K x L
shared-row and shared-column tables.  Biclusterings whose biclusters
overlap have no closed form: the personalised PageRank (α = 0.9) is solved
on the classes of cells with equal memberships (docs/measures/field.md;
refused with :class:`~daskbicl.errors.InputError` above 10,000 classes).

Reference: Gates, Wood, Hetrick & Ahn (2019), Element-centric clustering
comparison unifies overlaps and hierarchy, Scientific Reports 9:8574;
clusim's ``element_sim``.

Examples
--------
>>> import daskbicl
>>> round(daskbicl.ecs(([0, 0, 1, 1], [0, 1, 1]), ([0, 0, 0, 1], [0, 1, 1])), 6)
0.541667
""",
))


_AXIS_DIMS = {"rows": ("row", "row_labels", 0), "cols": ("col", "col_labels", 1)}


def _lookup(index, values: np.ndarray, truth_block: np.ndarray, pred_block: np.ndarray) -> np.ndarray:
    """Each element's score: the value of its (truth label, pred label) entry of the table."""
    import pandas as pd

    at = index.get_indexer(pd.MultiIndex.from_arrays([truth_block.astype(object), pred_block.astype(object)]))
    return values[at]  # every pair is an entry: the table was counted from these labels


def element_scores(truth, pred, *, axis: str = "rows", storage_options: dict | None = None) -> xr.DataArray:
    """Element-centric similarity of each row, column or cell, as a lazy DataArray.

    ``axis="cells"``: every cell's score over ``(row, col)``, for
    co-clusterings and biclusterings (overlapping ones too), named ``ecs``;
    its mean is :func:`daskbicl.ecs` (docs/measures/field.md).  The rest of
    this text is about rows and columns of two co-clusterings.

    Row i in truth cluster h and pred cluster h' scores
    ``S_i = n_hh' / max(a_h, b_h')`` (docs/measures/field.md): its share of
    the larger of its two clusters that the other also holds.  The mean of
    the scores is ``ecs_rows`` (``ecs_cols`` with ``axis="cols"``).  The
    contingency table is counted first (one pass, on the cluster when a
    Client is active); the scores are then a dask array over the labels,
    chunked like truth's, computed when asked for (``.compute()``,
    ``.to_zarr()``).

    Parameters
    ----------
    truth, pred : co-clusterings (anything :func:`daskbicl.score` accepts); biclusterings too for "cells"
    axis : {"rows", "cols", "cells"}
    storage_options : dict, optional
        fsspec options for stores given as URLs, as for :func:`daskbicl.score`.

    Returns
    -------
    xarray.DataArray
        Dimension ``row`` (``col``), with the input's coordinate when it has
        one; named ``ecs_rows`` (``ecs_cols``).

    Examples
    --------
    >>> import daskbicl
    >>> s = daskbicl.element_scores(([0, 0, 1, 1], [0]), ([0, 0, 0, 1], [0]))
    >>> s.values.round(4).tolist(), float(s.mean()) == daskbicl.ecs_rows(([0, 0, 1, 1], [0]), ([0, 0, 0, 1], [0]))
    ([0.6667, 0.6667, 0.3333, 0.5], True)
    """
    import dask.array as da
    import pandas as pd

    from .plan import ScorePlan, run_tables

    truth, pred = opened(truth, "truth", storage_options), opened(pred, "pred", storage_options)
    if axis == "cells":
        from .field_cell_scores import cell_scores

        return cell_scores(truth, pred)
    if axis not in _AXIS_DIMS:
        raise InputError(f"axis must be 'rows', 'cols' or 'cells', got {axis!r}")
    dim, variable, i = _AXIS_DIMS[axis]
    plan = ScorePlan.build(truth, pred, measures=[], tables=["partition"])
    table = plan.tables_of(run_tables([plan])[0], "partition")[i]
    index = pd.MultiIndex.from_arrays([np.asarray(table.truth_labels, object)[table.rows],
                                       np.asarray(table.pred_labels, object)[table.cols]])
    t = da.asarray(plan.truth[variable].data)
    p = da.asarray(plan.pred[variable].data).rechunk(t.chunks)
    data = da.map_blocks(functools.partial(_lookup, index, element_centric.cell_scores(table)), t, p,
                         dtype=np.float64)
    coords = {dim: plan.truth[dim]} if dim in plan.truth.coords else {}
    return xr.DataArray(data, dims=(dim,), coords=coords, name=f"ecs_{axis}")
