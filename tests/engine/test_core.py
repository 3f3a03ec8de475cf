"""One engine: every counting pass is a ChunkPass record run by engine.core.counting_pass.

* :func:`~daskbicl.engine.core.counting_pass` equals the whole-array
  computation for any chunking, numpy or dask inputs, in process (eager)
  and on a real LocalCluster;
* the passes a provider record declares are the ones its graph runs (their
  chunk kernels and combine steps are the graph's tasks), for every
  registered provider and every pair of input kinds it takes; the one
  engine function (:func:`~daskbicl.engine.provider_graph.provider_graph`)
  gives the same table in process, on a cluster and from counted tables;
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
from daskbicl.engine.blocks import SUM_BY_LABEL
from daskbicl.engine.contingency_pass import COUNT_LABEL_PAIRS
from daskbicl.engine.core import ChunkPass, counting_pass, eager
from daskbicl.engine.label_memberships import LABEL_MEMBERSHIPS
from daskbicl.engine.provider_graph import COUNT_MEMBERSHIPS, SOURCES, provider_graph, tables_graph
from daskbicl.measures.plan import ScorePlan
from daskbicl.measures.registry import PROVIDERS, REGISTRY, Provider

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


#: The chunk kernel of every counting pass the engine has (engine ChunkPass records).
CHUNK_KERNELS = {p.chunk.__name__ for p in (COUNT_LABEL_PAIRS, INTERSECT_MASKS, COUNT_MEMBERSHIPS, SUM_BY_LABEL,
                                          LABEL_MEMBERSHIPS)}


def _inputs(kind: str, rng):
    if kind == "partition":
        return daskbicl.partition(rng.integers(0, 3, 60), rng.integers(0, 2, 40))
    return daskbicl.biclustering(rng.random((3, 60)) < 0.4, rng.random((3, 40)) < 0.4)


CASES = [(name, kt, kp) for name, record in sorted(PROVIDERS.items())
         for kt in record.kinds for kp in record.kinds]


@pytest.mark.parametrize("provider, truth_kind, pred_kind", CASES)
def test_a_provider_graph_runs_the_passes_its_record_declares(provider, truth_kind, pred_kind):
    """Every registered provider, on every pair of kinds it accepts: the graph's passes are the declared ones."""
    rng = np.random.default_rng(3)
    truth = _inputs(truth_kind, rng).chunk({"row": 16, "col": 16})  # dask-backed: a graph is built
    pred = _inputs(pred_kind, rng).chunk({"row": 16, "col": 16})
    reading = [m.name for m in REGISTRY.values() if m.provider == provider]  # their options: every part counted
    plan = ScorePlan.build(truth, pred, measures=reading, tables=[provider])
    names = _task_names(plan.graphs()[plan.keys[provider]])
    record = PROVIDERS[provider]
    used = [p for p in record.passes if {p.chunk.__name__, p.combine.__name__} <= names]
    assert used, f"none of {[p.name for p in record.passes]} in the graph's tasks {sorted(names)}"
    undeclared = (names & CHUNK_KERNELS) - {p.chunk.__name__ for p in record.passes}
    assert not undeclared, f"{provider} runs passes its record does not declare: {sorted(undeclared)}"
    # built by the engine from the fields: the declared source, or the contingency tables
    source = SOURCES.get(record.tables)  # one co-clustering: counted by label where the source says how
    both = truth_kind == pred_kind == "partition" and (record.from_tables is not None or (
        source is not None and source.from_contingency is not None))
    one = source is not None and source.by_label is not None and (truth_kind == "partition") != (
        pred_kind == "partition")
    want = COUNT_LABEL_PAIRS if both else source.by_label if one else source.spec
    assert want in used


@pytest.mark.parametrize("fields, message", [
    ({"tables": "masks"}, "tables and finalize"),
    ({"finalize": len}, "tables and finalize"),
    ({}, "neither tables nor from_tables"),
    ({"tables": "rows", "finalize": len}, "unknown tables 'rows'"),
])
def test_a_provider_record_that_declares_no_way_to_its_table_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        Provider(name="broken", kinds=("partition",), **fields)


def test_the_engine_builds_the_same_table_in_process_and_on_a_cluster(client):
    """provider_graph eagerly (no graph), as a graph on the LocalCluster, and from counted tables: equal tables."""
    rng = np.random.default_rng(11)
    truth = daskbicl.partition(rng.integers(0, 4, 90), rng.integers(0, 3, 70))
    pred = daskbicl.biclustering(rng.random((3, 90)) < 0.4, rng.random((3, 70)) < 0.4)
    for name in ("bicluster", "recovery"):  # the mask pass; the membership signatures (and a bound option)
        record = PROVIDERS[name]
        t, p = (x.chunk({"row": 20, "col": 20}) for x in (truth, pred))
        with eager():  # a co-clustering's block masks are lazy even here: what stays lazy runs in this process
            here = dask.compute(provider_graph(record, truth, pred, {}), scheduler="sync")[0]
        there = client.compute(provider_graph(record, t, p, {})).result()
        assert repr(here) == repr(there), name
    rows_cols = daskbicl.contingency(truth, truth)
    from_tables = dask.compute(tables_graph(PROVIDERS["bicluster"], rows_cols.row_table, rows_cols.col_table, {}))[0]
    with eager():
        counted = provider_graph(PROVIDERS["bicluster"], truth, truth, {})
    assert repr(from_tables) == repr(counted)


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


def test_contributing_shows_the_bicluster_provider_as_registered():
    """CONTRIBUTING.md's provider example, run, is the registered record (every field)."""
    import dataclasses
    import re

    from daskbicl.kernels.bicluster.mask_counting import BiclusterTables, tables_from_partitions

    text = (ENGINE.parent.parent / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Adding a counting pass"):]
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "Provider(" in b]
    shown = eval(block, {"Provider": Provider, "BiclusterTables": BiclusterTables,
                         "tables_from_partitions": tables_from_partitions})
    real = PROVIDERS[shown.name]
    for field in dataclasses.fields(Provider):
        if field.name != "description":
            assert getattr(shown, field.name) == getattr(real, field.name), field.name


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
