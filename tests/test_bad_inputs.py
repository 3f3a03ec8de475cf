"""A catalogue of bad inputs: one case per class, for the API and the CLI.

Each API case asserts the exception class and the message; each CLI case the
exit status 2, one line on stderr with no traceback, and that nothing was
left behind in the working folder.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import daskbicl

T = daskbicl.partition([0, 0, 1, 1], [0, 1, 1])
B = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])

API_CASES = {
    # measures and parameters (checked before any data is read)
    "measures not a name": (lambda: daskbicl.score(T, T, measures=5), daskbicl.MeasureError, "measure name or a list"),
    "measures nested": (lambda: daskbicl.score(T, T, measures=[["cari"]]), daskbicl.MeasureError, "measure name or a list"),
    "measures empty": (lambda: daskbicl.score(T, T, measures=[]), daskbicl.MeasureError, "measures is empty"),
    "unknown measure": (lambda: daskbicl.score(T, T, measures=["carri"]), daskbicl.MeasureError, "Did you mean 'cari'"),
    "measure of another kind": (lambda: daskbicl.score(B, B, measures=["cari"]), daskbicl.MeasureError, "needs co-clusterings"),
    "unknown parameter": (lambda: daskbicl.score(B, B, measures=["fmeasure"], gamma=1), daskbicl.MeasureError, "unknown parameter(s) gamma"),
    "beta a list": (lambda: daskbicl.fmeasure(B, B, beta=[2]), daskbicl.MeasureError, "parameter beta must be a number"),
    "beta a boolean": (lambda: daskbicl.fmeasure(B, B, beta=True), daskbicl.MeasureError, "parameter beta must be a number"),
    "beta huge int": (lambda: daskbicl.fmeasure(B, B, beta=10**400), daskbicl.MeasureError, "parameter beta must be a number"),
    "beta zero": (lambda: daskbicl.fmeasure(B, B, beta=0), daskbicl.MeasureError, "in (0, inf)"),
    "beta nan": (lambda: daskbicl.fmeasure(B, B, beta=float("nan")), daskbicl.MeasureError, "in (0, inf)"),
    "beta inf": (lambda: daskbicl.fmeasure(B, B, beta=float("inf")), daskbicl.MeasureError, "in (0, inf)"),
    "R negative": (lambda: daskbicl.goodness(B, B, R=-1), daskbicl.MeasureError, "parameter R must be"),
    "R text": (lambda: daskbicl.goodness(B, B, R="lots"), daskbicl.MeasureError, "parameter R must be"),
    "clip not boolean": (lambda: daskbicl.jaccard(B, B, clip="maybe"), daskbicl.MeasureError, "parameter clip must be a boolean"),
    "clip 2": (lambda: daskbicl.jaccard(B, B, clip=2), daskbicl.MeasureError, "parameter clip must be a boolean"),
    "multiset not boolean": (lambda: daskbicl.micro_ce(B, B, multiset="both"), daskbicl.MeasureError, "parameter multiset"),
    # inputs
    "input of an unknown type": (lambda: daskbicl.score(T, 42), daskbicl.InputError, "expected an xarray.Dataset"),
    "tuple of three": (lambda: daskbicl.score(T, ([0], [0], [0])), daskbicl.InputError, "(row_labels, col_labels)"),
    "2-D labels in a tuple": (lambda: daskbicl.score(T, (np.zeros((4, 2), int), [0, 1, 1])), daskbicl.InputError, "must be 1-D"),
    "integer masks in a tuple": (lambda: daskbicl.score(B, (np.ones((1, 4), np.int64), np.ones((1, 3), np.int64))), daskbicl.InputError, "must be boolean"),
    "unfitted model": (lambda: daskbicl.score(T, type("Model", (), {"fit": lambda self: self})()), daskbicl.InputError, "fit it first"),
    "lengths differ": (lambda: daskbicl.score(T, ([0, 1, 1], [0, 1, 1])), daskbicl.AlignmentError, "row"),
    "empty truth": (lambda: daskbicl.score(daskbicl.biclustering(np.zeros((0, 4), bool), np.zeros((0, 3), bool)), B), daskbicl.InputError, "truth has no biclusters"),
    "masks of different counts": (lambda: daskbicl.biclustering([[1, 0]], [[1], [0]]), daskbicl.InputError, "row_mask has 1 biclusters but col_mask has 2"),
    "mask values not 0/1": (lambda: daskbicl.biclustering([[2, 0]], [[1]]), daskbicl.InputError, "must be boolean"),
    "1-D mask": (lambda: daskbicl.biclustering([1, 0], [[1]]), daskbicl.InputError, "must be 2-D"),
    "coordinates of the wrong length": (lambda: daskbicl.biclustering([[1, 0]], [[1]], row=["a"]), daskbicl.InputError, "row coordinates have 1 labels for 2"),
    "coordinates a string": (lambda: daskbicl.biclustering([[1, 0, 1]], [[1]], row="abc"), daskbicl.InputError, "must be a sequence of labels"),
    "duplicated coordinates": (lambda: daskbicl.biclustering([[1, 0]], [[1]], row=["a", "a"]), daskbicl.InputError, "repeat labels"),
    "index list not pairs": (lambda: daskbicl.biclustering_from_indices([[0]], shape=(2, 2)), daskbicl.InputError, "expected a (rows, cols) pair"),
    "index out of range": (lambda: daskbicl.biclustering_from_indices([([9], [0])], shape=(2, 2)), daskbicl.InputError, "outside 0..1"),
    "not an estimator": (lambda: daskbicl.from_estimator(object()), daskbicl.InputError, "neither row_labels_"),
    "store that does not exist": (lambda: daskbicl.score("/nonexistent/t.zarr", T), daskbicl.StoreError, "/nonexistent/t.zarr"),
}


@pytest.mark.parametrize("case", sorted(API_CASES))
def test_api_bad_input(case):
    call, exc, message = API_CASES[case]
    with pytest.raises(exc) as info:
        call()
    assert message in str(info.value), str(info.value)
    assert isinstance(info.value, daskbicl.DaskbiclError)


CLI_CASES = {
    "no command": ([], "required: command"),
    "unknown command": (["frobnicate"], "invalid choice"),
    "score missing pred": (["score", "t.zarr"], "the following arguments are required"),
    "score unknown measure": (["score", "t.zarr", "t.zarr", "--measure", "carri"], "unknown measure"),
    "score bad param syntax": (["score", "t.zarr", "t.zarr", "--param", "beta"], "expected NAME=VALUE"),
    "score bad param value": (["score", "t.zarr", "t.zarr", "--param", "beta=x"], "parameter beta must be a number in (0, inf)"),
    "score store missing": (["score", "missing.zarr", "missing.zarr"], "missing.zarr"),
    "score workers zero": (["score", "t.zarr", "t.zarr", "--workers", "0"], "expected a positive integer"),
    "generate rows 1e30": (["generate", "g", "--rows", "1e30"], "too large (at most 2**53)"),
    "generate rows 2**63": (["generate", "g", "--rows", "9223372036854775808"], "too large (at most 2**53)"),
    "generate rows 1e12": (["generate", "g", "--rows", "1e12", "--cols", "10"], "pass --chunk"),
    "generate rows inf": (["generate", "g", "--rows", "1e999"], "expected a positive integer"),
    "generate noise": (["generate", "g", "--noise", "2"], "--noise"),
    "generate negative seed": (["generate", "g", "--seed", "-1"], "--seed"),
    "generate bad kind": (["generate", "g", "--kind", "tree"], "invalid choice"),
    "generate density": (["generate", "g", "--kind", "biclustering", "--density", "0"], "--density"),
    "tradeoff bad suffix": (["tradeoff", "t.zarr", "s.zarr", "--plot", "fig.bmp"], "use a .png, .svg or .pdf suffix"),
    "tradeoff missing folder": (["tradeoff", "t.zarr", "s.zarr", "--plot", "nowhere/fig.png"], "does not exist"),
    "tradeoff lam": (["tradeoff", "t.zarr", "s.zarr", "--lam", "2"], "--lam must be in [0, 1]"),
    "convert no input": (["convert", "o.zarr"], "needs exactly one of"),
    "convert missing file": (["convert", "o.zarr", "--rows", "a.npy", "--cols", "b.npy"], "no such file"),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_bad_input(case, tmp_path):
    args, message = CLI_CASES[case]
    before = set(os.listdir(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("daskbicl: error:")]
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert set(os.listdir(tmp_path)) == before  # nothing half-written


def test_cli_with_stdout_closed(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "measures"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the cluster failing (exit 3)


def test_unreachable_scheduler_is_exit_3_one_line(tmp_path):
    daskbicl.save(([0, 1], [0]), tmp_path / "t.zarr")
    env = {**os.environ, "DASK_DASKBICL__CONNECT_TIMEOUT": "1s"}
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"), str(tmp_path / "t.zarr"),
                           "--scheduler", "tcp://127.0.0.1:9"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 3, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("daskbicl: error:")]
    assert len(lines) == 1 and "cannot connect to the Dask scheduler at 'tcp://127.0.0.1:9'" in lines[0]
    assert "Traceback" not in proc.stderr
    # a malformed address is the user's to fix: exit 2
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"), str(tmp_path / "t.zarr"),
                           "--scheduler", "nonsense"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--scheduler takes an address" in proc.stderr


def _die():
    os._exit(1)


def test_a_worker_that_keeps_dying_is_an_infrastructure_error():
    """KilledWorker reaches the user as InfrastructureError (exit 3 on the CLI), naming the task."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    from daskbicl.scheduling import compute

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.CRITICAL) as cluster, Client(cluster):
            with pytest.raises(daskbicl.InfrastructureError, match="a worker died each time it was running step 'die'"):
                compute(dask.delayed(_die, pure=False)())
