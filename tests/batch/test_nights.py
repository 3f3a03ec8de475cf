"""Five nights of a lab's batch on a real scheduler and worker processes, as issue 36 tried it.

Night 1 scores two preds; night 2 adds one, first with a gate that checks
nothing (a typo: exit 2 before any work), then as it should be; night 3
replaces one pred and deletes another (``--fail-on-missing``: exit 4); night
4 changes nothing (the deleted pred is ``gone``: exit 0 with the same gate);
night 5 deletes the only store of a glob group.  Every night's exit status
is the one the README and the batch guide promise, a deleted pred appears
once as missing and never as failed or current, and every view counts
alike.  The CLI runs in subprocesses against a ``dask scheduler`` and two
``dask worker`` processes that start cold (an empty numba cache, shared as
by the workers of one image): the first night says on the client that they
compile (the truth is one chunk of more than 65 536 one-byte codes, which
the compiled byte counter counts), the second does not.
"""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest

import daskbicl

from ..support.batch_fixtures import run_cli
from ..support.cold_cluster import cold_cluster
from ..support.figures import outside_the_image
from ..support.manifests import write_manifest

ROWS, COLS, CHUNK = 70_000, 400, 70_000
COMPILING = "is compiling numba kernels (the one-byte code counter"


def _manifest(lab):
    return write_manifest(lab / "m.toml", {"sim": "truth.zarr"}, {"runs": "pred-*.zarr", "extra": "extra-*.zarr"},
                          [{"truth": "sim", "pred": ["runs", "extra"], "measures": ["cari", "ari_rows"]}],
                          results="scores.sqlite")


def _batch(lab, cluster, *args):
    code, out, err = run_cli("batch", lab / "m.toml", "--scheduler", cluster.address, "--json", *args)
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def cold(tmp_path):
    with cold_cluster(tmp_path / "cluster", workers=2, shared_cache=True) as cluster:
        yield cluster


def test_five_nights_one_story_per_pred(tmp_path, cold):
    lab = tmp_path / "lab"
    lab.mkdir()
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 4, 3, seed=1, chunk=CHUNK), lab / "truth.zarr")
    truth = daskbicl.open(lab / "truth.zarr")

    def pred(name, noise, seed):
        daskbicl.save(daskbicl.perturb(truth, noise, seed=seed), lab / name)

    pred("pred-0.zarr", 0.1, 1)
    pred("pred-1.zarr", 0.2, 2)
    pred("extra-0.zarr", 0.3, 3)
    _manifest(lab)
    results = lab / "scores.sqlite"
    first_cari = daskbicl.score(lab / "truth.zarr", lab / "pred-0.zarr", measures=["cari"])["cari"]

    # night 1, on cold workers: three pairs scored, and the client says that workers compile, and how long
    code, s1, err = _batch(lab, cold, "--fail-below", "cari=0")
    assert code == 0 and (s1["pairs"], s1["scored"], s1["failed"], s1["missing"]) == (3, 3, 0, 0), err
    compiling = [ln for ln in err.splitlines() if COMPILING in ln]
    assert 1 <= len(compiling) <= 2 and len(set(compiling)) == len(compiling), err  # once per compiling worker
    assert "daskbicl: workers compiled numba kernels this run: tcp://" in err

    # night 2: a pred added; a gate with a typo fails the night before any work, and says what was meant
    pred("pred-2.zarr", 0.15, 4)
    for gate, message in [("ari_row=0.1", "Did you mean 'ari_rows'"),
                          ("nce=0.1", "checks nothing: manifest"),
                          ("mocice_bcubed.f2=0.5", "did you mean 'mocice_bcubed.f1'")]:
        code, summary, err = _batch(lab, cold, "--fail-below", gate)
        assert code == 2 and summary is None and "Traceback" not in err, err
        assert message in err, err
    code, runs, _ = run_cli("results", results, "--runs", "--format", "json")
    assert len(json.loads(runs)) == 1  # nothing was recorded by the refused nights
    code, s2, err = _batch(lab, cold, "--fail-below", "cari=0", "--fail-on-missing")
    assert code == 0 and (s2["pairs"], s2["scored"], s2["skipped"]) == (4, 1, 3), err
    assert "compil" not in err  # the kernel compiled on night 1 is loaded (or already there): nothing said
    code, out, err = run_cli("results", results, "--diff", "--changed", "--format", "json")
    moved = {(r["pred_name"], r["status_before"], r["status_after"]) for r in json.loads(out)}
    assert moved == {("runs/pred-2.zarr", "absent", "scored")}, out  # scored then reused at the same value: no move

    # night 3: pred-1 replaced, pred-0 deleted: missing once, not failed; --fail-on-missing fails the night
    shutil.rmtree(lab / "pred-1.zarr")
    pred("pred-1.zarr", 0.4, 5)
    shutil.rmtree(lab / "pred-0.zarr")
    code, s3, err = _batch(lab, cold, "--fail-on-missing")
    assert code == 4, err
    assert (s3["pairs"], s3["scored"], s3["skipped"], s3["failed"], s3["missing"], s3["gone"]) == (4, 1, 2, 0, 1, 0)
    said = [ln for ln in err.splitlines() if "pred-0.zarr" in ln]
    assert len(said) == 2 and said[0].startswith("daskbicl: missing: ")  # once, and the gate's line
    assert said[1].startswith("daskbicl: gate failed: --fail-on-missing: pred runs/pred-0.zarr")
    assert "failed:" not in err.replace("gate failed:", "")

    # night 4: nothing changed: pred-0 is gone, said by no line, and the same gate passes
    code, s4, err = _batch(lab, cold, "--fail-on-missing", "--fail-below", "cari=0")
    assert code == 0, err
    assert (s4["pairs"], s4["scored"], s4["skipped"], s4["failed"], s4["missing"], s4["gone"]) == (4, 0, 3, 0, 0, 1)
    assert "pred-0.zarr" not in err

    # night 5: the only store of the glob group 'extra' deleted: missing once (no "matches nothing" too)
    shutil.rmtree(lab / "extra-0.zarr")
    code, s5, err = _batch(lab, cold)
    assert code == 0, err
    assert (s5["pairs"], s5["failed"], s5["missing"], s5["gone"], s5["warnings"]) == (4, 0, 1, 1, [])
    assert len([ln for ln in err.splitlines() if "extra-0.zarr" in ln]) == 1

    # every view tells the same story
    code, out, err = run_cli("results", results, "--runs", "--format", "json")
    runs = json.loads(out)
    assert [(r["pairs"], r["scored"], r["skipped"], r["failed"], r["missing"], r["gone"]) for r in runs] == [
        (s["pairs"], s["scored"], s["skipped"], s["failed"], s["missing"], s["gone"]) for s in (s1, s2, s3, s4, s5)]
    code, out, err = run_cli("results", results, "--latest", "--format", "json")
    latest = {(r["pred_name"], r["measure"]): r for r in json.loads(out)}
    assert latest[("runs/pred-0.zarr", "cari")]["status"] == "gone"
    assert latest[("runs/pred-0.zarr", "cari")]["value"] == pytest.approx(first_cari, rel=1e-12)
    assert latest[("extra/extra-0.zarr", "cari")]["status"] == "missing"
    assert {r["status"] for k, r in latest.items() if k[0].startswith("runs/pred-") and k[0] != "runs/pred-0.zarr"} \
        == {"current"}
    code, out, err = run_cli("results", results, "--failures", "--format", "json")
    assert code == 0 and json.loads(out or "[]") == []  # never counted as failed
    code, out, err = run_cli("results", results, "--latest", "--wide", "--format", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert [r["pred_name"] for r in table] == ["runs/pred-1.zarr", "runs/pred-2.zarr"]  # never as current
    assert list(table[0]) == ["truth_name", "pred_name", "ari_rows", "cari"]  # no phantom column
    assert "pairs left out of the export (1 gone, 1 missing)" in err
    code, out, err = run_cli("results", results, "--format", "metrics")
    assert set(json.loads(out)["sim/truth.zarr"]) == {"runs/pred-1.zarr", "runs/pred-2.zarr"}
    code, out, err = run_cli("results", results, "--run", "last", "--wide", "--format", "csv")
    assert [r["pred_name"] for r in csv.DictReader(io.StringIO(out))] == ["runs/pred-1.zarr", "runs/pred-2.zarr"]
    code, out, err = run_cli("results", results, "--diff", "--changed", "--format", "json")
    moved = {(r["pred_name"], r["status_before"], r["status_after"]) for r in json.loads(out)}
    assert moved == {("extra/extra-0.zarr", "reused", "missing")}  # only what moved on night 5
    code, out, err = run_cli("results", results, "--diff", "-2", "--format", "json", "--measure", "cari")
    night3 = {r["pred_name"]: r for r in json.loads(out)}
    assert night3["runs/pred-0.zarr"]["status_after"] == "missing" and night3["runs/pred-0.zarr"]["after"] is None

    # the history figure of the five nights: drawn by the CLI, and every legend entry and title inside the image
    code, out, err = run_cli("results", results, "--plot", "-o", lab / "history.png")
    assert code == 0 and err.strip() == "", err
    from daskbicl.batch import plot_results

    fig = plot_results(results)
    assert outside_the_image(fig) == []
    assert len(fig.legends[0].get_texts()) == 4  # pred-0 (gone), pred-1, pred-2, extra-0 (missing)


def test_a_worker_compiling_is_said_on_the_client(client):
    """A worker's compile reaches the client as an event (its CompileWarning stays in the worker's log): the
    batch's listener says once per worker that it compiles, and at the end for how long."""
    from daskbicl.kernels.compiled import tell_client
    from daskbicl.scheduling import COMPILE_TOPIC
    from daskbicl.warmup import CompileNotices

    done = client.run(lambda: None)
    workers = sorted(done)
    for worker in workers:  # the hook the worker's daskbicl.scheduling registered, as a first compile calls it
        client.submit(tell_client, "start", "a test group", workers=[worker], pure=False).result()
        client.submit(tell_client, "end", "a test group", 12.5, workers=[worker], pure=False).result()
        client.submit(tell_client, "start", "another test group", workers=[worker], pure=False).result()
    events = [e for e in client.get_events(COMPILE_TOPIC) if e[1]["group"] in ("a test group", "another test group")]
    assert sorted({e[1]["worker"] for e in events}) == workers
    import io

    out = io.StringIO()
    compiles = CompileNotices(out)
    for event in events:
        compiles(event)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(workers)  # once per worker, not once per kernel group
    assert all("is compiling numba kernels (a test group; first use on that worker" in ln for ln in lines)
    assert compiles.summary() == "daskbicl: workers compiled numba kernels this run: " + ", ".join(
        f"{w} 12.5 s" for w in workers)
    assert CompileNotices(io.StringIO()).summary() is None  # nothing compiled: nothing said
