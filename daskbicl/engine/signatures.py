"""The micro-object counting pass: row and column signature classes.

One chunked pass over the row masks and one over the column masks counts
the distinct (truth membership, pred membership) signatures with their
sizes (:func:`daskbicl.kernels.signatures.signature_counts`, merged in a
tree).  The MOCICE-BCubed sum over pairs of cell classes is then split into
blocks of classes (:meth:`~daskbicl.kernels.micro.BCubedPlan.block_bounds`),
one task each, so a large number of classes is spread over the cluster.
"""

from __future__ import annotations

from typing import NamedTuple

import dask
import xarray as xr

from ..io.convert import as_biclustering
from ..kernels.micro import PRF, MicroTables, bcubed_block, bcubed_finalize, bcubed_plan
from ..kernels.signatures import merge_signature_counts, signature_counts
from .core import aligned_blocks, map_blocks_delayed, tree_reduce

__all__ = ["MicroResult", "micro_graph", "signature_graph"]

#: Number of MOCICE-BCubed blocks (tasks) per pair of biclusterings.
BCUBED_BLOCKS = 8


class MicroResult(NamedTuple):
    """The micro-object tables and the (block-summed) MOCICE-BCubed record."""

    tables: MicroTables
    bcubed: PRF


def signature_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed merged :class:`~daskbicl.kernels.signatures.SignatureClasses`."""
    blocks = aligned_blocks(truth_mask, pred_mask, axis=-1)
    parts = map_blocks_delayed(signature_counts, blocks)
    return tree_reduce(parts, merge_signature_counts, split_every=split_every)


def _block(plan, i: int, n: int):
    bounds = plan.block_bounds(n)
    if i >= len(bounds):  # fewer classes than blocks
        return None
    return bcubed_block(plan, *bounds[i])


def _finish(plan, tables, *partials) -> MicroResult:
    return MicroResult(tables, bcubed_finalize(plan, [p for p in partials if p is not None]))


def micro_graph(truth: xr.Dataset, pred: xr.Dataset, *, blocks: int | None = None, split_every: int = 8):
    """Delayed :class:`MicroResult` for two aligned inputs (co-clusterings as blocks)."""
    truth = as_biclustering(truth)
    pred = as_biclustering(pred)
    n = int(blocks or dask.config.get("daskbicl.bcubed_blocks", BCUBED_BLOCKS))
    rows = signature_graph(truth.row_mask.data, pred.row_mask.data, split_every=split_every)
    cols = signature_graph(truth.col_mask.data, pred.col_mask.data, split_every=split_every)
    tables = dask.delayed(MicroTables, pure=False)(rows, cols)
    plan = dask.delayed(bcubed_plan, pure=False)(tables)
    partials = [dask.delayed(_block, pure=False)(plan, i, n) for i in range(n)]
    return dask.delayed(_finish, pure=False)(plan, tables, *partials)
