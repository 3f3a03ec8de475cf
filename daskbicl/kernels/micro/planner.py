"""Planning the exact micro-object step: the method from closed-form bounds, its parts, tasks, the work counter.

:func:`plan_micro` chooses, by :func:`choose` (one function of bounds that
cost no walk), between the exact routes:

* the *cell classes* (:mod:`~daskbicl.kernels.micro.class_traces`) when the
  pairs of row and column signatures are few enough to enumerate them in
  the plan (:data:`~daskbicl.kernels.micro.class_traces.ENUM_LIMIT`,
  :func:`classes_ruled_out`) and the class table's own closed form (its
  largest classes) fits ``max_work``;
* else the *family walk* (every set of biclusters that shares a cell),
  with the coverage counts by every pair of signatures instead when that
  closed form is below the walk's bound, ``max_work`` and a trial
  (:data:`TRIAL_WORK`: the pairs are not counted as they run, so they are
  never a long run chosen on a loose bound).

The family is walked in independent *parts*, one per required set B (the
parts of a prefix tree: part B is responsible for the sets whose elements
up to max(B) are exactly B), see docs/measures/micro.md:

* a *coverage part* walks only its own sets (children above max(B)); it
  stores nothing;
* a *closure part* (MOCICE-BCubed) walks every superset of B and stores
  them: at most ``budget`` sets (``daskbicl.micro_budget``); a part that
  fills it is split where it runs (B → B ∪ {a}, while B has no pred member).

With truth biclusters numbered first, only parts whose B starts with a
truth bicluster hold sets with both a truth and a pred member, so only
those are closure parts.

The work is bounded from the Gram tables (:meth:`Bounds.part`: a set of
the family is a set of biclusters that overlap pairwise, so part {e} walks
at most 2^deg(e) sets, deg(e) the biclusters that share a cell with e) and
counted by the walks themselves (their steps, :data:`UNIT_STEP` work units
each).  When the bound U fits ``max_work`` the walks run with the whole
limit as their allowance (it never runs out); otherwise they run as a
*trial* of :data:`TRIAL_WORK` work units in all (at most ``max_work``): finished, the value is
exact; run out, ``method="auto"`` samples and ``"exact"`` raises
:class:`~daskbicl.errors.TooLargeError` naming U, the ``max_work`` that
runs the walk to its end.  Before a trial the plan also bounds the walks'
work from below (:func:`lower_bounds`: every subset of the biclusters of
one cell is in the family, over the cells of the longest row and column
signatures), never above what they count; when a kind of walk (coverage
parts, closure parts, a union walk) certainly counts more than its share
of the trial, the trial could not finish and is not run: the plan raises
:class:`~daskbicl.errors.TooLargeError` at once, naming both bounds
(``"auto"`` then samples that part).  The work is split once, into at least
``n_tasks`` tasks (coverage parts above a task's share of the bound are
split into B ∪ {a}); the parts are dealt longest bound first.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ...errors import InputError, TooLargeError
from .budget import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_WORK,
    NODE_STEPS,
    UNIT_CELL_PAIR,
    UNIT_STEP,
    too_large,
    walk_advice,
)
from .class_traces import ENUM_LIMIT, ClassEstimate, ClassTable, Merged, class_estimate, class_ranges
from .memberships import Memberships, subproblem

__all__ = ["Part", "MicroPlan", "ClassPlan", "FamilyPlan", "PAIR_LIMIT", "METHODS", "TRIAL_WORK", "choose",
           "Bounds", "Lower", "LOOK", "classes_ruled_out", "lower_bounds", "pairs_work", "plan_micro", "part_inputs"]

#: The exact methods :func:`plan_micro` chooses from.
METHODS = ("family", "classes")

#: Rows x columns of a node below which a coverage walk finishes the node's
#: subtree from its pairs (see :func:`~daskbicl.kernels.micro.family_walk.enumerate_family`).
PAIR_LIMIT = 64

#: Work units the family walks may spend in all when their bound exceeds ``max_work``: the trial
#: (:class:`FamilyPlan`; at most 2.5 times this over the tasks and the two union walks, ~5 s on two threads).
TRIAL_WORK = 4e8


@dataclass(frozen=True)
class Part:
    """One part of the family walk: ``required`` is B (ascending), ``closure`` marks a MOCICE-BCubed part,
    ``bound`` an upper bound of the sets it walks (:meth:`Bounds.part`)."""

    required: tuple[int, ...]
    closure: bool
    bound: float = 0.0

    @property
    def min_elem(self) -> int:
        """Children of the root use elements ≥ this (0: every superset of B)."""
        return 0 if self.closure else self.required[-1] + 1


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """What every plan holds: the sizes, what is asked, the bound of its work (units), the seed and notes."""

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

    ``work`` is the bound U of the walks' work (units, :meth:`Bounds.part`,
    the two union walks of MOCICE-BCubed included); ``trial`` says it is
    above ``max_work``, so the walks run as a trial of :attr:`trial_work`
    units.  ``moments`` holds the factorial moments of the sets no part
    walks (the empty set and the roots of split parts), a table of Python
    ints; ``budget`` the most sets a MOCICE-BCubed part stores.  When
    ``row_ranges`` is set, the coverage counts come from every pair of row
    and column signatures instead (task i takes the row signatures
    ``row_ranges[i]``).  ``lower`` (a trial's) holds what the walks
    certainly count (:func:`lower_bounds`), each kind within its share.
    """

    method: ClassVar[str] = "family"
    tasks: tuple[tuple[Part, ...], ...]
    moments: np.ndarray
    budget: int
    row_ranges: tuple | None = None
    trial: bool = False
    lower: Lower | None = None

    @property
    def n_tasks(self) -> int:
        """Number of tasks."""
        return len(self.tasks)

    @property
    def parts(self) -> list[Part]:
        """Every part, in task order."""
        return [p for t in self.tasks for p in t]

    def allowance(self, index: int) -> float:
        """Work units task ``index`` may spend: its share of the bound, plus an even share, of the counter's total.

        The total is ``max_work`` when the bound fits it (then the counter
        never runs out: a task's allowance is also at least its parts' bounds), else
        half of the trial (:attr:`trial_work`), so the tasks of one kind
        (coverage or closure parts) spend at most the trial together.
        """
        bounds = [sum(p.bound for p in t) for t in self.tasks]
        total = sum(bounds)
        share = bounds[index] / total if total > 0 else 1.0 / self.n_tasks
        if self.trial:
            return self.trial_work / 2 * (share + 1.0 / self.n_tasks)
        return max(self.max_work * (share + 1.0 / self.n_tasks), bounds[index])

    @property
    def union_limit(self) -> float:
        """Work units each union walk (one side's family, MOCICE-BCubed's normalisers) may spend."""
        return self.trial_work / 4 if self.trial else self.max_work

    @property
    def trial_work(self) -> float:
        """Work units of the trial when the bound is above ``max_work``: :data:`TRIAL_WORK`, at most ``max_work``."""
        return min(self.max_work, TRIAL_WORK)


@dataclass(frozen=True, kw_only=True)
class ClassPlan(_Plan):
    """The cell classes (:mod:`~daskbicl.kernels.micro.class_traces`): task i sums the classes ``class_ranges[i]``.

    ``work`` is the class table's cost (:func:`~daskbicl.kernels.micro.class_traces.class_estimate`);
    ``class_ranges`` is None without MOCICE-BCubed (the coverage counts
    come from the classes in the finishing step alone).
    """

    method: ClassVar[str] = "classes"
    merged: Merged
    classes: ClassTable
    n_tasks: int
    class_ranges: tuple | None = None


#: A plan of the exact micro-object step: the family walk or the cell classes (``plan.method`` names it).
MicroPlan = FamilyPlan | ClassPlan


def part_inputs(rows: Memberships, cols: Memberships, required) -> tuple:
    """``(r_ptr, r_el, r_cnt, c_ptr, c_el, c_cnt)`` of the part with required set B."""
    return (*subproblem(rows, tuple(required)), *subproblem(cols, tuple(required)))


def pairs_work(rows: Memberships, cols: Memberships) -> float:
    """Work units of the coverage counts from every pair of row and column signatures."""
    words = max(1, -(-rows.n_elem // 64))
    return UNIT_CELL_PAIR * rows.n_signatures * cols.n_signatures * (1 + words / 4)


def classes_ruled_out(rows: Memberships, cols: Memberships) -> str:
    """Why the class method is not used, from the counts alone (too many pairs of signatures); else "".

    When every bicluster has a cell, merging copies keeps every distinct
    signature (a row in a copy is in its representative too), so the pairs
    of signatures the class method enumerates are known without merging.
    """
    if bool((np.diagonal(rows.gram) > 0).all() and (np.diagonal(cols.gram) > 0).all()):
        from .budget import UNIT_SIG_PAIR

        words = max(1, -(-rows.n_elem // 64))
        if UNIT_SIG_PAIR * rows.n_signatures * cols.n_signatures * words > ENUM_LIMIT:
            return f"{rows.n_signatures:,} x {cols.n_signatures:,} pairs of signatures"
    return ""


def _pow2(x: np.ndarray) -> np.ndarray:
    return np.ldexp(1.0, np.minimum(x, 600).astype(np.int64))


def _lists(m: Memberships, keep: np.ndarray | None) -> np.ndarray:
    """Per element e, over the signatures s ∋ e of one axis (elements outside ``keep`` dropped):
    [Σ 2^(|s|-1), Σ 2^a, Σ |s| 2^(|s|-1), Σ a 2^a], a = the elements of s above e."""
    owner = np.repeat(np.arange(len(m.cnt)), np.diff(m.ptr))
    el = m.el
    if keep is not None:
        owner, el = owner[keep[el]], el[keep[el]]
    length = np.bincount(owner, minlength=len(m.cnt)).astype(np.float64)
    start = np.cumsum(length) - length
    size = length[owner]
    above = size - (np.arange(len(el)) - start[owner]) - 1
    terms = (_pow2(size - 1), _pow2(above), size * _pow2(size - 1), above * _pow2(above))
    return np.array([np.bincount(el, weights=t, minlength=m.n_elem) for t in terms])


class Bounds(NamedTuple):
    """What :meth:`part` bounds the walks from: A[a, b] (biclusters a ≠ b share a cell, from the Gram
    tables), per bicluster e the list entries of e's row and column signatures (Σ |s| over s ∋ e), and
    the sums over those signatures of :func:`_lists` (rows and columns)."""

    share: np.ndarray
    entries: np.ndarray
    rows: np.ndarray
    cols: np.ndarray

    @classmethod
    def of(cls, rows: Memberships, cols: Memberships, keep: np.ndarray | None = None) -> Bounds:
        """The bounds' inputs of two axes' membership lists (``keep``: one side's biclusters only)."""
        share = (rows.gram > 0) & (cols.gram > 0)
        np.fill_diagonal(share, False)
        entries = np.zeros(rows.n_elem, np.float64)
        for m in (rows, cols):
            lengths = np.diff(m.ptr)
            entries += np.bincount(m.el, weights=np.repeat(lengths, lengths).astype(np.float64),
                                   minlength=m.n_elem)
        return cls(share, entries, _lists(rows, keep), _lists(cols, keep))

    def part(self, required, *, closure: bool, side: np.ndarray | None = None) -> float:
        """An upper bound of the work units (:data:`UNIT_STEP` per step) of the walk of part ``required``.

        Every set W the part walks shares a row and a column, so W lies
        inside the signature of that row, and of that column.  Two bounds,
        the smaller taken:

        * W is B plus biclusters that share a cell with every member of B
          (for a coverage part, above max(B)): at most 2^c sets, c the
          number of such biclusters, each :data:`NODE_STEPS` plus at most
          the list entries of B's members' signatures;
        * (B = {e}) the sets inside a row signature s ∋ e number 2^(|s|-1)
          (a coverage part: 2^a, a the elements of s above e), the smaller
          sum over the rows or over the columns; the walk delivers a
          signature to W's children at most once per entry, so its
          deliveries are at most Σ |s| 2^(|s|-1) over both axes (a, 2^a);
          a coverage part also finishes a node from its at most 64 pairs
          of a row and a column, at most 64 times that node's deliveries.

        ``side`` (a mask of biclusters) keeps one side's (the union walks;
        its :class:`Bounds` made with ``keep=side``).
        """
        req = list(required)
        ok = np.ones(len(self.entries), bool)
        for e in req:
            ok &= self.share[e]
        ok[req] = False
        if side is not None:
            ok &= side
        if req and not closure:
            ok[: req[-1] + 1] = False
        entries = float(self.entries[req].min()) if req else float(self.entries.sum())
        steps = (NODE_STEPS + entries) * 2.0 ** min(int(ok.sum()), 600)
        if len(req) == 1:
            e = req[0]
            k = 0 if closure else 1
            sets = min(self.rows[k, e], self.cols[k, e])
            deliveries = self.rows[2 + k, e] + self.cols[2 + k, e]
            steps = min(steps, NODE_STEPS * sets + deliveries * (1 if closure else 65))
        return UNIT_STEP * float(steps)


class Lower(NamedTuple):
    """Work units the walks certainly count before their last check (:func:`lower_bounds`), per walk kind:
    the coverage parts, the closure parts, the pred side's and the truth side's union walks."""

    coverage: float
    closure: float
    pred: float
    truth: float

    def beyond(self, trial: float) -> tuple[str, bool] | None:
        """The first kind of walk that cannot finish in its share of a trial of ``trial`` units (what it is,
        and whether it is MOCICE-BCubed's), else None."""
        shares = (("the coverage counts of CE and RNIA: the exact walk", self.coverage, trial, False),
                  ("MOCICE-BCubed's exact walk", self.closure, trial, True),
                  ("MOCICE-BCubed's exact walk of the pred biclusters' sets", self.pred, trial / 4, True),
                  ("MOCICE-BCubed's exact walk of the truth biclusters' sets", self.truth, trial / 4, True))
        return next(((f"{what} needs at least ~{low:.3g} work units, more than its {share:.3g} of a trial could "
                      "spend, so it is not tried", closure) for what, low, share, closure in shares if low > share),
                    None)


#: The longest row and column signatures whose pairs (cells) :func:`lower_bounds` looks at, at most.
LOOK = 64


def _longest(m: Memberships, count: int) -> np.ndarray:
    """The ``count`` longest signatures of one axis as a (count, K + L) bool table."""
    top = np.argsort(-np.diff(m.ptr), kind="stable")[:count]
    table = np.zeros((len(top), m.n_elem), bool)
    for i, s in enumerate(top.tolist()):
        table[i, m.el[m.ptr[s]:m.ptr[s + 1]]] = True
    return table


def _pair_nodes(m: Memberships, share: np.ndarray, cover: np.ndarray) -> float:
    """Σ over the lists s of one axis and their elements e ∈ ``cover`` whose every later element a of the
    axis shares a cell with e, of C(|s above e|, 2): what the nodes {e, a} deliver from s."""
    present = np.bincount(m.el, minlength=m.n_elem) > 0
    ok = cover & ~np.triu(~share & present[None, :], 1).any(axis=1)
    lengths = np.diff(m.ptr)
    if ok[present].all():  # every entry counts: Σ_s C(|s|, 3)
        size = lengths.astype(np.float64)
        return float(np.sum(size * (size - 1) * (size - 2) / 6))
    kind = np.int32 if len(m.el) < 2**31 else np.int64
    above = np.repeat(m.ptr[1:].astype(kind) - 1, lengths)
    above -= np.arange(len(m.el), dtype=kind)  # entries after each one in its list
    a = above[ok[m.el]].astype(np.float64)
    return float((a @ a - a.sum()) / 2)


def lower_bounds(rows: Memberships, cols: Memberships, bounds: Bounds, tasks, *, bcubed: bool,
                 budget: int) -> Lower:
    """Work units (:data:`UNIT_STEP` per step) that the walks of ``tasks`` (tuples of parts; the union
    walks with ``bcubed``) certainly count before their last check of the allowance: never more than
    they count (docs/measures/micro.md, "The work limit").

    Every subset of the biclusters C of one cell (a row signature ∩ a
    column signature) shares that cell, so is in the family.  Over the
    cells of the :data:`LOOK` longest row and column signatures (the best
    cell per part):

    * closure part {e} walks every set {e} ∪ X, X ⊆ C above e (split, such
      a set is in the chain {e, x1}, {e, x1, x2}, ...): 2^|C above e| - 1
      sets besides its root, :data:`NODE_STEPS` steps each;
    * a union walk walks every subset of C's side: 2^|C ∩ side| - 1 sets;
    * a coverage part {e} (its finishing walk may end a subtree from its
      pairs, so only depth one is certain) walks {e, a} for every a > e that
      shares a cell with e (the roots of its parts when split), and each such
      node delivers, or reads when it ends from its pairs, every entry above
      a of each list that contains e and a (counted for unsplit parts).

    A walk checks its task's allowance before each set it adds, so what
    goes unchecked in a task is its last checked walk's last set and the
    walks after it that have only a root: taken off per task (at most
    :data:`NODE_STEPS` and e's list entries for a coverage part, a split
    one's root).  A split closure part adds up to K + L walks, after a
    walk that counted ``budget`` sets none of these are: with ``budget``
    <= K + L the closure bound is 0.
    """
    n, k = rows.n_elem, rows.n_truth
    parts = [p for t in tasks for p in t]
    cells = np.zeros((0, n), bool)
    if len(rows.cnt) and len(cols.cnt):
        look = max(1, min(LOOK, int((1 << 22) // (n * LOOK))))  # at most 4 Mi cells x elements
        cells = (_longest(rows, look)[:, None, :] & _longest(cols, LOOK)[None, :, :]).reshape(-1, n)
    truth = np.arange(n) < k
    closure = np.zeros(n, bool)
    closure[[p.required[0] for p in parts if p.closure]] = True
    nodes = 0.0  # sets besides the roots, less one a task (its last)
    if len(cells) and closure.any() and budget > n:
        above = np.cumsum(cells[:, ::-1], axis=1, dtype=np.int32)[:, ::-1] - cells
        best = np.where(cells, above, -1).max(axis=0)[closure]
        nodes = float(np.sum(_pow2(best[best >= 0]) - 1)) - sum(any(p.closure for p in t) for t in tasks)
    sides = [float(_pow2(cells[:, m].sum(axis=1)).max()) - 2 if bcubed and len(cells) else 0.0
             for m in (~truth, truth)]
    cover, whole = np.zeros(n, bool), np.zeros(n, bool)
    cover[[p.required[0] for p in parts if not p.closure]] = True
    whole[[p.required[0] for p in parts if not p.closure and len(p.required) == 1]] = True
    steps = NODE_STEPS * float(np.triu(bounds.share, 1)[cover].sum()) + sum(
        _pair_nodes(m, bounds.share, whole) for m in (rows, cols))
    for t in tasks:
        mine = [p for p in t if not p.closure]
        steps -= max((NODE_STEPS + (float(bounds.entries[p.required[0]]) if len(p.required) == 1 else 0.0)
                      for p in mine), default=0.0) + NODE_STEPS * sum(len(p.required) > 1 for p in mine)
    return Lower(*(UNIT_STEP * max(0.0, x) for x in (steps, NODE_STEPS * nodes, NODE_STEPS * sides[0],
                                                      NODE_STEPS * sides[1])))


def _count(rows: Memberships, cols: Memberships, req) -> int:
    """N(B): the cells inside every bicluster of B (from the Gram tables for |B| ≤ 2)."""
    if len(req) == 1:
        return int(rows.gram[req[0], req[0]]) * int(cols.gram[req[0], req[0]])
    return int(rows.gram[req[0], req[1]]) * int(cols.gram[req[0], req[1]])


def _check(rows: Memberships, cols: Memberships, method: str | None, coverage_by: str | None) -> None:
    if method not in (None, *METHODS):
        raise InputError(f"method must be one of {METHODS} or None, got {method!r}")
    if coverage_by not in (None, "family", "pairs"):
        raise InputError(f"coverage_by must be 'family', 'pairs' or None, got {coverage_by!r}")
    if rows.n_items * cols.n_items >= 2**62:
        raise TooLargeError(
            f"{rows.n_items:,} x {cols.n_items:,} cells overflow the exact int64 cell counts "
            "(limit 2**62 cells; no setting raises it).")


def choose(rows: Memberships, cols: Memberships, *, coverage: bool, bcubed: bool, max_work: float,
           method: str | None = None, coverage_by: str | None = None) -> ClassEstimate | None:
    """The exact route, from bounds: the class table (the cell classes) or None (the family walk).

    The classes are enumerated when the pairs of signatures are few
    (:func:`classes_ruled_out`; at most ~2 s) and taken when their closed
    form (the class table's sizes) fits ``max_work``, or when forced;
    otherwise the family walk, whose own work is bounded and counted
    (module docstring).  Raises :class:`~daskbicl.errors.TooLargeError`
    when ``method="classes"`` is forced and does not apply or fit.
    """
    if method == "family" or coverage_by is not None or not (coverage or bcubed):
        return None
    why = classes_ruled_out(rows, cols)
    ce = None if why else class_estimate(rows, cols, coverage, bcubed)
    if ce is not None and ce.table is not None and (method == "classes" or ce.work <= max_work):
        if ce.work > max_work:
            raise too_large(f"the exact class method ({len(ce.table):,} cell classes) of "
                            f"{rows.n_truth}+{rows.n_pred} biclusters", ce.work, max_work)
        return ce
    if method == "classes":
        raise too_large(f"the class method does not apply ({why or (ce.why if ce else '')}), which", None, max_work)
    return None


def plan_micro(rows: Memberships, cols: Memberships, *, coverage: bool = True, bcubed: bool = False,
               max_work: float = DEFAULT_MAX_WORK, budget: int = DEFAULT_BUDGET, n_tasks: int = 16,
               seed: int = 0, coverage_by: str | None = None, method: str | None = None) -> MicroPlan:
    """The exact route (:func:`choose`), its parts and tasks (module docstring).

    ``method`` forces the exact method ("family": the family walk;
    "classes": the cell classes and their traces); ``coverage_by`` how the
    family walk's coverage counts are made ("family" or "pairs").  Nothing
    is walked here: the plan costs the bounds and, for the classes, their
    enumeration.

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> plan_micro(*example_memberships(), bcubed=True, n_tasks=2).method
    'classes'
    """
    _check(rows, cols, method, coverage_by)
    ce = choose(rows, cols, coverage=coverage, bcubed=bcubed, max_work=max_work, method=method,
                coverage_by=coverage_by)
    if ce is None:
        return _family_plan(rows, cols, coverage=coverage, bcubed=bcubed, max_work=max_work, budget=budget,
                            n_tasks=n_tasks, seed=seed, coverage_by=coverage_by)
    assert ce.table is not None
    n_tasks = max(1, n_tasks)
    return ClassPlan(n_truth=rows.n_truth, n_pred=rows.n_pred, coverage=coverage, bcubed=bcubed, work=ce.work,
                     seed=seed, notes=["classes"], max_work=max_work, merged=ce.merged, classes=ce.table,
                     n_tasks=n_tasks,
                     class_ranges=class_ranges(ce.merged, ce.table, n_tasks, ce.per_class) if bcubed else None)


#: Largest K + L for which coverage parts are split into two-bicluster parts.
_PAIR_TABLES = 1024


def _union_bound(rows: Memberships, cols: Memberships) -> float:
    """Bound of the two union walks (each side's family alone, MOCICE-BCubed's normalisers): the sets
    of each side with smallest member e, as a storing walk (no pairs finish a node)."""
    truth = np.arange(rows.n_elem) < rows.n_truth
    total = 0.0
    for side in (truth, ~truth):
        one = Bounds.of(rows, cols, keep=side)
        for e in np.flatnonzero(side).tolist():
            sets = min(one.rows[1, e], one.cols[1, e])
            total += UNIT_STEP * min(NODE_STEPS * sets + one.rows[3, e] + one.cols[3, e],
                                     one.part((e,), closure=False, side=side) / UNIT_STEP)
        total += UNIT_STEP * float(len(rows.el) + len(cols.el))  # the root delivers every list once
    return total


def _family_plan(rows: Memberships, cols: Memberships, *, coverage: bool, bcubed: bool, max_work: float,
                 budget: int, n_tasks: int, seed: int, coverage_by: str | None) -> FamilyPlan:
    """Parts, bounds and tasks of the family walk (module docstring).

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
    n_tasks = max(1, n_tasks)
    bounds = Bounds.of(rows, cols)
    moments = np.zeros((k + 1, rows.n_pred + 1), dtype=object)
    moments[0, 0] = rows.n_items * cols.n_items
    present = [e for e in range(n) if rows.gram[e, e] > 0 and cols.gram[e, e] > 0]
    truth = np.arange(n) < k
    closure = [Part((e,), True, bounds.part((e,), closure=True)) for e in present if bcubed and truth[e]]
    walked = [Part((e,), False, bounds.part((e,), closure=False))
              for e in present if coverage and not (bcubed and truth[e])]
    pair_cost = pairs_work(rows, cols)
    walk_cost = sum(p.bound for p in walked)
    use_pairs = coverage and (coverage_by == "pairs" or (
        coverage_by is None and pair_cost <= min(walk_cost, max_work, TRIAL_WORK)))
    if use_pairs and pair_cost > max_work:
        raise too_large(f"the coverage counts of CE and RNIA by the {rows.n_signatures:,} x "
                        f"{cols.n_signatures:,} pairs of row and column signatures", pair_cost, max_work,
                        "E4SC does not need them.")
    parts = closure + ([] if use_pairs else walked)
    work = float(sum(p.bound for p in parts)) + (pair_cost if use_pairs else 0.0) + (
        _union_bound(rows, cols) if bcubed else 0.0)
    notes = [f"bound {work:.3g} work units" + ("" if work <= max_work else f": a trial of {TRIAL_WORK:.3g}")]
    parts = _split(rows, cols, bounds, parts, n_tasks, moments, notes)
    tasks, row_ranges = _assign_tasks(parts, n_tasks, rows.n_signatures if use_pairs else None)
    lower = lower_bounds(rows, cols, bounds, tasks, bcubed=bcubed, budget=budget) if work > max_work else None
    why = lower.beyond(min(max_work, TRIAL_WORK)) if lower is not None else None
    if lower is not None:
        notes.append("at least " + ", ".join(f"{x:.3g}" for x in lower) + " work units (coverage, closure, unions)")
    if why is not None:  # the trial cannot finish: refused (under method="auto": sampled) before any walk
        raise too_large(f"{why[0]}; the family walk of {k}+{rows.n_pred} biclusters", work, max_work,
                        walk_advice(why[1], "samples it at once"), bound=True)
    return FamilyPlan(n_truth=k, n_pred=rows.n_pred, coverage=coverage, bcubed=bcubed, work=work, seed=seed,
                      notes=notes, tasks=tasks, moments=moments, budget=int(budget), row_ranges=row_ranges,
                      max_work=max_work, trial=bool(work > max_work), lower=lower)


def _split(rows: Memberships, cols: Memberships, bounds: Bounds, parts: list[Part], n_tasks: int,
           moments: np.ndarray, notes: list) -> list[Part]:
    """Coverage parts whose bound is above a task's share split once into B ∪ {a} (their root counted here).

    A coverage part only counts exact integers, so how it is split moves
    no value; closure parts are split where they run, when they fill the
    memory budget.
    """
    total = sum(p.bound for p in parts)
    if rows.n_elem > _PAIR_TABLES or total <= 0:
        return parts
    target = total / n_tasks
    out: list[Part] = []
    for p in parts:
        if p.closure or p.bound <= target or p.required[-1] == rows.n_elem - 1:
            out.append(p)
            continue
        e = p.required[0]
        nt = int(e < rows.n_truth)
        moments[nt, 1 - nt] += _count(rows, cols, (e,))
        notes.append(f"split {p.required}")
        out.extend(Part((e, a), False, min(p.bound, bounds.part((e, a), closure=False)))
                   for a in range(e + 1, rows.n_elem) if bounds.share[e, a])
    return out


def _assign_tasks(parts: list[Part], n_tasks: int, n_row_signatures: int | None):
    """The parts, largest bound first, each into the least loaded of ``n_tasks`` tasks.

    With ``n_row_signatures`` (coverage counted by pairs of signatures) every task
    also takes an equal share of the row signatures, returned as ``row_ranges``.
    """
    heap = [(0.0, i) for i in range(n_tasks)]
    tasks: list[list[Part]] = [[] for _ in heap]
    row_ranges = None
    if n_row_signatures is not None:
        cuts = np.linspace(0, n_row_signatures, n_tasks + 1).round().astype(int)
        row_ranges = tuple((int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]))
    for p in sorted(parts, key=lambda p: (-p.bound, p.required)):
        load, i = heapq.heappop(heap)
        tasks[i].append(p)
        heapq.heappush(heap, (load + p.bound, i))
    return tuple(tuple(t) for t in tasks), row_ranges
