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

from ..support.batch_fixtures import commit_manifest, lab_manifest, night_two, run_cli

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


def _key(row: dict) -> str:
    """The metric key the docs promise, spelled out here: the measure (or field), parameters off their defaults."""
    extra = {"method": " method-sample", "beta": " beta-0.5"}
    params = json.loads(row["params"])
    return row["measure"] + "".join(extra[k] for k, v in sorted(params.items()) if (k, v) in (("method", "sample"),
                                                                                                ("beta", 0.5)))


def _by_batch_run(client: MlflowClient, experiment: str = "daskbicl") -> dict:
    """{batch run id: [(parent MLflow run, {(truth name, pred name): child MLflow run})]}, one entry per parent."""
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id])
    parents = {r.info.run_id: r for r in runs if "mlflow.parentRunId" not in r.data.tags}
    children: dict = {run_id: {} for run_id in parents}
    for r in runs:
        if "mlflow.parentRunId" in r.data.tags:
            pair = (r.data.tags["daskbicl.truth"], r.data.tags["daskbicl.pred"])
            assert pair not in children[r.data.tags["mlflow.parentRunId"]]  # one child per pair
            children[r.data.tags["mlflow.parentRunId"]][pair] = r
            assert r.data.tags["daskbicl.run_id"] == parents[r.data.tags["mlflow.parentRunId"]].data.tags[
                "daskbicl.run_id"]
    out: dict = {}
    for run_id, parent in parents.items():
        out.setdefault(parent.data.tags["daskbicl.run_id"], []).append((parent, children[run_id]))
    return out


def _check_pair(client, child, rows: list[dict], scores: dict, run: dict) -> int:
    """The child run of one pair holds what its rows say; returns how many of its values are sampled."""
    tags, params, metrics = child.data.tags, child.data.params, child.data.metrics
    first = rows[0]
    assert child.info.run_name == f"{first['pred_name']} vs {first['truth_name']}"
    assert (params["truth"], params["pred"]) == (first["truth_name"], first["pred_name"])
    assert (tags["daskbicl.truth_path"], tags["daskbicl.pred_path"]) == (first["truth"], first["pred"])
    assert tags["model"] == "nmf" and tags["daskbicl.role"] == "pair"
    for role in ("truth", "pred"):
        assert tags.get(f"daskbicl.{role}_fingerprint") == first[f"{role}_fp"]
    assert (child.info.start_time, child.info.end_time) == (_ms(run["started_at"]), _ms(run["finished_at"]))
    valued = [r for r in rows if r["status"] in ("scored", "reused")]
    sampled = 0
    for r in valued:
        key = _key(r)
        stored = scores[(r["truth_fp"], r["pred_fp"], r["measure"], r["params"])]
        assert metrics[key] == pytest.approx(r["value"], rel=1e-15)
        (point,) = client.get_metric_history(child.info.run_id, key)
        assert point.timestamp == _ms(stored["scored_at"])  # when the value was scored
        if stored["exact"]:
            assert f"{key}.half_width" not in metrics
        else:
            sampled += 1
            assert metrics[f"{key}.half_width"] == stored["half_width"] > 0
            (hw,) = client.get_metric_history(child.info.run_id, f"{key}.half_width")
            assert hw.timestamp == point.timestamp
            assert "sampled estimate" in tags[f"daskbicl.sampled/{key}"]
        base = r["measure"].split(".", 1)[0]
        assert json.loads(params["params/" + _key({**r, "measure": base})]) == json.loads(r["params"])
        assert params[f"version/{base}"] == str(r["measure_version"])
    assert len([k for k in metrics if not k.endswith(".half_width")]) == len(valued)
    return sampled


def test_each_batch_run_is_a_parent_run_with_one_child_per_pair(two_nights, tmp_path, monkeypatch):
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
        ((parent, children),) = exported[run["run_id"]]
        assert parent.info.run_name == run["run_id"]
        assert (parent.info.start_time, parent.info.end_time) == (_ms(run["started_at"]), _ms(run["finished_at"]))
        assert parent.info.status == ("FAILED" if run["status"] == "failed" else "FINISHED")
        tags = parent.data.tags
        assert tags["model"] == "nmf" and tags["daskbicl.status"] == run["status"]
        assert tags["daskbicl.export"] == "complete" and not parent.data.metrics
        if commit:
            assert tags["mlflow.source.git.commit"] == tags["daskbicl.git_commit"] == commit
            assert all(c.data.tags["mlflow.source.git.commit"] == commit for c in children.values())
        by_pair: dict = {}
        for r in seen[run["run_id"]]:
            by_pair.setdefault((r["truth_name"], r["pred_name"]), []).append(r)
        assert sorted(children) == sorted(by_pair) and tags["daskbicl.pairs"] == str(len(by_pair))
        sampled = sum(_check_pair(client, children[pair], rows, scores, run) for pair, rows in by_pair.items())
        valued_preds = {r["pred_name"] for r in seen[run["run_id"]] if r["status"] in ("scored", "reused")}
        assert sampled == 3 * len(valued_preds)  # precision, recall, f1 of each pred
        assert tags["daskbicl.sampled_values"] == str(sampled)

    (first, one), (second, two) = (exported[r["run_id"]][0] for r in runs)
    assert "night" not in first.data.tags and second.data.tags["night"] == "2"
    assert two[("sim/truth.zarr", "runs/pred-0.zarr")].data.tags["night"] == "2"  # the run's tags on each pair
    pairs = [("sim/truth.zarr", f"runs/pred-{k}.zarr") for k in range(3)]
    assert [one[p].data.tags["daskbicl.pair_status"] for p in pairs] == ["scored"] * 3
    gone = two[pairs[0]]
    assert gone.data.tags["daskbicl.pair_status"].startswith("missing: ") and not gone.data.metrics
    assert gone.info.status == "FINISHED"  # missing is not a failure
    assert [two[p].data.tags["daskbicl.pair_status"] for p in pairs[1:]] == ["scored", "reused"]
    fp = "daskbicl.pred_fingerprint"
    assert one[pairs[1]].data.tags[fp] != two[pairs[1]].data.tags[fp]  # replaced: another content
    assert one[pairs[2]].data.tags[fp] == two[pairs[2]].data.tags[fp]
    # one short key per measure, the same in every pair: comparable across preds in MLflow's UI
    assert one[pairs[2]].data.metrics["fmeasure beta-0.5"] == two[pairs[2]].data.metrics["fmeasure beta-0.5"]
    assert {k for p in pairs for k in one[p].data.metrics} == set(one[pairs[0]].data.metrics)
    assert "fmeasure" in one[pairs[0]].data.metrics and "mocice_bcubed.f1 method-sample" in one[pairs[0]].data.metrics
    assert max(len(k) for p in pairs for k in one[p].data.metrics) <= len("mocice_bcubed.precision method-sample"
                                                                         ".half_width")


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
    for ((parent, children),) in exported.values():
        for run in (parent, *children.values()):
            assert all(len(client.get_metric_history(run.info.run_id, k)) == 1 for k in run.data.metrics)

    # an export cut short: a parent with the batch run's tag but never marked complete is replaced, children too
    with ResultsDB(lab / "r.sqlite", create=False) as db:
        last = db.runs()[-1]["run_id"]
    ((whole, whole_children),) = exported[last]
    client.set_tag(whole.info.run_id, "daskbicl.export", "started")
    done = export_mlflow(lab / "r.sqlite", uri, runs=[last])
    assert done.replaced == [last] and list(done.exported) == [last]
    ((again, again_children),) = _by_batch_run(client)[last]
    assert again.info.run_id == done.exported[last] != whole.info.run_id
    assert sorted(again_children) == sorted(whole_children)
    assert all(again_children[p].data.metrics == whole_children[p].data.metrics for p in whole_children)
    for old in (whole, *whole_children.values()):
        assert client.get_run(old.info.run_id).info.lifecycle_stage == "deleted"


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
