"""Planning the exact micro-object step: which method, its parts, estimated cost, the work limit, tasks.

:func:`plan_micro` first estimates the cell-class method
(:mod:`~daskbicl.kernels.micro.class_traces`: merged copies, classes of cells,
traces), then, unless that is clearly cheap, the family walk below, and
takes the cheaper; :func:`exact_cost` returns the cheaper estimate.

The family F (every set of biclusters that shares a cell) is walked in
independent *parts*, one per required set B (the parts of a prefix tree:
part B is responsible for the sets whose elements up to max(B) are exactly
B), see docs/measures/micro.md:

* a *coverage part* walks only its own sets (children above max(B)); it
  stores nothing, so its memory is its rows' and columns' lists;
* a *closure part* (MOCICE-BCubed) walks every superset of B — the sets its
  own sets need for their superset sums — and stores them: at most
  ``budget`` nodes (the dask config key ``daskbicl.micro_budget``).

With truth biclusters numbered first, only parts whose B starts with a
truth bicluster hold sets with both a truth and a pred member, so only
those are closure parts; the others are coverage parts (and are skipped
when no coverage is asked for).

:func:`plan_micro` estimates every part (:func:`~daskbicl.kernels.micro.family_estimate.profile_family`),
splits a part that is too large (B → B ∪ {a} for every a > max(B); a
closure part only while B has no pred member, because a set with both
sides must be summed where all its supersets are), raises
:class:`~daskbicl.errors.TooLargeError` when the total estimated work
exceeds ``max_work`` — before any of it is done — and deals the parts
into ``n_tasks`` tasks of similar work (longest first).
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ...errors import InputError, TooLargeError
from .budget import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_WORK,
    UNIT_CELL_PAIR,
    UNIT_DELIVERY,
    UNIT_ENTRY,
    UNIT_MEMBER,
    UNIT_NODE,
    UNIT_PART,
    UNIT_STORED,
    budget_error,
    too_large,
)
from .class_traces import ENUM_LIMIT, ClassEstimate, ClassTable, Merged, class_estimate, class_ranges
from .memberships import Memberships, subproblem

__all__ = ["Part", "MicroPlan", "ClassPlan", "FamilyPlan", "PAIR_LIMIT", "METHODS", "Estimates", "Probe", "classes_ruled_out", "estimate_classes", "exact_cost",
           "pairs_work", "plan_micro", "part_inputs", "probe_family", "small_input"]

#: The exact methods :func:`plan_micro` chooses from.
METHODS = ("family", "classes")

#: Estimated work (units) below which the class method is taken without
#: estimating the family walk (~0.5 s).
QUICK_CLASSES = 5e7

#: Rows x columns of a node below which a coverage walk finishes the node's
#: subtree from its pairs (see :func:`~daskbicl.kernels.micro.family_walk.enumerate_family`).
PAIR_LIMIT = 64

#: Independent samples of the family's profile (see family_estimate.profile_family).
REPEATS = 4


@dataclass(frozen=True)
class Part:
    """One part of the family walk.

    ``required`` is B (ascending); ``closure`` marks a MOCICE-BCubed part;
    ``nodes`` and ``work`` are the estimates (sets walked, work units).
    """

    required: tuple[int, ...]
    closure: bool
    nodes: float
    work: float

    @property
    def min_elem(self) -> int:
        """Children of the root use elements ≥ this (0: every superset of B)."""
        return 0 if self.closure else self.required[-1] + 1


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """What every plan holds: the sizes, what is asked, the estimated work (units), the seed and notes."""

    n_truth: int
    n_pred: int
    coverage: bool
    bcubed: bool
    work: float
    seed: int = 0
    notes: list = field(default_factory=list)
    max_work: float = float("inf")


@dataclass(frozen=True, kw_only=True)
class FamilyPlan(_Plan):
    """The family walk: its parts dealt into tasks, and what the plan already counted.

    ``moments`` holds the factorial moments of the sets no part walks (the
    empty set and the roots of split parts), a table of Python ints;
    ``family`` the estimated sets walked; ``budget`` the most sets a
    MOCICE-BCubed part stores.  When ``row_ranges`` is set, the coverage
    counts come from every pair of row and column signatures instead (task i
    takes the row signatures ``row_ranges[i]``), because that was estimated
    cheaper than the walk.
    """

    method: ClassVar[str] = "family"
    tasks: tuple[tuple[Part, ...], ...]
    moments: np.ndarray
    family: float
    budget: int
    row_ranges: tuple | None = None

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.tasks)

    @property
    def parts(self) -> list[Part]:
        """Every part, in task order."""
        return [p for t in self.tasks for p in t]

    def allowance(self, index: int) -> float:
        """Work units task ``index`` may spend: its estimated share of ``max_work`` plus an even share.

        The walks count their own steps against it and stop when it runs
        out (:func:`~daskbicl.kernels.micro.family_tasks.run_task`), so the
        tasks together spend at most twice ``max_work`` before a refusal or
        the fallback to sampling, however low the plan's estimate was.
        """
        total = sum(p.work for p in self.parts)
        share = sum(p.work for p in self.tasks[index]) / total if total > 0 else 1.0 / self.n_tasks
        return self.max_work * (share + 1.0 / self.n_tasks)


@dataclass(frozen=True, kw_only=True)
class ClassPlan(_Plan):
    """The cell classes (:mod:`~daskbicl.kernels.micro.class_traces`): task i sums the classes ``class_ranges[i]``.

    ``class_ranges`` is None without MOCICE-BCubed (the coverage counts come
    from the classes in the finishing step alone).
    """

    method: ClassVar[str] = "classes"
    merged: Merged
    classes: ClassTable
    n_tasks: int
    class_ranges: tuple | None = None

    @property
    def family(self) -> float:
        """The number of cell classes (as :attr:`FamilyPlan.family`, the size of what is walked)."""
        return float(len(self.classes))


#: A plan of the exact micro-object step: the family walk or the cell classes (``plan.method`` names it).
MicroPlan = FamilyPlan | ClassPlan


def part_inputs(rows: Memberships, cols: Memberships, required) -> tuple:
    """``(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt)`` of the part with required set B."""
    return (*subproblem(rows, tuple(required)), *subproblem(cols, tuple(required)))


def pairs_work(rows: Memberships, cols: Memberships) -> float:
    """Work units of the coverage counts from every pair of row and column signatures."""
    words = max(1, -(-rows.n_elem // 64))
    return UNIT_CELL_PAIR * rows.n_signatures * cols.n_signatures * (1 + words / 4)


def _profile(rows: Memberships, cols: Memberships, seed: int, limit: float):
    from .family_estimate import profile_family

    whole = (rows.ptr, rows.el, cols.ptr, cols.el)
    return profile_family(*whole, rows.n_elem, PAIR_LIMIT, REPEATS, seed, limit, rows.n_elem <= _PAIR_TABLES)


class Probe(NamedTuple):
    """An estimate run before the plan (a task of its own), with the seed and work limit it ran with.

    The family's profiles are seeded and deterministic; their work limit
    only stops them.  So a probe that did not stop gives what a run with any
    larger limit gives, and a plan reuses it when its own limit is the same
    or larger (:meth:`serves`); otherwise the plan runs the estimate again.
    """

    seed: int
    limit: float
    stopped: bool
    value: tuple

    def serves(self, seed: int, limit: float) -> bool:
        """Whether this probe is what a run with ``seed`` and ``limit`` returns."""
        return self.seed == seed and (self.limit == limit or (not self.stopped and limit >= self.limit))


def probe_family(rows: Memberships, cols: Memberships, *, max_work: float, seed: int = 0) -> Probe:
    """The profile of the whole family (the coverage and closure parts' sizes) under ``max_work``."""
    value = _profile(rows, cols, seed, max_work / UNIT_DELIVERY)
    return Probe(seed, max_work, bool(value[4]), value)


@dataclass(frozen=True)
class Estimates:
    """What tasks estimated before the plan, beside each other (any field None: the plan computes it).

    ``classes`` is :func:`estimate_classes` for ``flags`` (coverage,
    bcubed); ``family`` a :func:`probe_family`.
    """

    flags: tuple[bool, bool] | None = None
    classes: ClassEstimate | str | None = None
    family: Probe | None = None

    def classes_for(self, rows: Memberships, cols: Memberships, coverage: bool,
                    bcubed: bool) -> ClassEstimate | str:
        """The class estimate for these flags: the one given, one derived from it, or computed here."""
        ce = self.classes
        if ce is None:
            return estimate_classes(rows, cols, coverage, bcubed)
        if isinstance(ce, str) or ce.table is None or self.flags == (coverage, bcubed):
            return ce  # without classes the flags change nothing
        if self.flags is not None and self.flags[1] and ce.per_class is not None:
            # class_estimate's sum, with the per-class work it already counted
            from .budget import UNIT_CLASS
            from .class_traces import class_work

            work = float(class_work(ce.merged, None)) + UNIT_CLASS * len(ce.table) * (coverage or bcubed)
            per_class = ce.per_class if bcubed else None
            if bcubed:
                work += float(np.sum(ce.per_class))
            return ClassEstimate(ce.merged, ce.table, work, ce.why, per_class)
        return estimate_classes(rows, cols, coverage, bcubed)


def _family_profile(rows: Memberships, cols: Memberships, seed: int, max_work: float, probe: Probe | None):
    if probe is not None and probe.serves(seed, max_work):
        return probe.value
    return _profile(rows, cols, seed, max_work / UNIT_DELIVERY)


#: Work units of enumerating the cell classes (pairs of signatures) below which an input is *small*
#: (:func:`small_input`): its planning is quick and takes the class method first.
SMALL_ENUM = 1e6


def _pairs_of_signatures(rows: Memberships, cols: Memberships) -> float:
    """Work units of enumerating the cell classes from the signatures as they are (before merging)."""
    from .budget import UNIT_SIG_PAIR

    words = max(1, -(-rows.n_elem // 64))
    return UNIT_SIG_PAIR * rows.n_signatures * cols.n_signatures * words


def small_input(rows: Memberships, cols: Memberships) -> bool:
    """Whether the cell classes are few enough to enumerate at once (no estimate is worth a task of its own).

    Merging copies only removes signatures, so this bounds the class
    method's first step; such inputs plan in milliseconds, and the estimate
    tasks run beside the plan on larger inputs only (nothing of the family
    walk is compiled or run for a small first score that takes the classes).
    """
    return _pairs_of_signatures(rows, cols) <= SMALL_ENUM


def estimate_classes(rows: Memberships, cols: Memberships, coverage: bool, bcubed: bool) -> ClassEstimate | str:
    """The class method's estimate, or why it does not apply when the counts alone say so (a string).

    When every bicluster has a cell, merging copies keeps every distinct
    signature (a row in a copy is in its representative too), so the pairs
    of signatures of the class method's first step are known without
    merging; above :data:`~daskbicl.kernels.micro.class_traces.ENUM_LIMIT`
    work the method is not used (as :func:`class_estimate` decides, with the
    same reason), and the seconds of merging a million signatures are saved.
    """
    why = classes_ruled_out(rows, cols)
    return why if why else class_estimate(rows, cols, coverage, bcubed)


def classes_ruled_out(rows: Memberships, cols: Memberships) -> str:
    """Why the class method is not used, when the counts alone say so (:func:`estimate_classes`); else ""."""
    if bool((np.diagonal(rows.gram) > 0).all() and (np.diagonal(cols.gram) > 0).all()):
        if _pairs_of_signatures(rows, cols) > ENUM_LIMIT:
            return f"{rows.n_signatures:,} x {cols.n_signatures:,} pairs of signatures"
    return ""


def _count(rows: Memberships, cols: Memberships, req) -> int:
    """N(B): the cells inside every bicluster of B (from the Gram tables for |B| ≤ 2)."""
    if len(req) == 1:
        return int(rows.gram[req[0], req[0]]) * int(cols.gram[req[0], req[0]])
    if len(req) == 2:
        return int(rows.gram[req[0], req[1]]) * int(cols.gram[req[0], req[1]])
    r = subproblem(rows, tuple(req))[2]
    c = subproblem(cols, tuple(req))[2]
    return int(r.sum()) * int(c.sum())


#: Largest K + L for which the plan keeps the n x n tables of two-bicluster
#: parts (above, parts are never split).
_PAIR_TABLES = 1024


def _check_work(rows: Memberships, bcubed: bool, family: float, work: float, max_work: float,
                size: float | None = None) -> None:
    if work > max_work:
        what = "MOCICE-BCubed" if bcubed else "the coverage counts of CE and RNIA"
        walks = f"walks ~{family:.3g} sets" if size is None else \
            f"walks ~{family:.3g} sets (each set once per truth bicluster in it)"
        family_size = "" if size is None else f" has ~{size:.3g} sets and"
        raise too_large(
            f"the family of the sets of biclusters that share a cell ({rows.n_truth}+{rows.n_pred} "
            f"biclusters){family_size} {what} {walks}, which", work, max_work,
            "CE, RNIA and E4SC do not need MOCICE-BCubed's part of it: leave 'mocice_bcubed' out "
            "of measures to score them." if bcubed else "E4SC does not need it.")


def _class_plan(rows: Memberships, ce: ClassEstimate, coverage: bool, bcubed: bool, budget: int,
                n_tasks: int, seed: int, note: str) -> ClassPlan:
    assert ce.table is not None
    n_tasks = max(1, n_tasks)
    return ClassPlan(n_truth=rows.n_truth, n_pred=rows.n_pred, coverage=coverage, bcubed=bcubed, work=ce.work,
                     seed=seed, notes=[note], merged=ce.merged, classes=ce.table, n_tasks=n_tasks,
                     class_ranges=class_ranges(ce.merged, ce.table, n_tasks, ce.per_class) if bcubed else None)


def plan_micro(rows: Memberships, cols: Memberships, *, coverage: bool = True, bcubed: bool = False,
               max_work: float = DEFAULT_MAX_WORK, budget: int = DEFAULT_BUDGET, n_tasks: int = 16,
               seed: int = 0, coverage_by: str | None = None, method: str | None = None,
               estimates: Estimates | None = None) -> MicroPlan:
    """The cheapest exact method, its parts and tasks (module docstring).

    ``method`` forces the exact method ("family": the family walk;
    "classes": the cell classes and their traces,
    :mod:`~daskbicl.kernels.micro.class_traces`); by default the plan takes
    the class method when it is estimated below :data:`QUICK_CLASSES`, else
    estimates the family walk (stopping as soon as it is dearer than the
    class method) and takes the cheaper.  Raises
    :class:`~daskbicl.errors.TooLargeError` when both exceed ``max_work``,
    within seconds.  ``estimates`` holds estimates already made (by tasks
    beside each other, :class:`Estimates`): the plan is the same with or
    without them.

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> plan_micro(*example_memberships(), bcubed=True, n_tasks=2).method
    'classes'
    """
    if method not in (None, *METHODS):
        raise InputError(f"method must be one of {METHODS} or None, got {method!r}")
    if rows.n_items * cols.n_items >= 2**62:
        raise TooLargeError(
            f"{rows.n_items:,} x {cols.n_items:,} cells overflow the exact int64 cell counts "
            "(limit 2**62 cells; no setting raises it).")
    est = Estimates() if estimates is None else estimates
    kw = dict(coverage=coverage, bcubed=bcubed, budget=budget, n_tasks=n_tasks, seed=seed,
              coverage_by=coverage_by, known=est)
    if method == "family" or coverage_by is not None or not (coverage or bcubed):
        return _family_plan(rows, cols, max_work=max_work, **kw)  # type: ignore[arg-type]
    ce = est.classes_for(rows, cols, coverage, bcubed)
    if isinstance(ce, str):  # ruled out by the counts alone: as class_estimate without a table
        table, work, why = None, float("inf"), ce
    else:
        table, work, why = ce.table, ce.work, ce.why
    if method == "classes" and table is None:
        raise too_large(f"the class method does not apply ({why}), which", None, max_work)
    fits = table is not None and work <= max_work
    if method == "classes" or (fits and work <= QUICK_CLASSES):
        assert isinstance(ce, ClassEstimate)
        if work > max_work:
            raise too_large(f"the exact class method ({len(table or ()):,} cell classes) of "
                            f"{rows.n_truth}+{rows.n_pred} biclusters", work, max_work)
        return _class_plan(rows, ce, coverage, bcubed, budget, n_tasks, seed, "classes: quick")
    try:  # the family walk, refused as soon as it is dearer than the classes
        floor = closure_floor(ce.merged, table) if table is not None and isinstance(ce, ClassEstimate) else None
        fam = _family_plan(rows, cols, max_work=min(max_work, work), floor=floor,
                           **kw)  # type: ignore[arg-type]
    except TooLargeError as err:
        if fits:
            assert isinstance(ce, ClassEstimate)
            return _class_plan(rows, ce, coverage, bcubed, budget, n_tasks, seed, "classes: family dearer")
        why = why or f"~{work:.3g} work units"
        raise TooLargeError(f"{err} (The other exact method, by cell classes, needs {why}.)") from None
    return dataclasses.replace(fam, max_work=max_work)  # the walks' allowance: the whole limit


def closure_floor(merged: Merged, table: ClassTable) -> np.ndarray:
    """Per bicluster e: 2^(s - 1), s the most biclusters (copies counted) of a cell class containing e.

    The MOCICE-BCubed part {e} of the family walk stores every set of
    biclusters that contains e and shares a cell, so at least every subset
    of the largest class through e that contains e: a certain lower bound on
    its sets, which the sampled estimate must not undercut (on heavy overlap
    the sampling missed it by a factor of 24).
    """
    keys = table.keys
    size = np.zeros(len(table), np.float64)
    reps = np.flatnonzero(merged.mult > 0)
    for e in reps.tolist():
        size += ((keys[:, e // 64] >> np.uint64(e % 64)) & np.uint64(1)).astype(np.float64) * float(merged.mult[e])
    out = np.zeros(len(merged.rep), np.float64)
    for e in reps.tolist():
        on = ((keys[:, e // 64] >> np.uint64(e % 64)) & np.uint64(1)).astype(bool)
        out[merged.rep == e] = np.exp2(size[on].max(initial=1.0) - 1.0) if on.any() else 0.0
    return out


def exact_cost(rows: Memberships, cols: Memberships, parts, *, max_work: float = DEFAULT_MAX_WORK) -> float:
    """Estimated work units (as ``daskbicl.max_work``) of the cheapest exact method for ``parts``.

    ``parts`` names what is needed ("coverage", "bcubed"; "overlap" is
    free).  Returns ``inf`` when no exact method fits ``max_work`` or the
    memory budget.  Runs the planning estimates only: a few seconds at most.

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> 0 < exact_cost(*example_memberships(), {"bcubed"}) < 1e4
    True
    """
    parts = frozenset(parts)
    if not parts & {"coverage", "bcubed"}:
        return 0.0
    try:
        plan = plan_micro(rows, cols, coverage="coverage" in parts, bcubed="bcubed" in parts,
                          max_work=max_work, n_tasks=1)
    except TooLargeError:
        return float("inf")
    return float(plan.work)


def _family_plan(rows: Memberships, cols: Memberships, *, coverage: bool = True, bcubed: bool = False,
                 max_work: float = DEFAULT_MAX_WORK, budget: int = DEFAULT_BUDGET, n_tasks: int = 16,
                 seed: int = 0, coverage_by: str | None = None, floor: np.ndarray | None = None,
                 known: Estimates | None = None) -> FamilyPlan:
    """Parts, estimates and tasks of the family walk (module docstring).

    ``floor[e]`` (from :func:`closure_floor`, when the classes are known)
    is a certain lower bound on the sets part {e} of MOCICE-BCubed walks;
    a sampled estimate below it is raised to it, the work in proportion.

    ``coverage_by`` forces how the coverage counts are made: "family" (the
    walk) or "pairs" (every pair of row and column signatures); by default
    the cheaper by the estimates.  MOCICE-BCubed's normalisers (each
    side's one-sided family) are not estimated: their walks enforce their
    own share of the work limit and the memory budget
    (:func:`~daskbicl.kernels.micro.family_tasks.union_side`).
    ``known`` holds profiles already made (:class:`Estimates`), used where
    they are what this plan's seed and limit give (:meth:`Probe.serves`).

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> plan = plan_micro(*example_memberships(), coverage=False, bcubed=True, n_tasks=2, method="family")
    >>> [(p.required, p.closure) for p in sorted(plan.parts, key=lambda p: p.required)]
    [((0,), True), ((1,), True)]
    >>> plan_micro(*example_memberships(), n_tasks=2, method="family").row_ranges   # pairs are cheaper
    ((0, 2), (2, 4))
    """
    k, n = rows.n_truth, rows.n_elem
    if rows.n_items * cols.n_items >= 2**62:
        raise TooLargeError(
            f"{rows.n_items:,} x {cols.n_items:,} cells overflow the exact int64 cell counts "
            "(limit 2**62 cells; no setting raises it).")
    if coverage_by not in (None, "family", "pairs"):
        raise InputError(f"coverage_by must be 'family', 'pairs' or None, got {coverage_by!r}")
    moments = np.zeros((k + 1, rows.n_pred + 1), dtype=object)
    moments[0, 0] = rows.n_items * cols.n_items
    pair_cost = pairs_work(rows, cols)
    # one pass of probes sizes every part (family_estimate.profile_family)
    est = Estimates() if known is None else known
    sub, sub2, clo, clo2, stopped = _family_profile(rows, cols, seed, max_work, est.family)
    sub_work = UNIT_NODE * sub[0] + UNIT_DELIVERY * (sub[1] + sub[2])
    if floor is not None and bcubed:  # the sampled profile can miss the dense part: never below the floor
        scale = np.maximum(floor / np.maximum(clo[0], 1.0), 1.0)
        clo = clo.copy()
        clo[:3] *= scale[None, :]
    clo_work = UNIT_STORED * clo[0] + UNIT_DELIVERY * clo[1] + UNIT_MEMBER * clo[2]
    truth = np.arange(n) < k
    use_pairs = coverage and (coverage_by == "pairs" or (
        coverage_by is None and (stopped or float(sub_work.sum()) > pair_cost)))
    size = float(sub[3].sum())  # the family's sets (estimate)
    if stopped and not use_pairs and (coverage or bcubed):
        _check_work(rows, bcubed, float(clo[0].sum() + sub[0].sum()), 2 * max_work, max_work, size)
    if use_pairs and pair_cost > max_work:
        raise too_large(
            f"the coverage counts of CE and RNIA walk ~{float(sub[0].sum()):.3g}+ sets of biclusters "
            f"that share a cell (the family of {k}+{rows.n_pred} biclusters), or the "
            f"{rows.n_signatures:,} x {cols.n_signatures:,} pairs of row and column signatures",
            pair_cost, max_work, "E4SC does not need them.")
    # a part also reads its rows' and columns' lists (about the memberships of the items in e)
    setup = UNIT_PART + UNIT_ENTRY * (rows.gram.sum(axis=1) + cols.gram.sum(axis=1)).astype(np.float64)
    estimates: list[tuple[tuple[int, ...], bool, float, float]] = []
    for e in range(n):
        if rows.gram[e, e] == 0 or cols.gram[e, e] == 0:
            continue
        if bcubed and truth[e]:
            estimates.append(((e,), True, float(clo[0, e]), float(clo_work[e] + setup[e])))
        elif coverage and not use_pairs:
            estimates.append(((e,), False, float(sub[0, e]), float(sub_work[e] + setup[e])))
    total = sum(w for *_, w in estimates) + (pair_cost if use_pairs else 0.0)
    _check_work(rows, bcubed, sum(x[2] for x in estimates), total, max_work, size)
    target = max(total / max(n_tasks, 1), 1e7)  # a coverage part above a task's share is split
    notes: list[str] = []
    refused: list[tuple[tuple[int, ...], float]] = []
    parts: list[Part] = []
    pairs_known = sub2.shape[1] == n
    while estimates:
        req, closure, nodes, work = estimates.pop()
        mixed = bool(truth[list(req)].any() and not truth[list(req)].all())
        too_big = nodes > 1.5 * budget if closure else work > target
        if not too_big or req[-1] == n - 1 or (closure and mixed) or len(req) > 1 or not pairs_known:
            if closure and nodes > 2 * budget:  # beyond the estimate's error: refuse (below)
                refused.append((req, nodes))
            parts.append(Part(req, closure, nodes, work))  # the task enforces the budget exactly
            continue
        # split {e} into {e, a}: the root {e} is counted here, its children become parts
        e = req[0]
        nt = int(truth[e])
        moments[nt, 1 - nt] += _count(rows, cols, req)
        notes.append(f"split {req} (~{nodes:.3g} sets)")
        for a in range(e + 1, n):
            if _count(rows, cols, (e, a)) == 0:
                continue
            if closure:
                c_nodes = float(clo2[0, e, a])
                c_work = UNIT_STORED * c_nodes + UNIT_DELIVERY * float(clo2[1, e, a]) + \
                    UNIT_MEMBER * c_nodes * float(clo[2, e] / max(clo[0, e], 1.0))
            else:
                c_nodes = float(sub2[0, e, a])
                c_work = UNIT_NODE * c_nodes + UNIT_DELIVERY * float(sub2[1, e, a] + sub2[2, e, a])
            c_work += float(setup[e])
            estimates.append(((e, a), closure, c_nodes, c_work))
    family = sum(p.nodes for p in parts)
    work = sum(p.work for p in parts) + (pair_cost if use_pairs else 0.0)
    _check_work(rows, bcubed, family, work, max_work, size)
    if refused:
        raise budget_error(*max(refused, key=lambda x: x[1]), budget)
    tasks, row_ranges = _assign_tasks(parts, n_tasks, rows.n_signatures if use_pairs else None, pair_cost)
    return FamilyPlan(n_truth=k, n_pred=rows.n_pred, coverage=coverage, bcubed=bcubed, work=work, seed=seed,
                      notes=notes, tasks=tasks, moments=moments, family=family, budget=int(budget),
                      row_ranges=row_ranges, max_work=max_work)


def _assign_tasks(parts: list[Part], n_tasks: int, n_row_signatures: int | None, pair_cost: float):
    """The parts, longest first, each into the least loaded of ``n_tasks`` tasks.

    With ``n_row_signatures`` (coverage counted by pairs of signatures) every task
    also takes an equal share of the row signatures, returned as ``row_ranges``.
    """
    n_tasks = max(1, n_tasks)
    heap = [(0.0, i) for i in range(n_tasks)]
    tasks: list[list[Part]] = [[] for _ in heap]
    row_ranges = None
    if n_row_signatures is not None:
        cuts = np.linspace(0, n_row_signatures, n_tasks + 1).round().astype(int)
        row_ranges = tuple((int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]))
        heap = [(pair_cost / n_tasks, i) for i in range(n_tasks)]
    for p in sorted(parts, key=lambda p: -p.work):
        load, i = heapq.heappop(heap)
        tasks[i].append(p)
        heapq.heappush(heap, (load + p.work, i))
    return tuple(tuple(t) for t in tasks), row_ranges
