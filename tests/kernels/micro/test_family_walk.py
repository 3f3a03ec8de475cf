"""The family walks' work allowance: a running count of their own steps, a refusal or a fallback.

The plan gives each walking task a share of ``daskbicl.max_work`` (of a trial when its bound is above it)
(:meth:`~daskbicl.kernels.micro.planner.FamilyPlan.allowance`); the walks
count their deliveries and nodes against it and stop when it runs out.  The
exact method then raises :class:`~daskbicl.errors.TooLargeError` naming the
setting; ``method="auto"`` samples the part the walks did not finish.  The
trials here are tighter than the plan's lower bound (which refuses them
before any walk, tests/kernels/micro/test_planner.py), so they are made
from the unlimited plan.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from daskbicl.engine import micro_pass
from daskbicl.errors import TooLargeError
from daskbicl.kernels.micro import sampled_parts
from daskbicl.kernels.micro.family_tasks import jaccard_table, run_task, union_side, union_tables
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import bicluster_overlap
from daskbicl.kernels.micro.planner import plan_micro


def _inputs(seed=3, k=5, n=60, density=0.4):
    rng = np.random.default_rng(seed)
    tr, tc, pr, pc = (rng.random((k, n)) < density for _ in range(4))
    return signature_counts(tr, pr), signature_counts(tc, pc)


def _plan(rows, cols, max_work: float, coverage_by: str = "family"):
    """The family plan under ``max_work``: a trial of at most ``max_work`` units when its bound is above (the
    unlimited plan's parts and tasks: its lower bound would refuse so small a trial before any walk)."""
    plan = plan_micro(rows, cols, coverage=True, bcubed=True, n_tasks=3, method="family", coverage_by=coverage_by,
                      max_work=float("inf"))
    return dataclasses.replace(plan, max_work=max_work, trial=plan.work > max_work)


def test_walks_stop_when_their_limit_runs_out():
    from daskbicl.kernels.micro.family_walk import NO_LIMIT, Lists, Moments, Start, Walk, enumerate_family
    from daskbicl.kernels.micro.planner import part_inputs

    rows, cols = _inputs()
    lists = Lists(*part_inputs(rows, cols, (0,)))
    start = Start(rows.n_elem, rows.n_truth, 1, 0, 1, 0)
    for make in (lambda limit: Walk.finishing(0, limit), lambda limit: Walk.storing(1 << 20, 16, np.zeros(0, np.uint64),
                                                                                      limit)):
        lo = np.zeros((rows.n_truth + 1, rows.n_pred + 1), np.uint64)
        whole = enumerate_family(lists, start, Moments(lo, lo.copy()), make(NO_LIMIT))
        assert not whole.spent and whole.n_nodes > 3
        cut = enumerate_family(lists, start, Moments(lo, lo.copy()), make(whole.deliveries // 2))
        assert cut.spent and not cut.full and cut.n_nodes < whole.n_nodes


def test_a_task_past_its_allowance_refuses_or_says_so():
    rows, cols = _inputs()
    jac = jaccard_table(bicluster_overlap(rows, cols))
    tables = union_tables(rows, cols)
    plan = _plan(rows, cols, float("inf"))
    whole = [run_task(plan, i, rows, cols, jac, tables) for i in range(plan.n_tasks)]
    assert not any(r.spent for r in whole)
    assert sum(plan.allowance(i) for i in range(plan.n_tasks)) == float("inf")
    small = _plan(rows, cols, 50.0)
    assert small.trial and sum(small.allowance(i) for i in range(small.n_tasks)) == pytest.approx(50.0)
    busy = max(range(plan.n_tasks), key=lambda i: whole[i].deliveries)
    with pytest.raises(TooLargeError, match="daskbicl.max_work") as info:
        run_task(small, busy, rows, cols, jac, tables)
    assert "method='auto' samples" in str(info.value)
    got = run_task(small, busy, rows, cols, jac, tables, on_spent="return")
    assert "daskbicl.max_work" in got.spent and got.p_num == 0.0


def test_a_union_side_past_its_limit_refuses():
    rows, cols = _inputs()
    with pytest.raises(TooLargeError, match="exact walk of the sets of pred's biclusters"):
        union_side(rows, cols, "pred", 1 << 20, 0, limit=10.0, max_work=20.0)
    assert union_side(rows, cols, "pred", 1 << 20, 0)[3] > 0


def test_auto_samples_the_part_whose_walks_stopped():
    """The engine's steps on one process: coverage walks spent -> coverage sampled, MOCICE-BCubed exact."""
    rows, cols = _inputs()
    overlap = bicluster_overlap(rows, cols)
    jac = jaccard_table(overlap)
    ample = _plan(rows, cols, float("inf"))
    tables = micro_pass._union_tables(*(micro_pass._union_side(ample, rows, cols, 1 << 20, s, "return")
                                        for s in ("pred", "truth")))
    exact = micro_pass._finish(ample, tables, overlap, True,
                               *[micro_pass._task(ample, i, rows, cols, None, None, "coverage", "return")
                                 for i in range(3)],
                               *[micro_pass._task(ample, i, rows, cols, jac, tables, "closure", "return")
                                 for i in range(3)])
    assert exact[0] is not None and exact[1] is not None
    tight = _plan(rows, cols, 50.0)
    coverage = [micro_pass._task(tight, i, rows, cols, None, None, "coverage", "return") for i in range(3)]
    assert any(r.spent for r in coverage)
    closure = [micro_pass._task(ample, i, rows, cols, jac, tables, "closure", "return") for i in range(3)]
    got = micro_pass._finish(tight, tables, overlap, True, *coverage, *closure)
    assert got[0] is None and got[1] == exact[1]
    draws = sampled_parts.sampler_for(got[0], got[1], rows, cols, True, True)
    assert draws.coverage and not draws.bcubed
    # a side's union walk stopped: MOCICE-BCubed sampled; the coverage counts too when they come from the
    # walk (its MOCICE-BCubed parts count moments), exact when they come from pairs of signatures
    side = micro_pass._union_side(tight, rows, cols, 1 << 20, "pred", "return")
    assert isinstance(side, str) and micro_pass._union_tables(side, None) == side
    for plan, kept in ((ample, False), (_plan(rows, cols, float("inf"), "pairs"), True)):
        closure = [micro_pass._task(plan, i, rows, cols, jac, side, "closure", "return") for i in range(3)]
        coverage = [micro_pass._task(plan, i, rows, cols, None, None, "coverage", "return") for i in range(3)]
        got = micro_pass._finish(plan, side, overlap, True, *coverage, *closure)
        assert got[1] is None and (got[0] == exact[0] if kept else got[0] is None)
    with pytest.raises(TooLargeError, match="daskbicl.max_work"):
        micro_pass._union_side(tight, rows, cols, 1 << 20, "pred", "raise")
