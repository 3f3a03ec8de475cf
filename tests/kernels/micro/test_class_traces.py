"""The class method's cost estimate (kernels/micro/class_traces.py) against what the kernel does.

The plan's estimate decides between an exact run and sampling
(``method="auto"``), so it must not undercount: the pairs of distinct row and
column traces and the pred steps it counts are checked against a
brute-force count, and the heavy-overlap case that the old estimate put at
~54 s of one core (it ran for minutes) is now estimated beyond the default
work limit, and the family walk's lower bound beyond its trial, so the plan refuses (``method="auto"``
samples) before any walk.  Timing is left to
``benchmarks/micro.py --calibrate``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daskbicl.errors import TooLargeError
from daskbicl.kernels.micro.budget import DEFAULT_MAX_WORK, UNIT_PRED_STEP, UNIT_SUBSET, UNIT_TRACE_PAIR
from daskbicl.kernels.micro.class_traces import (
    INNER_UNITS,
    TRACE_SAMPLE,
    _trace_sample,
    enumerate_classes,
    inner_work,
    merge_identical,
)
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.planner import plan_micro

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def brute_traces(tr, tc, pr, pc, key_bits):
    """(distinct row traces x distinct column traces, pred steps) of the class ``key_bits`` (merged numbering)."""
    rows = np.concatenate([tr, pr]).T  # item x bicluster
    cols = np.concatenate([tc, pc]).T
    k = len(tr)
    s = sorted(key_bits)
    ra = {tuple(r[s]) for r in rows if r[s].any()}
    cb = {tuple(c[s]) for c in cols if c[s].any()}
    steps = sum(sum(1 for j, e in enumerate(s) if e >= k and a[j] and b[j]) for a in ra for b in cb)
    return len(ra) * len(cb), steps


@st.composite
def problems(draw):
    n_i, n_j = draw(st.integers(2, 9)), draw(st.integers(2, 9))
    k, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    density = draw(st.sampled_from([0.3, 0.6, 0.9]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    return tuple(rng.random((b, n)) < density for b, n in ((k, n_i), (k, n_j), (m, n_i), (m, n_j)))


@SETTINGS
@given(problems())
def test_counted_traces_and_steps_equal_brute_force(p):
    """On tables of at most TRACE_SAMPLE classes every class is counted exactly: == brute force."""
    tr, tc, pr, pc = p
    merged = merge_identical(signature_counts(tr, pr), signature_counts(tc, pc))
    table = enumerate_classes(merged)
    assert table is not None and len(table) <= TRACE_SAMPLE
    pairs, steps = _trace_sample(merged, table)
    reps = merged.rep
    for s in range(len(table)):
        key = [e for e in range(len(reps)) if int(table.keys[s, e // 64]) >> (e % 64) & 1]
        # traces on the merged class: a copy's memberships equal its representative's
        want = brute_traces(tr, tc, pr, pc, key)
        assert (pairs[s], steps[s]) == want


def test_inner_work_is_the_kernels_choice():
    """The plan's vectorised inner-sum cost equals the kernel's own (it picks the method by it)."""
    from daskbicl.kernels.micro.class_loops import inner_work as kernel_inner_work

    rng = np.random.default_rng(1)
    d = rng.integers(1, 30, 200).astype(np.float64)
    pairs = np.floor(rng.random(200) * 2.0 ** np.minimum(d, 12)) + 1
    steps = pairs * rng.random(200) * d
    got = inner_work(d, pairs, steps)
    for i in range(200):
        assert got[i] == pytest.approx(min(kernel_inner_work(int(d[i]), pairs[i], steps[i], INNER_UNITS)), rel=1e-12)
    from daskbicl.kernels.micro.class_loops import bitset_work as kernel_bitset_work
    from daskbicl.kernels.micro.class_traces import bitset_work

    preds = np.floor(rng.random(200) * d)
    got = bitset_work(d, preds, 300)
    for i in range(200):
        assert got[i] == pytest.approx(kernel_bitset_work(int(d[i]), int(preds[i]), 300, INNER_UNITS), rel=1e-12)
    assert np.isinf(got[d > 16]).all() and np.isfinite(got[d <= 16]).all()
    assert np.isinf(bitset_work(d, preds, 0)).all()  # no bit sets built
    # the direct sum grows with each pred step, the transform with 2^d d
    assert inner_work(np.array([30.0]), np.array([1e4]), np.array([1e5]))[0] == \
        pytest.approx(UNIT_TRACE_PAIR * 1e4 + UNIT_PRED_STEP * 1e5)
    assert inner_work(np.array([10.0]), np.array([1e9]), np.array([1e9]))[0] == \
        pytest.approx(UNIT_SUBSET * 1024 * 10 + 1024 * (UNIT_TRACE_PAIR + UNIT_PRED_STEP))


def heavy_overlap():
    """The case the old estimate put at ~54 s of one core while it ran for > 6 min: 200 x 200, 20 + 20 at 0.8."""
    rng = np.random.default_rng(9)
    tr, tc = rng.random((20, 200)) < 0.8, rng.random((20, 200)) < 0.8
    pr, pc = rng.random((20, 200)) < 0.8, rng.random((20, 200)) < 0.8
    return signature_counts(tr, pr), signature_counts(tc, pc)


def test_heavy_overlap_is_not_planned_as_a_short_exact_run():
    """The estimate counts each pair of traces with its pred steps: beyond the default limit, so auto samples.

    Measured (``benchmarks/micro.py --calibrate``): ~1e10 work units (~100 s
    of one core) for this case; the old estimate said 5.4e9, under the
    default limit of 6e9, and ``method="auto"`` ran it exactly for minutes.
    """
    rows, cols = heavy_overlap()
    with pytest.raises(TooLargeError, match="so it is not tried"):  # the classes do not fit, nor the walk's trial
        plan_micro(rows, cols, coverage=False, bcubed=True)
    walk = plan_micro(rows, cols, coverage=False, bcubed=True, method="family", max_work=float("inf"))
    assert walk.method == "family" and walk.work > DEFAULT_MAX_WORK
    plan = plan_micro(rows, cols, coverage=False, bcubed=True, max_work=float("inf"))
    assert plan.method == "classes"
    assert plan.work > DEFAULT_MAX_WORK
    # the pred steps are most of it: every pair of traces meets ~13 pred biclusters
    merged, table = plan.merged, plan.classes
    assert merged is not None and table is not None
    pairs, steps = _trace_sample(merged, table)
    assert float(steps.sum()) > 5 * float(pairs.sum())


def test_heavy_overlap_with_copies_takes_the_classes():
    """300 x 300, 10 + 12 at 0.8: the walk stores 10 x 2^21 sets (22 s of CPU, measured); the class
    method fits the default limit, and the plan takes it without walking anything."""
    rng = np.random.default_rng(4)
    tr, tc = rng.random((10, 300)) < 0.8, rng.random((10, 300)) < 0.8
    flip = rng.random((2, 10, 300)) < 0.03
    pr = np.concatenate([tr ^ flip[0], rng.random((2, 300)) < 0.8])
    pc = np.concatenate([tc ^ flip[1], rng.random((2, 300)) < 0.8])
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    plan = plan_micro(rows, cols, coverage=False, bcubed=True)
    assert plan.method == "classes", plan.notes
    walk = plan_micro(rows, cols, coverage=False, bcubed=True, method="family")
    assert walk.work >= 10 * 2.0**21  # the bound covers the sets the walk stores


def test_a_plan_is_a_class_plan_or_a_family_plan_built_by_keyword():
    from daskbicl.kernels.micro.cell_records import example_memberships
    from daskbicl.kernels.micro.planner import ClassPlan, FamilyPlan

    rows, cols = example_memberships()
    classes = plan_micro(rows, cols, bcubed=True, n_tasks=2)
    family = plan_micro(rows, cols, bcubed=True, n_tasks=2, method="family")
    assert isinstance(classes, ClassPlan) and classes.method == "classes" and classes.n_tasks == 2
    assert isinstance(family, FamilyPlan) and family.method == "family" and family.n_tasks == len(family.tasks) == 2
    assert len(classes.classes) > 0 and not hasattr(classes, "tasks")
    assert not hasattr(family, "classes") and family.parts
    with pytest.raises(TypeError):
        FamilyPlan(2, 2, True, True, 1.0)  # type: ignore[misc]  # keyword only
