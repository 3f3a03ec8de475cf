"""One engine: every counting pass is a ChunkPass record run by engine.core.counting_pass.

* :func:`~daskbicl.engine.core.counting_pass` equals the whole-array
  computation for any chunking, numpy or dask inputs, in process (eager)
  and on a real LocalCluster;
* the passes a provider record declares are the ones its graph runs (their
  chunk kernels and combine steps are the graph's tasks);
* no engine module builds a map + tree-reduce of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest

import daskbicl
from daskbicl.engine.bicluster_pass import INTERSECT_MASKS
from daskbicl.engine.contingency_pass import COUNT_LABEL_PAIRS
from daskbicl.engine.core import ChunkPass, counting_pass, eager
from daskbicl.measures.plan import ScorePlan
from daskbicl.measures.registry import PROVIDERS

ENGINE = Path(daskbicl.__file__).resolve().parent / "engine"


def _histogram(size, x, y):
    return np.bincount(x * size + y, minlength=size * size)


def _add(*parts):
    return sum(parts[1:], parts[0])


JOINT = ChunkPass("joint-histogram", chunk=_histogram, combine=_add)


@pytest.mark.parametrize("seed", range(4))
def test_counting_pass_equals_the_whole_array(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    x, y = rng.integers(0, 5, n), rng.integers(0, 5, n)
    want = _histogram(5, x, y)
    chunk = int(rng.integers(1, n + 1))
    with dask.config.set({"daskbicl.chunk": chunk}):
        with eager():
            np.testing.assert_array_equal(counting_pass(JOINT, (x, y), 5, split_every=2), want)
        lazy = counting_pass(JOINT, (x, y), 5, split_every=3)
        assert dask.is_dask_collection(lazy)
        np.testing.assert_array_equal(dask.compute(lazy, scheduler="sync")[0], want)
    dx = da.from_array(x, chunks=max(1, n // 3))  # a dask array's own chunks; y is cut to match
    np.testing.assert_array_equal(dask.compute(counting_pass(JOINT, (dx, y), 5), scheduler="sync")[0], want)


def test_counting_pass_on_a_cluster(client):
    rng = np.random.default_rng(7)
    x = da.from_array(rng.integers(0, 6, 5000), chunks=700)
    y = da.from_array(rng.integers(0, 6, 5000), chunks=1100)
    got = client.compute(counting_pass(JOINT, (x, y), 6, split_every=2)).result()
    np.testing.assert_array_equal(got, _histogram(6, x.compute(), y.compute()))


def _task_names(graph) -> set[str]:
    """The function names of a graph's tasks (keys are ``name-<uuid>``); a tuple of graphs: all of them."""
    graphs = graph if isinstance(graph, tuple) else (graph,)
    keys = [key for g in graphs for key in dict(g.__dask_graph__())]
    return {str(key[0] if isinstance(key, tuple) else key).rsplit("-", 5)[0] for key in keys}


@pytest.mark.parametrize("kind, provider", [("partition", "partition"), ("biclustering", "bicluster")])
def test_a_provider_graph_runs_the_passes_its_record_declares(kind, provider):
    rng = np.random.default_rng(3)
    if kind == "partition":
        make = lambda: daskbicl.partition(rng.integers(0, 3, 60), rng.integers(0, 2, 40))  # noqa: E731
    else:
        make = lambda: daskbicl.biclustering(rng.random((3, 60)) < 0.4, rng.random((3, 40)) < 0.4)  # noqa: E731
    truth, pred = (make().chunk({"row": 16, "col": 16}) for _ in range(2))  # dask-backed: a graph is built
    plan = ScorePlan.build(truth, pred, measures=[], tables=[provider])
    graph = plan.graphs()[plan.keys[provider]]
    names = _task_names(graph)
    record = PROVIDERS[provider]
    used = [p for p in record.passes if {p.chunk.__name__, p.combine.__name__} <= names]
    assert used, f"none of {[p.name for p in record.passes]} in the graph's tasks {sorted(names)}"
    assert (INTERSECT_MASKS if kind == "biclustering" else COUNT_LABEL_PAIRS) in used


#: Engine modules that still build a map + tree-reduce themselves: none (the micro-object membership pass is
#: the ChunkPass micro_pass.COUNT_MEMBERSHIPS since round 3).
OWN_REDUCTIONS: set[str] = set()


@pytest.mark.parametrize("path", sorted(ENGINE.glob("*.py")), ids=lambda p: p.name)
def test_only_the_core_builds_map_and_tree_reduce(path):
    if path.name in {"core.py"} | OWN_REDUCTIONS:
        return
    calls = {node.func.id for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name)}
    assert not calls & {"aligned_blocks", "map_blocks_delayed", "tree_reduce"}, path.name


def test_the_exception_list_is_still_needed():
    for name in OWN_REDUCTIONS:
        text = (ENGINE / name).read_text()
        assert "tree_reduce(" in text, f"{name} no longer reduces on its own: take it off OWN_REDUCTIONS"


@pytest.mark.parametrize("lazy", [False, True])
def test_the_micro_membership_pass_is_a_chunk_pass(lazy):
    """The micro graph counts its memberships with COUNT_MEMBERSHIPS through counting_pass, as any pass."""
    from daskbicl.engine.micro_pass import COUNT_MEMBERSHIPS, memberships_graph, micro_graph
    from daskbicl.kernels.micro.memberships import signature_counts

    rng = np.random.default_rng(11)
    t, p = rng.random((3, 5000)) < 0.2, rng.random((4, 5000)) < 0.2
    want = signature_counts(t, p)
    kernels = {COUNT_MEMBERSHIPS.chunk.__name__, COUNT_MEMBERSHIPS.combine.__name__}
    with dask.config.set({"daskbicl.chunk": 700}):
        args = (da.from_array(t, chunks=(3, 900)), p) if lazy else (t, p)
        graph = memberships_graph(*args)
        assert kernels <= _task_names(graph)
        got = dask.compute(graph, scheduler="sync")[0]
    assert got.lists() == want.lists() and got.cnt.tolist() == want.cnt.tolist()
    assert np.array_equal(got.gram, want.gram)
    pair = [daskbicl.biclustering(rng.random((3, 60)) < 0.4, rng.random((3, 40)) < 0.4).chunk({"row": 16})
            for _ in range(2)]
    assert kernels <= _task_names(micro_graph(*pair, parts={"coverage", "bcubed"}))
