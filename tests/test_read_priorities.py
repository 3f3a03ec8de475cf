"""Every door's graph carries the same read priorities, set in one place (scheduling.read_first).

A scheduler plugin on the real LocalCluster records the ``priority``
annotations of every graph the scheduler receives; each door
(:func:`daskbicl.score`, the accessor, :func:`daskbicl.contingency`,
:func:`daskbicl.tradeoff`, :func:`daskbicl.null`, a batch manifest) scores
stores on disk, and the reads of chunk k must arrive with priority -k, every
other task with 0: in the graphs that count tables and in those that check
an input while it is opened (:func:`daskbicl.scheduling.compute`).
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from distributed import Client
from distributed.diagnostics.plugin import SchedulerPlugin

import daskbicl
from daskbicl.batch import run_batch
from daskbicl.engine.provider_graph import read_first


class _Priorities(SchedulerPlugin):
    """Keeps, per graph received, the ``priority`` annotation of each task (None: a task without one)."""

    def __init__(self):
        self.name = f"read-priorities-{uuid.uuid4().hex}"
        self.seen: list = []

    def update_graph(self, scheduler, *, tasks, annotations, **kwargs):
        given = annotations.get("priority", {})
        self.seen.append({key: given.get(key) for key in tasks})


@pytest.fixture
def priorities(client):
    """``read()`` -> per graph sent to the cluster since the fixture started, key -> priority annotation."""
    plugin = _Priorities()
    client.register_plugin(plugin)

    def read() -> dict:
        return client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.plugins[plugin.name].seen))

    yield read
    client.unregister_scheduler_plugin(plugin.name)


def _stores(tmp_path, kind: str):
    rng = np.random.default_rng(5)
    paths = []
    for role in ("truth", "pred"):
        if kind == "partition":
            ds = daskbicl.partition(rng.integers(0, 3, 400), rng.integers(0, 3, 300))
        else:
            ds = daskbicl.biclustering(rng.random((3, 400)) < 0.4, rng.random((3, 300)) < 0.4)
        path = str(tmp_path / f"{role}-{kind}.zarr")
        daskbicl.save(ds.chunk({"row": 64, "col": 64}), path)
        paths.append(path)
    return paths


#: The chunk kernels of the counting passes (engine ChunkPass records): a graph with one of them counts tables.
COUNTING = ("_count_block", "intersect_counts", "signature_counts")


def _counting(key) -> bool:
    name = str(key[0] if isinstance(key, tuple) else key)
    return name.startswith(COUNTING)


def _check(graphs: list) -> None:
    """Every graph that reads chunks carries the read priorities on every task.

    That holds the graphs that count tables (the providers') and the checks
    computed while an input is opened (``daskbicl.io`` through
    :func:`daskbicl.scheduling.compute`).
    """
    counted = [g for g in graphs if any(map(_counting, g))]
    assert counted, f"no counting graph among the {len(graphs)} graphs that reached the cluster"
    reading = [g for g in graphs if any(isinstance(key, tuple) and isinstance(key[-1], int) and key[-1] > 0
                                        for key in g)]
    assert len(reading) > len(counted), "no graph but the counting ones read chunks: the validation is not checked"
    for seen in reading:
        _check_graph(seen)


#: Priorities a pass declares for its single tasks (kept by read_first): the
#: shorter axis's membership pass.
DECLARED = {0, -1}


def _check_graph(seen: dict) -> None:
    reads = {key: p for key, p in seen.items() if isinstance(key, tuple) and isinstance(key[-1], int)}
    assert any(key[-1] > 0 for key in reads), f"no read of a later chunk among {sorted(map(str, seen))[:5]}"
    wrong = {key: p for key, p in seen.items() if (p != -key[-1] if key in reads else p not in DECLARED)}
    assert not wrong, f"{len(wrong)} tasks without their read priority, e.g. {list(wrong.items())[:3]}"


def _door_score(t, p, tmp_path):
    daskbicl.score(t, p)


def _door_accessor(t, p, tmp_path):
    daskbicl.open(t, "truth").bicl.score(p)


def _door_contingency(t, p, tmp_path):
    daskbicl.contingency(t, p)


def _door_null(t, p, tmp_path):
    daskbicl.null(t, p, measures="ari_rows", n=9, seed=0)


def _door_tradeoff(t, p, tmp_path):
    daskbicl.tradeoff(t, p, truth_bicluster=0)


def _door_batch(t, p, tmp_path):
    manifest = tmp_path / "m.toml"
    manifest.write_text(f'[truth]\na = "{t}"\n[pred]\nb = "{p}"\n[[pairs]]\ntruth = "a"\npred = "b"\n'
                        'measures = ["fmeasure"]\n')
    report = run_batch(str(manifest), str(tmp_path / "r.sqlite"), client=Client.current())
    assert not report.failed, report


DOORS = [("partition", _door_score), ("biclustering", _door_score), ("biclustering", _door_accessor),
         ("partition", _door_contingency), ("partition", _door_null), ("biclustering", _door_tradeoff),
         ("biclustering", _door_batch)]


@pytest.mark.parametrize("kind, door", DOORS, ids=[f"{d.__name__[6:]}-{k}" for k, d in DOORS])
def test_every_door_sends_its_reads_in_chunk_order(kind, door, tmp_path, priorities):
    truth, pred = _stores(tmp_path, kind)
    door(truth, pred, tmp_path)
    _check(priorities())


def test_read_first_keeps_the_value_and_annotates_every_task():
    import dask
    import dask.array as da

    x = da.arange(100, chunks=10)
    graph = dask.delayed(int)(x.sum())
    annotated = read_first(graph)
    assert dask.compute(annotated, scheduler="sync")[0] == 4950
    layers = annotated.__dask_graph__().layers.values()
    assert all(callable(layer.annotations["priority"]) for layer in layers)
    assert read_first(3) == 3  # a value counted in process is not a graph


def test_the_benchmark_runs_quick():
    """benchmarks/read_priorities.py --quick: both variants computed, their tables asserted equal inside."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "benchmarks/read_priorities.py", "--quick"], capture_output=True,
                         text=True, timeout=600, env=env, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ratio annotated / plain" in out.stdout


def test_a_layer_with_its_own_priority_keeps_it():
    """The micro-object planning annotates its estimates (longest first); read_first must not overwrite them."""
    import dask
    import dask.array as da

    x = da.ones(40, chunks=10)
    with dask.annotate(priority=7):
        y = (x + 1).sum()
    annotated = read_first(y)
    priority = {key: layer.annotations["priority"](key)
                for layer in annotated.__dask_graph__().layers.values() for key in layer}
    assert priority[x.name, 3] == -3  # a read: its chunk order
    own = {key for key in priority if not isinstance(key, tuple) or not isinstance(key[-1], int)}
    assert own and all(priority[key] == 7 for key in own)  # the sum's last steps: the layer's own
    assert read_first(annotated) is annotated
    assert annotated.compute() == y.compute() == 80


class _Annotations(SchedulerPlugin):
    """Keeps every annotation of every graph the scheduler receives."""

    def __init__(self):
        self.name = f"annotations-{uuid.uuid4().hex}"
        self.seen: list = []

    def update_graph(self, scheduler, *, tasks, annotations, **kwargs):
        self.seen.append({kind: dict(values) for kind, values in annotations.items()})


def test_a_declared_task_keeps_its_annotations_and_lends_them_to_no_other(client):
    """``dask.annotate`` can give a Delayed's annotations to the tasks it reads as well, and the layer of a
    later task overrides them (dask 2026.8); ``scheduling.declare`` puts them on the one task, and the
    scheduler receives them so through read_first, whether dask keeps the task's layers or flattens them."""
    from daskbicl.engine.core import task
    from daskbicl.scheduling import declare

    worker = sorted(client.nthreads())[-1]
    read = task(np.add)(np.arange(3), 1)
    own = declare(task(np.sum)([read]), priority=5, workers=[worker], allow_other_workers=True)
    # lists of Delayed: dask flattens the graph into one layer of per-key annotations (the declared layer goes)
    both = task(lambda b, c: (int(b[0]), int(np.sum(c[0]))))([own], [read])
    direct = task(lambda b, c: (int(b), int(np.sum(c))))(own, read)  # the declared layer stays, a later one holds both
    assert read_first(direct).compute(scheduler="sync") == (6, 6)
    plugin = _Annotations()
    client.register_plugin(plugin)
    try:
        for graph in (both, direct):
            assert client.compute(read_first(graph)).result() == (6, 6)
            seen = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins[plugin.name].seen[-1])
            assert seen["priority"][own.key] == 5 and seen["workers"][own.key] == [worker]
            assert seen["allow_other_workers"][own.key] is True
            assert seen["priority"][read.key] == 0 and read.key not in seen["workers"]  # lent to no other task
    finally:
        client.unregister_scheduler_plugin(plugin.name)
    assert declare(3, priority=5) == 3  # a value (eager): unchanged
