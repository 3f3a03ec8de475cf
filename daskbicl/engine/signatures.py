"""The micro-object counting pass: row and column signature classes.

One chunked pass over the row masks and one over the column masks counts
the distinct (truth membership, pred membership) signatures with their
sizes (:func:`daskbicl.kernels.signatures.signature_counts`, merged in a
tree).  What runs after that depends on the *parts* the selected measures
ask for (``Measure.provider_options``), and only those parts come back to
the client (:class:`~daskbicl.kernels.micro.MicroResult`):

* ``"overlap"`` (E4SC, CE): the K x L shared-cell table, from the classes;
* ``"coverage"`` (CE, RNIA): |U|, |I| and the multiset counts, from the
  cheaper of a stream over class pairs and the cell join;
* ``"bcubed"`` (MOCICE-BCubed): the cell join and a plan whose class-pair
  sum is split into blocks (:meth:`~daskbicl.kernels.micro.BCubedPlan.block_bounds`),
  one task each, so a large number of classes is spread over the cluster.

Two co-clusterings skip masks and signatures altogether: every part comes
from their row and column contingency tables (the same pass as the
co-clustering measures; :func:`daskbicl.kernels.micro.coclustering_bcubed`).

The work limit of every step is the dask config key ``daskbicl.max_work``
(:data:`~daskbicl.kernels.signatures.MAX_WORK_KEY`), read when the graph is
built, so workers use the client's value.
"""

from __future__ import annotations

import xarray as xr

from .. import config
from ..errors import InputError
from ..kernels import micro as KM
from ..kernels.budget import DEFAULT_MAX_WORK, MAX_WORK_KEY
from ..kernels.signatures import merge_signature_counts, signature_counts
from .blocks import as_biclustering
from .core import aligned_blocks, map_blocks_delayed, shared_pass, task, tree_reduce
from .hashing import PandasIndex
from .partition import partition_tables

__all__ = ["MicroResult", "PARTS", "max_work", "micro_from_partition_tables", "micro_graph", "signature_graph"]

MicroResult = KM.MicroResult

#: Number of MOCICE-BCubed blocks (tasks) per pair of biclusterings: the
#: shipped default of the dask config key ``daskbicl.bcubed_blocks``.
BCUBED_BLOCKS = config.DEFAULTS["daskbicl"]["bcubed_blocks"]

#: The parts a micro graph can compute.
PARTS = frozenset({"overlap", "coverage", "bcubed"})


def max_work() -> float:
    """The work limit from the dask config key ``daskbicl.max_work`` (default 6e9)."""
    raw = config.get("max_work")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0:
        raise InputError(
            f"dask config {MAX_WORK_KEY!r} must be a positive number of work units "
            f"(~10 ns each; default {DEFAULT_MAX_WORK:.3g}), got "
            f"{raw!r}")
    return value


def signature_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed merged :class:`~daskbicl.kernels.signatures.SignatureClasses`."""
    def build():
        blocks = aligned_blocks(truth_mask, pred_mask, axis=-1)
        parts = map_blocks_delayed(signature_counts, blocks)
        return tree_reduce(parts, merge_signature_counts, split_every=split_every)

    return shared_pass(f"signatures-{split_every}", (truth_mask, pred_mask), build)


def _prepare_bcubed(rows, cols, limit: float, want_coverage: bool):
    """The MOCICE-BCubed plan (one join) and, from the same join, the coverage."""
    tables = KM.MicroTables(rows, cols, max_work=limit, index_type=PandasIndex)
    plan = KM.bcubed_plan(tables)
    return plan, (tables.coverage if want_coverage else None)


def _block(plan, i: int, n: int):
    bounds = plan.block_bounds(n)
    if i >= len(bounds):  # fewer classes than blocks
        return None
    return KM.bcubed_block(plan, *bounds[i])


def _finish(plan, *partials) -> KM.PRF:
    return KM.bcubed_finalize(plan, [p for p in partials if p is not None])


def _coverage(rows, cols, limit: float):
    return KM.MicroTables(rows, cols, max_work=limit, index_type=PandasIndex).coverage


def _coclustering(rows, cols, parts: frozenset, limit: float) -> KM.MicroResult:
    return KM.MicroResult(
        overlap=KM.coclustering_overlap(rows, cols, max_work=limit) if "overlap" in parts else None,
        coverage=KM.coclustering_coverage(rows, cols) if "coverage" in parts else None,
        bcubed=KM.coclustering_bcubed(rows, cols, max_work=limit) if "bcubed" in parts else None,
    )


def micro_from_partition_tables(rows, cols, *, parts=PARTS) -> KM.MicroResult:
    """The micro parts of two co-clusterings, eagerly, from their row and column contingency tables."""
    return _coclustering(rows, cols, frozenset(parts), max_work())


def micro_graph(truth: xr.Dataset, pred: xr.Dataset, *, parts=PARTS, blocks: int | None = None,
                split_every: int = 8):
    """Delayed :class:`~daskbicl.kernels.micro.MicroResult` holding only ``parts``.

    Parameters
    ----------
    truth, pred : xarray.Dataset
        Aligned inputs (co-clusterings, biclusterings or one of each).
    parts : iterable of {"overlap", "coverage", "bcubed"}
        What the selected measures need; the other fields of the result are
        None and are never computed.
    blocks : int, optional
        Number of MOCICE-BCubed block tasks (default: dask config
        ``daskbicl.bcubed_blocks``, 8).
    """
    parts = frozenset(parts)
    unknown = parts - PARTS
    if unknown:
        raise ValueError(f"unknown micro part(s) {sorted(unknown)}; expected some of {sorted(PARTS)}")
    limit = max_work()
    if truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition":
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return task(_coclustering)(rows, cols, parts, limit)
    truth = as_biclustering(truth, "truth")
    pred = as_biclustering(pred, "pred")
    rows = signature_graph(truth.row_mask.data, pred.row_mask.data, split_every=split_every)
    cols = signature_graph(truth.col_mask.data, pred.col_mask.data, split_every=split_every)
    overlap = task(KM.bicluster_overlap)(rows, cols) if "overlap" in parts else None
    coverage = bcubed = None
    if "bcubed" in parts:
        n = int(blocks or config.get("bcubed_blocks"))
        plan, coverage = task(_prepare_bcubed, nout=2)(
            rows, cols, limit, "coverage" in parts)
        partials = [task(_block)(plan, i, n) for i in range(n)]
        bcubed = task(_finish)(plan, *partials)
    elif "coverage" in parts:
        coverage = task(_coverage)(rows, cols, limit)
    return task(KM.MicroResult)(overlap, coverage, bcubed)
