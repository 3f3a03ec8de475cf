"""Batch building blocks without a cluster: the manifest, fingerprints, the results file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import textwrap

import numpy as np
import pytest

import daskbicl
from daskbicl.batch import (
    ManifestError,
    ResultsDB,
    fingerprint,
    fingerprint_stores,
    load_manifest,
    parse_manifest,
)
from daskbicl.batch.manifest import Request, _Locator, params_key
from daskbicl.batch.results import SCHEMA_VERSION

from ..support.manifests import manifest_text


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("manifest-stores")
    truth = daskbicl.random_partition(3000, 200, 4, 3, seed=0, chunk=1000)
    daskbicl.save(truth, root / "truth.zarr")
    for k in range(3):
        daskbicl.save(daskbicl.perturb(daskbicl.open(root / "truth.zarr"), 0.2, seed=k + 1), root / f"run-{k}.zarr")
    (root / "notes.txt").write_text("not a store")
    return root


def write(folder, text, name="m.toml"):
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


GOOD = """
results = "out/scores.sqlite"

[truth]
sim = "truth.zarr"

[pred]
runs = "run-*.zarr"               # a glob, relative to this file
extra = ["run-0.zarr", "missing.zarr"]

[[pairs]]
truth = "sim"
pred = ["runs", "extra"]
measures = ["cari", "nce"]

[[pairs]]
truth = ["sim"]
pred = "runs"
measures = ["fmeasure"]
params = { beta = 2 }
"""


def test_manifest_expands_globs_relative_to_its_folder_and_merges_requests(stores, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # cron runs from anywhere
    m = load_manifest(write(stores, GOOD))
    truth = str(stores / "truth.zarr")
    runs = [str(stores / f"run-{k}.zarr") for k in range(3)]
    assert list(m.pairs) == [(truth, p) for p in runs] + [(truth, str(stores / "missing.zarr"))]
    assert m.pairs[(truth, runs[0])] == (
        Request(("cari", "nce")),
        Request(("fmeasure",), (("beta", 2.0),)),
    )
    assert m.pairs[(truth, str(stores / "missing.zarr"))] == (Request(("cari", "nce")),)
    assert m.results == str(stores / "out" / "scores.sqlite")
    assert m.stores == [truth, *runs, str(stores / "missing.zarr")]


def test_default_results_file_is_beside_the_manifest(stores):
    path = write(stores, GOOD.replace('results = "out/scores.sqlite"', ""), "nightly.toml")
    assert load_manifest(path).results == str(stores / "nightly.sqlite")


# Each case: manifest text, the line reported, a fragment of the message.
BAD = {
    "unknown top-level key": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\ncolour = 1\n[[pairs]]\ntruth = "t"\npred = "p"\nlimit = 3\n',
                              9, "unknown key 'limit'"),
    "unknown key in pairs": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasure = ["cari"]\n',
                             8, "unknown key 'measure' in [[pairs]] #1"),
    "unknown measure in a multi-line list": (
        '[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = [\n  "cari",\n  "carri",\n]\n',
        10, "unknown measure 'carri'. Did you mean 'cari'"),
    "globs matching nothing, nothing left to score": (
        '[truth]\nt = "truth.zarr"\n[pred]\np = [\n  "none-*.zarr",\n  "runs/*.zarr",\n]\n[[pairs]]\ntruth = "t"\npred = "p"\n',
        6, "'runs/*.zarr' matches nothing"),
    "undefined group": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n\n[[pairs]]\ntruth = "t"\npred = "p"\n\n[[pairs]]\ntruth = "t"\npred = ["p", "q"]\n',
                        12, "pred 'q' is not defined in [pred] (defined: p)"),
    "parameter out of range": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["fmeasure"]\nparams = { beta = -1 }\n',
                               9, "parameter beta must be a number in (0, inf)"),
    "parameter of the wrong type": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["fmeasure"]\n[pairs.params]\nbeta = "x"\n',
                                    10, "parameter beta must be a number in (0, inf), got 'x'"),
    "parameter no measure accepts": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\nparams = { beta = 2 }\n',
                                     9, "unknown parameter(s) beta for cari (they accept: none)"),
    "params without measures": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nparams = { beta = 2 }\n',
                                8, "params needs an explicit measures list"),
    "missing pred key": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\n', 5, "has no 'pred' key"),
    "pairs as a table": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[pairs]\ntruth = "t"\npred = "p"\n', 5, "write [[pairs]]"),
    "no pairs": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n', 1, "no [[pairs]] table"),
    "empty group list": ('[truth]\nt = "truth.zarr"\n[pred]\np = []\n[[pairs]]\ntruth = "t"\npred = "p"\n', 4, "non-empty list"),
    "measures of different kinds": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari", "fmeasure"]\nparams = { beta = 0 }\n',
                                    9, "parameter beta must be a number in (0, inf)"),
    "TOML syntax": ('[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr\n', 4, "invalid TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_manifest_is_rejected_naming_the_line(stores, case):
    text, line, fragment = BAD[case]
    path = write(stores, text, "bad.toml")
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    message = str(err.value)
    assert fragment in message
    assert isinstance(err.value, daskbicl.DaskbiclError)
    if case == "TOML syntax":  # tomllib's own position
        assert f"line {line}" in message
    else:
        assert f"bad.toml, line {line}: " in message, message


def test_every_problem_is_listed_in_line_order(stores):
    text = (
        'colour = "blue"\n'                       # 1
        '[truth]\nt = "truth.zarr"\n'             # 2-3
        '[pred]\np = "nothing-*.zarr"\n'          # 4-5
        '[[pairs]]\ntruth = "t"\npred = "p"\n'    # 6-8
        'measures = ["bogus"]\n'                  # 9
    )
    with pytest.raises(ManifestError) as err:
        parse_manifest(text, base_dir=str(stores), source="x.toml")
    lines = str(err.value).splitlines()
    assert lines[0] == "3 problems in the manifest:"
    assert [ln.split(":")[0] for ln in lines[1:]] == ["x.toml, line 1", "x.toml, line 5", "x.toml, line 9"]


def test_locator_handles_strings_comments_and_nested_tables():
    text = textwrap.dedent('''
        # [not] a header
        title = "a = b # not a comment"
        [truth]
        "quoted.key" = 'x'
        [[pairs]]
        measures = [  # a comment ] with brackets
          "cari",
          """a [multi-line
          string = 1""",
        ]
        after = 1
        [[pairs]]
        params.beta = 2
        [pairs.inner]
        k = 1
    ''').lstrip("\n")
    loc = _Locator(text)
    assert loc.line(("title",)) == 2
    assert loc.line(("truth", "quoted.key")) == 4
    assert loc.spans[("pairs", 0, "measures")] == (6, 10)
    assert loc.line(("pairs", 0, "measures"), token="cari") == 7
    assert loc.line(("pairs", 0, "after")) == 11
    assert loc.line(("pairs", 1, "params", "beta")) == 13
    assert loc.line(("pairs", 1, "inner", "k")) == 15
    assert loc.line(("pairs", 1, "nope")) == 12  # falls back to the table header


def test_url_globs_are_expanded_with_fsspec():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    for name in ("a.zarr", "b.zarr", "c.txt"):
        fs.pipe(f"/bucket/{name}/zarr.json", b"{}")
    text = '[truth]\nt = "memory://bucket/a.zarr"\n[pred]\np = "memory://bucket/*.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\n'
    m = parse_manifest(text)
    a, b = fs.unstrip_protocol("/bucket/a.zarr"), fs.unstrip_protocol("/bucket/b.zarr")
    assert list(m.pairs) == [(a, a), (a, b)]  # the literal and the glob's match are one store
    with pytest.raises(ManifestError, match="line 4: pred 'p': 'memory://bucket/none-\\*' matches nothing"):
        parse_manifest(text.replace("*.zarr", "none-*"))


def test_measure_names_are_read_as_score_reads_them(stores):
    """'CARI' works in a manifest as in score, and names one measure with 'cari'."""
    m = write(stores, '[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n'
                      '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["CARI", " cari ", "Fmeasure"]\n'
                      'params = { beta = 2 }\n', name="case.toml")
    (request,) = next(iter(load_manifest(m).pairs.values()))
    assert request.measures == ("cari", "fmeasure")
    with pytest.raises(ManifestError, match="line 8: unknown measure 'CARRI'. Did you mean 'cari'"):
        load_manifest(write(stores, '[truth]\nt = "truth.zarr"\n[pred]\np = "run-0.zarr"\n'
                                    '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["CARRI"]\n', name="bad.toml"))


def test_params_are_canonical_and_requests_resolve_defaults():
    assert params_key({"beta": 1, "clip": False}) == params_key({"clip": False, "beta": 1.0})
    resolved = Request(("fmeasure", "cari"), (("beta", 2.0),)).resolve("partition", "partition")
    defaults = {k: float(v) if type(v) is int else v for k, v in daskbicl.measures.get("fmeasure").defaults.items()}
    assert [(m.name, p) for m, p in resolved] == [("fmeasure", {**defaults, "beta": 2.0}), ("cari", {})]
    with pytest.raises(daskbicl.MeasureError, match="needs co-clusterings"):
        Request(("cari",)).resolve("biclustering", "partition")


# --------------------------------------------------------------------------- fingerprints


def test_fingerprint_sees_every_content_change_and_nothing_else(tmp_path):
    z = np.arange(5000) % 7
    w = np.arange(300) % 3
    path = tmp_path / "a.zarr"
    daskbicl.save(daskbicl.partition(z, w), path, chunk=1000)
    first = fingerprint(path)
    assert len(first) == 32
    daskbicl.save(daskbicl.partition(z, w), path, chunk=1000, overwrite=True)  # identical rewrite
    os.utime(path / "zarr.json")
    assert fingerprint(path) == first

    changed = z.copy()
    changed[4321] = 6 - changed[4321]  # one label: the chunk's compressed bytes change
    daskbicl.save(daskbicl.partition(changed, w), path, chunk=1000, overwrite=True)
    assert fingerprint(path) != first

    daskbicl.save(daskbicl.partition(z, w), path, chunk=500, overwrite=True)  # same labels, other chunking
    assert fingerprint(path) != first

    daskbicl.save(daskbicl.partition(z, w), path, chunk=1000, overwrite=True)
    assert fingerprint(path) == first
    (path / "zarr.json").write_text((path / "zarr.json").read_text().replace('"partition"', '"partition", "note": 1'))
    assert fingerprint(path) != first  # metadata (attributes) are part of it

    daskbicl.save(daskbicl.partition(z, w), path, chunk=1000, overwrite=True)
    chunk = path / "row_labels" / "c" / "0"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0xFF  # same size, one byte flipped
    chunk.write_bytes(bytes(data))
    assert fingerprint(path) != first


def test_fingerprint_follows_symlinked_folders_and_stops_at_link_cycles(tmp_path):
    z, w = np.arange(5000) % 7, np.arange(300) % 3
    daskbicl.save(daskbicl.partition(z, w), tmp_path / "plain.zarr", chunk=1000)
    # The same store with its row_labels array kept elsewhere and linked in (a common layout on shared disks).
    shutil.copytree(tmp_path / "plain.zarr", tmp_path / "linked.zarr")
    shutil.move(tmp_path / "linked.zarr" / "row_labels", tmp_path / "elsewhere")
    (tmp_path / "linked.zarr" / "row_labels").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "linked.zarr" / "loop").symlink_to(tmp_path / "linked.zarr", target_is_directory=True)  # a cycle
    info = fingerprint_stores([tmp_path / "plain.zarr", tmp_path / "linked.zarr"])
    plain, linked = info[str(tmp_path / "plain.zarr")], info[str(tmp_path / "linked.zarr")]
    # 5 metadata files (group, two label arrays, two label-value tables) + 5 + 1 label chunks + 2 value chunks
    # + the write record
    assert linked.error is None and linked.objects == plain.objects == 5 + 5 + 1 + 2 + 1
    assert linked.fingerprint == plain.fingerprint  # the same content, wherever its folders live

    chunk = tmp_path / "elsewhere" / "c" / "3"
    data = bytearray(chunk.read_bytes())
    data[-1] ^= 0xFF  # a changed chunk behind the link is a changed input
    chunk.write_bytes(bytes(data))
    assert fingerprint(tmp_path / "linked.zarr") != linked.fingerprint


def test_fingerprint_reports_bad_stores_without_raising(stores, tmp_path):
    foreign = tmp_path / "foreign.zarr"
    foreign.mkdir()
    (foreign / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    broken = tmp_path / "broken.zarr"
    broken.mkdir()
    (broken / "zarr.json").write_text("{not json")
    paths = [stores / "truth.zarr", tmp_path / "missing.zarr", stores / "notes.txt", foreign, broken, tmp_path]
    info = fingerprint_stores(paths)
    good = info[str(stores / "truth.zarr")]
    assert good.error is None and good.kind == "partition" and good.nbytes > 0
    # zarr.json of the group, 2 label arrays and 2 label-value tables; 3 row chunks, 1 col chunk, 2 value chunks;
    # the write record
    assert good.objects == 5 + 3 + 1 + 2 + 1
    assert "no such file or directory" in info[str(tmp_path / "missing.zarr")].error
    assert "is a file, but not a NetCDF file, and not a Zarr store" in info[str(stores / "notes.txt")].error
    assert "expected variables 'row_labels' and 'col_labels'" in info[str(foreign)].error
    assert "invalid JSON" in info[str(broken)].error
    assert "not a Zarr store (no zarr.json" in info[str(tmp_path)].error
    with pytest.raises(daskbicl.StoreError, match="no such file"):
        fingerprint(tmp_path / "missing.zarr")


# --------------------------------------------------------------------------- results file


def _pair(truth, pred, truth_fp, pred_fp):
    from daskbicl.batch.results import Pair

    return Pair(truth, pred, truth_fp, pred_fp, "t/" + truth.strip("/"), "p/" + pred.strip("/"))


def test_results_file_upserts_and_filters(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultsDB(path) as db:
        assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        rows = [("cari", "{}", 0.5, 1), ("nce", "{}", float("nan"), 2)]
        db.record_pair(_pair("/t.zarr", "/p1.zarr", "T1", "P1"), rows, run_id="r1")
        db.record_pair(_pair("/t.zarr", "/p1.zarr", "T1", "P1"), [("cari", "{}", 0.75, 1)], run_id="r2")  # updated
        db.record_pair(_pair("/t.zarr", "/p1.zarr", "T1", "P2"), [("cari", "{}", 0.25, 1)])  # changed pred: new row
        db.record_pair(_pair("/t.zarr", "/p2.zarr", "T1", "Q"), [("mocice_bcubed.f1", "{}", 0.9, 1)])
        ids = db.reusable("T1", "P1", {"cari": 1, "nce": 2})
        assert set(ids) == {("cari", "{}"), ("nce", "{}")}
        assert set(db.reusable("T1", "P1", {"cari": 1, "nce": 3})) == {("cari", "{}")}  # nce of another version
        assert set(db.reusable("T1", "Q", {})) == {("mocice_bcubed", "{}")}
        assert db.reusable("T9", "Q", {}) == {}
        everything = db.scores()
        assert len(everything) == 4
        assert [(r["measure"], r["value"]) for r in everything[:3]] == [("cari", 0.75), ("cari", 0.25), ("nce", None)]
        assert len(db.scores(latest=True)) == 3  # the P1 cari row is superseded by the P2 one
        assert {r["pred_fp"] for r in db.scores(latest=True, measure=["cari"], pred=["/p1.zarr"])} == {"P2"}
        assert len(db.scores(pred=["/*p2*"])) == len(db.scores(pred=["/p2.zarr"])) == 1
        assert len(db.scores(pred=["p2.zarr"])) == 1  # a folder name matches too
        assert len(db.scores(measure=["mocice_bcubed"])) == 1
        db.record_failure(_pair("/t.zarr", "/p3.zarr", "T1", None), "cari", "{}", "pred: no such file", run_id="r3",
                          status="missing")
        assert db.failures(pred=["/p3.zarr"])[0]["reason"] == "pred: no such file"
        seen = db.observations(["r3"])
        assert [(o["pred_name"], o["measure"], o["status"]) for o in seen] == [("p/p3.zarr", "*", "missing")]
    con = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):  # the UNIQUE key holds whatever writes the file
        con.execute(
            "INSERT INTO scores (truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at) "
            "VALUES ('/t.zarr', '/p1.zarr', 'cari', '{}', 'T1', 'P1', 0, 'x', 'y')"
        )


SCHEMA_1 = """
CREATE TABLE scores (id INTEGER PRIMARY KEY, truth TEXT NOT NULL, pred TEXT NOT NULL, measure TEXT NOT NULL,
    params TEXT NOT NULL, truth_fp TEXT NOT NULL, pred_fp TEXT NOT NULL, value REAL, version TEXT NOT NULL,
    scored_at TEXT NOT NULL, run_id TEXT, UNIQUE (truth, pred, measure, params, truth_fp, pred_fp));
CREATE TABLE failures (id INTEGER PRIMARY KEY, truth TEXT NOT NULL, pred TEXT NOT NULL, measures TEXT NOT NULL,
    params TEXT NOT NULL, truth_fp TEXT, pred_fp TEXT, reason TEXT NOT NULL, version TEXT NOT NULL,
    failed_at TEXT NOT NULL, run_id TEXT);
CREATE TABLE runs (run_id TEXT PRIMARY KEY, manifest TEXT, started_at TEXT NOT NULL, finished_at TEXT,
    pairs INTEGER, scored INTEGER, skipped INTEGER, failed INTEGER, status TEXT NOT NULL);
INSERT INTO scores (truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id)
    VALUES ('/t.zarr', '/p.zarr', 'cari', '{}', 'T', 'A', 0.5, '0.1.0', '2025-01-01T00:00:00.000+00:00', 'r1'),
           ('/t.zarr', '/p.zarr', 'cari', '{}', 'T', 'B', 0.25, '0.1.0', '2025-01-02T00:00:00.000+00:00', 'r2');
PRAGMA user_version = 1;
"""


def test_results_file_of_schema_1_is_read_as_is_and_upgraded_by_a_run(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(SCHEMA_1)
    with ResultsDB(path, create=False) as db:  # daskbicl results: reads, writes nothing
        assert [(r["pred_fp"], r["seen_at"]) for r in db.scores(latest=True)] == [("B", "2025-01-02T00:00:00.000+00:00")]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1
    with ResultsDB(path) as db:  # a batch run: upgraded in place, every row kept
        assert db.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert [(r["value"], r["seen_run"]) for r in db.scores()] == [(0.5, "r1"), (0.25, "r2")]
        run = db.start_run(None, 1)
        (a,) = db.reusable("T", "A", {"cari": 1})[("cari", "{}")]
        db.reuse(_pair("/t.zarr", "/p.zarr", "T", "A"), [a], run_id=run)  # the input went back to version A
        assert [(r["pred_fp"], r["seen_run"]) for r in db.scores(latest=True)] == [("A", run)]
        assert [(o["status"], o["value"]) for o in db.observations([run])] == [("reused", 0.5)]


def test_results_file_errors(tmp_path):
    with pytest.raises(daskbicl.DaskbiclError, match="no such results file"):
        ResultsDB(tmp_path / "none.sqlite", create=False)
    with pytest.raises(daskbicl.DaskbiclError, match="folder .* does not exist"):
        ResultsDB(tmp_path / "no" / "r.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(daskbicl.DaskbiclError, match="not a usable SQLite results file"):
        ResultsDB(junk)


def test_the_example_manifest_is_valid(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    text = open(os.path.join(root, "examples", "batch", "manifest.toml")).read()
    (tmp_path / "data").mkdir()
    for name in ("truth", "pred-000", "pred-001", "pred-002"):
        daskbicl.save(daskbicl.partition([0, 1, 1], [0, 0]), tmp_path / "data" / f"{name}.zarr")
    path = write(tmp_path, text, "manifest.toml")
    m = load_manifest(path)
    assert len(m.pairs) == 3 and m.results == str(tmp_path / "scores.sqlite")
    assert {len(requests) for requests in m.pairs.values()} == {2}


def test_latest_keeps_one_row_per_parameter_set(tmp_path):
    """Two parameter sets of one measure are two latest rows (a key without the parameters collapses them)."""
    from daskbicl.batch.runlog import latest_rows

    half, two = params_key({"beta": 0.5}), params_key({"beta": 2.0})
    with ResultsDB(tmp_path / "r.sqlite") as db:
        pair = _pair("/t.zarr", "/p.zarr", "T", "P")
        db.record_pair(pair, [("v_measure_rows", half, 0.25, 1), ("v_measure_rows", two, 0.75, 1)], run_id="r1")
        db.record_pair(pair, [("v_measure_rows", two, 0.5, 1)], run_id="r2")  # beta=2 rescored, beta=0.5 kept
        latest = db.scores(latest=True)
        assert sorted((r["params"], r["value"]) for r in latest) == sorted([(half, 0.25), (two, 0.5)])
        assert len(db.scores()) == 2  # the same content: the beta=2 row updated in place
        by_params = {r["params"]: r for r in latest_rows(db)}
    assert set(by_params) == {half, two}  # the run view (CLI --latest) too
    assert (by_params[half]["value"], by_params[two]["value"]) == (0.25, 0.5)
    assert {r["status"] for r in by_params.values()} == {"current"}


def test_each_parameter_of_a_manifest_is_validated_once(stores, monkeypatch):
    """A manifest's parameter values go through their record's check once (at its line), not once per layer."""
    from daskbicl.measures.registry import Param

    real = Param.validate
    seen: list[tuple[str, object]] = []

    def counted(self, name, value):  # the real check, with each call noted
        seen.append((name, value))
        return real(self, name, value)

    monkeypatch.setattr(Param, "validate", counted)
    text = GOOD + '\n[[pairs]]\ntruth = "sim"\npred = "runs"\nmeasures = ["nce", "v_measure_rows"]\n' \
                  'params = { normalizer = "PRINTED", beta = "0.5" }\n'
    m = load_manifest(write(stores, text))
    assert sorted(seen, key=str) == sorted([("beta", 2), ("normalizer", "PRINTED"), ("beta", "0.5")], key=str)
    requests = {r for rs in m.pairs.values() for r in rs}
    assert Request(("nce", "v_measure_rows"), (("beta", 0.5), ("normalizer", "printed"))) in requests  # canonical
    seen.clear()
    bad = write(stores, GOOD.replace("beta = 2", "beta = -1"), "bad.toml")
    with pytest.raises(ManifestError, match=r"line 19: parameter beta must be a number in \(0, inf\), got -1"):
        load_manifest(bad)
    assert seen == [("beta", -1)]  # refused at its line, once


def _datasets(root, names, algorithms=("spectral", "bicl")):
    """Empty folders laid out as a lab keeps its datasets: truth/NAME.zarr and preds/ALGO/NAME.zarr."""
    for name in names:
        (root / "truth" / f"{name}.zarr").mkdir(parents=True)
        for algo in algorithms:
            (root / "preds" / algo / f"{name}.zarr").mkdir(parents=True)


def _lab_manifest(root, name: str, **pair):
    """The lab's manifest: ``truth/NAME.zarr`` against ``preds/ALGO/NAME.zarr`` of two algorithms, one table."""
    algorithms = ("spectral", "bicl")
    return parse_manifest(manifest_text({"data": f"truth/{name}.zarr"},
                                        {a: f"preds/{a}/{name}.zarr" for a in algorithms},
                                        [{"truth": "data", "pred": list(algorithms), **pair}]), base_dir=str(root))


def test_pairing_by_name_one_table_for_24_datasets(tmp_path):
    names = [f"{kind}-n{n}-s{seed}" for kind in ("bicl", "check") for n in (100, 200, 400)
             for seed in (0, 1, 2, 3)]
    assert len(names) == 24
    _datasets(tmp_path, names)
    by_placeholder = _lab_manifest(tmp_path, "{dataset}", measures=["cari"])
    expected = {(str(tmp_path / "truth" / f"{n}.zarr"), str(tmp_path / "preds" / a / f"{n}.zarr"))
                for n in names for a in ("spectral", "bicl")}
    assert set(by_placeholder.pairs) == expected  # 48 pairs, each pred against its own truth, not 24 x 48
    by_stem = _lab_manifest(tmp_path, "*", match="stem")
    assert set(by_stem.pairs) == expected
    assert by_stem.globbed("pred", "bicl/gone.zarr") and by_placeholder.globbed("pred", "bicl/gone.zarr")


@pytest.mark.parametrize("text, line, message", [
    ('[truth]\nt = "truth/{dataset}.zarr"\n[pred]\np = "preds/spectral/*.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\n',
     5, "truth 't' has the placeholder {dataset} and pred 'p' does not"),
    ('[truth]\nt = "truth/{dataset}.zarr"\n[pred]\np = "preds/spectral/{name}.zarr"\n[[pairs]]\ntruth = "t"\n'
     'pred = "p"\n', 5, "has the placeholder {dataset} and pred 'p' does not"),
    ('[truth]\nt = ["truth/{dataset}.zarr", "truth/*.zarr"]\n[pred]\np = "preds/spectral/{dataset}.zarr"\n'
     '[[pairs]]\ntruth = "t"\npred = "p"\n', 2, "every path or glob of a group has the same placeholders"),
    ('[truth]\nt = "truth/*.zarr"\n[pred]\np = "preds/spectral/*.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\n'
     'match = "name"\n', 8, "match must be one of 'all', 'stem'"),
])
def test_pairing_by_name_mistakes_name_their_line(tmp_path, text, line, message):
    _datasets(tmp_path, ["a", "b"])
    with pytest.raises(ManifestError) as err:
        parse_manifest(text, base_dir=str(tmp_path), source="m.toml")
    assert f"m.toml, line {line}: " in str(err.value) and message in str(err.value), str(err.value)


def test_an_empty_glob_is_a_warning_not_a_pair(stores):
    m = parse_manifest('[truth]\nt = "truth.zarr"\n[pred]\np = "run-*.zarr"\nlater = "next-*.zarr"\n'
                       '[[pairs]]\ntruth = "t"\npred = ["p", "later"]\n', base_dir=str(stores))
    assert len(m.pairs) == 3 and not any("next-" in p for _, p in m.pairs)  # no stand-in store, no phantom row
    assert m.empty == {("pred", "later"): ["pred 'later': 'next-*.zarr' matches nothing"]}
    with pytest.raises(ManifestError, match="line 4: pred 'later': 'next-\\*.zarr' matches nothing"):
        parse_manifest('[truth]\nt = "truth.zarr"\n[pred]\nlater = "next-*.zarr"\n[[pairs]]\ntruth = "t"\n'
                       'pred = "later"\n', base_dir=str(stores))  # nothing at all to score: the manifest is wrong


def _two_runs(path):
    """A results file with two runs over two preds: cari, nce and fmeasure (aggregate "pred")."""
    from daskbicl.batch.results import Pair
    from daskbicl.measures import REGISTRY

    fm = params_key({"aggregate": "pred", "beta": 1.0, "clip": False, "drop_empty": False})
    with ResultsDB(path) as db:
        for run, shift in (("r1", 0.0), ("r2", -0.2)):
            for k in range(2):
                pair = Pair("/t.zarr", f"/p{k}.zarr", "T", f"P{k}{run}", "sim/t.zarr", f"runs/p{k}.zarr")
                db.record_pair(pair, [("cari", "{}", 0.9 + shift * k, REGISTRY["cari"].version),
                                      ("nce", params_key({"normalizer": "corrected"}), 0.8, REGISTRY["nce"].version),
                                      ("fmeasure", fm, 0.7, REGISTRY["fmeasure"].version)], run_id=run)
    return fm


def test_a_gate_that_matches_nothing_is_an_error_naming_the_closest(tmp_path):
    from daskbicl.batch.gates import GateError, check_gates, parse_gate

    path = tmp_path / "s.sqlite"
    _two_runs(path)
    with ResultsDB(path, create=False) as db:
        with pytest.raises(GateError, match=r"--fail-below ce=0.5 checks nothing: run r2 has no 'ce' "
                                            r"\(it has: cari, fmeasure@pred, nce; did you mean 'nce'"):
            check_gates(db, "r2", [parse_gate("ce=0.5", "below")])
        with pytest.raises(GateError, match="selected by --truth/--pred/--measure has no 'cari'"):
            check_gates(db, "r2", [parse_gate("cari=0.5", "below")], measure=["nce"])  # filtered away
        # one label per measure and parameter set: nce (its default implied), fmeasure@pred
        assert check_gates(db, "r2", [parse_gate("nce=0.5", "below"), parse_gate("fmeasure@pred=0.5", "below")]) == []
        failed = check_gates(db, "r2", [parse_gate("fmeasure@pred=0.75", "below"),
                                        parse_gate("cari=0.1", "drop")])
    assert failed == [
        "--fail-below fmeasure@pred=0.75: pred runs/p0.zarr against truth sim/t.zarr: fmeasure@pred = 0.7",
        "--fail-below fmeasure@pred=0.75: pred runs/p1.zarr against truth sim/t.zarr: fmeasure@pred = 0.7",
        "--fail-on-drop cari=0.1: pred runs/p1.zarr against truth sim/t.zarr: cari went from 0.9 to 0.7"]
    with pytest.raises(GateError, match=r"'mocice_bcubed.f2' is not a measure field \(mocice_bcubed has the fields "
                                        r"precision, recall, f1; did you mean 'mocice_bcubed.f1'\?\)"):
        parse_gate("mocice_bcubed.f2=0.5", "below")


def test_results_gates_that_check_nothing_exit_2(tmp_path, capsys):
    from daskbicl.cli import main

    path = tmp_path / "s.sqlite"
    _two_runs(path)
    with ResultsDB(path) as db:  # runs recorded as a batch would
        for run in ("r1", "r2"):
            db.conn.execute("INSERT INTO runs (run_id, started_at, status) VALUES (?, ?, 'ok')", (run, run))
    for gate, message in [("ce=0.5", "checks nothing: run r2 has no 'ce'"),
                          ("mocice_bcubed.f2=0.5", "is not a measure field")]:
        capsys.readouterr()
        assert main(["results", str(path), "--fail-below", gate]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert main(["results", str(path), "--fail-below", "cari=0.5"]) == 0
