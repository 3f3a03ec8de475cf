"""Small inputs and the shell (issue 13): in-process scoring, the CLI's scheduler, a light import.

* Small in-memory inputs are scored in this process without a task graph
  (``daskbicl.in_process_bytes``), with the same values, to the last bit, as
  the graph on the threaded scheduler and on a LocalCluster — for every kind
  of input pair, label form and unassigned policy — and with a Client
  active no task reaches the workers.
* ``daskbicl score`` computes in this process by default, ``--workers 0``
  too, ``--workers N`` on a local cluster; ``import daskbicl`` and a shell
  score never import ``distributed``.
* ``import daskbicl`` leaves the tradeoff space, the null model, batch and
  plotting for their first use, and every public name still resolves.
* The MI's grouped sums are exact to rounding, symmetric and 1 for relabelings.

Speed itself is measured in ``benchmarks/latency.py`` (run here in --quick mode).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pytest

import daskbicl
from daskbicl.engine.core import any_lazy, eager, task
from daskbicl.errors import DaskbiclError, LabelError
from daskbicl.kernels.coclustering import cocluster_scores as K
from daskbicl.kernels.coclustering.contingency import Table
from daskbicl.measures import ScorePlan
from daskbicl.measures.plan import scored_in_process

ROOT = Path(__file__).resolve().parents[1]
#: Every measure that scores two co-clusterings (the bicluster and micro ones through the blocks).
ALL = [n for n in daskbicl.MEASURES if n not in ("goodness_space", "fmeasure_space", "dice_space", "jaccard_space")]
BICLUSTER = [n for n, m in daskbicl.MEASURES.items() if m.family in ("bicluster", "micro")]
GRAPH = {"daskbicl.in_process_bytes": 0, "scheduler": "threads"}


def _plain(result: dict) -> dict:
    return {k: tuple(v) if hasattr(v, "_asdict") else v for k, v in result.items()}


def _both_ways(truth, pred, **kwargs) -> tuple[dict, dict]:
    """(in process, task graph on the threaded scheduler)."""
    with dask.config.set({"daskbicl.in_process_bytes": 1 << 40}):
        plan = ScorePlan.build(truth, pred, kwargs.pop("measures", None), **kwargs)
        assert scored_in_process([plan])
        here = _plain(plan.compute())
    with dask.config.set(GRAPH):
        assert not scored_in_process([plan])
        graph = _plain(plan.compute())
    return here, graph


def _pair(rng, n=60, m=25, k=4):
    z, zp = rng.integers(0, k, n), rng.integers(0, k + 1, n)
    w, wp = rng.integers(0, 3, m), rng.integers(0, 2, m)
    return (z, w), (zp, wp)


# --------------------------------------------------------------------------- in process == graph


def test_coclusterings_in_process_equal_the_graph_for_every_measure():
    rng = np.random.default_rng(0)
    truth, pred = _pair(rng)
    here, graph = _both_ways(truth, pred, measures=ALL)
    assert here == graph


def test_a_coclustering_against_a_biclustering_in_process():
    """The case that broke the first eager draft: blocks of a co-clustering are lazy masks built on the way."""
    rng = np.random.default_rng(1)
    (z, w), _ = _pair(rng)
    rows = rng.random((3, len(z))) < 0.4
    cols = rng.random((3, len(w))) < 0.5
    bic = daskbicl.biclustering(rows, cols)
    for truth, pred in ((bic, (z, w)), ((z, w), bic)):
        here, graph = _both_ways(truth, pred, measures=BICLUSTER)
        assert here == graph


def test_biclusterings_and_an_empty_pred_in_process():
    rng = np.random.default_rng(2)
    t = daskbicl.biclustering(rng.random((3, 50)) < 0.3, rng.random((3, 20)) < 0.4)
    p = daskbicl.biclustering(rng.random((4, 50)) < 0.3, rng.random((4, 20)) < 0.4)
    here, graph = _both_ways(t, p)
    assert here == graph
    empty = daskbicl.biclustering(np.zeros((0, 50), bool), np.zeros((0, 20), bool))
    here, graph = _both_ways(t, empty)
    assert here == graph and here["micro_ce"] == 1.0


@pytest.mark.parametrize("policy", ["cluster", "singleton"])
def test_label_forms_and_unassigned_policies_in_process(policy):
    names = np.array(["a", "b", None, "c", "a", "b", "c", None, "a", "b"], dtype=object)
    pred = np.array([1.0, 2.0, 2.0, np.nan, 1.0, 3.0, 3.0, 1.0, np.nan, 2.0])
    cols, cols_p = np.array([7, -1, 7, 9]), np.array([0, 0, 1, 1])
    here, graph = _both_ways((names, cols), (pred, cols_p), measures=ALL, unassigned=policy)
    assert here == graph


def test_coordinates_are_aligned_in_process():
    truth = daskbicl.partition([0, 0, 1, 1], [0, 1, 1], row=["a", "b", "c", "d"], col=["x", "y", "z"])
    pred = daskbicl.partition([6, 6, 5, 5], [3, 3, 2], row=["d", "c", "b", "a"], col=["z", "y", "x"])
    here, graph = _both_ways(truth, pred)
    assert here == graph and here["cari"] == 1.0


def test_errors_in_process_are_the_graphs_errors():
    truth, pred = ([0, 1, -1, 1], [0, 1]), ([0, 0, 1, 1], [1, 0])
    messages = []
    for config in ({"daskbicl.in_process_bytes": 1 << 40}, GRAPH):
        with dask.config.set(config), pytest.raises(LabelError) as info:
            daskbicl.score(truth, pred)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "1 unassigned entry" in messages[0]


def test_the_in_process_rule():
    rng = np.random.default_rng(3)
    truth, pred = _pair(rng)
    plan = ScorePlan.build(truth, pred)
    size = sum(v.nbytes for ds in (plan.truth, plan.pred) for v in ds.data_vars.values())
    with dask.config.set({"daskbicl.in_process_bytes": size}):
        assert scored_in_process([plan])
    with dask.config.set({"daskbicl.in_process_bytes": size - 1}):
        assert not scored_in_process([plan])
    lazy = ScorePlan.build(tuple(da.from_array(x, chunks=10) for x in truth), pred)
    assert not scored_in_process([lazy])  # dask-backed inputs always go to the scheduler
    tables = daskbicl.contingency(truth, pred)
    with dask.config.set({"daskbicl.in_process_bytes": 0}):
        assert scored_in_process([ScorePlan.build(tables, None)])  # counted tables: nothing to ship


def test_eager_steps_on_lazy_arguments_stay_lazy():
    with eager():
        assert task(sum)([1, 2]) == 3
        lazy = task(np.add)(da.ones(3, chunks=3), 1)
        assert any_lazy(lazy) and any_lazy([1, lazy]) and any_lazy({"a": lazy})
        assert np.asarray(dask.compute(lazy, scheduler="sync")[0]).tolist() == [2.0, 2.0, 2.0]
    assert any_lazy(task(sum)([1, 2]))  # outside eager(): Delayed


def test_score_compute_false_builds_a_graph_even_for_small_inputs():
    lazy = daskbicl.score(([0, 1], [0]), ([1, 0], [0]), measures="ari_rows", compute=False)
    assert dask.is_dask_collection(lazy)
    assert dask.compute(lazy)[0] == {"ari_rows": 1.0}


# --------------------------------------------------------------------------- a Client active


def test_small_inputs_stay_in_process_with_a_client_active(local_cluster):
    from distributed import Client, get_task_stream

    rng = np.random.default_rng(4)
    truth, pred = _pair(rng, n=2000, m=300, k=6)
    bic = daskbicl.biclustering(rng.random((3, 2000)) < 0.3, rng.random((3, 300)) < 0.4)
    with Client(local_cluster) as client:
        with get_task_stream(client) as stream:
            here = daskbicl.score(truth, pred, measures=ALL)
            here_b = daskbicl.score(bic, pred, measures=BICLUSTER)
        assert stream.data == []  # nothing reached the workers
        with dask.config.set({"daskbicl.in_process_bytes": 0}), get_task_stream(client) as stream:
            on_cluster = daskbicl.score(truth, pred, measures=ALL)
            on_cluster_b = daskbicl.score(bic, pred, measures=BICLUSTER)
        assert len(stream.data) > 0
    assert _plain(here) == _plain(on_cluster)
    assert _plain(here_b) == _plain(on_cluster_b)


# --------------------------------------------------------------------------- the shell


def _cli(*args, code: str = ""):
    """Run the CLI in a fresh interpreter; ``code`` runs after it (it sees ``sys``)."""
    script = ("import sys\nfrom daskbicl.cli import main\n"
              f"sys.argv = ['daskbicl', *{[str(a) for a in args]!r}]\n"
              "try:\n    rc = main()\nexcept SystemExit as e:\n    rc = e.code\n"
              f"{code}\nsys.exit(rc)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    out = tmp_path_factory.mktemp("stores")
    daskbicl.save(([0, 0, 1, 1, 2], [0, 1, 1]), out / "t.zarr")
    daskbicl.save(([1, 1, 0, 0, 0], [2, 3, 3]), out / "p.zarr")
    return out


def test_shell_score_runs_in_process_without_importing_distributed(stores):
    want = daskbicl.score(daskbicl.open(stores / "t.zarr"), daskbicl.open(stores / "p.zarr"))
    for extra in ([], ["--workers", "0"]):
        proc = _cli("score", stores / "t.zarr", stores / "p.zarr", "--json", *extra,
                    code="print('distributed' in sys.modules, file=sys.stderr)")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == pytest.approx(want, abs=0)
        assert proc.stderr.strip().endswith("False"), proc.stderr


def test_a_biclustering_score_in_python_does_not_import_distributed():
    """The micro path asks for a client's threads only when ``distributed`` is loaded (no client can exist
    otherwise): importing it to ask cost ~2 s of a first score."""
    code = ("import sys, numpy as np, daskbicl\n"
            "rng = np.random.default_rng(0)\n"
            "t, p = (daskbicl.biclustering(rng.random((3, 60)) < 0.3, rng.random((3, 40)) < 0.3) for _ in 'tp')\n"
            "daskbicl.score(t, p, measures=['mocice_bcubed', 'micro_ce', 'e4sc', 'fmeasure'])\n"
            "print('distributed' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_workers_choose_a_local_cluster_or_this_process(stores):
    from daskbicl.clitools import choose_scheduler

    assert choose_scheduler(None, default="threads") == "threads"
    assert choose_scheduler(None, 0, default="local") == "threads"
    assert choose_scheduler(None, 3, default="threads") == "local"
    assert choose_scheduler("synchronous", 3) == "synchronous"
    assert choose_scheduler("tcp://h:8786", 0) == "tcp://h:8786"
    proc = _cli("score", stores / "t.zarr", stores / "p.zarr", "--json", "--workers", "1",
                code="print('distributed' in sys.modules, file=sys.stderr)")
    assert proc.returncode == 0 and proc.stderr.strip().endswith("True"), proc.stderr


@pytest.mark.parametrize("args, message", [
    (["--scheduler", "local", "--workers", "0"], "--workers must be at least 1"),
    (["--workers", "-1"], "expected a positive integer"),
    (["--workers", "x"], "expected a positive integer"),
])
def test_bad_worker_counts_are_one_line_errors(stores, args, message):
    proc = _cli("score", stores / "t.zarr", stores / "p.zarr", *args)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]  # argparse's usage lines may come first
    assert last.startswith("daskbicl: error:") and message in last and "Traceback" not in proc.stderr


def test_batch_still_needs_worker_processes(tmp_path):
    proc = _cli("batch", tmp_path / "m.toml", "--workers", "0")
    assert proc.returncode == 2 and "expected a positive integer" in proc.stderr


# --------------------------------------------------------------------------- the import


def test_import_loads_only_what_scoring_needs():
    heavy = ["distributed", "matplotlib", "sklearn", "scipy.optimize", "daskbicl.batch", "daskbicl.plot",
             "daskbicl.tradeoffs.sweep", "daskbicl.tradeoffs.space", "daskbicl.measures.null", "daskbicl.kernels.tradeoff.indices",
             "daskbicl.measures.weighted_indices",
             "daskbicl.io.synthetic", "daskbicl.cli"]
    code = ("import sys, daskbicl\n"
            f"print([m for m in {heavy!r} if m in sys.modules])\n"
            "daskbicl.score(([0, 1], [0]), ([1, 0], [0]))\n"
            f"print([m for m in {heavy!r} if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "[]"]


def test_every_public_name_resolves():
    code = ("import daskbicl\nmissing = [n for n in daskbicl.__all__ if not hasattr(daskbicl, n)]\n"
            "assert not missing, missing\nassert set(daskbicl.__all__) <= set(dir(daskbicl))\n"
            "from daskbicl import *\nassert tradeoff is daskbicl.tradeoff and callable(null)\n"
            "try:\n    daskbicl.nonsense\nexcept AttributeError as e:\n    print(e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "module 'daskbicl' has no attribute 'nonsense'"


# --------------------------------------------------------------------------- the finalize


def test_grouped_xlogx_sums_are_the_plain_sums_to_rounding():
    rng = np.random.default_rng(5)
    for values in (rng.integers(1, 50, 1000), rng.integers(1, 2**40, 300), np.array([1, 1, 1]),
                   np.concatenate([rng.integers(1, 5, 10**4), [10**9]])):  # bincount path and sort path
        plain = math.fsum(float(v) * math.log(v) for v in values.tolist())
        assert K.xlogx_sum(values) == pytest.approx(plain, rel=1e-13, abs=1e-300)


def test_mi_is_exactly_symmetric_and_one_for_relabelings_at_many_clusters():
    rng = np.random.default_rng(6)
    for k, n in ((3, 50), (1000, 10**5), (5000, 10**5)):
        z = rng.integers(0, k, n)
        zp = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), z)
        t, tt = Table.from_labels(z, zp), Table.from_labels(zp, z)
        assert K.mutual_info(t) == K.mutual_info(tt)
        from sklearn.metrics import mutual_info_score

        assert K.mutual_info(t) == pytest.approx(mutual_info_score(z, zp), rel=1e-12)
        same = Table.from_labels(z, rng.permutation(k)[z] * 7 + 3)
        assert K.mutual_info(same) == K.entropy(same.truth_sizes()) == K.entropy(same.pred_sizes())
        s = daskbicl.score((z, z[:40]), (rng.permutation(k)[z], z[:40] + 1), measures=["conmi", "enmi"])
        assert s == {"conmi": 1.0, "enmi": 2.0}
        one = np.zeros(n, dtype=np.int64)  # a single cluster carries no information: exactly 0
        assert K.mutual_info(Table.from_labels(one, zp)) == K.mutual_info(Table.from_labels(zp, one)) == 0.0


def test_ce_at_many_clusters_equals_the_plain_solver():
    """2000 clusters, a noisy copy: sure cells plus a sparse remainder give the one-call optimum."""
    rng = np.random.default_rng(7)
    for redrawn in (0.1, 0.6, 1.0):
        z = rng.integers(0, 2000, 40_000)
        zp = np.where(rng.random(z.size) < redrawn, rng.integers(0, 2000, z.size), z)
        t = Table.from_labels(z, zp)
        assert K.matched_count(t) == K._sparse_matched_count(t.rows, t.cols, t.counts, t.shape)


def test_latency_benchmark_runs_quick():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "latency.py"), "--quick"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for section in ("## 1. import", "## 2.", "## 3.", "## 4.", "## 5.", "## 6."):
        assert section in proc.stdout


@pytest.mark.slow
def test_the_install_and_demo_benchmark_runs():
    """Section 8 installs this checkout into a new environment and runs the README's demo there."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "latency.py"), "--only", "install"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "## 8." in proc.stdout and "daskbicl demo (empty numba cache" in proc.stdout, proc.stdout


def test_errors_are_daskbicl_errors_in_process():
    with pytest.raises(DaskbiclError):
        daskbicl.score(([0, 1], [0]), ([0, 1, 2], [0]))


def test_eager_task_map_runs_calls_on_threads_in_order_and_raises():
    """In process, the micro-object tasks run side by side (as on the threaded scheduler), not one by one."""
    import threading

    import dask

    from daskbicl.engine.core import eager, task_map

    barrier = threading.Barrier(2, timeout=30)  # two calls must be running at once to pass it

    def call(i):
        barrier.wait()
        return i * i

    with eager(), dask.config.set(num_workers=2):
        assert task_map(call, [(i,) for i in range(6)]) == [0, 1, 4, 9, 16, 25]

    def fails(i):
        if i == 3:
            raise daskbicl.TooLargeError("step 3 is too large")
        return i

    with eager(), dask.config.set(num_workers=2), pytest.raises(daskbicl.TooLargeError, match="step 3"):
        task_map(fails, [(i,) for i in range(6)])
    # outside eager(): the Delayed objects of task(), computed as before
    out = task_map(lambda i: i + 1, [(1,), (2,)])
    assert dask.compute(*out, scheduler="sync") == (2, 3)
