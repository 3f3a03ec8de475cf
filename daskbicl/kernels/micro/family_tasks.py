"""The tasks of the family walk and their sum: coverage counts and MOCICE-BCubed.

A :class:`~daskbicl.kernels.micro.planner.MicroPlan` deals the parts of the
family into tasks; :func:`run_task` walks the parts of one task (numba,
:mod:`daskbicl.kernels.micro.family_walk`, imported on first use) and returns their
factorial moments and MOCICE-BCubed numerators; :func:`finish` adds the
tasks up.  :func:`union_tables` computes the normalisers |E_G(x)| and
|E_C(x)| of every set of one side that shares a cell, the input of the
MOCICE-BCubed parts.

MOCICE-BCubed precision is ``P = (1/|U_G|) sum_x w(x) sum_y ς(x, y)`` with
``w(x) = 1/|E_G(x)|``; grouping the pairs of cells by the set Q of
biclusters they share, ``sum_x w(x) sum_y ς(x, y) = sum_Q ς(Q) Λ(Q)`` with
Λ(Q) the weight of the pairs sharing exactly Q, which the transforms of
:mod:`daskbicl.kernels.micro.family_leaf` compute part by part (recall alike, with
τ and 1/|E_C(x)|).

Accuracy (float64, u = 2**-53)
------------------------------
Every count is an exact integer (N, the cell classes E, the union sizes,
the moments in 128 bits).  The weights and their superset sums are sums of
positive terms; only the last transform (the pairs sharing *exactly* Q)
subtracts.  Its rounding errors are at most (2d + 5) u times the same sums
taken without signs, ``Λ⁺(Q) = sum_{W ⊇ Q} N(W) Ω(W)`` (d = the largest set),
so P and R have relative error at most

    (2d + L + 12) u · κ + 4 u,   κ = sum_Q ς(Q) Λ⁺(Q) / sum_Q ς(Q) Λ(Q) ≥ 1,

which every run computes (:attr:`~daskbicl.kernels.micro.cell_records.MicroResult.bcubed_error`);
κ was between 1.0 and 1.2 on every benchmark input (random subsets, noisy
copies, intervals), a relative error below 1e-13.  ``exact=True`` runs
the same transforms in rational arithmetic (:class:`fractions.Fraction`).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from ...errors import InputError, TooLargeError
from .budget import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_WORK,
    NODE_STEPS,
    UNIT_STEP,
    budget_error,
    too_large,
    walk_advice,
)
from .cell_records import (
    PRF,
    _hmean,
    bcubed_nothing_covered,
    coverage_from_histogram,
    coverage_from_moments,
    pair_histogram,
)
from .memberships import Memberships, one_side
from .planner import PAIR_LIMIT, TRIAL_WORK, ClassPlan, FamilyPlan, MicroPlan, Part, part_inputs

__all__ = ["TASK_PARTS", "TaskResult", "UnionTables", "coclustering_bcubed", "finish", "jaccard_table", "run_task",
           "union_side", "union_tables"]

_U = 2.0**-53
_NO_WORDS = np.zeros(0, np.uint64)  # the parts store no hashes


def _words(seed) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**63, 2**16, dtype=np.int64).astype(np.uint64)


class UnionTables(NamedTuple):
    """|∪ of the biclusters of V| for every one-sided set V that shares a cell.

    Per side: the random words of the hash, the keys and the union sizes of
    the sets, and the union of all that side's biclusters (|U_G| or |U_C|).
    """

    pred_words: np.ndarray
    pred_keys: np.ndarray
    pred_union: np.ndarray
    pred_total: int
    truth_words: np.ndarray
    truth_keys: np.ndarray
    truth_union: np.ndarray
    truth_total: int


def union_side(rows: Memberships, cols: Memberships, side: str, budget: int, seed: int, *,
               limit: float = float("inf"), max_work: float = DEFAULT_MAX_WORK, bound: float | None = None):
    """One side's half of :class:`UnionTables`: (words, keys, union sizes, total) of its sets.

    ``side`` is "pred" or "truth".  Walks the family of that side's
    biclusters alone (every set of them that shares a cell, at most
    ``budget`` stored) and returns the hash words of its elements (drawn
    from ``seed``; redrawn when two sets hash alike), the sorted hash keys
    of its sets, |∪ of the biclusters of each set| and the number of cells
    in any of that side's biclusters.  The engine runs the two sides as
    separate tasks (:func:`union_tables` runs both).  Raises
    :class:`~daskbicl.errors.TooLargeError` when a side has more than
    ``budget`` sets, or its walk more than ``limit`` work units (the
    message names ``max_work`` and, from a trial, the plan's ``bound``).
    """
    from .family_leaf import build_table, union_table
    from .family_walk import Lists, Moments, Start, Walk, enumerate_family

    lists = Lists(*one_side(rows, side), *one_side(cols, side))
    k, n = rows.n_truth, rows.n_elem
    lo = np.zeros((k + 1, rows.n_pred + 1), np.uint64)
    for attempt in range(8):
        words = _words((seed, attempt, side == "pred"))[:max(n, 1)]
        fam = enumerate_family(lists, Start(n, k), Moments(lo, lo.copy()),
                               Walk.storing(budget, 1 << 16, words, _steps(limit)))
        if fam.spent:
            raise spent_error(side, max_work, bound)
        if fam.full:
            raise budget_error((), fam.n_nodes, budget)
        n_nodes, key, ncell, dptr = fam.n_nodes, fam.key, fam.cells, fam.dptr
        if n_nodes == 0:
            return words, np.zeros(0, np.uint64), np.zeros(0, np.int64), 0
        if build_table(key)[0][0] == -2:  # two sets with one hash: new words
            continue
        union = union_table(fam.elem, fam.parent, fam.end, ncell, dptr, fam.down, n)
        sign = np.where(np.diff(dptr) % 2 == 1, 1, -1)
        total = int(np.sum(ncell[1:].astype(object) * sign[1:]))
        return words, key, union, total
    raise AssertionError("eight hash collisions in a row")  # pragma: no cover


def union_tables(rows: Memberships, cols: Memberships, *, budget: int = DEFAULT_BUDGET,
                 seed: int = 0, max_work: float = float("inf"), plan: MicroPlan | None = None) -> UnionTables:
    """The normalisers of MOCICE-BCubed (:class:`UnionTables`), one walk per side.

    Each side's walk may spend ``max_work``, or what ``plan`` allows it
    (:attr:`~daskbicl.kernels.micro.planner.FamilyPlan.union_limit`: a trial's share when its bound is
    above ``max_work``).

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> t = union_tables(*example_memberships())
    >>> t.pred_total, t.truth_total, sorted(t.pred_union.tolist())
    (9, 9, [0, 4, 6, 9])
    """
    limit, bound = max_work, None
    if isinstance(plan, FamilyPlan):
        limit, bound = plan.union_limit, plan.work if plan.trial else None
    p = union_side(rows, cols, "pred", budget, seed, limit=limit, max_work=max_work, bound=bound)
    t = union_side(rows, cols, "truth", budget, seed, limit=limit, max_work=max_work, bound=bound)
    return UnionTables(*p, *t)


def jaccard_table(overlap, *, exact: bool = False) -> np.ndarray:
    """``J[l, k] = |X_l ∩ B_k| / |X_l ∪ B_k|`` (pred x truth; 0 for 0/0).

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import Overlap
    >>> ov = Overlap(np.array([[2]]), np.array([4]), np.array([3]))
    >>> jaccard_table(ov).tolist(), jaccard_table(ov, exact=True).tolist()
    ([[0.4]], [[Fraction(2, 5)]])
    """
    sh = overlap.shared.T
    den = overlap.pred_sizes[:, None] + overlap.truth_sizes[None, :] - sh
    if exact:
        out = np.empty(sh.shape, dtype=object)
        for (l, k), v in np.ndenumerate(sh):
            out[l, k] = Fraction(int(v), int(den[l, k])) if den[l, k] else Fraction(0)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, sh / np.where(den > 0, den, 1), 0.0)


class TaskResult(NamedTuple):
    """What one task returns: moments of its sets (Python ints), MOCICE-BCubed sums, work done.

    ``histogram`` holds the cells of its row signatures by (truth, pred)
    counts when the plan counts coverage from pairs of signatures; ``spent``
    says why the task stopped before the end (its work allowance or the
    memory budget ran out, ``on_spent="return"``), "" when it did not.
    ``terms`` holds the family walk's per-part sums behind ``p_num``,
    ``r_num``, ``p_abs`` and ``r_abs`` (floats): :func:`finish` adds them
    all at once, so the digits do not depend on how the parts were dealt.
    """

    moments: np.ndarray
    p_num: float | Fraction
    r_num: float | Fraction
    p_abs: float
    r_abs: float
    depth: int
    nodes: int
    deliveries: int
    histogram: np.ndarray | None = None
    spent: str = ""
    terms: tuple = ((), (), (), ())


def _sigma_tau_exact(members, n_truth: int, jac) -> tuple[Fraction, Fraction]:
    c = [x for x in members if x < n_truth]
    g = [x for x in members if x >= n_truth]
    if not c or not g:
        return Fraction(0), Fraction(0)
    tot = sum((max(jac[x - n_truth, y] for y in c) for x in g), Fraction(0))
    mn = min(len(c), len(g))
    return tot * mn / (len(g) ** 2), tot * mn / (len(g) * len(c))


def _leaf_exact(elem, parent, ncell, base, n_truth, jac, tables: UnionTables):
    """:func:`~daskbicl.kernels.micro.family_leaf.leaf_bcubed` in rational arithmetic (small inputs)."""
    n = len(elem)
    sets = [frozenset(base)]
    for k in range(1, n):
        sets.append(sets[parent[k]] | {int(elem[k])})
    index = {s: i for i, s in enumerate(sets)}
    pairs = sorted(((a, k, index[s - {a}]) for k, s in enumerate(sets) for a in s - set(base)))
    pu = {int(key): int(u) for key, u in zip(tables.pred_keys, tables.pred_union)}
    tu = {int(key): int(u) for key, u in zip(tables.truth_keys, tables.truth_union)}

    def key(s, words):
        return int(np.sum(words[sorted(s)], dtype=np.uint64)) if s else 0

    cells = [int(x) for x in ncell]
    for _, w, tgt in pairs:
        cells[tgt] -= cells[w]
    om_p, om_r = [Fraction(0)] * n, [Fraction(0)] * n
    for k, s in enumerate(sets):
        sp = {x for x in s if x >= n_truth}
        st = s - sp
        if cells[k]:
            om_p[k] = Fraction(cells[k], pu[key(sp, tables.pred_words)]) if sp else Fraction(0)
            om_r[k] = Fraction(cells[k], tu[key(st, tables.truth_words)]) if st else Fraction(0)
    for _, w, tgt in pairs:
        om_p[tgt] += om_p[w]
        om_r[tgt] += om_r[w]
    lam_p = [om_p[k] * int(ncell[k]) for k in range(n)]
    lam_r = [om_r[k] * int(ncell[k]) for k in range(n)]
    for _, w, tgt in pairs:
        lam_p[tgt] -= lam_p[w]
        lam_r[tgt] -= lam_r[w]
    top = max(base)
    p = r = Fraction(0)
    for k, s in enumerate(sets):
        extra = s - set(base)
        if extra and min(extra) < top:
            continue
        sig, tau = _sigma_tau_exact(sorted(s), n_truth, jac)
        p += sig * lam_p[k]
        r += tau * lam_r[k]
    return p, r, max(len(s) for s in sets)


def _run_part(part: Part, rows: Memberships, cols: Memberships, jac, tables, exact: bool, budget: int,
              seed: int, acc: dict[str, Any]) -> None:
    from .family_leaf import leaf_bcubed
    from .family_walk import Lists, Moments, Start, Walk, enumerate_family

    k, n = rows.n_truth, rows.n_elem
    req = part.required
    inputs = part_inputs(rows, cols, req)
    bt = sum(1 for x in req if x < k)
    bp = len(req) - bt
    # moments of sets of at most |B| + the longest row / column list members: a small table
    longest = min(int(np.diff(inputs[0]).max(initial=0)), int(np.diff(inputs[3]).max(initial=0)))
    size = len(req) + longest + 1
    lo = np.zeros((min(k + 1, size), min(rows.n_pred + 1, size)), np.uint64)
    hi = np.zeros_like(lo)
    left = acc["left"]
    hint = int(min(budget, part.bound / (UNIT_STEP * NODE_STEPS) + 1024, 1 << 16))
    walk = Walk.storing(budget, hint, _NO_WORDS, left) if part.closure else \
        Walk.finishing(PAIR_LIMIT, left)
    fam = enumerate_family(Lists(*inputs), Start(n, k, bt, bp, int(part.min_elem), int(req[-1])), Moments(lo, hi), walk)
    n_nodes, deliveries, elem, parent, end, ncell, dptr, down = (fam.n_nodes, fam.deliveries, fam.elem, fam.parent,
                                                                 fam.end, fam.cells, fam.dptr, fam.down)
    acc["left"] = left - int(deliveries) - NODE_STEPS * int(n_nodes)
    if fam.spent:
        raise spent_error(req, acc["max_work"], acc["bound"], part.closure)
    if fam.full:
        if any(x >= k for x in req) or req[-1] == n - 1:
            raise budget_error(req, n_nodes, budget)
        # more sets than the budget: split this part here (B → B ∪ {a})
        n_b = int(inputs[2].sum()) * int(inputs[5].sum())
        acc["moments"][bt, bp] += n_b
        for a in range(req[-1] + 1, n):
            child = Part((*req, a), True)
            _run_part(child, rows, cols, jac, tables, exact, budget, seed, acc)
        return
    if part.closure and n_nodes:
        base = np.asarray(req, np.int64)
        if exact:
            p, r, depth = _leaf_exact(elem, parent, ncell, req, k, jac, tables)
            pa, ra = 0.0, 0.0
        else:
            _, p, r, pa, ra, depth = leaf_bcubed(
                elem, parent, end, ncell, dptr, down, n, k, base, jac, tables.pred_words,
                tables.pred_keys, tables.pred_union, tables.truth_words, tables.truth_keys,
                tables.truth_union, True)
        acc["p"].append(p)
        acc["r"].append(r)
        acc["pa"].append(pa)
        acc["ra"].append(ra)
        acc["depth"] = max(acc["depth"], int(depth))
    acc["moments"][: lo.shape[0], : lo.shape[1]] += lo.astype(object) + hi.astype(object) * 2**64
    acc["nodes"] += int(n_nodes)
    acc["deliveries"] += int(deliveries)


#: What :func:`run_task` walks: every part, the coverage parts only (and the pair histogram), the
#: MOCICE-BCubed (closure) parts only.
TASK_PARTS = ("all", "coverage", "closure")


def spent_error(what, max_work: float, bound: float | None = None, closure: bool = True) -> TooLargeError:
    """The :class:`TooLargeError` of a walk that used up its allowance (``what``: its part, or a side).

    ``closure``: a MOCICE-BCubed walk (a closure part or a side's union
    walk), else the coverage counts'.  ``bound``: the plan's bound of the
    whole walk, above ``max_work``, so the walks ran as a trial
    (:class:`~daskbicl.kernels.micro.planner.FamilyPlan`); the message
    names it as the limit to set.
    """
    part = f"the sets of {what}'s biclusters that share a cell" if isinstance(what, str) else \
        f"the sets of biclusters that share a cell, containing biclusters {tuple(int(x) for x in what)}"
    head = (f"MOCICE-BCubed's exact walk of {part}" if closure else
            f"the coverage counts of CE and RNIA: the exact walk of {part}")
    advice = walk_advice(closure)
    if bound is None:
        return too_large(head, None, max_work, advice)
    trial = min(max_work, TRIAL_WORK)
    return too_large(f"{head} did not finish in a trial of {trial:.3g} work units; the family walk", bound,
                     max_work, advice, bound=True)


def _steps(work: float) -> int:
    """Walk steps (:data:`~daskbicl.kernels.micro.budget.NODE_STEPS` per set) allowed for ``work`` units."""
    return int(min(work / UNIT_STEP, 2.0**62)) if work < float("inf") else 2**62


def run_task(plan: MicroPlan, index: int, rows: Memberships, cols: Memberships, jaccard=None,
             tables: UnionTables | None = None, *, exact: bool = False, parts: str = "all",
             on_spent: str = "raise") -> TaskResult:
    """Walk the parts of task ``index`` of ``plan`` (``jaccard`` and ``tables`` for MOCICE-BCubed parts).

    ``parts="coverage"`` walks only its coverage parts (and counts its share
    of the pair histogram), which need neither table, so the engine starts
    them while the union tables are still being made; ``"closure"`` walks
    only the MOCICE-BCubed parts.  The two results add up to the ``"all"``
    result: coverage parts contribute only exact integers (moments, the
    histogram), so every float sum is the same.

    The walks stop when the task's work allowance (:meth:`FamilyPlan.allowance`,
    counted in the walk's own steps) or a part's memory budget runs out:
    :class:`~daskbicl.errors.TooLargeError` (``on_spent="raise"``, the
    exact method), or a result whose ``spent`` says why (``"return"``:
    the engine's ``method="auto"`` then samples that part of the score).
    """
    if not 0 <= index < plan.n_tasks:
        raise InputError(f"task {index} outside 0:{plan.n_tasks}")
    if parts not in TASK_PARTS:
        raise InputError(f"parts must be one of {TASK_PARTS}, got {parts!r}")
    if isinstance(plan, ClassPlan):
        if parts == "coverage":  # the class method's coverage comes from its classes, in finish
            return TaskResult(np.zeros((plan.n_truth + 1, plan.n_pred + 1), dtype=object), 0.0, 0.0, 0.0, 0.0, 0,
                              0, 0)
        return _class_task(plan, index, jaccard, exact)
    acc: dict[str, Any] = {"moments": np.zeros((plan.n_truth + 1, plan.n_pred + 1), dtype=object), "p": [], "r": [],
           "pa": [], "ra": [], "depth": 0, "nodes": 0, "deliveries": 0, "left": _steps(plan.allowance(index)),
           "max_work": plan.max_work, "bound": plan.work if plan.trial else None}
    try:
        for part in plan.tasks[index]:
            if (parts == "coverage" and part.closure) or (parts == "closure" and not part.closure):
                continue
            if part.closure and (jaccard is None or tables is None):
                raise InputError("a MOCICE-BCubed part needs the Jaccard table and the union tables")
            _run_part(part, rows, cols, jaccard, tables, exact, plan.budget, plan.seed, acc)
    except TooLargeError as err:
        if on_spent != "return":
            raise
        zero = np.zeros_like(acc["moments"])
        return TaskResult(zero, 0.0, 0.0, 0.0, 0.0, 0, acc["nodes"], acc["deliveries"], None, str(err))
    hist = None
    if plan.coverage and plan.row_ranges is not None and parts != "closure":
        hist = pair_histogram(rows, cols, *plan.row_ranges[index])
    if exact:
        p, r = sum(acc["p"], Fraction(0)), sum(acc["r"], Fraction(0))
    else:
        p, r = math.fsum(acc["p"]), math.fsum(acc["r"])
    terms = () if exact else (tuple(acc["p"]), tuple(acc["r"]), tuple(acc["pa"]), tuple(acc["ra"]))
    return TaskResult(acc["moments"], p, r, math.fsum(acc["pa"]), math.fsum(acc["ra"]), acc["depth"],
                      acc["nodes"], acc["deliveries"], hist, "", terms or ((), (), (), ()))


def _class_task(plan: ClassPlan, index: int, jaccard, exact: bool) -> TaskResult:
    """The MOCICE-BCubed sums of the classes of task ``index`` (the class method)."""
    from .class_traces import class_bcubed, class_bcubed_exact

    zero = np.zeros((plan.n_truth + 1, plan.n_pred + 1), dtype=object)
    if not plan.bcubed or plan.class_ranges is None:
        return TaskResult(zero, 0.0, 0.0, 0.0, 0.0, 0, 0, 0)
    if jaccard is None:
        raise InputError("MOCICE-BCubed's classes need the Jaccard table")
    lo, hi = plan.class_ranges[index]
    depth = int(plan.classes.sizes[lo:hi].max(initial=0))
    if exact:
        pe, re_ = class_bcubed_exact(plan.merged, plan.classes, jaccard, lo, hi)
        return TaskResult(zero, pe, re_, 0.0, 0.0, depth, hi - lo, 0)
    p, r, depth = class_bcubed(plan.merged, plan.classes, jaccard, lo, hi)
    return TaskResult(zero, p, r, p, r, depth, hi - lo, 0)


def _settled_bcubed(up: int, ut: int, results, identical: bool, exact: bool) -> PRF | None:
    """MOCICE-BCubed when no float sum is needed (conventions, or the exact rational path), else None.

    ``up``/``ut`` are the union sizes of pred and truth; shared by the finish of both exact methods.
    """
    if up == 0 and ut == 0:
        raise bcubed_nothing_covered()
    zero = Fraction(0) if exact else 0.0
    if up == 0 or ut == 0:  # documented convention: the 0/0 side counts as 0
        return PRF(zero, zero, zero)
    if identical and not exact:
        return PRF(1.0, 1.0, 1.0)
    if exact:
        p = sum((t.p_num for t in results), Fraction(0)) / up
        r = sum((t.r_num for t in results), Fraction(0)) / ut
        return PRF(p, r, _hmean(p, r))
    return None


def _finish_classes(plan: ClassPlan, results, exact: bool, identical: bool):
    from .class_traces import class_coverage, covered

    coverage = class_coverage(plan.merged, plan.classes) if plan.coverage else None
    if not plan.bcubed:
        return coverage, None, None
    up, ut = covered(plan.merged, plan.classes)
    settled = _settled_bcubed(up, ut, results, identical, exact)
    if settled is not None:
        return coverage, settled, 0.0
    p = math.fsum(t.p_num for t in results) / up
    r = math.fsum(t.r_num for t in results) / ut
    depth = max((t.depth for t in results), default=0)
    # positive terms only: ς and τ within (d + 6) u, compensated sums, four roundings
    error = (4 * depth + 16) * _U
    return coverage, PRF(p, r, float(_hmean(Fraction(p), Fraction(r)))), error


def finish(plan: MicroPlan, results, tables: UnionTables | None = None, *, exact: bool = False,
           identical: bool = False):
    """(coverage, MOCICE-BCubed, its error bound) from the task results; None for what was not asked.

    ``identical``: pred lists the same cell sets as truth
    (:func:`~daskbicl.kernels.micro.cell_records.same_biclusters`), so MOCICE-BCubed is
    exactly 1 and reported so in float mode too.
    """
    results = list(results)
    if isinstance(plan, ClassPlan):
        return _finish_classes(plan, results, exact, identical)
    coverage = bcubed = error = None
    if plan.coverage and plan.row_ranges is not None:
        hist = sum((t.histogram.astype(object) for t in results if t.histogram is not None),
                   np.zeros_like(plan.moments, dtype=object))
        hist[0, 0] += plan.moments[0, 0] - int(hist.sum())  # the cells in no bicluster
        coverage = coverage_from_histogram(hist, plan.n_truth, plan.n_pred)
    elif plan.coverage:
        moments = plan.moments + sum((t.moments for t in results),
                                     np.zeros_like(plan.moments, dtype=object))
        coverage = coverage_from_moments(moments, plan.n_truth, plan.n_pred)
    if plan.bcubed:
        assert tables is not None
        up, ut = tables.pred_total, tables.truth_total
        settled = _settled_bcubed(up, ut, results, identical, exact)
        if settled is not None:
            return coverage, settled, 0.0
        # every part's sums added at once (correctly rounded): the same digits however they were dealt
        pn, rn, pa, ra = (math.fsum(x for t in results for x in t.terms[j]) for j in range(4))
        depth = max((t.depth for t in results), default=0)
        eps = (2 * depth + plan.n_pred + 12) * _U
        error = max(eps * pa / pn if pn else 0.0, eps * ra / rn if rn else 0.0) + 4 * _U
        p, r = pn / up, rn / ut
        bcubed = PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))
    return coverage, bcubed, error


# --------------------------------------------------------------------------
# two co-clusterings: from the row and column contingency tables
# --------------------------------------------------------------------------
# Work units per term of the co-clustering sum (measured: 124 ns with the
# per-chunk exact sum: 12.8 M terms of 60 x 60-cluster co-clusterings in 1.6 s).
_UNIT_COCLUSTER_TERM = 12.0
_CHUNK = 1 << 20
def coclustering_bcubed(rows, cols, *, exact: bool = False,
                        max_work: float = DEFAULT_MAX_WORK) -> PRF:
    """MOCICE-BCubed of two co-clusterings from their contingency tables.

    For a cell x in truth block C and pred block G, ς(x, y) = J(G, C) when y
    is in both and 0 otherwise, and E_G(x) = G, so with t = |G ∩ C| =
    :math:`n^{zz'}_{hh'} n^{ww'}_{ll'}`:
    :math:`P = \\frac{1}{IJ}\\sum t^3 / (|G| (|G| + |C| - t))` and R alike
    with |C|, over the non-zero entries of both tables (module docstring).
    O(nnz(rows) x nnz(cols)) terms; no mask, no signature.

    Examples
    --------
    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> coclustering_bcubed(r, c, exact=True)   # (8/8 + 8/24 + 8/16) / 6
    PRF(precision=Fraction(11, 36), recall=Fraction(11, 36), f1=Fraction(11, 36))
    """
    a, ap = rows.truth_sizes(), rows.pred_sizes()
    b, bp = cols.truth_sizes(), cols.pred_sizes()
    n = rows.n * cols.n
    if n >= 2**62:
        raise TooLargeError(
            f"MOCICE-BCubed of two co-clusterings of {rows.n:,} x {cols.n:,} cells: 2**62 cells "
            "or more would overflow its int64 cell counts (no setting raises this limit)"
        )
    n_terms = len(rows.counts) * len(cols.counts)
    if _UNIT_COCLUSTER_TERM * n_terms > max_work:
        raise too_large(f"MOCICE-BCubed of two co-clusterings ({len(rows.counts)} x "
                        f"{len(cols.counts)} pairs of blocks)",
                        _UNIT_COCLUSTER_TERM * n_terms, max_work)
    # per non-zero entry: shared count, |C| and |G| factors of each axis
    rt, rc, rg = rows.counts, a[rows.rows], ap[rows.cols]
    ct, cc, cg = cols.counts, b[cols.rows], bp[cols.cols]
    if exact:
        p = r = Fraction(0)
        for (t1, c1, g1), (t2, c2, g2) in itertools.product(zip(rt, rc, rg), zip(ct, cc, cg)):
            t, c, g = int(t1) * int(t2), int(c1) * int(c2), int(g1) * int(g2)
            jt = Fraction(t * t * t, g + c - t)
            p += jt / g
            r += jt / c
        p, r = p / n, r / n
        return PRF(p, r, _hmean(p, r))
    # Each chunk is summed exactly (fsum) at once, so memory stays one chunk;
    # the exact partial sums are then summed exactly again.
    partial_p: list[float] = []
    partial_r: list[float] = []
    step = max(1, _CHUNK // max(len(ct), 1))
    for s in range(0, len(rt), step):
        t = rt[s : s + step, None] * ct[None, :]           # exact int64 (< 2**62)
        c = rc[s : s + step, None] * cc[None, :]
        g = rg[s : s + step, None] * cg[None, :]
        tf = t.astype(np.float64)
        tj = tf / (g + c - t) * tf                           # t J(G, C)
        partial_p.append(math.fsum((tf / g * tj).ravel().tolist()))
        partial_r.append(math.fsum((tf / c * tj).ravel().tolist()))
    p = math.fsum(partial_p) / n
    r = math.fsum(partial_r) / n
    return PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))
