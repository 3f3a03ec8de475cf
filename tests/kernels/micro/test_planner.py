"""The plan of the exact micro step (kernels/micro/planner.py): a route chosen from bounds, a work counter.

No walk runs in the plan: it chooses the cell classes when the pairs of
signatures are few and the class table's closed form fits ``max_work``,
else the family walk, whose work it bounds from the Gram tables.  Checked
here: the bound covers what the walks count (brute force: every part
walked without a limit); a bound within ``max_work`` gives allowances
that never run out; a bound above it gives a trial of at most
``TRIAL_WORK`` (and ``max_work``) units whose refusal names the bound as
the limit that runs the walk to its end; splitting and dealing the parts
moves no value.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from daskbicl.errors import InputError, TooLargeError
from daskbicl.kernels.micro.budget import NODE_STEPS, UNIT_STEP
from daskbicl.kernels.micro.family_tasks import finish, jaccard_table, run_task, union_side, union_tables
from daskbicl.kernels.micro.family_walk import NO_LIMIT, Lists, Moments, Start, Walk, enumerate_family
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import MicroTables, bicluster_overlap
from daskbicl.kernels.micro.planner import (
    TRIAL_WORK,
    Bounds,
    choose,
    classes_ruled_out,
    lower_bounds,
    part_inputs,
    plan_micro,
)


def _inputs(seed: int, k: int = 5, n: int = 60, density: float = 0.4):
    rng = np.random.default_rng(seed)
    tr, tc, pr, pc = (rng.random((k, n)) < density for _ in range(4))
    return signature_counts(tr, pr), signature_counts(tc, pc)


def _walked(rows, cols, part) -> int:
    """The steps the walk of ``part`` counts (deliveries + NODE_STEPS per set), without a limit."""
    k = rows.n_truth
    req = part.required
    bt = sum(1 for x in req if x < k)
    lo = np.zeros((k + 1, rows.n_pred + 1), np.uint64)
    walk = Walk.storing(1 << 24, 16, np.zeros(0, np.uint64), NO_LIMIT) if part.closure else Walk.finishing(64)
    fam = enumerate_family(Lists(*part_inputs(rows, cols, req)),
                           Start(rows.n_elem, k, bt, len(req) - bt, part.min_elem, req[-1]), Moments(lo, lo.copy()),
                           walk)
    assert not fam.spent and not fam.full
    return int(fam.deliveries) + NODE_STEPS * int(fam.n_nodes)


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_covers_every_part_walked(seed):
    """A part's bound (from the Gram tables) is at least the work its walk counts, split parts included."""
    rng = np.random.default_rng(seed)
    rows, cols = _inputs(seed, k=int(rng.integers(2, 7)), n=int(rng.integers(20, 120)),
                         density=float(rng.choice([0.1, 0.3, 0.6])))
    for coverage, bcubed in ((True, False), (False, True), (True, True)):
        plan = plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, method="family", coverage_by="family",
                          n_tasks=int(rng.integers(1, 9)))
        for part in plan.parts:
            assert part.bound >= UNIT_STEP * _walked(rows, cols, part), (part, coverage, bcubed)
        assert plan.work >= sum(p.bound for p in plan.parts if len(p.required) == 1) * (1 - 1e-12)


def test_the_bound_of_the_union_walks_covers_them():
    rows, cols = _inputs(4, k=6, density=0.5)
    plan = plan_micro(rows, cols, coverage=False, bcubed=True, method="family")
    parts = sum(p.bound for p in plan.parts)
    for side in ("pred", "truth"):  # a walk limited to the union walks' part of the bound finishes
        assert union_side(rows, cols, side, 1 << 22, 0, limit=plan.work - parts)[3] > 0
    truth = np.arange(rows.n_elem) < rows.n_truth
    bounds = Bounds.of(rows, cols)
    assert bounds.part((0,), closure=False, side=truth) <= bounds.part((0,), closure=False)


def test_a_bound_within_max_work_runs_with_the_whole_limit():
    rows, cols = _inputs(1)
    plan = plan_micro(rows, cols, coverage=True, bcubed=True, method="family", coverage_by="family", n_tasks=3,
                      max_work=1e15)
    assert not plan.trial and plan.work <= plan.max_work and plan.union_limit == 1e15
    for i in range(plan.n_tasks):  # never runs out: at least the task's own bound
        assert plan.allowance(i) >= sum(p.bound for p in plan.tasks[i])


def test_a_bound_above_max_work_is_a_trial_of_at_most_trial_work():
    rows, cols = _inputs(1)
    for max_work in (1e4, 3e4):  # the walks' lower bound (~2.5e3) within the trial, their bound (~7.9e4) above
        plan = plan_micro(rows, cols, coverage=True, bcubed=True, method="family", coverage_by="family", n_tasks=3,
                          max_work=max_work)
        assert plan.trial and plan.work > max_work and plan.lower is not None
        trial = min(max_work, TRIAL_WORK)
        assert plan.trial_work == trial and plan.union_limit == trial / 4
        assert sum(plan.allowance(i) for i in range(3)) == pytest.approx(trial)  # per kind of task
    rows, cols = _inputs(1, k=15, density=0.5)  # 30 biclusters, most sharing cells
    plan = plan_micro(rows, cols, coverage=True, bcubed=True, method="family", max_work=1e9)
    assert plan.work > 1e9 and plan.trial_work == TRIAL_WORK < 1e9


def test_a_trial_that_finishes_is_the_exact_value():
    """A limit between the walk's real work and its bound: a trial, finished, equal to the unlimited run."""
    rows, cols = _inputs(2, k=6, density=0.5)
    whole = MicroTables(rows, cols, method="family", coverage_by="family", n_tasks=1, max_work=float("inf"))
    plan = plan_micro(rows, cols, coverage=True, method="family", coverage_by="family", n_tasks=1)
    spent = sum(UNIT_STEP * _walked(rows, cols, p) for p in plan.parts)
    assert spent < plan.work  # the bound is loose here
    trial = MicroTables(rows, cols, method="family", coverage_by="family", n_tasks=1, max_work=spent * 1.01)
    assert plan_micro(rows, cols, coverage=True, method="family", coverage_by="family", n_tasks=1,
                      max_work=spent * 1.01).trial
    assert trial.coverage == whole.coverage


def test_a_trial_that_runs_out_names_the_bound_and_the_limit_that_runs_it():
    rows, cols = _inputs(5, k=8, density=0.5)
    overlap = bicluster_overlap(rows, cols)
    jac = jaccard_table(overlap)
    with pytest.raises(TooLargeError, match="at least ~3.79e[+]04 work units, more than its 100 of a trial"):
        plan_micro(rows, cols, coverage=False, bcubed=True, method="family", n_tasks=2, max_work=100.0)
    # the trial the lower bound spares: it runs out all the same
    plan = dataclasses.replace(plan_micro(rows, cols, coverage=False, bcubed=True, method="family", n_tasks=2,
                                          max_work=float("inf")), max_work=100.0, trial=True)
    tables = union_tables(rows, cols)
    with pytest.raises(TooLargeError, match="did not finish in a trial of 100 work units") as info:
        for i in range(plan.n_tasks):
            run_task(plan, i, rows, cols, jac, tables)
    msg = str(info.value)
    assert f"at most ~{plan.work:.3g} work units by its bound" in msg
    suggested = float(re.search(r"'daskbicl.max_work': ([0-9.e+]+)", msg).group(1))
    assert suggested >= plan.work
    with pytest.raises(TooLargeError, match="trial"):
        union_tables(rows, cols, max_work=100.0, plan=plan)
    full = plan_micro(rows, cols, coverage=False, bcubed=True, method="family", n_tasks=2, max_work=suggested)
    assert not full.trial  # the limit named runs the walk to its end
    results = [run_task(full, i, rows, cols, jac, tables) for i in range(full.n_tasks)]
    assert not any(r.spent for r in results)
    assert finish(full, results, tables)[1] == MicroTables(rows, cols, method="family", max_work=float("inf")).bcubed


def test_splitting_and_dealing_move_no_value():
    """Coverage parts above a task's share of the bound are split once; counts equal for any number of tasks."""
    rows, cols = _inputs(6, k=6, n=120, density=0.3)
    counts = set()
    for n_tasks in (1, 4, 16):
        plan = plan_micro(rows, cols, coverage=True, method="family", coverage_by="family", n_tasks=n_tasks)
        assert plan.n_tasks == n_tasks
        if n_tasks == 16:
            assert any(len(p.required) == 2 for p in plan.parts), plan.notes
        results = [run_task(plan, i, rows, cols) for i in range(plan.n_tasks)]
        counts.add(finish(plan, results)[0])
    assert len(counts) == 1


def test_the_route_is_chosen_from_bounds():
    """Classes when the pairs of signatures are few and their closed form fits; else the family walk."""
    rows, cols = _inputs(7, k=4, n=300, density=0.2)
    assert choose(rows, cols, coverage=True, bcubed=True, max_work=6e9) is not None
    assert plan_micro(rows, cols, bcubed=True).method == "classes"
    assert choose(rows, cols, coverage=True, bcubed=True, max_work=1.0) is None  # the classes do not fit
    with pytest.raises(TooLargeError, match="so it is not tried"):  # the family walk's lower bound: beyond
        plan_micro(rows, cols, bcubed=True, max_work=1.0)
    assert plan_micro(rows, cols, bcubed=True, max_work=3e3).method == "family"
    with pytest.raises(TooLargeError, match="exact class method"):
        plan_micro(rows, cols, bcubed=True, max_work=1.0, method="classes")
    assert plan_micro(rows, cols, bcubed=True, method="family").method == "family"
    assert plan_micro(rows, cols, coverage_by="pairs").row_ranges is not None
    assert plan_micro(rows, cols, coverage_by="family", n_tasks=2).row_ranges is None
    with pytest.raises(InputError, match="method must be one of"):
        plan_micro(rows, cols, method="walk")
    with pytest.raises(InputError, match="coverage_by must be"):
        plan_micro(rows, cols, coverage_by="walk")


def test_classes_ruled_out_by_the_counts_say_what_the_class_estimate_says():
    from daskbicl.kernels.micro.class_traces import class_estimate

    rng = np.random.default_rng(5)
    tr, tc, pr, pc = (rng.random((30, n)) < 0.1 for n in (25_000, 20_000, 25_000, 20_000))
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)  # ~25k x 20k pairs: beyond ENUM_LIMIT
    why = classes_ruled_out(rows, cols)
    full = class_estimate(rows, cols, True, True)
    assert why and full.table is None and why == full.why
    assert plan_micro(rows, cols, coverage=True, bcubed=True).method == "family"
    tr = tr.copy()
    tr[0] = False  # an empty bicluster: merging may drop signatures, so the counts alone do not decide
    assert classes_ruled_out(signature_counts(tr, pr), cols) == ""
    assert classes_ruled_out(*_inputs(6, k=4, n=300, density=0.2)) == ""


def _side_walked(rows, cols, side: str) -> int:
    """The steps one side's union walk counts (every set of that side's biclusters that shares a cell)."""
    from daskbicl.kernels.micro.memberships import one_side

    k = rows.n_truth
    lo = np.zeros((k + 1, rows.n_pred + 1), np.uint64)
    fam = enumerate_family(Lists(*one_side(rows, side), *one_side(cols, side)), Start(rows.n_elem, k),
                           Moments(lo, lo.copy()), Walk.storing(1 << 24, 16, np.zeros(0, np.uint64), NO_LIMIT))
    assert not fam.spent and not fam.full
    return int(fam.deliveries) + NODE_STEPS * int(fam.n_nodes)


def _random_case(seed: int):
    rng = np.random.default_rng(100 + seed)
    rows, cols = _inputs(seed, k=int(rng.integers(2, 9)), n=int(rng.integers(8, 160)),
                         density=float(rng.choice([0.2, 0.5, 0.8])))
    kinds = [(True, False), (False, True), (True, True)][seed % 3]
    return rows, cols, kinds, int(rng.integers(1, 9))


@pytest.mark.parametrize("seed", range(48))
def test_the_lower_bound_is_within_what_the_walks_count(seed):
    """Brute force: each kind's lower bound (coverage parts, closure parts, each union walk) is at most what
    its walks count, and the plan refuses before any walk exactly when one is beyond its share of the trial."""
    rows, cols, (coverage, bcubed), n_tasks = _random_case(seed)
    plan = plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, method="family", coverage_by="family",
                      n_tasks=n_tasks, max_work=float("inf"))
    low = lower_bounds(rows, cols, Bounds.of(rows, cols), plan.tasks, bcubed=bcubed, budget=plan.budget)
    counted = [sum(UNIT_STEP * _walked(rows, cols, p) for p in plan.parts if p.closure == closure)
               for closure in (False, True)]
    counted += [UNIT_STEP * _side_walked(rows, cols, side) if bcubed else 0.0 for side in ("pred", "truth")]
    assert all(0 <= a <= b for a, b in zip(low, counted)), (low, counted)
    for max_work in sorted({x * f for x in (*low, plan.work) if x > 0 for f in (0.24, 0.9, 1.1)}):
        why = low.beyond(min(max_work, TRIAL_WORK)) if plan.work > max_work else None
        try:
            got = plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, method="family", coverage_by="family",
                             n_tasks=n_tasks, max_work=max_work)
        except TooLargeError as err:
            assert why is not None and why[0] in str(err), (max_work, low)
        else:
            assert why is None and got.trial == (plan.work > max_work), (max_work, low)
            assert got.lower == (low if got.trial else None)


@pytest.mark.parametrize("seed", range(24))
def test_a_trial_the_lower_bound_spares_would_run_out(seed):
    """Each kind whose lower bound is beyond its share of a trial: that trial, run anyway, runs out."""
    rows, cols, (coverage, bcubed), n_tasks = _random_case(seed)
    ample = plan_micro(rows, cols, coverage=coverage, bcubed=bcubed, method="family", coverage_by="family",
                       n_tasks=n_tasks, max_work=float("inf"))
    low = lower_bounds(rows, cols, Bounds.of(rows, cols), ample.tasks, bcubed=bcubed, budget=ample.budget)
    jac = jaccard_table(bicluster_overlap(rows, cols)) if bcubed else None
    tables = union_tables(rows, cols) if bcubed else None
    for kind, share in (("coverage", 1.0), ("closure", 1.0), ("pred", 0.25), ("truth", 0.25)):
        value = getattr(low, kind)
        if value <= 0:
            continue
        trial = dataclasses.replace(ample, max_work=value / share * 0.99, trial=True)
        assert low.beyond(trial.trial_work) is not None
        if kind in ("pred", "truth"):
            with pytest.raises(TooLargeError, match="did not finish in a trial"):
                union_side(rows, cols, kind, 1 << 22, 0, limit=trial.union_limit, max_work=trial.max_work,
                           bound=trial.work)
            continue
        results = [run_task(trial, i, rows, cols, jac, tables, parts=kind, on_spent="return")
                   for i in range(trial.n_tasks)]
        assert any(r.spent for r in results), (kind, low)


def test_a_hopeless_input_is_refused_or_sampled_before_any_walk():
    """200 x 200 cells, 20 + 20 biclusters at 0.8 (a cell in ~26): the cells of the longest signatures put
    MOCICE-BCubed's walk beyond the trial, so "exact" refuses from the plan (naming the lower bound, and the
    bound as the limit that runs the walk) and "auto" plans no walk of it (the engine samples it)."""
    from daskbicl.engine import micro_pass
    from daskbicl.kernels.micro.budget import DEFAULT_BUDGET, DEFAULT_MAX_WORK

    rng = np.random.default_rng(9)
    tr, tc, pr, pc = (rng.random((20, 200)) < 0.8 for _ in range(4))
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    bound = plan_micro(rows, cols, coverage=False, bcubed=True, method="family", max_work=float("inf")).work
    with pytest.raises(TooLargeError) as info:
        micro_pass._plan(rows, cols, False, True, DEFAULT_MAX_WORK, DEFAULT_BUDGET, 16)
    msg = str(info.value)
    assert re.search(r"MOCICE-BCubed's exact walk needs at least ~[0-9.e+]+ work units, more than its 4e\+08 of "
                     r"a trial could spend, so it is not tried", msg), msg
    assert f"at most ~{bound:.3g} work units by its bound" in msg
    assert float(re.search(r"'daskbicl.max_work': ([0-9.e+]+)", msg).group(1)) >= bound
    assert micro_pass._plan_auto(rows, cols, False, True, DEFAULT_MAX_WORK, DEFAULT_BUDGET, 16) is None
    kept = micro_pass._plan_auto(rows, cols, True, True, DEFAULT_MAX_WORK, DEFAULT_BUDGET, 16)
    assert kept is not None and kept.coverage and not kept.bcubed  # CE and RNIA stay exact
