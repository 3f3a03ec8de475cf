"""Compiles said where the user is, on a real ``dask scheduler`` and cold ``dask worker`` processes (issue 36).

* ``score --scheduler`` on a cold worker says on the client's stderr, once, that the worker compiles, and
  at the end for how long; the next score says nothing.
* ``daskbicl warm --scheduler ADDRESS`` warms every worker of that cluster, one line per worker saying what
  it compiled; a worker joining later warms when it starts (the plugin stays on the scheduler).
* ``batch --warm`` warms the workers first, then the run says no compile.

A cold worker is a worker process whose ``NUMBA_CACHE_DIR`` is a new empty folder.  The scores here use the
one-byte code counter only (a chunk of more than 65 536 one-byte codes), the cheapest kernel to compile, and
``--kernels byte`` keeps ``warm`` to it; ``batch --warm`` warms every kernel, so it runs on workers that
share the test session's numba cache (the one tests/test_warmup.py fills).
"""

from __future__ import annotations

import pytest

import daskbicl

from .support.batch_fixtures import run_cli
from .support.cold_cluster import cold_cluster
from .support.manifests import write_manifest

BYTE = "the one-byte code counter"
ROWS = 70_000  # one chunk of more than 65 536 one-byte codes: the compiled byte counter counts it


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    lab = tmp_path_factory.mktemp("warm-workers")
    truth = daskbicl.random_partition(ROWS, 30, 4, 3, seed=36, chunk=ROWS)
    daskbicl.save(truth, lab / "truth.zarr")
    daskbicl.save(daskbicl.perturb(daskbicl.open(lab / "truth.zarr"), 0.2, seed=1), lab / "pred.zarr")
    return lab


def _on_worker(dask_worker):
    return dask_worker.plugins["daskbicl-warm-kernels"].report()


def test_score_and_warm_on_cold_workers(pair, tmp_path):
    with cold_cluster(tmp_path / "cluster", workers=1) as cluster:
        score = ("score", pair / "truth.zarr", pair / "pred.zarr", "--measure", "cari", "--scheduler",
                 cluster.address, "--json")
        code, out, err = run_cli(*score)
        assert code == 0, err
        said = [ln for ln in err.splitlines() if "is compiling numba kernels" in ln]
        assert len(said) == 1 and f"({BYTE}; first use on that worker" in said[0], err
        (worker,) = [w for w in said[0].split() if w.startswith("tcp://")]
        assert f"daskbicl: workers compiled numba kernels this run: {worker} " in err
        code, out, err = run_cli(*score)
        assert code == 0 and "compil" not in err, err  # compiled in that worker now: nothing to say

        second = cluster.add_worker()  # a new cold worker, its own empty cache
        code, out, err = run_cli("warm", "--scheduler", cluster.address, "--kernels", "byte")
        assert code == 0, err
        lines = [ln for ln in err.splitlines() if " warm in " in ln]
        assert len(lines) == 2, err  # one line per worker
        assert [ln for ln in lines if ln.startswith(f"daskbicl: worker {worker} ")][0].endswith(
            "kernels loaded (nothing compiled)")
        (cold,) = [ln for ln in lines if not ln.startswith(f"daskbicl: worker {worker} ")]
        assert cold.endswith(f"compiled 1 kernel group ({BYTE})"), err
        assert "daskbicl: 2 workers ready in " in err and "(1 compiled)" in err
        assert any(second.iterdir())  # the cold worker's cache now holds the kernel

        cluster.add_worker()  # joins after the warm: the plugin on the scheduler warms it when it starts
        from distributed import Client

        with Client(cluster.address) as client:
            reports = client.run(_on_worker)
        assert len(reports) == 3
        assert reports[worker]["compiled"] == []  # the first worker had the kernel already
        assert [r["compiled"] for w, r in reports.items() if w != worker] == [[BYTE], [BYTE]]  # both cold ones


def test_workers_sharing_a_cache_compile_once(tmp_path):
    """Two cold workers of one machine with one (empty) numba cache, warmed at the same moment: one compiles
    the kernel, the other waits for its turn and loads it from the cache (``warmup.cache_turn``)."""
    with cold_cluster(tmp_path / "cluster", workers=2, shared_cache=True) as cluster:
        code, out, err = run_cli("warm", "--scheduler", cluster.address, "--kernels", "byte")
        assert code == 0, err
        lines = sorted(ln for ln in err.splitlines() if " warm in " in ln)
        assert len(lines) == 2, err
        assert [ln.endswith(f"compiled 1 kernel group ({BYTE})") for ln in lines].count(True) == 1, err
        assert [ln.endswith("kernels loaded (nothing compiled)") for ln in lines].count(True) == 1, err
        assert "daskbicl: 2 workers ready in " in err and "(1 compiled)" in err


def test_warm_refuses_a_local_scheduler_and_an_unknown_kernel():
    code, _, err = run_cli("warm", "--scheduler", "local")
    assert code == 2 and "takes the address of a running Dask scheduler" in err and "Traceback" not in err
    code, _, err = run_cli("warm", "--kernels", "nosuch")
    assert code == 2 and "'nosuch' names no kernel group" in err and BYTE in err


def test_batch_warm_warms_every_worker_first(pair, tmp_path):
    write_manifest(tmp_path / "m.toml", {"t": str(pair / "truth.zarr")}, {"p": str(pair / "pred.zarr")},
                   [{"truth": "t", "pred": "p", "measures": ["cari"]}], results="r.sqlite")
    folder = tmp_path / "cluster"
    folder.mkdir()
    with cold_cluster(folder, workers=0) as cluster:
        for _ in range(2):  # workers sharing the session's numba cache
            cluster.add_worker(cold=False)
        code, out, err = run_cli("batch", tmp_path / "m.toml", "--scheduler", cluster.address, "--warm")
        assert code == 0, err
        assert "daskbicl: warming 2 workers" in err
        assert len([ln for ln in err.splitlines() if " warm in " in ln]) == 2, err
        assert "is compiling" not in err  # every kernel was ready before the first task

