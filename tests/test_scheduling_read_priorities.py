"""Every door's graph reads a store in block order, annotated where the store's arrays are built.

The reads of a store are built under ``dask.annotate(priority=read_order)``
(:func:`daskbicl.scheduling.read_order`, public dask API; no graph is
rebuilt on the way to the cluster).  A scheduler plugin on the real
LocalCluster records the ``priority`` annotations of every graph the
scheduler receives; each door (:func:`daskbicl.score`, the accessor,
:func:`daskbicl.contingency`, :func:`daskbicl.tradeoff`,
:func:`daskbicl.null`, a batch manifest) scores stores on disk, and the
read of block k must arrive with priority -k, every other task with none
(or the one its pass gives it with ``dask.annotate``): in the graphs that
count tables and in those that check an input while it is opened.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from distributed import Client
from distributed.diagnostics.plugin import SchedulerPlugin

import daskbicl
from daskbicl.batch import run_batch


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


def _is_read(key) -> bool:
    """A task of a store's read (xarray names the array ``open_dataset-<variable>-...``)."""
    return isinstance(key, tuple) and isinstance(key[-1], int) and str(key[0]).startswith("open_dataset-")


def _check(graphs: list) -> None:
    """Every graph that reads blocks carries the read priorities on its reads, and no other task has -k.

    That holds the graphs that count tables (the providers') and the checks
    computed while an input is opened (``daskbicl.io`` through
    :func:`daskbicl.scheduling.compute`).
    """
    counted = [g for g in graphs if any(map(_counting, g))]
    assert counted, f"no counting graph among the {len(graphs)} graphs that reached the cluster"
    reading = [g for g in graphs if any(_is_read(key) and key[-1] > 0 for key in g)]
    assert all(g in reading for g in counted), "a counting graph reads no later block of a store"
    for seen in reading:
        _check_graph(seen)


#: Priorities a pass gives its own single tasks (``dask.annotate``): the micro planning's estimates, and the
#: shorter axis's membership pass; None: no annotation (the scheduler's default, 0).
DECLARED = {None, 0, -1}


def _check_graph(seen: dict) -> None:
    reads = {key for key in seen if _is_read(key)}
    assert any(key[-1] > 0 for key in reads), f"no read of a later block among {sorted(map(str, seen))[:5]}"
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


def test_the_benchmark_runs_quick():
    """benchmarks/read_priorities.py --quick: the preds scored on a cluster, every read task run once."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "benchmarks/read_priorities.py", "--quick"], capture_output=True,
                         text=True, timeout=600, env=env, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "each chunk once: True" in out.stdout, out.stdout


def test_the_graph_size_benchmark_runs_quick():
    """benchmarks/graph_size.py --quick: a pair of 10^9-label stores (metadata only) submitted to a scheduler
    without workers, its tasks counted: fewer read tasks than stored chunks when sized for few threads, and
    none for the pred."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "benchmarks/graph_size.py", "--quick", "--threads", "8"],
                         capture_output=True, text=True, timeout=600, env=env, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    row = next(line.split() for line in out.stdout.splitlines() if line.strip().startswith("branch"))
    reads = int(row[2].replace(",", ""))
    # the truth's read tasks: at least 4 per thread, fewer than its 239 stored chunks; the pred's chunks are
    # read by the counting tasks themselves (scheduling.read_inline), so they have no read task
    assert 4 * 8 <= reads < 239


class _Annotations(SchedulerPlugin):
    """Keeps every annotation of every graph the scheduler receives."""

    def __init__(self):
        self.name = f"annotations-{uuid.uuid4().hex}"
        self.seen: list = []

    def update_graph(self, scheduler, *, tasks, annotations, **kwargs):
        self.seen.append({kind: dict(values) for kind, values in annotations.items()})


def test_an_annotated_task_keeps_its_annotations_and_lends_them_to_no_other(client):
    """``engine.core.annotated`` (``dask.annotate`` around one task's call, its inputs passed directly): the
    scheduler receives the annotations on that task alone, whether a later task takes it directly or in a list
    (dask then flattens the graph into one layer of per-key annotations)."""
    from daskbicl.engine.core import annotated, eager, task

    worker = sorted(client.nthreads())[-1]
    read = task(np.add)(np.arange(3), 1)
    own = annotated(lambda: task(np.sum)(read), priority=5, workers=[worker], allow_other_workers=True)
    both = task(lambda b, c: (int(b[0]), int(np.sum(c[0]))))([own], [read])
    direct = task(lambda b, c: (int(b), int(np.sum(c))))(own, read)
    plugin = _Annotations()
    client.register_plugin(plugin)
    try:
        for graph in (both, direct):
            assert client.compute(graph).result() == (6, 6)
            seen = client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins[plugin.name].seen[-1])
            assert seen["priority"][own.key] == 5 and seen["workers"][own.key] == [worker]
            assert seen["allow_other_workers"][own.key] is True
            assert read.key not in seen["priority"] and read.key not in seen["workers"]  # lent to no other task
    finally:
        client.unregister_scheduler_plugin(plugin.name)
    with eager():  # a value computed at once: no graph, no annotation
        assert annotated(lambda: task(np.sum)(np.arange(4)), priority=5) == 6


def test_arrays_of_opened_stores_fuse_in_a_users_computation(tmp_path):
    """dask fuses blockwise layers and takes the ``max`` of their priorities: the read annotation must be
    comparable (a plain function raised ``TypeError`` in any computation of two stores' arrays together)."""
    import dask

    import daskbicl
    from daskbicl.scheduling import READ_ORDER

    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 5, 3000), rng.integers(0, 3, 700)
    for name in ("a.zarr", "b.zarr"):
        daskbicl.save(daskbicl.partition(rows, cols), tmp_path / name, chunk=500)
    a, b = daskbicl.open(tmp_path / "a.zarr"), daskbicl.open(tmp_path / "b.zarr")
    both = a.row_labels.data.astype("int64") + 2 * b.row_labels.data.astype("int64")
    with dask.config.set(scheduler="synchronous"):
        assert int(both.sum().compute()) == 3 * int(rows.sum())
    assert max([READ_ORDER, READ_ORDER, -1]) is READ_ORDER  # what dask's fusion does with the annotations
