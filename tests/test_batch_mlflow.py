"""``daskbicl results FILE --to-mlflow URI``: batch runs read back from a real MLflow file store.

Real Zarr stores, batch runs on the session LocalCluster (worker
processes), the CLI in a subprocess, and MLflow's own client reading the
runs back from a ``file:`` tracking store in the test's folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import dask
import numpy as np
import pytest

import daskbicl
from daskbicl.batch import ResultsDB, export_mlflow, run_batch
from daskbicl.batch.runlog import run_rows

from .support.batch_fixtures import commit_manifest, lab_manifest, night_two, run_cli

mlflow = pytest.importorskip("mlflow", reason="the mlflow extra (mlflow-skinny) is not installed")
from mlflow.tracking import MlflowClient  # noqa: E402

#: A looser sampling tolerance keeps the runs short (fewer samples; the interval is still real).
LOOSE = {"daskbicl.micro_tolerance": 5e-3}


def _masks(rng, k, n_i, n_j, density):
    return rng.random((k, n_i)) < density, rng.random((k, n_j)) < density


def _save_pred(truth_masks, rng, path: Path, flips: float) -> None:
    """A pred: the truth biclusters with a share ``flips`` of memberships flipped, plus two random ones."""
    rows, cols = (m.copy() for m in truth_masks)
    rows ^= rng.random(rows.shape) < flips
    cols ^= rng.random(cols.shape) < flips
    extra_r, extra_c = _masks(rng, 2, rows.shape[1], cols.shape[1], 0.3)
    daskbicl.save(daskbicl.biclustering(np.vstack([rows, extra_r]), np.vstack([cols, extra_c])), path)


def _manifest(lab: Path) -> Path:
    return lab_manifest(lab, """
        [[pairs]]
        truth = "sim"
        pred = "runs"
        measures = ["mocice_bcubed"]
        params = { method = "sample" }

        [[pairs]]
        truth = "sim"
        pred = "runs"
        measures = ["fmeasure"]
        params = { beta = 0.5 }

        [[pairs]]
        truth = "sim"
        pred = "runs"
        measures = ["fmeasure", "e4sc"]
    """, results="r.sqlite")


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory, local_cluster):
    """Night 1: three preds scored.  Night 2: pred-0 deleted (missing), pred-1 replaced, pred-2 reused."""
    from distributed import Client

    lab = tmp_path_factory.mktemp("mlflow") / "lab"
    lab.mkdir()
    rng = np.random.default_rng(26)
    truth = _masks(rng, 5, 240, 160, 0.3)
    daskbicl.save(daskbicl.biclustering(*truth), lab / "truth.zarr")
    for k in range(3):
        _save_pred(truth, rng, lab / f"pred-{k}.zarr", 0.02 * (k + 1))
    manifest = _manifest(lab)
    commit = commit_manifest(lab)
    with Client(local_cluster) as client, dask.config.set(LOOSE):
        run_batch(manifest, client=client)
        night_two(lab, lambda path: _save_pred(truth, rng, path, 0.2))
        run_batch(manifest, client=client, tags={"night": "2"})
    return lab, commit


def _cli(*args, mlflow_file_store=True):
    env = {"MLFLOW_ALLOW_FILE_STORE": "true" if mlflow_file_store else None}
    return run_cli(*args, env=env)


def _ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).timestamp() * 1000)


def _label(row: dict) -> str:
    """The metric key the docs promise, spelled out here: names, measure, parameters off their defaults."""
    params = json.loads(row["params"])
    extra = [f"{k}-{'sample' if v == 'sample' else f'{v:g}'}" for k, v in sorted(params.items())
             if (k, v) in (("method", "sample"), ("beta", 0.5))]
    return " ".join([f"{row['truth_name']}/{row['pred_name']}/{row['measure']}", *extra])


def _by_batch_run(client: MlflowClient, experiment: str = "daskbicl") -> dict:
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id])
    out: dict = {}
    for r in runs:
        out.setdefault(r.data.tags["daskbicl.run_id"], []).append(r)
    return out


def test_each_batch_run_is_one_mlflow_run_read_back_by_mlflow(two_nights, tmp_path, monkeypatch):
    lab, commit = two_nights
    uri = f"file:{tmp_path / 'mlruns'}"
    code, out, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri)
    assert code == 0, err
    assert "2 runs exported" in out and "Traceback" not in err

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=uri)
    exported = _by_batch_run(client)
    with ResultsDB(lab / "r.sqlite", create=False) as db:
        runs = db.runs()
        scores = {(r["truth_fp"], r["pred_fp"], r["measure"], r["params"]): r for r in db.scores()}
        seen = {r["run_id"]: run_rows(db, r["run_id"]) for r in runs}
    assert sorted(exported) == sorted(r["run_id"] for r in runs) and all(len(v) == 1 for v in exported.values())

    for run in runs:
        (got,) = exported[run["run_id"]]
        assert got.info.run_name == run["run_id"]
        assert (got.info.start_time, got.info.end_time) == (_ms(run["started_at"]), _ms(run["finished_at"]))
        assert got.info.status == ("FAILED" if run["status"] == "failed" else "FINISHED")
        tags, params, metrics = got.data.tags, got.data.params, got.data.metrics
        assert tags["model"] == "nmf" and tags["daskbicl.status"] == run["status"]
        assert tags["daskbicl.export"] == "complete"
        if commit:
            assert tags["mlflow.source.git.commit"] == tags["daskbicl.git_commit"] == commit
        valued = [r for r in seen[run["run_id"]] if r["status"] in ("scored", "reused")]
        sampled = 0
        for r in valued:
            key = _label(r)
            stored = scores[(r["truth_fp"], r["pred_fp"], r["measure"], r["params"])]
            assert metrics[key] == pytest.approx(r["value"], rel=1e-15)
            (point,) = client.get_metric_history(got.info.run_id, key)
            assert point.timestamp == _ms(stored["scored_at"])  # when the value was scored
            if stored["exact"]:
                assert f"{key}.half_width" not in metrics
            else:
                sampled += 1
                assert metrics[f"{key}.half_width"] == stored["half_width"] > 0
                (hw,) = client.get_metric_history(got.info.run_id, f"{key}.half_width")
                assert hw.timestamp == point.timestamp
                assert "sampled estimate" in tags[f"daskbicl.sampled/{key}"]
            base = r["measure"].split(".", 1)[0]
            label = " ".join([base, *_label(r).split(" ")[1:]])
            assert json.loads(params[f"params/{label}"]) == json.loads(r["params"])
            assert params[f"version/{base}"] == str(r["measure_version"])
            for role in ("truth", "pred"):
                assert tags[f"daskbicl.fingerprint/{r[role + '_name']}"] == r[role + "_fp"]
        assert sampled == 3 * len({r["pred_name"] for r in valued})  # precision, recall, f1 of each pred
        assert len([k for k in metrics if not k.endswith(".half_width")]) == len(valued)
        assert tags["daskbicl.sampled_values"] == str(sampled)

    first, second = (exported[r["run_id"]][0].data for r in runs)
    assert "night" not in first.tags and second.tags["night"] == "2"
    pair = "daskbicl.pair/sim/truth.zarr/runs/pred-{}.zarr"
    assert [first.tags[pair.format(k)] for k in range(3)] == ["scored"] * 3
    assert second.tags[pair.format(0)].startswith("missing: ")
    assert [second.tags[pair.format(k)] for k in (1, 2)] == ["scored", "reused"]
    assert not any(k.startswith("sim/truth.zarr/runs/pred-0.zarr/") for k in second.metrics)
    fp = "daskbicl.fingerprint/runs/pred-{}.zarr"
    assert first.tags[fp.format(1)] != second.tags[fp.format(1)]  # replaced: another content
    assert first.tags[fp.format(2)] == second.tags[fp.format(2)]
    f_key = "sim/truth.zarr/runs/pred-2.zarr/fmeasure beta-0.5"
    assert first.metrics[f_key] == second.metrics[f_key]  # reused: the same value


def test_exporting_again_adds_no_run_and_replaces_a_partial_export(two_nights, tmp_path, monkeypatch):
    lab, _ = two_nights
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = f"file:{tmp_path / 'mlruns'}"
    done = export_mlflow(lab / "r.sqlite", uri, runs=["-1"])  # the first run only
    assert len(done.exported) == 1 and not done.skipped
    code, out, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri)
    assert code == 0, err
    assert "1 run exported" in out and "1 already exported (skipped)" in out
    code, out, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri)
    assert code == 0 and "0 runs exported" in out and "2 already exported (skipped)" in out
    client = MlflowClient(tracking_uri=uri)
    exported = _by_batch_run(client)
    assert len(exported) == 2 and all(len(v) == 1 for v in exported.values())
    for (run,) in exported.values():
        assert all(len(client.get_metric_history(run.info.run_id, k)) == 1 for k in run.data.metrics)

    # an export cut short: a run with the batch run's tag but never marked complete is replaced
    with ResultsDB(lab / "r.sqlite", create=False) as db:
        last = db.runs()[-1]["run_id"]
    (whole,) = exported[last]
    client.set_tag(whole.info.run_id, "daskbicl.export", "started")
    done = export_mlflow(lab / "r.sqlite", uri, runs=[last])
    assert done.replaced == [last] and list(done.exported) == [last]
    (again,) = _by_batch_run(client)[last]
    assert again.info.run_id != whole.info.run_id and again.data.metrics == whole.data.metrics
    assert client.get_run(whole.info.run_id).info.lifecycle_stage == "deleted"


def test_a_running_batch_is_left_for_later(two_nights, tmp_path, monkeypatch):
    lab, _ = two_nights
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    results = tmp_path / "copy.sqlite"
    shutil.copy(lab / "r.sqlite", results)
    with ResultsDB(results) as db:
        running = db.start_run(None, 0)  # a run that has not finished (its process still holds the lock)
        done = export_mlflow(results, f"file:{tmp_path / 'mlruns'}")
    assert done.pending == [running] and len(done.exported) == 2
    assert "still running (not exported" in done.summary()


def test_options_and_a_refused_store_are_one_line_errors(two_nights, tmp_path):
    lab, _ = two_nights
    uri = f"file:{tmp_path / 'mlruns'}"
    code, _, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri, "--latest")
    assert code == 2 and "--to-mlflow exports whole batch runs" in err and "--latest" in err
    code, _, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri, "--run", "nosuchrun")
    assert code == 2 and "no run of" in err and "'nosuchrun'" in err
    code, _, err = _cli("results", lab / "r.sqlite", "--to-mlflow", uri, mlflow_file_store=False)
    if code == 0:
        pytest.skip(f"mlflow {mlflow.__version__} accepts a file store without MLFLOW_ALLOW_FILE_STORE")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"cannot connect to MLflow at {uri}" in err and "MLFLOW_ALLOW_FILE_STORE" in err


def test_without_mlflow_the_error_names_the_extra(two_nights, tmp_path):
    lab, _ = two_nights
    code = ("import sys; sys.modules['mlflow'] = None; from daskbicl.cli import main; "  # import mlflow fails
            f"sys.exit(main(['results', {str(lab / 'r.sqlite')!r}, '--to-mlflow', 'file:{tmp_path}/m']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "the MLflow export needs mlflow, which is not installed: pip install 'daskbicl[mlflow]'" in proc.stderr
    assert not (tmp_path / "m").exists()
