"""The micro-object graph: chunked membership passes, then the family walk as tasks.

One chunked pass over the row masks and one over the column masks counts
each axis's signatures as sparse membership lists with their Gram table
(:func:`daskbicl.kernels.micro.memberships.signature_counts`, merged in a tree);
an axis is cut into up to ``SPREAD_BLOCKS`` blocks (two per worker thread)
where it is long enough (:func:`spread_chunk`), so the pass spreads over
the workers.  What
runs after that depends on the *parts* the selected measures ask for
(``Measure.provider_options``), and only those come back to the client
(:class:`~daskbicl.kernels.micro.cell_records.MicroResult`):

* ``"overlap"`` (E4SC, CE): the K x L shared-cell table, from the two Gram
  tables (one small task);
* ``"coverage"`` (CE, RNIA) and ``"bcubed"`` (MOCICE-BCubed): one small
  planning task (:func:`~daskbicl.kernels.micro.planner.plan_micro`: the
  method from closed-form bounds, the split into parts), then :func:`n_tasks`
  tasks (``daskbicl.micro_tasks``, at least four per worker thread of the
  cluster) that walk their parts of the family of bicluster sets sharing a
  cell (:func:`~daskbicl.kernels.micro.family_tasks.run_task`), and one
  small task that adds them up.  MOCICE-BCubed adds one task per side
  computing the union sizes of that side's sets (its normalisers).  Every
  task is placed by the scheduler: no worker restrictions, no priorities,
  no dependency that only orders tasks.

No task holds rows x biclusters or pairs of signatures: the passes hold a
chunk, the walking tasks their parts' membership lists and at most
``daskbicl.micro_budget`` stored sets (docs/measures/micro.md, "Memory").

Two co-clusterings skip masks and signatures altogether: every part comes
from their row and column contingency tables (the same pass as the
co-clustering measures; :func:`daskbicl.kernels.micro.family_tasks.coclustering_bcubed`).

The work limit is the dask config key ``daskbicl.max_work`` and the memory
budget ``daskbicl.micro_budget``, read when the graph is built, so workers
use the client's values.

MOCICE-BCubed, CE and RNIA have three methods (``method``;
docs/measures/micro.md, "Exact or sampled"): ``"exact"`` is the exact
engine above (TooLargeError when a bounded route is beyond the work
limit, when the walk's lower bound is beyond its trial (from the plan,
before any walk), or when a walking task runs out of its allowance: the
whole limit when the walk's bound fits it, else a trial of a few seconds,
:meth:`~daskbicl.kernels.micro.planner.FamilyPlan.allowance`); ``"sample"``
estimates MOCICE-BCubed and the coverage counts of CE and RNIA with
:mod:`daskbicl.kernels.micro.sampling`; ``"auto"`` (the default) plans as
much as fits exactly (both parts, else the coverage counts alone, else
MOCICE-BCubed alone), and samples the rest and any part whose walking
tasks ran out of their share.  The sampled branch is always in the graph,
after the exact tasks, and does nothing for the parts they computed:

* one task builds the :class:`~daskbicl.kernels.micro.sampling.Sampler` from
  the membership lists and says what it samples
  (:func:`~daskbicl.kernels.micro.sampled_parts.sampler_for`);
* ``daskbicl.micro_tasks`` *pilot* tasks draw the first ``PILOT`` blocks of
  each side (block j on task j mod tasks);
* one small task reads the pilot's variances and fixes the number of blocks
  per side for a 95 % half-width of ``daskbicl.micro_tolerance`` (at most
  what ``daskbicl.max_work`` allows);
* as many tasks draw the other blocks, and one adds every block up in index
  order: the same digits for any number of tasks, workers or chunks.

The matching of CE (D_max) and E4SC stay exact: they read only the K x L
table of shared cells.
"""

from __future__ import annotations

import contextlib
import dataclasses

import dask
import dask.array as da
import numpy as np
import xarray as xr

from .. import config
from ..errors import InputError, TooLargeError
from ..kernels.micro import family_tasks, micro_scores, sampled_parts
from ..kernels.micro.budget import BUDGET_KEY, DEFAULT_MAX_WORK, MAX_WORK_KEY
from ..kernels.micro.cell_records import bicluster_overlap, same_biclusters
from ..kernels.micro.family_tasks import finish, jaccard_table, run_task
from ..kernels.micro.memberships import (
    join_parts,
    merge_memberships,
    merge_part,
    pack_masks,
    signature_counts,
)
from ..kernels.micro.planner import plan_micro
from ..scheduling import active_client
from .blocks import as_biclustering
from .contingency_pass import partition_tables
from .core import ChunkPass, counting_pass, shared_pass, task, task_map

__all__ = ["COUNT_MEMBERSHIPS", "METHODS", "MicroResult", "PARTS", "budget", "max_work", "memberships_graph",
           "micro_graph", "tolerance"]

MicroResult = micro_scores.MicroResult

#: The parts a micro graph can compute.
PARTS = frozenset({"overlap", "coverage", "bcubed"})

#: How MOCICE-BCubed is computed (docs/measures/micro.md, "Exact or sampled").
METHODS = ("auto", "exact", "sample")

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


def tolerance() -> float:
    """The target 95 % half-width of sampled values: the dask config key ``daskbicl.micro_tolerance``."""
    return _positive("micro_tolerance", "daskbicl.micro_tolerance", 1e-3)


def seed() -> int:
    """The seed of sampled values: the dask config key ``daskbicl.micro_seed`` (a whole number >= 0)."""
    raw = config.get("micro_seed")
    try:
        value = int(raw)
        ok = value == float(raw) and 0 <= value < 2**63
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InputError(f"dask config 'daskbicl.micro_seed' must be a whole number >= 0 (default 0), got {raw!r}")
    return value


def budget() -> int:
    """Sets one MOCICE-BCubed task may hold: the dask config key ``daskbicl.micro_budget``."""
    return int(_positive("micro_budget", BUDGET_KEY, config.DEFAULTS["daskbicl"]["micro_budget"]))


#: The membership pass of an axis is cut into this many blocks (of at least ``SPREAD_MIN`` items), or two
#: per worker thread of the default distributed client when that is fewer, so that it spreads over the
#: workers however large the configured chunk (``daskbicl.chunk``) is.  More blocks cost more merging.
SPREAD_BLOCKS = 16
SPREAD_MIN = 1 << 15


def spread_blocks() -> int:
    """Blocks to cut an axis into: ``SPREAD_BLOCKS``, or two per thread of the default client if fewer."""
    import sys

    if "distributed" not in sys.modules:  # no client can exist: do not pay distributed's import (~1-2 s) to ask
        return SPREAD_BLOCKS
    try:
        from distributed import default_client

        threads = sum(default_client().nthreads().values())
    except (ImportError, ValueError):  # no distributed client: the local schedulers
        return SPREAD_BLOCKS
    return max(1, min(SPREAD_BLOCKS, 2 * threads))


def spread_chunk(length: int, chunk: int, blocks: int | None = None) -> int:
    """The chunk of the membership pass: at most ``chunk``, small enough for ``blocks`` blocks.

    >>> spread_chunk(10**6, 2**21, 16), spread_chunk(10**5, 2**21, 16), spread_chunk(1000, 2**21, 16)
    (62500, 32768, 32768)
    """
    blocks = SPREAD_BLOCKS if blocks is None else blocks
    return max(1, min(chunk, max(SPREAD_MIN, -(-length // blocks))))


def _spread(truth_mask, pred_mask, blocks: int):
    """The two masks, dask ones rechunked along the items when they have fewer than ``blocks`` chunks."""
    length = truth_mask.shape[-1]
    out = []
    for m in (truth_mask, pred_mask):
        if isinstance(m, da.Array) and len(m.chunks[-1]) < blocks:
            want = spread_chunk(length, max(m.chunks[-1]), blocks)
            if want < max(m.chunks[-1]):
                m = m.rechunk({m.ndim - 1: want})
        out.append(m)
    return out


#: The membership pass of one axis: each block's signatures and Gram table, merged exactly.
COUNT_MEMBERSHIPS = ChunkPass("memberships", chunk=signature_counts, combine=merge_memberships)


def _shipped(truth_mask, pred_mask) -> bool:
    """Whether the two masks are in this process's memory and a cluster's workers will count them."""
    return not isinstance(truth_mask, da.Array) and not isinstance(pred_mask, da.Array) and active_client() is not None


def memberships_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed merged :class:`~daskbicl.kernels.micro.memberships.Memberships` of one axis.

    The items are cut into :func:`spread_blocks` blocks where the axis is
    long enough (:func:`spread_chunk`), counted as tasks and merged in a
    tree: the merged lists are the same for any cut.  In-memory masks
    counted on a cluster are packed eight items to a byte first
    (:func:`~daskbicl.kernels.micro.memberships.pack_masks`): they are sent
    to the workers, and an eighth of the bytes travels (10^6 x 200 bools:
    25 MB instead of 200 MB per side).
    """
    def build():
        n_blocks = spread_blocks()
        chunk = spread_chunk(truth_mask.shape[-1], int(config.get("chunk")), n_blocks)
        if _shipped(truth_mask, pred_mask):  # eight items a byte: an eighth of the bytes to send
            arrays, chunk = pack_masks(truth_mask, pred_mask), -(-chunk // 8)
        else:
            arrays = _spread(truth_mask, pred_mask, n_blocks)
        return counting_pass(COUNT_MEMBERSHIPS, arrays, split_every=split_every, chunk=chunk, last=_merged)

    return shared_pass(f"memberships-{split_every}", (truth_mask, pred_mask), build)


#: The last merge of an axis's membership lists is cut into this many hash partitions at most (one per worker
#: thread of the active client when fewer): merged side by side, then put back in order by one small task.
MERGE_PARTS = 4


def merge_parts() -> int:
    """Partitions of the last membership merge: one per thread of the active client, at most ``MERGE_PARTS``;
    1 (one merge task) without a client."""
    client = active_client()
    if client is None:
        return 1
    try:
        return max(1, min(MERGE_PARTS, sum(client.nthreads().values())))
    except Exception:  # noqa: BLE001 - a scheduler that does not answer: one merge task, as before
        return 1


def _merged(parts: list):
    """The last merge of an axis's membership lists (at most ``split_every`` partial lists), in
    :func:`merge_parts` hash partitions on a cluster (``counting_pass``'s ``last``).

    The longer axis's last merge was one task of 0.4-0.5 s on the spread
    benchmark's case, during which every other worker waited (nothing else
    needs less than both axes' lists).  Identical lists fall in one
    partition, so the partitions merge independently and
    :func:`~daskbicl.kernels.micro.memberships.join_parts` returns the same
    arrays as the one merge (the lists in first-occurrence order).
    """
    n_parts = merge_parts()
    if n_parts < 2:
        return task(merge_memberships)(*parts)
    return task(join_parts)(*(task(merge_part)(index, n_parts, *parts) for index in range(n_parts)))


def _plan(rows, cols, coverage: bool, bcubed: bool, limit: float, size: int, n_tasks: int):
    return plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, max_work=limit, budget=size,
                      n_tasks=n_tasks)


def _plan_auto(rows, cols, coverage: bool, bcubed: bool, limit: float, size: int, n_tasks: int):
    """The exact plan of as much as fits ``limit``, or None when every asked part is to be sampled.

    Tries both parts, then the coverage counts alone (MOCICE-BCubed
    sampled), then MOCICE-BCubed alone (the coverage counts sampled).
    """
    tries = [(coverage, bcubed)] + ([(True, False), (False, True)] if coverage and bcubed else [])
    for cov, bc in tries:
        try:
            return plan_micro(rows, cols, coverage=cov, bcubed=bc, max_work=limit, budget=size, n_tasks=n_tasks)
        except TooLargeError:
            continue
    return None


def _union_side(plan, rows, cols, size: int, side: str, on_spent: str = "raise"):
    """One side's union sizes (MOCICE-BCubed's normalisers), a task of its own so the two sides run at once.

    After the plan; the class method needs none.  The side's walk may spend what the plan allows it
    (:attr:`~daskbicl.kernels.micro.planner.FamilyPlan.union_limit`); when that or the memory budget
    runs out, the TooLargeError is
    raised (``on_spent="raise"``) or its message returned (``"return"``: ``method="auto"`` samples).
    """
    if plan is None or not plan.bcubed or plan.method != "family":
        return None
    try:
        return family_tasks.union_side(rows, cols, side, size, plan.seed, limit=plan.union_limit,
                                       max_work=plan.max_work, bound=plan.work if plan.trial else None)
    except TooLargeError as err:
        if on_spent != "return":
            raise
        return str(err)


def _union_tables(pred, truth):
    """The two sides' tables; a side's message when its walk stopped (``method="auto"``)."""
    for side in (pred, truth):
        if isinstance(side, str):
            return side
    return None if pred is None else family_tasks.UnionTables(*pred, *truth)


def _task(plan, index: int, rows, cols, jac=None, tables=None, parts: str = "all", on_spent: str = "raise"):
    if plan is None or index >= plan.n_tasks:
        return None
    if isinstance(tables, str):  # a side's walk stopped: MOCICE-BCubed is sampled, its parts not walked
        return family_tasks.TaskResult(np.zeros(0, object), 0.0, 0.0, 0.0, 0.0, 0, 0, 0, None, tables)
    return run_task(plan, index, rows, cols, jac, tables, parts=parts, on_spent=on_spent)


def _walk_graph(plan, rows, cols, jac, tables, n_tasks: int, split: bool, on_spent: str) -> list:
    """The walking tasks.  With ``split`` (both parts asked), each task's coverage parts are a task of
    their own that needs no union table, so they run while the union tables are still being made."""
    if not split:
        return task_map(_task, [(plan, i, rows, cols, jac, tables, "all", on_spent) for i in range(n_tasks)])
    coverage = task_map(_task, [(plan, i, rows, cols, None, None, "coverage", on_spent) for i in range(n_tasks)])
    return coverage + task_map(_task, [(plan, i, rows, cols, jac, tables, "closure", on_spent)
                                       for i in range(n_tasks)])


def _finish(plan, tables, overlap, split: bool, *tasks):
    """(coverage, MOCICE-BCubed, error) of the walks; None for a part whose walks stopped (then sampled).

    With ``split`` the first half of ``results`` are the coverage tasks, the second the closure tasks
    (which also count moments: the coverage counts from the walk need both halves); otherwise a stopped
    task stops the one part the plan computes.
    """
    if plan is None:
        return None, None, None
    results = list(tasks)
    half = len(results) // 2 if split else len(results)
    cov_spent = any(r is not None and r.spent for r in results[:half])
    bc_spent = isinstance(tables, str) or any(r is not None and r.spent for r in results[half:]) or (
        not split and cov_spent)
    # the MOCICE-BCubed parts also count the moments of their sets: walked coverage needs them
    cov_spent = cov_spent or (bc_spent and plan.bcubed and getattr(plan, "row_ranges", 0) is None)
    if cov_spent or bc_spent:
        plan = dataclasses.replace(plan, coverage=plan.coverage and not cov_spent,
                                   bcubed=plan.bcubed and not bc_spent)
        if not (plan.coverage or plan.bcubed):
            return None, None, None
        results = [r for r in (results[:half] if plan.coverage else results[half:]) if r is not None]
    identical = overlap is not None and same_biclusters(overlap)
    return finish(plan, [r for r in results if r is not None], None if isinstance(tables, str) else tables,
                  identical=identical)


# --------------------------------------------------------------------------- sampled parts


def _either(exact, sampled):
    return exact if sampled is None else sampled


def _sample_graph(exact, rows, cols, overlap, bcubed: bool, coverage: bool, n_tasks: int, limit: float):
    """Delayed (sampled PRF, sampled coverage): each None when ``exact`` (coverage, PRF) holds that part."""
    target, seed_ = tolerance(), seed()
    draws = task(sampled_parts.sampler_for)(*exact, rows, cols, bcubed, coverage)
    pilot = {side: sampled_parts.PILOT for side in ("precision", "recall", "coverage")}
    pilots = task_map(sampled_parts.draw, [(draws, 0, pilot, i, n_tasks, seed_) for i in range(n_tasks)])
    count = task(sampled_parts.count)(draws, overlap, target, limit, *pilots)
    rest = task_map(sampled_parts.draw, [(draws, sampled_parts.PILOT, count, i, n_tasks, seed_)
                                         for i in range(n_tasks)])
    return task(sampled_parts.sampled, nout=2)(draws, overlap, count, *pilots, *rest)


def _coclustering(rows, cols, parts: frozenset, limit: float) -> micro_scores.MicroResult:
    return micro_scores.MicroResult(
        overlap=micro_scores.coclustering_overlap(rows, cols, max_work=limit) if "overlap" in parts else None,
        coverage=micro_scores.coclustering_coverage(rows, cols) if "coverage" in parts else None,
        bcubed=micro_scores.coclustering_bcubed(rows, cols, max_work=limit) if "bcubed" in parts else None,
        bcubed_error=6 * 2.0**-53 if "bcubed" in parts else None,
    )


def _axis_graphs(truth: xr.Dataset, pred: xr.Dataset, split_every: int):
    """The membership passes of rows and of columns; the shorter axis's at a lower priority.

    The longer axis's last merge is one task; with the shorter axis's blocks
    queued behind the longer axis's, they run beside that merge instead of
    before it (a scheduling hint only: the merged lists are the same).
    """
    later = "col" if truth.row_mask.shape[-1] >= truth.col_mask.shape[-1] else "row"
    out = {}
    for axis in ("row", "col"):
        with dask.annotate(priority=-1) if axis == later else contextlib.nullcontext():
            out[axis] = memberships_graph(truth[f"{axis}_mask"].data, pred[f"{axis}_mask"].data,
                                          split_every=split_every)
    return out["row"], out["col"]


def micro_graph(truth: xr.Dataset, pred: xr.Dataset, *, parts=PARTS, tasks: int | None = None,
                split_every: int = 8, method: str = "auto"):
    """Delayed :class:`~daskbicl.kernels.micro.cell_records.MicroResult` holding only ``parts``.

    The graph the ``micro`` provider's record builds
    (:func:`daskbicl.engine.provider_graph.provider_graph`), for a caller
    holding two datasets: the membership passes (:func:`_axis_graphs`),
    then :func:`micro_finish`; two co-clusterings: their contingency tables.

    Parameters
    ----------
    truth, pred : xarray.Dataset
        Aligned inputs (co-clusterings, biclusterings or one of each).
    parts : iterable of {"overlap", "coverage", "bcubed"}
        What the selected measures need; the other fields of the result are
        None and are never computed.
    tasks : int, optional
        Number of tasks walking the family (default: dask config
        ``daskbicl.micro_tasks``, 16), and drawing samples.
    method : {"auto", "exact", "sample"}
        How MOCICE-BCubed is computed (module docstring); the other parts
        are always exact.
    """
    parts = _checked_request(parts, method)
    bound = {"limit": max_work(), "size": budget(), "tasks": int(tasks)} if tasks else micro_bound()
    if truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition":
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return task(_coclustering)(rows, cols, parts, bound["limit"])
    rows, cols = _axis_graphs(as_biclustering(truth, "truth"), as_biclustering(pred, "pred"), split_every)
    return micro_finish(rows, cols, parts=parts, method=method, **bound)


# --------------------------------------------------------------------------- the provider record's fields


def _checked_request(parts, method: str) -> frozenset:
    parts = frozenset(parts)
    unknown = parts - PARTS
    if unknown:
        raise ValueError(f"unknown micro part(s) {sorted(unknown)}; expected some of {sorted(PARTS)}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    return parts


def micro_bound() -> dict:
    """What the micro graph reads from the dask config when it is built (the workers then use the caller's).

    ``limit`` (``daskbicl.max_work``), ``size`` (``daskbicl.micro_budget``)
    and ``tasks`` (``daskbicl.micro_tasks``): the ``micro`` provider's ``bind``.
    """
    return {"limit": max_work(), "size": budget(), "tasks": n_tasks()}


def n_tasks() -> int:
    """Tasks the micro work is split into, once: ``daskbicl.micro_tasks``, and at least four per worker
    thread of the active client, so that the scheduler can balance them (a part or a block per task)."""
    tasks = int(_positive("micro_tasks", "daskbicl.micro_tasks", 16, integer=True))
    client = active_client()
    if client is None:
        return tasks
    try:
        threads = sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 - a scheduler that does not answer: the configured number
        return tasks
    return max(tasks, 4 * threads)


def micro_of_tables(rows, cols, *, parts=frozenset(), method: str = "auto", limit: float, size: int = 0,
                    tasks: int = 0) -> micro_scores.MicroResult:
    """The micro parts of two co-clusterings from their row and column contingency tables (one task).

    The ``micro`` provider's ``from_tables``; ``method``, ``size`` and
    ``tasks`` are unused (every part of two co-clusterings is exact).
    """
    return _coclustering(rows, cols, _checked_request(parts, method), limit)


def micro_finish(rows, cols, *, parts=frozenset(), method: str = "auto", limit: float, size: int, tasks: int):
    """Delayed :class:`~daskbicl.kernels.micro.cell_records.MicroResult` from the two axes' membership lists.

    What follows the membership passes (the ``micro`` provider's
    ``finish``): ``rows`` and ``cols`` are the merged
    :class:`~daskbicl.kernels.micro.memberships.Memberships` (Delayed or
    concrete); the shared-cell table, the plan, the walking
    tasks and the sampled branch are built from them (module docstring).
    """
    parts = _checked_request(parts, method)
    n_tasks = int(tasks)
    want_bcubed, want_coverage = "bcubed" in parts, "coverage" in parts
    overlap = (task(bicluster_overlap)(rows, cols)
               if "overlap" in parts or want_bcubed else None)
    coverage = bcubed = error = None
    plan = None
    if method != "sample" and (want_coverage or want_bcubed):
        plan = task(_plan if method == "exact" else _plan_auto)(rows, cols, want_coverage, want_bcubed,
                                                                limit, size, n_tasks)
    if plan is not None:
        jac = tables = None
        on_spent = "raise" if method == "exact" else "return"
        if want_bcubed:
            jac = task(jaccard_table)(overlap)
            tables = task(_union_tables)(*(task(_union_side)(plan, rows, cols, size, side, on_spent)
                                           for side in ("pred", "truth")))
        split = want_bcubed and want_coverage
        results = _walk_graph(plan, rows, cols, jac, tables, n_tasks, split, on_spent)
        coverage, bcubed, error = task(_finish, nout=3)(
            plan, tables, overlap if want_bcubed else None, split, *results)
    if method != "exact" and (want_coverage or want_bcubed):
        sampled_bcubed, sampled_coverage = _sample_graph((coverage, bcubed), rows, cols, overlap, want_bcubed,
                                                         want_coverage, n_tasks, limit)
        bcubed = task(_either)(bcubed, sampled_bcubed)
        coverage = task(_either)(coverage, sampled_coverage)
    return task(micro_scores.MicroResult)(overlap if "overlap" in parts else None,
                                coverage if want_coverage else None,
                                bcubed, error)
