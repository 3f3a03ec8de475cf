"""The command line, run as a user would: real subprocesses, real stores."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
import pytest

import daskbicl


def run(*args, timeout=180):
    proc = subprocess.run(
        [sys.executable, "-m", "daskbicl", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    out = tmp_path_factory.mktemp("stores")
    code, stdout, stderr = run("generate", out, "--rows", 20000, "--cols", 3000, "--noise", 0.2, "--preds", 2)
    assert code == 0, stderr
    assert "truth.zarr" in stdout and "pred-001.zarr" in stdout
    return out


def test_score_json_on_existing_cluster(stores, local_cluster):
    truth, pred = stores / "truth.zarr", stores / "pred-000.zarr"
    code, stdout, stderr = run("score", truth, pred, "--json", "--scheduler", local_cluster.scheduler_address)
    assert code == 0, stderr
    result = json.loads(stdout)  # stdout is exactly one JSON object
    expected = daskbicl.score(str(truth), str(pred))
    assert set(result) == set(expected)
    for k in expected:
        assert result[k] == pytest.approx(expected[k], rel=1e-12)


def test_score_table_with_selected_measures_and_local_cluster(stores):
    code, stdout, stderr = run(
        "score", stores / "truth.zarr", stores / "pred-001.zarr", "--measure", "cari", "--measure", "nce", "--workers", 1
    )
    assert code == 0, stderr
    lines = stdout.strip().splitlines()
    assert lines[0].split()[:2] == ["measure", "value"]
    assert [ln.split()[0] for ln in lines[2:]] == ["cari", "nce"]
    assert "scored in" in stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["score", "/nonexistent/a.zarr", "/nonexistent/b.zarr", "--workers", "1"], "no such file or directory"),
        (["score", "{truth}", "{truth}", "--measure", "bogus", "--workers", "1"], "unknown measure 'bogus'"),
        (["score", "{truth}", "{neg}", "--scheduler", "{address}"], "pred row_labels has 1 unassigned entry"),
        (["score", "{truth}", "{truth}", "--param", "beta=x", "--workers", "1"], "parameter beta must be a number"),
        (["score", "{truth}"], "the following arguments are required: pred"),
        (["generate", "{truth}", "--rows", "10"], "already exists"),
        (["generate", "{tmp}/x", "--rows", "0"], "expected a positive integer"),
    ],
)
def test_errors_exit_2_with_a_message_and_no_traceback(stores, tmp_path, local_cluster, args, message):
    neg = tmp_path / "neg.zarr"
    labels = np.zeros(20000, dtype=np.int64)
    labels[123] = -4
    daskbicl.save(daskbicl.as_dataset((labels, np.zeros(3000, dtype=np.int64))), neg)
    args = [
        a.format(truth=stores / "truth.zarr", neg=neg, tmp=tmp_path, address=local_cluster.scheduler_address)
        for a in args
    ]
    if args[0] == "generate" and "already" in message:
        args = ["generate", str(stores), "--rows", "10", "--cols", "10"]
    code, stdout, stderr = run(*args)
    assert code == 2
    assert message in stderr
    assert "Traceback" not in stderr
    assert stdout == ""


def test_demo_runs_end_to_end(tmp_path):
    code, stdout, stderr = run(
        "demo", "--rows", 30000, "--cols", 2000, "--workers", 2, "--out", tmp_path / "demo", "--no-progress"
    )
    assert code == 0, stderr
    assert "worker processes" in stdout
    assert "cari" in stdout and "nce" in stdout
    assert (tmp_path / "demo" / "truth.zarr").is_dir() and (tmp_path / "demo" / "pred.zarr").is_dir()
    value = float(next(ln.split()[1] for ln in stdout.splitlines() if ln.startswith("cari ")))
    assert value == pytest.approx(
        daskbicl.cari(str(tmp_path / "demo" / "truth.zarr"), str(tmp_path / "demo" / "pred.zarr")), abs=1e-6
    )


def test_measures_lists_the_registry():
    code, stdout, _ = run("measures")
    assert code == 0
    assert [ln.split()[0] for ln in stdout.strip().splitlines()] == list(daskbicl.MEASURES)


# ---------------------------------------------------------------- review fixes
def test_compute_time_error_on_local_cluster_is_one_line(tmp_path):
    labels = np.zeros(2000, dtype=np.int64)
    labels[123] = -4  # found by a worker while counting, not by the up-front checks
    daskbicl.save(daskbicl.as_dataset((labels, np.zeros(300, dtype=np.int64))), tmp_path / "neg.zarr")
    daskbicl.save(daskbicl.as_dataset((np.zeros(2000, dtype=np.int64), np.zeros(300, dtype=np.int64))),
                  tmp_path / "t.zarr")
    code, stdout, stderr = run("score", tmp_path / "t.zarr", tmp_path / "neg.zarr", "--workers", 1, "--no-progress")
    assert code == 2 and stdout == ""
    assert stderr.strip().splitlines() == [
        "daskbicl: error: pred row_labels has 1 unassigned entry (NaN, None, pandas NA or a negative integer); "
        "pass --unassigned cluster (one extra cluster) or --unassigned singleton (a cluster each)"
    ]


def test_malformed_scheduler_address_is_a_usage_error(stores):
    code, stdout, stderr = run("score", stores / "truth.zarr", stores / "truth.zarr", "--scheduler", "foo::bar")
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1
    assert stderr.startswith("daskbicl: error: cannot connect to the Dask scheduler at 'foo::bar'")


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--noise", "1.5"], "--noise is the fraction of labels redrawn: it must be in [0, 1], got 1.5"),
        (["--noise", "nan"], "--noise is the fraction of labels redrawn: it must be in [0, 1], got nan"),
        (["--seed", "-1"], "--seed must be a non-negative integer, got -1"),
    ],
)
def test_generate_validates_everything_before_writing(tmp_path, extra, message):
    out = tmp_path / "gen"
    code, stdout, stderr = run("generate", out, "--rows", 100, "--cols", 20, *extra)
    assert code == 2 and stdout == ""
    assert stderr.strip() == f"daskbicl: error: {message}"
    assert not out.exists()  # nothing written, not even the folder


def test_generate_refuses_before_writing_when_a_pred_exists(tmp_path):
    out = tmp_path / "gen"
    (out / "pred-001.zarr").mkdir(parents=True)
    code, _, stderr = run("generate", out, "--rows", 100, "--cols", 20, "--preds", 2)
    assert code == 2 and "pred-001.zarr already exists; pass --overwrite" in stderr
    assert sorted(p.name for p in out.iterdir()) == ["pred-001.zarr"]  # truth.zarr not written


def test_table_header_is_aligned_with_short_measure_names(stores):
    code, stdout, stderr = run(
        "score", stores / "truth.zarr", stores / "pred-000.zarr", "--measure", "ce", "--measure", "nce",
        "--workers", 1, "--no-progress",
    )
    assert code == 0, stderr
    header, rule, *rows = stdout.strip().splitlines()
    assert header.startswith("measure  ")
    # the value column ends at the same place on every line, and the rule covers it
    end = header.index("value") + len("value")
    for row in rows:
        assert row[end - 1] != " " and row[end] == " "
    assert rule.split()[0] == "-" * len("measure")


@pytest.mark.parametrize("args", [["measures"], ["--help"], ["tradeoff", "--help"]])
def test_closed_pipe_ends_quietly(args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "daskbicl", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # the reader is gone before anything is written, as with `| head -0`
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert err == ""
    assert code in (0, 141)


@pytest.mark.parametrize("scheduler", ["threads", "synchronous", "processes", "local"])
def test_score_runs_on_the_scheduler_asked_for(scheduler, tmp_path):
    import daskbicl

    daskbicl.save(([0, 0, 1, 1], [0, 1, 1]), tmp_path / "t.zarr")
    daskbicl.save(([1, 1, 0, 0], [2, 3, 3]), tmp_path / "p.zarr")
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"),
                           "--json", "--measure", "cari", "--scheduler", scheduler, "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"cari": 1.0}


def test_score_defaults_to_threads_and_workers_start_a_cluster():
    # the rule and its measurements: docs/guide/cluster.md; more in tests/test_latency.py
    from daskbicl.clitools import choose_scheduler

    assert choose_scheduler(None, default="threads") == "threads"
    assert choose_scheduler(None, 2, default="threads") == "local"
    assert choose_scheduler(None, 0) == "threads"
    assert choose_scheduler("synchronous", 2) == "synchronous"


def test_the_module_docstring_lists_every_command():
    """``daskbicl.cli``'s first line names the subcommands the parser has, no more, no fewer."""
    import re

    from daskbicl import cli

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    first = cli.__doc__.splitlines()[0]
    assert set(re.findall(r"\b[a-z]+\b", first.split("``daskbicl", 1)[1])) == set(sub.choices)


def test_word_options_ignore_case_as_in_python(tmp_path, capsys):
    """``--index Jaccard`` and ``--unassigned CLUSTER`` mean what ``index="Jaccard"`` and ``unassigned="CLUSTER"`` do."""
    from daskbicl import cli

    rng = np.random.default_rng(3)
    rows, cols = np.zeros((1, 40), bool), np.zeros((1, 12), bool)
    rows[0, :15], cols[0, :6] = True, True
    truth = str(daskbicl.save(daskbicl.biclustering(rows, cols), tmp_path / "t.zarr"))
    rows, cols = rng.random((4, 40)) < 0.4, rng.random((4, 12)) < 0.5
    rows[:, 0] = cols[:, 0] = True
    sweep = str(daskbicl.save(daskbicl.biclustering(rows, cols), tmp_path / "s.zarr"))
    out = {}
    for spelled in ("jaccard", " Jaccard ", "JACCARD"):
        assert cli.main(["tradeoff", truth, sweep, "--index", spelled, "--json", "--workers", "0"]) == 0
        out[spelled] = capsys.readouterr().out
    assert out["jaccard"] == out[" Jaccard "] == out["JACCARD"] and '"index": "jaccard"' in out["jaccard"]
    with pytest.raises(SystemExit) as exit_:  # argparse's own one-line error, as for any bad choice
        cli.main(["tradeoff", truth, sweep, "--index", "Dice", "--workers", "0"])
    assert exit_.value.code == 2 and "invalid choice: 'dice'" in capsys.readouterr().err
    z = np.array([0, 0, 1, -1, 1, 2]), np.array([0, 1, 1, 0])
    labels = str(daskbicl.save(daskbicl.partition(*z), tmp_path / "u.zarr"))
    for spelled in ("cluster", "CLUSTER"):
        assert cli.main(["score", labels, labels, "--measure", "cari", "--unassigned", spelled, "--json",
                         "--workers", "0"]) == 0
        out[spelled] = capsys.readouterr().out
    assert out["cluster"] == out["CLUSTER"] and json.loads(out["cluster"]) == {"cari": 1.0}
