"""The micro path's work spreads over the workers, and the values do not move.

The membership pass of an axis is cut into ``SPREAD_BLOCKS`` blocks (two
per worker thread of a distributed client, if fewer) where the axis is long
enough, whatever ``daskbicl.chunk`` says (in memory and from a Zarr store), and MOCICE-BCubed's union tables are one task
per side.  How much of the wall time then has an idle worker is measured
by benchmarks/micro_spread.py (a benchmark, not a test); here: the graph
has the parallel tasks, and every micro value equals the one counted in a
single block, on a real LocalCluster and in process.
"""

from __future__ import annotations

import dask
import numpy as np
import pytest

import daskbicl
from daskbicl.engine import micro_pass
from daskbicl.kernels.micro.memberships import signature_counts

MICRO = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]


def _pair(seed, n_i, n_j, k, density):
    rng = np.random.default_rng(seed)
    return [daskbicl.biclustering(rng.random((k, n_i)) < density, rng.random((k, n_j)) < density)
            for _ in range(2)]


def _keys(graph, prefix):
    return [k for k in dict(graph.__dask_graph__()) if str(k[0] if isinstance(k, tuple) else k).startswith(prefix)]


def _values(scores):
    return {m: (tuple(map(float, v)) if isinstance(v, tuple) else float(v)) for m, v in scores.items()}


def test_spread_chunk_cuts_long_axes_and_keeps_short_ones_whole():
    assert micro_pass.spread_chunk(10**6, 2**21) * micro_pass.SPREAD_BLOCKS >= 10**6
    assert micro_pass.spread_chunk(10**6, 1000) == 1000  # a smaller configured chunk stays
    assert micro_pass.spread_chunk(100, 2**21) >= 100  # short axes: one block
    for n in (1, 7, 40_000, 10**6 + 3):
        c = micro_pass.spread_chunk(n, 2**21)
        assert -(-n // c) <= max(micro_pass.SPREAD_BLOCKS, 1) and c >= 1


def test_membership_pass_has_one_task_per_block():
    assert micro_pass.spread_blocks() == micro_pass.SPREAD_BLOCKS  # no distributed client here
    rng = np.random.default_rng(0)
    n = 20 * micro_pass.SPREAD_MIN
    t, p = rng.random((3, n)) < 0.1, rng.random((4, n)) < 0.1
    graph = micro_pass.memberships_graph(t, p)
    assert len(_keys(graph, "signature_counts")) == micro_pass.SPREAD_BLOCKS
    merged = dask.compute(graph, scheduler="sync")[0]
    whole = signature_counts(t, p)
    assert merged.lists() == whole.lists() and merged.cnt.tolist() == whole.cnt.tolist()
    assert np.array_equal(merged.gram, whole.gram) and merged.n_items == whole.n_items


def test_store_with_one_chunk_is_cut_too(tmp_path):
    n = 18 * micro_pass.SPREAD_MIN
    t, p = _pair(1, n, 40, 3, 0.2)
    with dask.config.set({"daskbicl.chunk": 2**21}):
        daskbicl.save(t, tmp_path / "t.zarr")
    stored = daskbicl.open(tmp_path / "t.zarr")
    assert len(stored.row_mask.data.chunks[-1]) == 1
    graph = micro_pass.memberships_graph(stored.row_mask.data, p.row_mask.values)
    assert len(_keys(graph, "signature_counts")) == micro_pass.SPREAD_BLOCKS
    merged = dask.compute(graph, scheduler="sync")[0]
    whole = signature_counts(t.row_mask.values, p.row_mask.values)
    assert merged.lists() == whole.lists() and merged.cnt.tolist() == whole.cnt.tolist()


def test_union_tables_are_one_task_per_side_and_start_beside_the_planner():
    t, p = _pair(2, 300, 200, 6, 0.3)
    graph = micro_pass.micro_graph(t, p, parts={"bcubed"}, method="exact")
    assert len(_keys(graph, "_union_side")) == 2 and len(_keys(graph, "_early_union_side")) == 2
    deps = dict(graph.__dask_graph__().dependencies)
    early = _keys(graph, "_early_union_side")
    plans = _keys(graph, "_plan")
    assert all(not (set(deps[e]) & set(plans)) for e in early)  # they do not wait for the plan
    assert not _keys(micro_pass.micro_graph(t, p, parts={"bcubed"}, method="sample"), "_early_union_side")


@pytest.fixture(scope="module")
def spread_case():
    """Long enough to be cut into blocks (rows); the plan takes the family walk (so the union tables count)."""
    return _pair(3, 100_000, 2000, 100, 0.01)


@pytest.mark.slow
def test_values_equal_the_single_block_count(spread_case, client):
    t, p = spread_case
    assert micro_pass.spread_blocks() == 2 * sum(client.nthreads().values()) == 4  # two blocks per thread
    spread = _values(daskbicl.score(t, p, measures=MICRO, method="exact"))
    with dask.config.set({"daskbicl.chunk": 1000}):
        fine = _values(daskbicl.score(t, p, measures=MICRO, method="exact"))
    old = micro_pass.SPREAD_BLOCKS, micro_pass.EARLY_UNION
    # the pass as one block and the union tables after the plan only (the layout before the spread), in process
    micro_pass.SPREAD_BLOCKS, micro_pass.EARLY_UNION = 1, 1
    try:
        with dask.config.set(scheduler="sync"):
            single = _values(daskbicl.score(t, p, measures=MICRO, method="exact"))
            rows = signature_counts(t.row_mask.values, p.row_mask.values)
            cols = signature_counts(t.col_mask.values, p.col_mask.values)
            assert micro_pass._early_union_side(rows, cols, 8388608, "pred") is None  # too large: after the plan
    finally:
        micro_pass.SPREAD_BLOCKS, micro_pass.EARLY_UNION = old
    assert spread == single == fine
    assert 0 < spread["mocice_bcubed"][2] < 1 and 0 < spread["micro_rnia"] < 1


def test_early_union_tables_equal_the_ones_after_the_plan(spread_case):
    from daskbicl.kernels.micro.family_tasks import union_tables
    from daskbicl.kernels.micro.planner import plan_micro

    t, p = spread_case
    rows = signature_counts(t.row_mask.values, p.row_mask.values)
    cols = signature_counts(t.col_mask.values, p.col_mask.values)
    plan = plan_micro(rows, cols, coverage=True, bcubed=True)
    assert plan.method == "family" and plan.seed == 0  # the case the early tables serve
    whole = union_tables(rows, cols, budget=8388608, seed=plan.seed)
    for side, fields in (("pred", whole[:4]), ("truth", whole[4:])):
        early = micro_pass._early_union_side(rows, cols, 8388608, side)
        assert early is not None and early[3] == fields[3]
        assert all(np.array_equal(a, b) for a, b in zip(early[:3], fields[:3]))
