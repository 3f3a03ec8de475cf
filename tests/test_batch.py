"""``daskbicl batch`` end to end on a real LocalCluster: values, skipping, failures, CLI, export."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import daskbicl
from daskbicl.batch import ResultsDB, run_batch

ROOT = Path(__file__).resolve().parents[1]
ROWS, COLS, CHUNK = 20_000, 3_000, 8_192  # 3 row chunks per store


def run_cli(*args, timeout=240):
    proc = subprocess.run(
        [sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """truth.zarr and pred-0..3.zarr (co-clusterings, 3 row chunks each)."""
    root = tmp_path_factory.mktemp("batch")
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 6, 4, seed=0, chunk=CHUNK), root / "truth.zarr")
    truth = daskbicl.open(root / "truth.zarr")
    for k in range(4):
        daskbicl.save(daskbicl.perturb(truth, 0.1 * (k + 1), seed=k + 1), root / f"pred-{k}.zarr")
    return root


@pytest.fixture
def work(data, tmp_path):
    """A private copy of the stores (tests change them)."""
    for store in data.iterdir():
        shutil.copytree(store, tmp_path / store.name)
    return tmp_path


def run_main(capsys, *args):
    """The CLI in this process (for the pure-Python ``results`` command): (code, stdout, stderr)."""
    from daskbicl.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def manifest(folder, measures='["cari", "nce", "ari_rows"]', preds='"pred-*.zarr"', extra=""):
    path = folder / "m.toml"
    path.write_text(textwrap.dedent(f"""
        [truth]
        sim = "truth.zarr"

        [pred]
        runs = {preds}

        [[pairs]]
        truth = "sim"
        pred = "runs"
        measures = {measures}
        {extra}
    """))
    return path


def rows_of(path, **filters):
    with ResultsDB(path, create=False) as db:
        return db.scores(**filters)


def test_values_equal_score_and_rerun_skips(work, client):
    m = manifest(work)
    report = run_batch(m, work / "r.sqlite", client=client)
    assert (report.pairs, report.scored, report.skipped, report.failed, report.rows) == (4, 4, 0, 0, 12)
    assert report.exit_code == 0
    rows = rows_of(work / "r.sqlite")
    assert len(rows) == 12
    for k in range(4):
        expected = daskbicl.score(work / "truth.zarr", work / f"pred-{k}.zarr", measures=["cari", "nce", "ari_rows"])
        got = {r["measure"]: r["value"] for r in rows if r["pred"] == str(work / f"pred-{k}.zarr")}
        assert got == expected  # the same exact computation: equal, not approximately equal
    row = rows[0]
    assert row["truth"] == str(work / "truth.zarr") and row["params"] == "{}"
    assert row["version"] == daskbicl.__version__ and row["scored_at"].endswith("+00:00")
    assert len(row["truth_fp"]) == len(row["pred_fp"]) == 32

    again = run_batch(m, work / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.rows, again.tasks) == (0, 4, 0, 0)
    assert rows_of(work / "r.sqlite") == rows


def test_changed_input_is_rescored_and_force_rescores_without_duplicates(work, client):
    m = manifest(work)
    run_batch(m, work / "r.sqlite", client=client)
    before = rows_of(work / "r.sqlite")

    pred = daskbicl.open(work / "pred-2.zarr").compute()
    labels = pred.row_labels.values.copy()
    labels[:500] = labels[500]  # a new version of one result
    daskbicl.save(daskbicl.partition(labels, pred.col_labels.values), work / "pred-2.zarr", overwrite=True)
    report = run_batch(m, work / "r.sqlite", client=client)
    assert (report.scored, report.skipped, report.rows) == (1, 3, 3)
    after = rows_of(work / "r.sqlite")
    assert after[:12] == before  # history is kept
    new = {r["measure"]: r["value"] for r in after[12:]}
    assert new == daskbicl.score(work / "truth.zarr", work / "pred-2.zarr", measures=["cari", "nce", "ari_rows"])
    assert len(rows_of(work / "r.sqlite", latest=True)) == 12

    forced = run_batch(m, work / "r.sqlite", client=client, force=True)
    assert (forced.scored, forced.skipped, forced.rows) == (4, 0, 12)
    final = rows_of(work / "r.sqlite")
    assert len(final) == 15  # upserted in place: no duplicate
    assert [r["value"] for r in final] == [r["value"] for r in after]


def test_a_new_measure_or_parameter_scores_only_what_is_new(work, client):
    run_batch(manifest(work, measures='["cari"]'), work / "r.sqlite", client=client)
    first = rows_of(work / "r.sqlite")
    extra = '[[pairs]]\ntruth = "sim"\npred = "runs"\nmeasures = ["fmeasure"]\nparams = { beta = 2 }'
    report = run_batch(manifest(work, measures='["cari", "nce"]', extra=extra), work / "r.sqlite", client=client)
    assert (report.scored, report.rows) == (4, 8)
    rows = rows_of(work / "r.sqlite")
    assert rows[:4] == first  # cari was not rewritten
    assert sorted({r["measure"] for r in rows}) == ["cari", "fmeasure", "nce"]
    fm = [r for r in rows if r["measure"] == "fmeasure"]
    assert {r["params"] for r in fm} == {'{"beta":2.0,"drop_empty":false}'}
    p0 = next(r for r in fm if r["pred"].endswith("pred-0.zarr"))
    assert p0["value"] == pytest.approx(daskbicl.fmeasure(work / "truth.zarr", work / "pred-0.zarr", beta=2), rel=1e-12)


def test_each_store_is_read_once_whatever_the_number_of_pairs(work, client):
    from distributed import get_task_stream

    truth = daskbicl.open(work / "truth.zarr")
    names = {truth.row_labels.data.name, truth.col_labels.data.name}
    with get_task_stream(client) as stream:
        report = run_batch(manifest(work), work / "r.sqlite", client=client)
    assert report.scored == 4
    reads = [r["key"] for r in stream.data
             if isinstance(r["key"], (tuple, list)) and r["key"][0].removeprefix("original-") in names]
    chunks = [tuple(k) for k in reads if not k[0].startswith("original-")]
    assert sorted(chunks) == sorted(set(chunks))  # no chunk read twice
    assert len(chunks) == 3 + 1  # 3 row chunks and 1 column chunk, shared by the 4 pairs


def test_bad_stores_fail_with_a_reason_and_the_others_are_scored(work, client):
    # a corrupt chunk, a missing store, a foreign Zarr store, a misaligned one, negative labels
    chunk = work / "pred-1.zarr" / "row_labels" / "c" / "1"
    chunk.write_bytes(b"\x00garbage" * 64)
    (work / "foreign.zarr").mkdir()
    (work / "foreign.zarr" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    daskbicl.save(daskbicl.random_partition(ROWS + 1, COLS, 3, 3, seed=9), work / "short.zarr")
    labels = np.zeros(ROWS, dtype=np.int64)
    labels[12_345] = -4
    daskbicl.save(daskbicl.partition(labels, np.zeros(COLS, dtype=np.int64)), work / "negative.zarr")
    preds = '["pred-0.zarr", "pred-1.zarr", "missing.zarr", "foreign.zarr", "short.zarr", "negative.zarr", "pred-3.zarr"]'
    report = run_batch(manifest(work, preds=preds), work / "r.sqlite", client=client)
    assert (report.pairs, report.scored, report.failed) == (7, 2, 5)
    assert report.exit_code == 1
    assert {Path(r["pred"]).name for r in rows_of(work / "r.sqlite")} == {"pred-0.zarr", "pred-3.zarr"}
    with ResultsDB(work / "r.sqlite", create=False) as db:
        reasons = {Path(f["pred"]).name: f["reason"] for f in db.failures()}
        runs = db.runs()
    assert reasons["pred-1.zarr"].startswith(f"cannot read pred {work / 'pred-1.zarr'} (variable row_labels chunk 1): ")
    assert reasons["missing.zarr"] == f"pred: no such file or directory: {work / 'missing.zarr'}"
    assert "not a daskbicl store" in reasons["foreign.zarr"]
    assert "truth has 20,000 rows but pred has 20,001" in reasons["short.zarr"]
    assert "negative label -4" in reasons["negative.zarr"]
    assert runs[-1]["status"] == "failed" and (runs[-1]["scored"], runs[-1]["failed"]) == (2, 5)

    # Repaired inputs are scored on the next run; the good pairs are not redone.
    shutil.copytree(work / "pred-0.zarr", work / "missing.zarr")
    again = run_batch(manifest(work, preds=preds), work / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.failed) == (1, 2, 4)


# --------------------------------------------------------------------------- command line


def test_cli_batch_then_results_in_every_text_format(work, local_cluster, capsys):
    address = local_cluster.scheduler_address
    m = manifest(work)
    code, out, err = run_cli("batch", m, "--scheduler", address, "--progress")
    assert code == 0, err
    assert "4 pairs: 4 scored, 0 already scored, 0 failed; 12 rows written to" in out
    assert "pairs 4/4 | tasks" in err  # the progress bar's last line
    last = [ln for ln in err.splitlines() if "pairs 4/4" in ln][-1]
    done, total = last.split("tasks ")[1].split(" |")[0].split("/")
    assert done == total and int(total) > 4
    assert (work / "m.sqlite").exists()  # default: beside the manifest

    code, out, err = run_cli("batch", m, "--scheduler", address, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["scored"], summary["skipped"], summary["failed"]) == (0, 4, 0)

    code, out, err = run_main(capsys, "results", work / "m.sqlite")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["truth", "pred", "measure", "params", "value", "scored_at"]
    assert len(lines) == 2 + 12

    code, out, _ = run_main(capsys, "results", work / "m.sqlite", "--format", "csv", "--measure", "cari", "--pred", "*/pred-[01].zarr")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(table) == 2 and {r["measure"] for r in table} == {"cari"}
    assert set(table[0]) == {"truth", "pred", "measure", "params", "value", "truth_fp", "pred_fp", "version", "scored_at", "run_id"}

    code, out, _ = run_main(capsys, "results", work / "m.sqlite", "--format", "json", "--truth", work / "truth.zarr", "--measure", "nce")
    records = json.loads(out)
    assert code == 0 and len(records) == 4
    expected = daskbicl.score(work / "truth.zarr", work / "pred-3.zarr", measures=["nce"])["nce"]
    assert next(r for r in records if r["pred"].endswith("pred-3.zarr"))["value"] == expected


def test_cli_exit_codes_for_failures_and_bad_manifests(work, local_cluster, capsys):
    address = local_cluster.scheduler_address
    m = manifest(work, preds='["pred-0.zarr", "gone.zarr"]')
    code, out, err = run_cli("batch", m, "--scheduler", address)
    assert code == 1, err
    assert "1 scored, 0 already scored, 1 failed" in out
    assert f"failed: pred {work / 'gone.zarr'}" in err and "no such file or directory" in err
    code, out, err = run_main(capsys, "results", work / "m.sqlite", "--failures", "--format", "json")
    assert code == 0 and json.loads(out)[0]["reason"].startswith("pred: no such file")

    bad = manifest(work, measures='["cari", "nce_typo"]')
    (work / "m.sqlite").unlink()
    code, out, err = run_cli("batch", bad, "--scheduler", address)
    assert code == 2
    assert f"{bad}, line 11: unknown measure 'nce_typo'" in err
    assert "Traceback" not in err and not (work / "m.sqlite").exists()  # rejected before any work



@pytest.mark.parametrize("args, message", [
    (("batch", "{work}/none.toml"), "cannot read manifest"),
    (("batch", "{work}/m.toml", "--workers", "0"), "expected a positive integer"),
    (("results", "{work}/none.sqlite"), "no such results file"),
    (("results", "{work}/x.sqlite", "--format", "xml"), "invalid choice"),
    (("results", "{work}/x.sqlite", "--format", "parquet"), "pass --output"),
    (("results", "{work}/truth.zarr/zarr.json"), "not a usable SQLite results file"),
])
def test_cli_usage_errors_exit_2(work, capsys, args, message):
    manifest(work)
    code, _, err = run_main(capsys, *(a.format(work=work) for a in args))
    assert code == 2 and message in err


def test_cli_on_its_own_local_cluster_and_dry_run(work):
    m = manifest(work, preds='["pred-0.zarr", "pred-1.zarr/row_labels"]')
    code, out, err = run_cli("batch", m, "--dry-run")
    assert code == 0, err
    assert out.splitlines() == [
        f"score\t{work / 'truth.zarr'}\t{work / 'pred-0.zarr'}",
        f"fail\t{work / 'truth.zarr'}\t{work / 'pred-1.zarr' / 'row_labels'}\tpred: {work / 'pred-1.zarr' / 'row_labels'}"
        " is a Zarr store but not a daskbicl store (no 'daskbicl_kind' attribute); write it with daskbicl.save() "
        "or 'daskbicl generate'",
    ]
    assert not (work / "m.sqlite").exists()
    code, out, err = run_cli("batch", m, "--workers", "1", "--results", work / "own.sqlite")
    assert code == 1
    assert "1 scored" in out and "Traceback" not in err
    assert len(rows_of(work / "own.sqlite")) == 3


def test_parquet_export(work, client):
    pytest.importorskip("pyarrow")
    import pandas as pd

    run_batch(manifest(work), work / "r.sqlite", client=client)
    code, _, err = run_cli("results", work / "r.sqlite", "--format", "parquet", "--output", work / "r.parquet")
    assert code == 0, err
    frame = pd.read_parquet(work / "r.parquet")
    assert len(frame) == 12 and list(frame.columns)[:5] == ["truth", "pred", "measure", "params", "value"]
    assert sorted(frame["value"]) == sorted(r["value"] for r in rows_of(work / "r.sqlite"))


def test_parquet_export_without_pyarrow_says_how_to_get_it(work, client, capsys):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("pyarrow is installed")
    run_batch(manifest(work, measures='["cari"]'), work / "r.sqlite", client=client)
    code, _, err = run_main(capsys, "results", work / "r.sqlite", "--format", "parquet", "-o", work / "r.parquet")
    assert code == 2
    assert "parquet export needs pyarrow" in err and "daskbicl[parquet]" in err


def test_results_file_is_readable_while_a_writer_holds_it(work, capsys):
    ResultsDB(work / "r.sqlite").close()
    writer = sqlite3.connect(work / "r.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO runs (run_id, started_at, status) VALUES ('x', 'now', 'running')")
    code, out, err = run_main(capsys, "results", work / "r.sqlite")  # WAL: readers are not blocked
    writer.execute("ROLLBACK")
    assert code == 0 and "no matching rows" in err


@pytest.mark.slow
def test_batch_benchmark_runs_quick():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "batch.py"), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "batch_s" in proc.stdout and "rerun_s" in proc.stdout and "score_each_s" in proc.stdout
