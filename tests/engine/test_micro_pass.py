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
    assert not micro_pass._shipped(t, p)  # no cluster: nothing travels, nothing is packed
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


def test_union_tables_are_one_task_per_side_after_the_plan_and_nothing_only_orders_tasks():
    """Each side's union tables are one task that reads the plan; no early union tables, no estimate tasks."""
    from dask.core import get_dependencies

    t, p = _pair(2, 300, 200, 6, 0.3)
    graph = micro_pass.micro_graph(t, p, parts={"bcubed"}, method="exact")
    flat = dict(graph.__dask_graph__())
    union, plans = _keys(graph, "_union_side"), _keys(graph, "_plan")
    assert len(union) == 2 and len(plans) == 1 and all(plans[0] in get_dependencies(flat, u) for u in union)
    assert not _keys(graph, "_early_union_side")
    assert not _keys(graph, "estimate_classes") and not _keys(graph, "_probe_family")


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
    old = micro_pass.SPREAD_BLOCKS
    micro_pass.SPREAD_BLOCKS = 1  # the pass as one block (the layout before the spread), in process
    try:
        with dask.config.set(scheduler="sync"):
            single = _values(daskbicl.score(t, p, measures=MICRO, method="exact"))
    finally:
        micro_pass.SPREAD_BLOCKS = old
    assert spread == single == fine
    assert 0 < spread["mocice_bcubed"][2] < 1 and 0 < spread["micro_rnia"] < 1


def _memberships(t, p):
    return (signature_counts(t.row_mask.values, p.row_mask.values),
            signature_counts(t.col_mask.values, p.col_mask.values))


@pytest.mark.parametrize("seed", range(5))
def test_coverage_and_closure_tasks_add_up_to_the_whole_tasks(seed):
    """Split walking tasks give the same coverage counts and MOCICE-BCubed, bit for bit (both methods)."""
    from daskbicl.kernels.micro.cell_records import bicluster_overlap
    from daskbicl.kernels.micro.family_tasks import finish, jaccard_table, run_task, union_tables
    from daskbicl.kernels.micro.planner import plan_micro

    rng = np.random.default_rng(100 + seed)
    t, p = _pair(100 + seed, int(rng.integers(30, 200)), int(rng.integers(30, 200)), int(rng.integers(2, 9)),
                 float(rng.choice([0.1, 0.3, 0.6])))
    rows, cols = _memberships(t, p)
    jac = jaccard_table(bicluster_overlap(rows, cols))
    seen = set()
    for method, coverage_by in ((None, None), ("family", None), ("family", "pairs"), ("family", "family")):
        try:
            plan = plan_micro(rows, cols, coverage=True, bcubed=True, n_tasks=3, method=method,
                              coverage_by=coverage_by, max_work=1e12)
        except daskbicl.TooLargeError:
            continue
        seen.add(plan.method)
        tables = union_tables(rows, cols, seed=plan.seed) if plan.method == "family" else None
        whole = [run_task(plan, i, rows, cols, jac, tables) for i in range(3)]
        split = [run_task(plan, i, rows, cols, None, None, parts="coverage") for i in range(3)]
        split += [run_task(plan, i, rows, cols, jac, tables, parts="closure") for i in range(3)]
        want, got = finish(plan, whole, tables), finish(plan, split, tables)
        assert repr(got) == repr(want), (method, coverage_by)
    assert "family" in seen


def test_coverage_tasks_do_not_wait_for_the_union_tables():
    t, p = _pair(2, 300, 200, 6, 0.3)
    graph = micro_pass.micro_graph(t, p, parts={"bcubed", "coverage"}, method="exact")
    deps = dict(graph.__dask_graph__().dependencies)
    union = set(_keys(graph, "_union_tables"))
    walking = _keys(graph, "_task")
    assert len(walking) == 2 * 16
    waiting = [k for k in walking if set(deps[k]) & union]
    assert len(waiting) == 16  # the closure half; the coverage half starts right after the plan
    assert len(_keys(micro_pass.micro_graph(t, p, parts={"bcubed"}, method="exact"), "_task")) == 16


def test_the_shorter_axis_pass_is_queued_behind_the_longer_one():
    t, p = _pair(3, 4000, 300, 5, 0.2)
    graph = micro_pass.micro_graph(t.chunk({"row": 1000}), p.chunk({"row": 1000}), parts={"coverage"},
                                   method="exact")
    layers = graph.__dask_graph__().layers
    prio = {}
    for layer in layers.values():
        for key in layer:
            prio[str(key[0] if isinstance(key, tuple) else key)] = (layer.annotations or {}).get("priority", 0)
    counts = [k for k in prio if k.startswith("signature_counts")]
    assert sorted(prio[k] for k in counts) == [-1] + [0] * (len(counts) - 1)  # 4 row blocks, 1 column block


@pytest.mark.parametrize("seed", range(4))
def test_packed_masks_count_the_same_signatures_for_any_byte_cut(seed):
    from daskbicl.kernels.micro.memberships import merge_memberships, pack_masks

    rng = np.random.default_rng(seed)
    for m in (1, 7, 8, 9, 63, 1001):
        k, l_ = int(rng.integers(0, 5)), int(rng.integers(1, 6))
        t, p = rng.random((k, m)) < rng.random(), rng.random((l_, m)) < rng.random()
        tp, pp, items = pack_masks(t, p)
        assert tp.dtype == pp.dtype == np.uint8 and tp.shape[1] == pp.shape[1] == len(items) == -(-m // 8)
        assert int(items.sum()) == m
        cuts = sorted({0, len(items), *rng.integers(0, len(items) + 1, 3).tolist()})
        parts = [signature_counts(tp[:, a:b], pp[:, a:b], items[a:b]) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        merged, whole = merge_memberships(*parts), signature_counts(t, p)
        assert merged.lists() == whole.lists() and merged.cnt.tolist() == whole.cnt.tolist()
        assert np.array_equal(merged.gram, whole.gram) and merged.n_items == whole.n_items == m


def test_packed_blocks_of_another_dtype_are_refused():
    from daskbicl.errors import InputError

    with pytest.raises(InputError, match="uint8 array of packed bits"):
        signature_counts(np.zeros((2, 3), bool), np.zeros((1, 3), np.uint8), np.full(3, 8, np.uint8))


@pytest.mark.slow
def test_in_memory_masks_travel_packed_to_a_cluster(client):
    rng = np.random.default_rng(5)
    n = 5 * micro_pass.SPREAD_MIN + 3  # not a whole number of bytes
    t, p = rng.random((3, n)) < 0.1, rng.random((4, n)) < 0.1
    from dask.array import from_array

    assert micro_pass._shipped(t, p) and not micro_pass._shipped(from_array(t), p)
    graph = micro_pass.memberships_graph(t, p)
    counts = [v for k, v in dict(graph.__dask_graph__()).items() if str(k).startswith("signature_counts")]
    assert len(counts) > 1
    for block in counts:  # what each counting task is given: the two packed masks and the items per byte
        args = [getattr(a, "value", a) for a in block.args]
        assert [np.asarray(a).dtype for a in args] == [np.uint8] * 3
    merged, whole = client.compute(graph).result(), signature_counts(t, p)
    assert merged.lists() == whole.lists() and merged.cnt.tolist() == whole.cnt.tolist()
    assert np.array_equal(merged.gram, whole.gram) and merged.n_items == whole.n_items == n


def _lists_in(ptr, el, cnt):
    return [(tuple(el[a:b].tolist()), int(c)) for a, b, c in zip(ptr[:-1], ptr[1:], cnt)]


@pytest.mark.parametrize("collide", [False, True])
def test_merging_identical_lists_keeps_the_first_order_and_every_count(collide, monkeypatch):
    """The merge of every membership pass, against a dict of the lists (brute force); with hashes that
    collide (every list of a length hashed alike), lists stay apart but no count is lost or moved."""
    from daskbicl.kernels.micro import memberships

    if collide:
        monkeypatch.setattr(memberships, "_words", lambda n: np.zeros(n, np.uint64))
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(0, 80))
        lengths = rng.integers(0, 4, n)
        el = [np.sort(rng.choice(5, k, replace=False)) for k in lengths]
        ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        flat = np.concatenate(el).astype(np.int32) if n else np.zeros(0, np.int32)
        cnt = rng.integers(1, 9, n).astype(np.int64)
        got = _lists_in(*memberships._dedupe(ptr, flat, cnt, 5))
        want: dict = {}
        for lst, c in _lists_in(ptr, flat, cnt):
            if lst:
                want[lst] = want.get(lst, 0) + c
        if not collide:
            assert got == list(want.items())  # first-occurrence order, counts summed
        else:
            merged: dict = {}
            for lst, c in got:
                merged[lst] = merged.get(lst, 0) + c
            assert merged == want and all(lst for lst, _ in got)


def _chunked_memberships(seed: int, n_chunks: int):
    rng = np.random.default_rng(seed)
    k, l_ = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    n = int(rng.integers(n_chunks, 60))
    t, p = rng.random((k, n)) < 0.4, rng.random((l_, n)) < 0.4
    cuts = np.sort(rng.choice(np.arange(1, n), n_chunks - 1, replace=False)) if n_chunks > 1 else []
    bounds = [0, *cuts, n]
    return t, p, [signature_counts(t[:, a:b], p[:, a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


@pytest.mark.parametrize("collide", [False, True])
def test_the_partitioned_merge_is_the_one_merge_array_for_array(collide, monkeypatch):
    """The last membership merge on a cluster runs as hash partitions side by side, put back in order by one
    task: the same arrays as the one merge, for any number of partitions, also when hashes collide."""
    from daskbicl.kernels.micro import memberships

    if collide:  # every list of one length hashed alike: groups that cannot merge stay apart, in both ways
        monkeypatch.setattr(memberships, "_words", lambda n: np.zeros(n, np.uint64))
    for seed in range(40):
        t, p, chunks = _chunked_memberships(seed, 1 + seed % 4)
        whole = memberships.merge_memberships(*chunks)
        for n_parts in (1, 2, 3, 5):
            joined = memberships.join_parts(*(memberships.merge_part(i, n_parts, *chunks) for i in range(n_parts)))
            for name in ("ptr", "el", "cnt", "gram"):
                got, want = getattr(joined, name), getattr(whole, name)
                assert got.dtype == want.dtype and np.array_equal(got, want), (seed, n_parts, name)
            assert joined.n_items == whole.n_items == t.shape[1]
        if not collide:
            assert whole.lists() == signature_counts(t, p).lists()


def _annotations(graph) -> list[dict]:
    """Every layer's annotations."""
    return [dict(layer.annotations or {}) for layer in graph.__dask_graph__().layers.values()]


@pytest.mark.slow
def test_on_a_cluster_nothing_is_placed_the_work_is_split_for_the_threads_and_the_values_stay(spread_case, client):
    """No task of the micro graph names a worker or a priority (the shorter axis's pass aside); the walk is
    split into at least four tasks per worker thread; the values are the in-process ones."""
    from daskbicl.scheduling import in_process

    threads = sum(client.nthreads().values())
    with dask.config.set({"daskbicl.micro_tasks": 1}):
        assert micro_pass.n_tasks() == 4 * threads
    t, p = spread_case
    graph = micro_pass.micro_graph(t, p, parts={"bcubed", "coverage", "overlap"}, method="exact")
    for given in _annotations(graph):
        assert not {"workers", "allow_other_workers", "resources"} & set(given), given
        assert given.get("priority", 0) in (0, -1), given
    assert len(_keys(graph, "_task")) == 2 * max(16, 4 * threads)
    distributed = repr(client.compute(graph).result())
    with in_process():  # no client: one merge
        plain = micro_pass.micro_graph(t, p, parts={"bcubed", "coverage", "overlap"}, method="exact")
        assert not _keys(plain, "merge_part")
        assert repr(dask.compute(plain, scheduler="sync")[0]) == distributed
