"""The micro-object graph: chunked membership passes, then the family walk as tasks.

One chunked pass over the row masks and one over the column masks counts
each axis's signatures as sparse membership lists with their Gram table
(:func:`daskbicl.kernels.micro.memberships.signature_counts`, merged in a tree).  What
runs after that depends on the *parts* the selected measures ask for
(``Measure.provider_options``), and only those come back to the client
(:class:`~daskbicl.kernels.micro.cell_records.MicroResult`):

* ``"overlap"`` (E4SC, CE): the K x L shared-cell table, from the two Gram
  tables (one small task);
* ``"coverage"`` (CE, RNIA) and ``"bcubed"`` (MOCICE-BCubed): one planning
  task (:func:`~daskbicl.kernels.micro.planner.plan_micro`: estimates, the work
  limit, the split into parts), then ``daskbicl.micro_tasks`` tasks that walk
  their parts of the family of bicluster sets sharing a cell
  (:func:`~daskbicl.kernels.micro.family_tasks.run_task`), spread over the cluster's
  workers, and one small task that adds them up.  MOCICE-BCubed adds a task
  computing the union sizes of each side's sets (its normalisers).

No task holds rows x biclusters or pairs of signatures: the passes hold a
chunk, the walking tasks their parts' membership lists and at most
``daskbicl.micro_budget`` stored sets (docs/measures/micro.md, "Memory").

Two co-clusterings skip masks and signatures altogether: every part comes
from their row and column contingency tables (the same pass as the
co-clustering measures; :func:`daskbicl.kernels.micro.family_tasks.coclustering_bcubed`).

The work limit is the dask config key ``daskbicl.max_work`` and the memory
budget ``daskbicl.micro_budget``, read when the graph is built, so workers
use the client's values.
"""

from __future__ import annotations

import xarray as xr

from .. import config
from ..errors import InputError
from ..kernels.micro import micro_scores
from ..kernels.micro.budget import BUDGET_KEY, DEFAULT_MAX_WORK, MAX_WORK_KEY
from ..kernels.micro.cell_records import bicluster_overlap, same_biclusters
from ..kernels.micro.family_tasks import finish, jaccard_table, run_task, union_tables
from ..kernels.micro.memberships import merge_memberships, signature_counts
from ..kernels.micro.planner import plan_micro
from .blocks import as_biclustering
from .contingency_pass import partition_tables
from .core import aligned_blocks, map_blocks_delayed, shared_pass, task, task_map, tree_reduce

__all__ = ["MicroResult", "PARTS", "budget", "max_work", "memberships_graph", "micro_from_partition_tables",
           "micro_graph"]

MicroResult = micro_scores.MicroResult

#: The parts a micro graph can compute.
PARTS = frozenset({"overlap", "coverage", "bcubed"})


def _positive(name: str, key: str, default, integer: bool = False) -> float:
    raw = config.get(name)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or (integer and value != int(value)):
        kind = "positive whole number" if integer else "positive number"
        raise InputError(f"dask config {key!r} must be a {kind} (default {default:.3g}), got {raw!r}")
    return value


def max_work() -> float:
    """The work limit from the dask config key ``daskbicl.max_work`` (default 6e9, about a minute)."""
    return _positive("max_work", MAX_WORK_KEY, DEFAULT_MAX_WORK)


def budget() -> int:
    """Sets one MOCICE-BCubed task may hold: the dask config key ``daskbicl.micro_budget``."""
    return int(_positive("micro_budget", BUDGET_KEY, config.DEFAULTS["daskbicl"]["micro_budget"]))


def memberships_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed merged :class:`~daskbicl.kernels.micro.memberships.Memberships` of one axis."""
    def build():
        blocks = aligned_blocks(truth_mask, pred_mask, axis=-1)
        parts = map_blocks_delayed(signature_counts, blocks)
        return tree_reduce(parts, merge_memberships, split_every=split_every)

    return shared_pass(f"memberships-{split_every}", (truth_mask, pred_mask), build)


def _plan(rows, cols, coverage: bool, bcubed: bool, limit: float, size: int, n_tasks: int):
    return plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, max_work=limit, budget=size,
                      n_tasks=n_tasks)


def _union_tables(plan, rows, cols, size: int):
    # after the plan: its work and budget checks come first; the class method needs none
    return union_tables(rows, cols, budget=size, seed=plan.seed) if plan.method == "family" else None


def _task(plan, index: int, rows, cols, jac=None, tables=None):
    if index >= len(plan.tasks):
        return None
    return run_task(plan, index, rows, cols, jac, tables)


def _finish(plan, tables, overlap, *results):
    identical = overlap is not None and same_biclusters(overlap)
    return finish(plan, [r for r in results if r is not None], tables, identical=identical)


def _coclustering(rows, cols, parts: frozenset, limit: float) -> micro_scores.MicroResult:
    return micro_scores.MicroResult(
        overlap=micro_scores.coclustering_overlap(rows, cols, max_work=limit) if "overlap" in parts else None,
        coverage=micro_scores.coclustering_coverage(rows, cols) if "coverage" in parts else None,
        bcubed=micro_scores.coclustering_bcubed(rows, cols, max_work=limit) if "bcubed" in parts else None,
        bcubed_error=6 * 2.0**-53 if "bcubed" in parts else None,
    )


def micro_from_partition_tables(rows, cols, *, parts=PARTS) -> micro_scores.MicroResult:
    """The micro parts of two co-clusterings, eagerly, from their row and column contingency tables."""
    return _coclustering(rows, cols, frozenset(parts), max_work())


def micro_graph(truth: xr.Dataset, pred: xr.Dataset, *, parts=PARTS, tasks: int | None = None,
                split_every: int = 8):
    """Delayed :class:`~daskbicl.kernels.micro.cell_records.MicroResult` holding only ``parts``.

    Parameters
    ----------
    truth, pred : xarray.Dataset
        Aligned inputs (co-clusterings, biclusterings or one of each).
    parts : iterable of {"overlap", "coverage", "bcubed"}
        What the selected measures need; the other fields of the result are
        None and are never computed.
    tasks : int, optional
        Number of tasks walking the family (default: dask config
        ``daskbicl.micro_tasks``, 16).
    """
    parts = frozenset(parts)
    unknown = parts - PARTS
    if unknown:
        raise ValueError(f"unknown micro part(s) {sorted(unknown)}; expected some of {sorted(PARTS)}")
    limit = max_work()
    size = budget()
    n_tasks = int(tasks or _positive("micro_tasks", "daskbicl.micro_tasks", 16, integer=True))
    if truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition":
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return task(_coclustering)(rows, cols, parts, limit)
    truth = as_biclustering(truth, "truth")
    pred = as_biclustering(pred, "pred")
    rows = memberships_graph(truth.row_mask.data, pred.row_mask.data, split_every=split_every)
    cols = memberships_graph(truth.col_mask.data, pred.col_mask.data, split_every=split_every)
    want_bcubed = "bcubed" in parts
    overlap = (task(bicluster_overlap)(rows, cols)
               if "overlap" in parts or want_bcubed else None)
    coverage = bcubed = error = None
    if "coverage" in parts or want_bcubed:
        plan = task(_plan)(rows, cols, "coverage" in parts, want_bcubed, limit, size, n_tasks)
        jac = tables = None
        if want_bcubed:
            jac = task(jaccard_table)(overlap)
            tables = task(_union_tables)(plan, rows, cols, size)
        results = task_map(_task, [(plan, i, rows, cols, jac, tables) for i in range(n_tasks)])
        coverage, bcubed, error = task(_finish, nout=3)(
            plan, tables, overlap if want_bcubed else None, *results)
    return task(micro_scores.MicroResult)(overlap if "overlap" in parts else None,
                                coverage if "coverage" in parts else None,
                                bcubed, error)
