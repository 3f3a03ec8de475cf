"""The batch side of "explain the score" (issue 37): a drop gate that tolerates the noise of the items, the
noise of every move in ``results --diff``, ``results --explain PAIR`` and the manifest's ``ci_method``.

Real parts only: Zarr stores on disk (and on moto's S3 server on loopback), the session's LocalCluster (worker
processes), the CLI in subprocesses where exit statuses matter.  Two nights of one lab are run once for the
module: pred-0 is replaced by another draw of the same noise (its CARI drops by less than the intervals'
widths), pred-1 by a much noisier one (a drop far beyond them).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import daskbicl
from daskbicl.batch import ResultsDB, run_batch
from daskbicl.batch.gates import GateError, check_gates, parse_gate
from daskbicl.batch.manifest import ManifestError, parse_manifest
from daskbicl.batch.runlog import diff_rows, resolve_run

from ..support.batch_fixtures import run_cli
from ..support.manifests import manifest_text, write_manifest
from ..support.s3_server import put_store, s3_manifest

ROWS, COLS, CHUNK = 4_000, 600, 2_048
MEASURES = ["cari", "nce"]
#: (noise, seed) of each pred, night 1 then night 2: pred-0 a redraw of the same noise, pred-1 four times worse.
NIGHTS = {"pred-0.zarr": ((0.1, 11), (0.1, 12)), "pred-1.zarr": ((0.1, 10), (0.4, 20))}


def _truth(folder: Path):
    daskbicl.save(daskbicl.random_partition(ROWS, COLS, 5, 4, seed=3, chunk=CHUNK), folder / "truth.zarr")
    return daskbicl.open(folder / "truth.zarr")


def _write_preds(folder: Path, truth, night: int) -> None:
    for name, draws in NIGHTS.items():
        noise, seed = draws[night]
        shutil.rmtree(folder / name, ignore_errors=True)
        daskbicl.save(daskbicl.perturb(truth, noise, seed=seed), folder / name)


def _manifest(folder: Path, **pair) -> Path:
    return write_manifest(folder / "m.toml", {"sim": "truth.zarr"}, {"runs": "pred-*.zarr"},
                          [{"truth": "sim", "pred": "runs", "measures": MEASURES, **pair}], results="scores.sqlite")


@pytest.fixture(scope="module")
def nights(tmp_path_factory, local_cluster):
    """The lab after two nights with ``ci = 0.95``, each run by ``daskbicl batch --fail-on-significant-drop``:
    ``(folder, [(exit status, stdout, stderr) of night 1, of night 2])``."""
    lab = tmp_path_factory.mktemp("noise") / "lab"
    lab.mkdir()
    truth = _truth(lab)
    manifest = _manifest(lab, ci=0.95)
    done = []
    for night in (0, 1):
        _write_preds(lab, truth, night)
        done.append(run_cli("batch", manifest, "--scheduler", local_cluster.scheduler_address, "--json",
                            "--fail-on-significant-drop", "cari", "--fail-on-significant-drop", "nce"))
    return lab, done


def _moves(lab: Path) -> dict:
    """(pred folder, measure) -> (before, half-width before, after, half-width after), read from the file's score
    rows directly (not through the gate's code)."""
    with ResultsDB(lab / "scores.sqlite", create=False) as db:
        rows = sorted(db.scores(), key=lambda r: r["scored_at"])
    out: dict = {}
    for r in rows:
        out.setdefault((Path(r["pred"]).name, r["measure"]), []).append((r["value"], r["half_width"]))
    return {k: (*v[0], *v[-1]) for k, v in out.items()}


def _gate_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("daskbicl: gate failed: ")]


def test_the_lab_drops_within_and_beyond_the_noise(nights):
    """The premise of the tests below, from the stored rows: both preds got worse; pred-0 by less than the sum of
    the half-widths (the intervals overlap), pred-1 by more."""
    lab, _ = nights
    moves = _moves(lab)
    for measure in MEASURES:
        b, hb, a, ha = moves[("pred-0.zarr", measure)]
        assert a < b and b - a < hb + ha and hb > 0 and ha > 0, (measure, moves)
        b, hb, a, ha = moves[("pred-1.zarr", measure)]
        assert b - a > hb + ha, (measure, moves)


def test_batch_fails_only_the_drop_beyond_the_noise(nights):
    lab, ((code1, out1, err1), (code2, out2, err2)) = nights
    assert code1 == 0, err1
    assert "daskbicl: note: --fail-on-significant-drop cari: 2 values of run" in err1  # nothing to compare, said
    assert "had no earlier value with an interval" in err1
    assert code2 == 4, err2
    assert json.loads(out2)["scored"] == 2
    lines = _gate_lines(err2)
    assert len(lines) == 2, err2
    for line, measure in zip(sorted(lines), ("cari", "nce")):
        assert line.startswith(f"daskbicl: gate failed: --fail-on-significant-drop {measure}: pred runs/pred-1.zarr "
                               f"against truth sim/truth.zarr: {measure}[ci=0.95] went from ")
        assert line.endswith("the intervals do not overlap")
        b, hb, a, ha = _moves(lab)[("pred-1.zarr", measure)]
        assert f"{b:.6g} ± {hb:.3g} to {a:.6g} ± {ha:.3g}" in line
    assert "pred-0.zarr" not in "\n".join(lines)  # it got worse too, within the noise


def test_the_absolute_gate_beside_it_fails_both(nights):
    """The contrast the noise gate exists for: ``--fail-on-drop cari=0`` fails pred-0's move within the noise too."""
    lab, _ = nights
    code, _, err = run_cli("results", lab / "scores.sqlite", "--fail-on-drop", "cari=0",
                           "--fail-on-significant-drop", "cari")
    assert code == 4
    lines = _gate_lines(err)
    assert sum("--fail-on-drop cari=0: pred runs/pred-" in ln for ln in lines) == 2
    assert [ln for ln in lines if "significant" in ln and "pred-1.zarr" in ln] and \
        not [ln for ln in lines if "significant" in ln and "pred-0.zarr" in ln]


def test_results_and_python_doors_give_the_same_verdict(nights):
    lab, (_, (_, _, err2)) = nights
    results = lab / "scores.sqlite"
    code, _, err = run_cli("results", results, "--fail-on-significant-drop", "cari",
                           "--fail-on-significant-drop", "nce")
    assert code == 4 and _gate_lines(err) == _gate_lines(err2)
    code, _, err = run_cli("results", results, "--pred", "pred-0.zarr", "--fail-on-significant-drop", "cari")
    assert code == 0 and not _gate_lines(err), err
    code, _, err = run_cli("results", results, "--run", "-1", "--fail-on-significant-drop", "cari")
    assert code == 0 and "2 values of run" in err  # the first night: nothing earlier, said
    with ResultsDB(results, create=False) as db:
        notes: list = []
        failed = check_gates(db, resolve_run(db, "last"), [parse_gate("cari", "noise")], notes=notes)
        assert [ln for ln in failed if "pred-1.zarr" in ln] == failed and len(failed) == 1
        assert notes == []
        by_label = check_gates(db, resolve_run(db, "last"), [parse_gate("cari[ci=0.95]", "noise")])
        assert [ln.split(": ", 1)[1] for ln in by_label] == [ln.split(": ", 1)[1] for ln in failed]


def test_diff_says_which_moves_are_beyond_the_noise(nights):
    lab, _ = nights
    code, out, err = run_cli("results", lab / "scores.sqlite", "--diff", "--format", "json")
    assert code == 0, err
    rows = {(Path(r["pred_name"]).name, r["measure"]): r for r in json.loads(out)}
    moves = _moves(lab)
    for (pred, measure), r in rows.items():
        b, hb, a, ha = moves[(pred, measure)]
        assert r["noise"] == pytest.approx(hb + ha, rel=1e-12)
        assert r["beyond_noise"] is (pred == "pred-1.zarr")
    code, out, _ = run_cli("results", lab / "scores.sqlite", "--diff")
    header, _, *lines = out.splitlines()
    assert "beyond_noise" in header.split()
    assert {ln.split()[1].split("/")[-1]: ln.split()[-2] for ln in lines if "cari" in ln} == \
        {"pred-0.zarr": "no", "pred-1.zarr": "yes"}
    with ResultsDB(lab / "scores.sqlite", create=False) as db:
        first, last = resolve_run(db, "-1"), resolve_run(db, "last")
        assert {(Path(r["pred_name"]).name, r["measure"]): r["beyond_noise"] for r in diff_rows(db, first, last)} == \
            {k: r["beyond_noise"] for k, r in rows.items()}


@pytest.fixture
def plain_lab(tmp_path):
    """A lab whose manifest has no ``ci``: its values have no interval."""
    truth = _truth(tmp_path)
    _write_preds(tmp_path, truth, 0)
    return tmp_path, _manifest(tmp_path)


def test_a_noise_gate_without_intervals_is_exit_2_naming_ci(plain_lab, client):
    lab, manifest = plain_lab
    code, out, err = run_cli("batch", manifest, "--fail-on-significant-drop", "cari")
    assert code == 2 and "Traceback" not in err
    assert "--fail-on-significant-drop cari compares intervals" in err and "ci = 0.95" in err and "cari" in err
    assert not (lab / "scores.sqlite").exists()  # refused before any work
    run_batch(manifest, client=client)
    code, out, err = run_cli("results", lab / "scores.sqlite", "--fail-on-significant-drop", "cari")
    assert code == 2 and "ci = 0.95" in err and "Traceback" not in err
    with ResultsDB(lab / "scores.sqlite", create=False) as db, pytest.raises(GateError, match="ci = 0.95"):
        check_gates(db, resolve_run(db, "last"), [parse_gate("cari", "noise")])


@pytest.mark.parametrize("given, words", [
    ("cari=0.05", "takes a MEASURE"), ("", "takes a MEASURE"), ("carri", "carri"), ("mocice_bcubed.f2", "not a measure field"),
])
def test_a_bad_noise_gate_is_exit_2(given, words, tmp_path):
    code, _, err = run_cli("results", tmp_path / "none.sqlite", "--fail-on-significant-drop", given)
    assert code == 2 and words in err and "Traceback" not in err, err


def test_manifest_ci_method_is_stored_and_gives_the_python_interval(tmp_path, client):
    truth = _truth(tmp_path)
    _write_preds(tmp_path, truth, 0)
    manifest = _manifest(tmp_path, ci=0.9, ci_method="Percentile")  # not the default (bc), any case
    run_batch(manifest, client=client)
    with ResultsDB(tmp_path / "scores.sqlite", create=False) as db:
        rows = db.scores()
    assert len(rows) == 4 and {r["params"].count('"ci_method":"percentile"') for r in rows} == {1}
    for r in rows:
        want = daskbicl.score(tmp_path / "truth.zarr", r["pred"], measures=[r["measure"]], ci=0.9,
                              ci_method="percentile")
        value = want[r["measure"]]
        assert (r["value"], r["half_width"]) == pytest.approx((float(value), value.half_width), rel=1e-12)
        bc = daskbicl.score(tmp_path / "truth.zarr", r["pred"], measures=[r["measure"]], ci=0.9)
        assert bc[r["measure"]].half_width != pytest.approx(value.half_width, rel=1e-9)  # the default is not it
    code, out, _ = run_cli("results", tmp_path / "scores.sqlite", "--wide", "--format", "csv")
    assert "cari[ci=0.9,ci_method=percentile]" in out.splitlines()[0]


@pytest.mark.parametrize("pair, words", [
    ({"ci": 0.95, "ci_method": "studentized"}, "ci_method"),
    ({"ci": 0.95, "ci_method": 1}, "ci_method"),
    ({"ci_method": "bc"}, "set ci"),
])
def test_a_bad_manifest_ci_method_is_refused_with_its_line(pair, words, tmp_path):
    text = manifest_text({"sim": "truth.zarr"}, {"runs": "pred-*.zarr"},
                         [{"truth": "sim", "pred": "runs", **pair}])
    line = text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("ci_method"))) + 1
    with pytest.raises(ManifestError, match=rf"line {line}\b.*{words}"):
        parse_manifest(text, base_dir=str(tmp_path))
    (tmp_path / "m.toml").write_text(text)
    code, _, err = run_cli("batch", tmp_path / "m.toml", "--dry-run")
    assert code == 2 and f"line {line}" in err and "Traceback" not in err


@pytest.mark.parametrize("fmt", ["markdown", "json", "csv"])
def test_results_explain_prints_the_report_of_explain(fmt, nights, tmp_path):
    lab, _ = nights
    extra = ["--format", fmt] if fmt != "markdown" else []
    code, got, err = run_cli("results", lab / "scores.sqlite", "--explain", "pred-1.zarr", *extra,
                             "--plot", tmp_path / "match.png")
    assert code == 0, err
    assert "explaining pred runs/pred-1.zarr against truth sim/truth.zarr as run " in err
    code, want, err = run_cli("explain", lab / "truth.zarr", lab / "pred-1.zarr", "--measures", *MEASURES,
                              "--format", fmt, "--plot", tmp_path / "want.png")
    assert code == 0, err
    if fmt == "markdown":  # the title names the pair as each command was given it
        assert got.splitlines()[0].startswith("# daskbicl explain: pred runs/pred-1.zarr against truth sim/truth.zarr")
        got, want = got.split("\n", 1)[1], want.split("\n", 1)[1]
    assert got == want and len(want) > 200
    assert (tmp_path / "match.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "match.png").stat().st_size == pytest.approx((tmp_path / "want.png").stat().st_size, rel=0.05)


def test_python_door_explains_the_recorded_pair(nights):
    import xarray as xr

    from daskbicl.batch import ExplainPairError, explain_results

    lab, _ = nights
    got = explain_results(lab / "scores.sqlite", "pred-1.zarr", truth="sim/*")
    want = daskbicl.explain(lab / "truth.zarr", lab / "pred-1.zarr", measures=MEASURES)
    xr.testing.assert_identical(got, want)
    with pytest.raises(ExplainPairError, match="changed since run"):
        explain_results(lab / "scores.sqlite", "pred-1.zarr", run="-1")


@pytest.mark.parametrize("args, words", [
    (["--explain", "pred-9.zarr"], "no scored pair of"),
    (["--explain", "prd-1.zarr"], "did you mean 'pred-1.zarr'"),
    (["--explain", "pred-*.zarr"], "names 2 pairs"),
    (["--explain", "runs/pred-1.zarr", "--run", "-1"], "changed since run"),
    (["--explain", "pred-1.zarr", "--latest"], "does not take --latest"),
    (["--explain", "pred-1.zarr", "--format", "parquet"], "markdown (the default), json or csv"),
    (["--format", "markdown"], "the report of --explain PAIR"),
])
def test_results_explain_refuses_clearly(args, words, nights):
    lab, _ = nights
    code, out, err = run_cli("results", lab / "scores.sqlite", *args)
    assert code == 2 and words in err and "Traceback" not in err, err
    assert out == ""


def test_results_explain_of_a_store_gone_since_the_run(plain_lab, client):
    lab, manifest = plain_lab
    run_batch(manifest, client=client)
    shutil.rmtree(lab / "pred-0.zarr")
    code, out, err = run_cli("results", lab / "scores.sqlite", "--explain", "pred-0.zarr")
    assert code == 2 and "pred runs/pred-0.zarr against truth sim/truth.zarr: pred" in err
    assert "cannot be read now" in err and out == "" and "Traceback" not in err


def test_results_explain_reads_a_bucket_with_the_manifests_storage_options(tmp_path, s3, client):
    """The stores on S3, the credentials and endpoint in the manifest's [storage_options] only: the report is
    re-counted with them, as the batch read the stores."""

    local = tmp_path / "local"
    local.mkdir()
    truth = _truth(local)
    _write_preds(local, truth, 0)
    for name in ("truth.zarr", "pred-0.zarr"):
        put_store(s3, local / name, name)
    manifest = s3_manifest(tmp_path / "m.toml", s3, {"sim": f"{s3.root}/truth.zarr"},
                           {"runs": f"{s3.root}/pred-0.zarr"}, [{"truth": "sim", "pred": "runs", "measures": MEASURES}],
                           results=tmp_path / "r.sqlite")
    assert run_batch(manifest, client=client).scored == 1
    code, got, err = run_cli("results", tmp_path / "r.sqlite", "--explain", "pred-0.zarr", "--format", "json")
    assert code == 0, err
    code, want, err = run_cli("explain", local / "truth.zarr", local / "pred-0.zarr", "--measures", *MEASURES,
                              "--format", "json")
    assert code == 0 and got == want


def test_results_explain_finds_a_redacted_location_in_the_manifest(tmp_path, http_folder, client):
    """The file keeps ``http://***@host/...``; the report is re-counted from the manifest's real location, and
    without the manifest the error says why, naming no secret."""
    folder, url = http_folder
    url = url.replace("http://", "http://nightly:s3cret-pw@")  # the server ignores them; the file must not keep them
    truth = _truth(folder)
    _write_preds(folder, truth, 0)
    manifest = tmp_path / "m.toml"
    manifest.write_text(manifest_text({"sim": f"{url}/truth.zarr"}, {"runs": [f"{url}/pred-0.zarr"]},
                                      [{"truth": "sim", "pred": "runs", "measures": MEASURES}],
                                      results=str(tmp_path / "r.sqlite")))
    assert run_batch(manifest, client=client).scored == 1
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        assert {r["pred"] for r in db.scores()} == {url.replace("nightly:s3cret-pw", "***") + "/pred-0.zarr"}
    code, got, err = run_cli("results", tmp_path / "r.sqlite", "--explain", "pred-0.zarr", "--format", "csv")
    assert code == 0, err
    code, want, err = run_cli("explain", folder / "truth.zarr", folder / "pred-0.zarr", "--measures", *MEASURES,
                              "--format", "csv")
    assert code == 0 and got == want
    manifest.unlink()
    code, out, err = run_cli("results", tmp_path / "r.sqlite", "--explain", "pred-0.zarr")
    assert code == 2 and "without its secret" in err and "cannot be read" in err and out == ""
    assert "s3cret" not in err and "Traceback" not in err
