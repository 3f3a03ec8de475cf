"""Scheduled evaluation as teams run it: two nights, runs compared, gates, identity by content and names.

Real Zarr stores, a real LocalCluster (worker processes), the CLI in a
subprocess where exit statuses matter, and a real read-only mount when the
machine allows one.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import daskbicl
from daskbicl.batch import ResultsDB, run_batch
from daskbicl.batch.runlog import diff_rows, latest_rows, run_rows

from ..support.batch_fixtures import lab_manifest, night_two, run_cli

ROWS, COLS, CHUNK = 6_000, 800, 2_048
MEASURES = ["cari", "nce", "ari_rows"]


def write_manifest(folder: Path, extra: str = "") -> Path:
    pairs = textwrap.dedent(f"""
        [[pairs]]
        truth = "sim"
        pred = "runs"
        measures = {json.dumps(MEASURES)}
    """)
    return lab_manifest(folder, pairs + "\n" + extra)


@pytest.fixture
def night1(tmp_path):
    """Folder ``lab`` with truth.zarr, pred-0..2.zarr and m.toml (results in the folder)."""
    lab = tmp_path / "lab"
    lab.mkdir()
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 5, 4, seed=3, chunk=CHUNK), lab / "truth.zarr")
    truth = daskbicl.open(lab / "truth.zarr")
    for k in range(3):
        daskbicl.save(daskbicl.perturb(truth, 0.05 * (k + 1), seed=10 + k), lab / f"pred-{k}.zarr")
    return lab


def oracle(folder: Path, pred: str) -> dict:
    return daskbicl.score(folder / "truth.zarr", folder / pred, measures=MEASURES)


def test_two_nights_missing_drop_move_diff(night1, tmp_path, local_cluster, capsys):
    lab = night1
    first = run_batch(write_manifest(lab), client=None, connect=lambda: _client(local_cluster))
    assert (first.scored, first.failed) == (3, 0)
    before = {k: oracle(lab, f"pred-{k}.zarr") for k in range(3)}

    # night 2: pred-0 deleted, pred-1 replaced by a worse one, the folder moved (manifest and results with it)
    truth = daskbicl.open(lab / "truth.zarr")
    night_two(lab, lambda path: daskbicl.save(daskbicl.perturb(truth, 0.5, seed=99), path))
    moved = tmp_path / "archive" / "lab-moved"
    moved.parent.mkdir()
    shutil.move(lab, moved)
    worse = oracle(moved, "pred-1.zarr")
    assert worse["cari"] < before[1]["cari"] - 0.05

    code, out, err = run_cli("batch", moved / "m.toml", "--scheduler", local_cluster.scheduler_address, "--json",
                             "--fail-on-drop", "cari=0.05", "--tag", "night=2")
    summary = json.loads(out)
    assert code == 4, err  # the gate
    assert (summary["scored"], summary["skipped"], summary["failed"], summary["missing"]) == (1, 1, 0, 1)  # nothing
    # rescored after the move; the deleted pred is missing, not failed, and said once
    assert [ln for ln in err.splitlines() if "pred-0.zarr" in ln] == [
        ln for ln in err.splitlines() if ln.startswith("daskbicl: missing: ")]
    assert len([ln for ln in err.splitlines() if "pred-0.zarr" in ln]) == 1
    assert "pred runs/pred-0.zarr" in err and "is gone" in err
    assert "gate failed: --fail-on-drop cari=0.05: pred runs/pred-1.zarr against truth sim/truth.zarr: cari" in err
    assert f"went from {before[1]['cari']:.6g} to {worse['cari']:.6g}" in err
    assert "runs/pred-2.zarr" not in err.split("gate failed", 1)[1]  # unchanged pred-2 is not an offender
    assert "Traceback" not in err

    results = moved / "scores.sqlite"
    with ResultsDB(results, create=False) as db:
        runs = db.runs()
        assert [r["tags"] for r in runs] == [{"model": "nmf"}, {"model": "nmf", "night": "2"}]
        second = runs[-1]["run_id"]
        seen = {(r["pred_name"], r["measure"]): r for r in run_rows(db, second)}
        latest = {(r["pred_name"], r["measure"]): r for r in latest_rows(db)}
        diff = {(r["pred_name"], r["measure"]): r for r in diff_rows(db, runs[0]["run_id"], second)}
    for m in MEASURES:
        assert seen[("runs/pred-0.zarr", m)]["status"] == "missing"
        assert seen[("runs/pred-1.zarr", m)]["status"] == "scored"
        assert seen[("runs/pred-2.zarr", m)]["status"] == "reused"
        assert seen[("runs/pred-2.zarr", m)]["value"] == pytest.approx(before[2][m], rel=1e-12)
        # --latest: the deleted pred is missing with its last value; the others are current
        assert latest[("runs/pred-0.zarr", m)]["status"] == "missing"
        assert latest[("runs/pred-0.zarr", m)]["value"] == pytest.approx(before[0][m], rel=1e-12)
        assert latest[("runs/pred-1.zarr", m)]["status"] == "current"
        assert latest[("runs/pred-1.zarr", m)]["value"] == pytest.approx(worse[m], rel=1e-12)
        assert latest[("runs/pred-2.zarr", m)]["status"] == "current"
        d = diff[("runs/pred-1.zarr", m)]
        assert d["before"] == pytest.approx(before[1][m], rel=1e-12) and d["after"] == pytest.approx(worse[m], rel=1e-12)
        assert d["change"] == pytest.approx(worse[m] - before[1][m], rel=1e-9, abs=1e-12)
        assert diff[("runs/pred-0.zarr", m)]["after"] is None
        assert diff[("runs/pred-0.zarr", m)]["status_after"] == "missing"
        assert diff[("runs/pred-2.zarr", m)]["change"] == 0.0

    # the CLI: --diff (default: the last two runs), --latest with status, gates on results (no scoring)
    code, out, err = run_cli("results", results, "--diff", "--format", "json", "--measure", "cari")
    rows = {r["pred_name"]: r for r in json.loads(out)}
    assert code == 0 and set(rows) == {"runs/pred-0.zarr", "runs/pred-1.zarr", "runs/pred-2.zarr"}
    assert rows["runs/pred-1.zarr"]["change"] == pytest.approx(worse["cari"] - before[1]["cari"], abs=1e-12)
    code, out, err = run_cli("results", results, "--latest")
    assert code == 0 and "missing" in out and "current" in out
    code, _, err = run_cli("results", results, "--fail-below", f"cari={worse['cari'] + 1e-9}")
    assert code == 4 and "runs/pred-1.zarr" in err and "runs/pred-2.zarr" not in err
    code, _, err = run_cli("results", results, "--fail-below", f"cari={worse['cari'] - 1e-9}",
                           "--fail-on-drop", "cari=0.9")
    assert code == 0, err
    code, _, err = run_cli("results", results, "--run", runs[0]["run_id"], "--fail-on-drop", "cari=0")
    assert code == 0, err  # the first run has nothing before it

    # a third night with nothing changed: everything reused, and the drop is no longer a drop
    code, out, err = run_cli("batch", moved / "m.toml", "--scheduler", local_cluster.scheduler_address, "--json",
                             "--fail-on-drop", "cari=0.05")
    summary = json.loads(out)
    assert code == 0 and (summary["scored"], summary["skipped"], summary["failed"]) == (0, 2, 0), err
    assert (summary["missing"], summary["gone"]) == (0, 1) and "pred-0.zarr" not in err  # reported once
    code, out, err = run_cli("results", results, "--latest", "--format", "json", "--pred", "pred-0.zarr")
    rows = json.loads(out)
    assert code == 0 and {r["status"] for r in rows} == {"gone"}  # then listed as gone, with its last value
    assert {r["measure"]: r["value"] for r in rows}["cari"] == pytest.approx(before[0]["cari"], rel=1e-12)


def _client(cluster):
    from distributed import Client

    return Client(cluster)


def test_a_renamed_store_and_a_changed_measure_version(night1, client, monkeypatch):
    """A pred folder renamed is not rescored (content); a measure whose definition changed is (version)."""
    from daskbicl.measures import REGISTRY

    m = write_manifest(night1)
    run_batch(m, client=client)
    (night1 / "pred-2.zarr").rename(night1 / "pred-7.zarr")
    again = run_batch(m, client=client)
    assert (again.scored, again.skipped) == (0, 3)
    with ResultsDB(night1 / "scores.sqlite", create=False) as db:
        names = {r["pred_name"] for r in run_rows(db, again.run_id)}
    assert names == {"runs/pred-0.zarr", "runs/pred-1.zarr", "runs/pred-7.zarr"}

    import dataclasses

    monkeypatch.setitem(REGISTRY, "cari", dataclasses.replace(REGISTRY["cari"], version=REGISTRY["cari"].version + 1))
    with ResultsDB(night1 / "scores.sqlite", create=False) as db:
        status = {(r["pred_name"], r["measure"]): r["status"] for r in latest_rows(db)}
    assert {s for (p, name), s in status.items() if name == "cari"} == {"stale"}
    assert {s for (p, name), s in status.items() if name != "cari"} == {"current"}
    third = run_batch(m, client=client)
    assert (third.scored, third.rows) == (3, 3)  # only cari, in the new version
    with ResultsDB(night1 / "scores.sqlite", create=False) as db:
        assert {r["status"] for r in latest_rows(db) if r["last_run"] == third.run_id} == {"current"}
        cari = [r for r in db.scores(measure=["cari"])]
    assert sorted(r["measure_version"] for r in cari) == [1, 1, 1, 2, 2, 2]  # both versions kept


def test_gate_and_tag_arguments_are_checked(night1, capsys):
    from daskbicl.cli import main

    for args, message in [
        (["--fail-below", "cari"], "--fail-below takes MEASURE=VALUE"),
        (["--fail-below", "carri=0.5"], "unknown measure 'carri'"),
        (["--fail-on-drop", "cari=-1"], "finite number >= 0"),
        (["--fail-on-drop", "cari=x"], "'x' is not a number"),
        (["--tag", "model"], "--tag takes KEY=VALUE"),
    ]:
        capsys.readouterr()
        assert main(["batch", str(write_manifest(night1)), *args]) == 2
        assert message in capsys.readouterr().err


def _schema2(path: Path) -> None:
    """A results file as daskbicl wrote it before runs were recorded (schema 2)."""
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE scores (id INTEGER PRIMARY KEY, truth TEXT NOT NULL, pred TEXT NOT NULL, measure TEXT NOT NULL,
            params TEXT NOT NULL, truth_fp TEXT NOT NULL, pred_fp TEXT NOT NULL, value REAL, version TEXT NOT NULL,
            scored_at TEXT NOT NULL, run_id TEXT, seen_at TEXT, seen_run TEXT,
            UNIQUE (truth, pred, measure, params, truth_fp, pred_fp));
        CREATE TABLE failures (id INTEGER PRIMARY KEY, truth TEXT NOT NULL, pred TEXT NOT NULL, measures TEXT NOT NULL,
            params TEXT NOT NULL, truth_fp TEXT, pred_fp TEXT, reason TEXT NOT NULL, version TEXT NOT NULL,
            failed_at TEXT NOT NULL, run_id TEXT);
        CREATE TABLE runs (run_id TEXT PRIMARY KEY, manifest TEXT, started_at TEXT NOT NULL, finished_at TEXT,
            pairs INTEGER, scored INTEGER, skipped INTEGER, failed INTEGER, status TEXT NOT NULL);
        INSERT INTO runs VALUES ('r1', 'm.toml', '2025-01-01T00:00:00.000+00:00', '2025-01-01T00:01:00.000+00:00',
            1, 1, 0, 0, 'ok');
        INSERT INTO runs VALUES ('r2', 'm.toml', '2025-01-02T00:00:00.000+00:00', '2025-01-02T00:01:00.000+00:00',
            1, 0, 1, 0, 'ok');
        INSERT INTO scores VALUES (1, '/d/t.zarr', '/d/p.zarr', 'cari', '{}', 'tf', 'pf', 0.75, '0.0.9',
            '2025-01-01T00:00:30.000+00:00', 'r1', '2025-01-02T00:00:10.000+00:00', 'r2');
        PRAGMA user_version = 2;
        PRAGMA application_id = 1145193292;
    """)
    conn.close()


def test_an_older_results_file_is_migrated_and_read_only_readers_leave_it_alone(tmp_path):
    old = tmp_path / "old.sqlite"
    _schema2(old)
    raw = old.read_bytes()
    with ResultsDB(old, create=False) as db:  # a reader migrates a copy in memory
        assert [(r["run_id"], r["status"], r["value"]) for r in run_rows(db, "r2")] == [("r2", "reused", 0.75)]
        assert [r["measure_version"] for r in db.scores()] == [1]
    assert old.read_bytes() == raw
    with ResultsDB(old) as db:  # a writer migrates the file
        assert db.schema == 3
        assert [(r["status"], r["value"]) for r in latest_rows(db)] == [("current", 0.75)]
        d = diff_rows(db, "r1", "r2")
        assert [(r["before"], r["after"], r["change"]) for r in d] == [(0.75, 0.75, 0.0)]
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == 3


def _read_only_mount(source: Path, target: Path) -> bool:
    target.mkdir()
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(target)], capture_output=True)
    if done.returncode != 0:
        return False
    subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], capture_output=True)
    probe = target / ".probe"
    try:
        probe.write_text("")
    except OSError:
        return True
    probe.unlink()
    subprocess.run(["umount", str(target)], capture_output=True)
    return False


def test_results_on_a_read_only_mount(night1, client, tmp_path):
    m = write_manifest(night1)
    first = run_batch(m, client=client)
    ro = tmp_path / "ro"
    if not _read_only_mount(night1, ro):
        pytest.skip("this machine does not allow a read-only bind mount")
    try:
        code, out, err = run_cli("results", ro / "scores.sqlite", "--latest", "--format", "json")
        assert code == 0, err
        assert len(json.loads(out)) == 9 and {r["status"] for r in json.loads(out)} == {"current"}
        code, out, err = run_cli("results", ro / "scores.sqlite", "--run", first.run_id, "--wide", "--format", "csv")
        assert code == 0, err
        assert out.splitlines()[0] == "truth_name,pred_name,ari_rows,cari,nce"  # default parameters implied
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)


def test_an_empty_glob_is_a_warning_for_its_group_and_the_night_goes_on(night1, client):
    extra = '[[pairs]]\ntruth = "sim"\npred = "later"\nmeasures = ["cari"]'
    m = write_manifest(night1, extra=extra)
    m.write_text(m.read_text().replace('runs = "pred-*.zarr"', 'runs = "pred-*.zarr"\nlater = "next-*.zarr"'))
    report = run_batch(m, client=client)
    assert (report.pairs, report.scored, report.failed, report.missing, report.exit_code) == (3, 3, 0, 0, 0)
    assert report.warnings == ["pred 'later': 'next-*.zarr' matches nothing (its group has no store this run)"]
    with ResultsDB(night1 / "scores.sqlite", create=False) as db:
        seen = {(r["pred_name"], r["status"]) for r in run_rows(db, report.run_id)}
        (run,) = db.runs()
    assert {p for p, _ in seen} == {f"runs/pred-{k}.zarr" for k in range(3)}  # no phantom row for the glob
    assert (run["pairs"], run["scored"], run["failed"], run["missing"]) == (3, 3, 0, 0)
    assert not (night1 / "scores.sqlite.lock").exists()  # the run lock is removed when the run ends
    assert not (night1 / "scores.sqlite.lock").exists()  # the run lock is removed when the run ends


def test_exports_typed_wide_stable_and_matched_by_name(night1, client, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    import pandas as pd

    from daskbicl.cli import main

    extra = '[[pairs]]\ntruth = "sim"\npred = "runs"\nmeasures = ["fmeasure"]\nparams = { beta = 0.5 }'
    report = run_batch(write_manifest(night1, extra=extra), client=client)
    results = night1 / "scores.sqlite"

    def cli(*args):
        capsys.readouterr()
        code = main(["results", str(results), *map(str, args)])
        return code, capsys.readouterr().out

    assert main(["results", str(results), "--format", "parquet", "-o", str(tmp_path / "s.parquet")]) == 0
    frame = pd.read_parquet(tmp_path / "s.parquet")
    assert str(frame["scored_at"].dtype).startswith("datetime64") and str(frame["scored_at"].dt.tz) == "UTC"
    fm = frame[frame["measure"] == "fmeasure"]
    assert set(fm["param_beta"]) == {0.5} and fm["params"].iloc[0]["beta"] == 0.5  # a column, and a struct
    keys = list(zip(frame["truth"], frame["pred"], frame["measure"], frame["params"].astype(str)))
    assert keys == sorted(keys)  # a stable order, not completion order

    code, out = cli("--format", "json", "--pred", "runs/pred-1.zarr", "--measure", "fmeasure")
    (row,) = json.loads(out)
    assert code == 0 and row["params"]["beta"] == 0.5  # an object, not a JSON string
    assert row["value"] == pytest.approx(daskbicl.fmeasure(night1 / "truth.zarr", night1 / "pred-1.zarr", beta=0.5),
                                         rel=1e-12)
    code, out = cli("--format", "json", "--pred", "pred-1.zarr", "--measure", "cari")
    assert code == 0 and len(json.loads(out)) == 1  # the folder name matches too

    code, out = cli("--wide", "--format", "csv")
    lines = out.splitlines()
    import csv

    assert next(csv.reader([lines[0]])) == ["truth_name", "pred_name", "ari_rows", "cari", "fmeasure[beta=0.5]",
                                            "nce"]
    assert [ln.split(",")[1] for ln in lines[1:]] == [f"runs/pred-{k}.zarr" for k in range(3)]
    code, out = cli("--format", "metrics")
    metrics = json.loads(out)
    assert metrics["sim/truth.zarr"]["runs/pred-2.zarr"]["cari"] == pytest.approx(
        oracle(night1, "pred-2.zarr")["cari"], rel=1e-12)
    code, out = cli("--runs", "--format", "json")
    (run,) = json.loads(out)
    assert code == 0 and run["run_id"] == report.run_id and run["tags"] == {"model": "nmf"}


@pytest.mark.parametrize("delay", [0.0, 0.7, 1.5, 2.5])
def test_sigterm_at_any_moment_is_one_line(night1, delay):
    """SIGTERM while the local cluster starts, scores or stops: one line, exit 143, no lock file left.

    The delay counts from the plan line, which is printed once the results
    file is locked, just before the local cluster is started.
    """
    import signal
    import time

    m = write_manifest(night1)
    proc = subprocess.Popen([sys.executable, "-m", "daskbicl", "batch", str(m), "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline()
    assert first.startswith("3 pairs over 4 stores"), first
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:  # finished before the signal: nothing to check but a clean end
        assert "Traceback" not in err
        return
    assert proc.returncode == 143, err
    assert [ln for ln in err.splitlines() if ln.strip()] == [
        "daskbicl: terminated (SIGTERM); nothing half-written was left"], err
    assert not (night1 / "scores.sqlite.lock").exists()
