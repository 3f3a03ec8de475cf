"""``daskbicl batch`` end to end on a real LocalCluster: values, skipping, failures, CLI, export."""

from __future__ import annotations

import csv
import io
import json
import os
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

from ..support.batch_fixtures import run_main

ROOT = Path(__file__).resolve().parents[2]
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


def unseen(rows):
    """Rows without seen_at/seen_run (which every run that finds the inputs unchanged updates)."""
    return [{k: v for k, v in r.items() if not k.startswith("seen_")} for r in rows]


def test_plain_to_zarr_stores_and_netcdf_files_are_inputs(work, client):
    """A store without daskbicl_kind and a NetCDF file: scored, fingerprinted, rescored when they change."""
    import xarray as xr

    labels = daskbicl.open(work / "pred-0.zarr")
    plain = xr.Dataset({"row_labels": ("row", labels.row_labels.values.astype(np.int64)),
                        "col_labels": ("col", labels.col_labels.values.astype(np.int64))})
    plain.to_zarr(work / "plain.zarr")
    plain.to_netcdf(work / "pred.nc")
    m = manifest(work, preds='["pred-0.zarr", "plain.zarr", "pred.nc"]')
    report = run_batch(m, work / "r.sqlite", client=client)
    with ResultsDB(work / "r.sqlite", create=False) as db:
        assert (report.scored, report.failed) == (3, 0), [f["reason"] for f in db.failures()]
    values = {Path(r["pred"]).name: r["value"] for r in rows_of(work / "r.sqlite") if r["measure"] == "cari"}
    assert values["plain.zarr"] == values["pred.nc"] == values["pred-0.zarr"]
    assert run_batch(m, work / "r.sqlite", client=client).skipped == 3
    plain.row_labels.values[:10] = (plain.row_labels.values[:10] + 1) % 6
    plain.to_netcdf(work / "new.nc")  # rewritten as a pipeline would: a new file moved into place
    os.replace(work / "new.nc", work / "pred.nc")
    again = run_batch(m, work / "r.sqlite", client=client)
    assert (again.scored, again.skipped) == (1, 2)
    latest = [r for r in rows_of(work / "r.sqlite") if r["measure"] == "cari"]
    assert len({r["pred_fp"] for r in latest if Path(r["pred"]).name == "pred.nc"}) == 2


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

    assert {r["seen_run"] for r in rows} == {report.run_id}

    again = run_batch(m, work / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.rows, again.tasks) == (0, 4, 0, 0)
    assert unseen(rows_of(work / "r.sqlite")) == unseen(rows)  # nothing rewritten...
    assert {r["seen_run"] for r in rows_of(work / "r.sqlite")} == {again.run_id}  # ...but seen by this run


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
    assert unseen([r for r in after if r["run_id"] != report.run_id]) == unseen(before)  # history is kept
    new = {r["measure"]: r["value"] for r in after if r["run_id"] == report.run_id}
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
    assert unseen([r for r in rows if r["run_id"] != report.run_id]) == unseen(first)  # cari was not rewritten
    assert sorted({r["measure"] for r in rows}) == ["cari", "fmeasure", "nce"]
    fm = [r for r in rows if r["measure"] == "fmeasure"]
    from daskbicl.batch.manifest import params_key
    from daskbicl.measures import get

    assert {r["params"] for r in fm} == {params_key({**get("fmeasure").defaults, "beta": 2})}  # defaults included
    assert '"beta":2.0' in fm[0]["params"]
    # NCE carries its normaliser, so rows of the printed formula (scored before the erratum, params {}) and
    # rows of the corrected one are never confused and a rerun scores the new one
    assert {r["params"] for r in rows if r["measure"] == "nce"} == {'{"normalizer":"corrected"}'}
    p0 = next(r for r in fm if r["pred"].endswith("pred-0.zarr"))
    assert p0["value"] == pytest.approx(daskbicl.fmeasure(work / "truth.zarr", work / "pred-0.zarr", beta=2), rel=1e-12)


def test_each_store_is_read_once_whatever_the_number_of_pairs(work, client):
    from distributed import get_task_stream

    from daskbicl.codes import coding_of

    truth = daskbicl.open(work / "truth.zarr")
    names = {coding_of(truth.row_labels.data).codes.name, coding_of(truth.col_labels.data).codes.name}
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
    assert "expected variables 'row_labels' and 'col_labels'" in reasons["foreign.zarr"]
    assert "truth has 20,000 rows but pred has 20,001" in reasons["short.zarr"]
    assert "pred row_labels has 1 unassigned entry" in reasons["negative.zarr"]
    assert runs[-1]["status"] == "failed" and (runs[-1]["scored"], runs[-1]["failed"]) == (2, 5)

    # Repaired inputs are scored on the next run; the good pairs are not redone.
    shutil.copytree(work / "pred-2.zarr", work / "missing.zarr")
    again = run_batch(manifest(work, preds=preds), work / "r.sqlite", client=client)
    assert (again.scored, again.skipped, again.failed) == (1, 2, 4)
    # identity is by content: a copy of a store already scored against this truth is not rescored
    shutil.rmtree(work / "missing.zarr")
    shutil.copytree(work / "pred-0.zarr", work / "missing.zarr")
    copy = run_batch(manifest(work, preds=preds), work / "r.sqlite", client=client)
    assert (copy.scored, copy.skipped, copy.failed) == (0, 3, 4)


def test_latest_is_the_score_of_the_inputs_as_they_are_now(work, client, capsys):
    m, db = manifest(work, measures='["cari"]', preds='"pred-2.zarr"'), work / "r.sqlite"
    shutil.copytree(work / "pred-2.zarr", work / "original.zarr")
    run_batch(m, db, client=client)
    value_a = rows_of(db)[0]["value"]

    pred = daskbicl.open(work / "pred-2.zarr").compute()
    labels = pred.row_labels.values.copy()
    labels[:2000] = 0
    daskbicl.save(daskbicl.partition(labels, pred.col_labels.values), work / "pred-2.zarr", overwrite=True)
    assert run_batch(m, db, client=client).scored == 1
    assert rows_of(db, latest=True)[0]["value"] != value_a

    shutil.rmtree(work / "pred-2.zarr")  # the original bytes are back
    shutil.copytree(work / "original.zarr", work / "pred-2.zarr")
    again = run_batch(m, db, client=client)
    assert (again.scored, again.skipped) == (0, 1)  # already scored at these fingerprints
    code, out, _ = run_main(capsys, "results", db, "--latest", "--format", "json")
    latest = json.loads(out)
    assert code == 0 and len(latest) == 1
    assert latest[0]["value"] == value_a and latest[0]["last_run"] == again.run_id
    assert latest[0]["status"] == "current" and latest[0]["pred_name"] == "runs/pred-2.zarr"
    assert len(rows_of(db)) == 2  # both versions are kept


def test_a_failing_pair_is_recorded_and_reported_once(work, local_cluster):
    chunk = work / "pred-1.zarr" / "row_labels" / "c" / "1"
    chunk.write_bytes(b"\x00garbage" * 64)
    extra = '[[pairs]]\ntruth = "sim"\npred = "runs"\nmeasures = ["fmeasure"]\nparams = { beta = 2 }'
    m = manifest(work, measures='["cari"]', preds='["pred-0.zarr", "pred-1.zarr", "gone.zarr"]', extra=extra)
    code, out, err = run_cli("batch", m, "--scheduler", local_cluster.scheduler_address)
    assert code == 1, err
    assert "3 pairs: 1 scored, 0 already scored, 2 failed" in out
    failed = [line for line in err.splitlines() if line.startswith("daskbicl: failed:")]
    assert len(failed) == 2, failed  # one line per pair, not one per [[pairs]] table
    assert failed[0] == (f"daskbicl: failed: pred {work / 'gone.zarr'} against truth {work / 'truth.zarr'}: "
                         f"pred: no such file or directory: {work / 'gone.zarr'}")
    assert failed[1].startswith(f"daskbicl: failed: pred {work / 'pred-1.zarr'} against truth")
    with ResultsDB(work / "m.sqlite", create=False) as db:
        failures = db.failures()
    assert [Path(f["pred"]).name for f in failures] == ["gone.zarr", "pred-1.zarr"]
    assert {(f["measures"], f["params"]) for f in failures} == {("cari,fmeasure", '[{},{"beta":2.0}]')}
    assert "; " not in failures[1]["reason"]  # both requests failed for the same reason: said once


def test_a_measure_that_does_not_apply_to_the_stores_is_a_manifest_error(tmp_path):
    rng = np.random.default_rng(0)
    for name in ("truth.zarr", "pred.zarr"):
        daskbicl.save(daskbicl.biclustering(rng.random((2, 300)) < 0.3, rng.random((2, 40)) < 0.3), tmp_path / name)
    m = tmp_path / "m.toml"
    m.write_text('[truth]\nt = "truth.zarr"\n[pred]\np = "pred.zarr"\n'
                 '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["goodness"]\n'
                 '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\n')
    for extra in (("--dry-run",), ()):
        # an unreachable scheduler: the manifest is rejected before any cluster is needed
        code, out, err = run_cli("batch", m, "--scheduler", "tcp://127.0.0.1:1", *extra)
        assert code == 2, err
        assert err.strip() == (
            f"daskbicl: error: {m}, line 9: measure 'cari' needs co-clusterings (partition) but truth is a "
            f"biclustering (truth {tmp_path / 'truth.zarr'}, pred {tmp_path / 'pred.zarr'})"
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.toml", "pred.zarr", "truth.zarr"]  # nothing written


def test_an_unusable_results_file_is_an_error_naming_it_before_any_cluster(work, capsys):
    db = work / "r.sqlite"
    with ResultsDB(db) as results:
        results.finish_run(results.start_run(None, 0), scored=0, skipped=0, failed=0, status="ok")
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = b"\xa5" * (len(data) - page)  # every table's pages garbled; the schema page intact
    db.write_bytes(bytes(data))
    code, out, err = run_cli("batch", manifest(work), "--results", db, "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2, err
    assert err.startswith(f"daskbicl: error: cannot write to the results file {db}: database disk image is malformed")
    assert "Traceback" not in err and "scheduler" not in err  # no cluster was asked for
    code, out, err = run_main(capsys, "results", db)
    assert code == 2 and f"cannot read the results file {db}: database disk image is malformed" in err


def test_one_batch_at_a_time_per_results_file_and_killed_runs_are_marked(work, local_cluster):
    fcntl = pytest.importorskip("fcntl")
    m, db, address = manifest(work), work / "m.sqlite", local_cluster.scheduler_address
    killed = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\nfrom daskbicl.batch import ResultsDB\n"
        "ResultsDB(sys.argv[1]).start_run('m.toml', 4)\nos.kill(os.getpid(), signal.SIGKILL)"
    ), str(db)])
    assert killed.returncode == -9  # its run is left 'running'
    with open(f"{db}.lock", "a") as held:  # as a batch in progress holds it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, out, err = run_cli("batch", m, "--scheduler", address)
        assert code == 3, err  # retry later
        assert f"another daskbicl batch is using {db}" in err and "Traceback" not in err
    code, out, err = run_cli("batch", m, "--scheduler", address)
    assert code == 0, err
    assert "4 scored" in out
    with ResultsDB(db, create=False) as results:
        assert [r["status"] for r in results.runs()] == ["killed", "ok"]
        assert len(results.scores()) == 12


def test_results_filters_are_paths_and_measures_are_checked(work, client, capsys, monkeypatch):
    run_batch(manifest(work), work / "r.sqlite", client=client)
    monkeypatch.chdir(work)  # relative patterns are relative to here, globs and literals alike
    for pattern, names in (("pred-[01].zarr", ["pred-0.zarr", "pred-1.zarr"]), ("pred-2.zarr", ["pred-2.zarr"]),
                           (str(work / "pred-3*"), ["pred-3.zarr"]), ("other/pred-*", [])):
        code, out, err = run_main(capsys, "results", "r.sqlite", "--format", "json", "--measure", "cari",
                                  "--pred", pattern)
        assert code == 0 and sorted(Path(r["pred"]).name for r in json.loads(out)) == names, pattern
    code, out, err = run_main(capsys, "results", "r.sqlite", "--measure", "nosuch")
    assert code == 2 and "unknown measure 'nosuch'" in err
    assert {"cari", "ce", "comi"} <= set(err.split("Available: ")[1].strip().split(", "))
    code, out, err = run_main(capsys, "results", "r.sqlite", "--failures", "--measure", "nce_typo")
    assert code == 2 and "unknown measure 'nce_typo'" in err  # --failures filters are checked too
    code, out, err = run_main(capsys, "results", "r.sqlite", "--latest", "--failures")
    assert code == 2 and "argument --failures: not allowed with argument --latest" in err


# --------------------------------------------------------------------------- command line


def test_cli_batch_then_results_in_every_text_format(work, local_cluster, capsys):
    address = local_cluster.scheduler_address
    m = manifest(work)
    code, out, err = run_cli("batch", m, "--scheduler", address, "--progress")
    assert code == 0, err
    assert "4 pairs: 4 scored, 0 already scored, 0 failed; 12 rows written to" in out
    last = err.splitlines()[-1]  # the progress line's last state: every pair of this run counted
    assert "pairs 4/4 |" in last, err
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

    code, out, _ = run_main(capsys, "results", work / "m.sqlite", "--format", "csv", "--measure", "cari",
                           "--pred", f"{work}/pred-[01].zarr")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and len(table) == 2 and {r["measure"] for r in table} == {"cari"}
    assert set(table[0]) == {"truth", "pred", "measure", "params", "value", "exact", "half_width", "truth_fp",
                             "pred_fp", "version", "scored_at", "run_id", "seen_at", "seen_run", "measure_version",
                             "truth_name", "pred_name"}
    assert {(r["exact"], r["half_width"]) for r in table} == {("1", "")}  # CARI is exact

    code, out, _ = run_main(capsys, "results", work / "m.sqlite", "--format", "json", "--truth", work / "truth.zarr", "--measure", "nce")
    records = json.loads(out)
    assert code == 0 and len(records) == 4
    expected = daskbicl.score(work / "truth.zarr", work / "pred-3.zarr", measures=["nce"])["nce"]
    assert next(r for r in records if r["pred"].endswith("pred-3.zarr"))["value"] == expected


@pytest.fixture(scope="module")
def many_chunks(tmp_path_factory):
    """truth.zarr and 4 preds of 40 row chunks each: a batch of ~500 tasks that lasts a second or two."""
    root = tmp_path_factory.mktemp("progress")
    daskbicl.save(daskbicl.random_partition(40_000, 1_000, 6, 4, seed=0, chunk=1_000), root / "truth.zarr")
    truth = daskbicl.open(root / "truth.zarr")
    for k in range(4):
        daskbicl.save(daskbicl.perturb(truth, 0.1 * (k + 1), seed=k + 1), root / f"pred-{k}.zarr")
    return root


def test_progress_counts_this_runs_pairs_as_they_complete(many_chunks, tmp_path, client):
    m = manifest(many_chunks, measures='["cari", "nce"]')
    run_batch(m, tmp_path / "warm.sqlite", client=client)  # an earlier run on the same cluster is not counted
    log = io.StringIO()  # not a terminal: a line at most every `progress_every` seconds, and the last
    run_batch(m, tmp_path / "r.sqlite", client=client, progress=True, progress_every=0.0, out=log)
    lines = [line for line in log.getvalue().splitlines() if line.startswith("[")]
    done = [int(line.split("pairs ")[1].split("/")[0]) for line in lines]
    totals = {line.split("pairs ")[1].split("/")[1].split(" ")[0] for line in lines}
    assert totals == {"4"}, log.getvalue()
    assert done == sorted(done) and done[-1] == 4 and done[0] == 1, log.getvalue()


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
    assert code == 1, err  # a pair would fail
    assert out.splitlines() == [
        f"score\t{work / 'truth.zarr'}\t{work / 'pred-0.zarr'}",
        f"fail\t{work / 'truth.zarr'}\t{work / 'pred-1.zarr' / 'row_labels'}\tpred: {work / 'pred-1.zarr' / 'row_labels'}"
        " is not a readable Zarr store (ContainsArrayError: An array already exists in store "
        f"file://{work / 'pred-1.zarr' / 'row_labels'} at path .)",
    ]
    assert not (work / "m.sqlite").exists() and not (work / "m.sqlite.lock").exists()
    code, out, err = run_cli("batch", m, "--workers", "1", "--results", work / "own.sqlite")
    assert code == 1
    assert "1 scored" in out and "Traceback" not in err
    assert len(rows_of(work / "own.sqlite")) == 3
    code, out, err = run_cli("batch", manifest(work, preds='"pred-0.zarr"'), "--dry-run", "--results",
                             work / "own.sqlite")
    assert (code, out) == (0, f"skip\t{work / 'truth.zarr'}\t{work / 'pred-0.zarr'}\n"), err


def test_parquet_export(work, client):
    import pandas as pd
    import pyarrow  # noqa: F401  (in the test extra: Parquet export is always tested)

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


def test_results_plot_draws_each_measure_of_each_pred_across_runs(work, client, capsys):
    """Two runs with a store changed in between: the changed pred's line jumps, the others stay flat."""
    from daskbicl.batch import plot_results

    m = manifest(work, measures='["cari", "nce"]')
    run_batch(m, work / "r.sqlite", client=client)
    truth = daskbicl.open(work / "truth.zarr")
    daskbicl.save(daskbicl.perturb(truth, 0.5, seed=99), work / "pred-1.zarr", overwrite=True)
    run_batch(m, work / "r.sqlite", client=client)
    fig = plot_results(work / "r.sqlite", measures=["cari", "nce"])
    assert [ax.get_title() for ax in fig.axes] == ["cari", "nce"]  # nce's default parameters implied
    assert fig._suptitle.get_text() == "scores against the truth 'sim/truth'"
    assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 4  # one legend, one entry per pred
    lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("runs/pred-")]
    assert sorted(ln.get_label() for ln in lines) == [f"runs/pred-{k}" for k in range(4)]
    changed = next(ln for ln in lines if ln.get_label() == "runs/pred-1")
    assert list(changed.get_xdata()) == [1, 2]  # one point per night
    rows = rows_of(work / "r.sqlite", measure=["cari"], pred=[str(work / "pred-1.zarr")])
    assert sorted(changed.get_ydata()) == sorted(r["value"] for r in rows)  # before and after the store changed
    assert len(set(changed.get_ydata())) == 2
    # the command line: one figure, checked writable before anything is read
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot", work / "history.png", "--measure", "cari")
    assert code == 0, err
    assert (work / "history.png").stat().st_size > 1000 and "figure:" in out
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot", "-o", work / "history.svg")
    assert code == 0 and (work / "history.svg").read_text().startswith("<?xml")  # -o and its format
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot")
    assert code == 2 and "--plot needs a file" in err
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot", "-o", work / "history.txt")
    assert code == 2 and ".txt" in err
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot", work / "nowhere" / "h.png")
    assert code == 2 and "does not exist" in err
    code, out, err = run_main(capsys, "results", work / "r.sqlite", "--plot", work / "h.png", "--measure", "e4sc")
    assert code == 2 and "no rows for measure(s) e4sc; the file has cari, nce" in err
