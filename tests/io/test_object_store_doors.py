"""Every door that touches a store, on a local folder, on S3 (moto's server on loopback) and on a read-only
HTTP server: the same values everywhere; storage that does not answer exits 3 (retry later), a missing
bucket exits 2; no secret of a URL is written or printed anywhere; globs skip hidden temporary prefixes.

Nothing is patched: s3fs talks to moto's standalone server (tests/s3_server.py), the HTTP stores are served
by ``http.server`` in a thread, the "hung" endpoint is a socket that accepts and never answers.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import dask
import numpy as np
import pytest

import daskbicl
from daskbicl.errors import StorageUnavailableError, StoreError

from ..support.batch_fixtures import run_main
from ..support.http_server import serving
from ..support.s3_server import storage_options_toml

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

SECRET = "pa55-SECRET-7f3a9"
MEASURES = ["cari", "nce", "ari_rows"]
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def http_root(tmp_path_factory):
    """A folder served read-only over HTTP on 127.0.0.1 (``http.server`` in a thread): ``(folder, url)``."""
    folder = tmp_path_factory.mktemp("served")
    with serving(folder) as url:
        yield folder, url


@pytest.fixture
def hung_port():
    """A port that accepts connections and never answers (a hung endpoint)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    accepted, stop = [], threading.Event()

    def loop():
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    sock.close()


def _refused_port() -> int:
    """A loopback port nothing listens on (bound, then closed: connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- stores and where they live


def _pair(seed: int = 0, n_rows: int = 3000, n_cols: int = 400):
    rng = np.random.default_rng(seed)
    truth = daskbicl.partition(rng.integers(0, 6, n_rows), rng.integers(0, 4, n_cols))
    noisy = rng.integers(0, 6, n_rows)
    keep = rng.random(n_rows) < 0.7
    pred = daskbicl.partition(np.where(keep, truth.row_labels.values, noisy), rng.integers(0, 3, n_cols))
    return truth, pred


@pytest.fixture(scope="module")
def local_pair(tmp_path_factory):
    """truth.zarr, pred-000.zarr, pred-001.zarr written locally with daskbicl.save, and their local scores."""
    folder = tmp_path_factory.mktemp("pair")
    truth, pred = _pair(0)
    _, other = _pair(1)
    paths = {name: daskbicl.save(ds, folder / name, chunk=1024)
             for name, ds in (("truth.zarr", truth), ("pred-000.zarr", pred), ("pred-001.zarr", other))}
    expected = {name: daskbicl.score(paths["truth.zarr"], paths[name], measures=MEASURES)
                for name in ("pred-000.zarr", "pred-001.zarr")}
    return SimpleNamespace(folder=folder, paths=paths, expected=expected)


@pytest.fixture(params=["local", "s3", "https-read-only"])
def where(request, tmp_path, http_root):
    """A root where stores live and the storage options that reach it: ``put(local, name)`` copies a store there.

    ``https-read-only`` is a plain HTTP server on loopback (fsspec's http file system, as for https://):
    read doors only.
    """
    if request.param == "local":
        root = tmp_path / "data"
        root.mkdir()

        def put(local, name):
            shutil.copytree(local, root / name)
            return str(root / name)

        return SimpleNamespace(kind="local", root=str(root), options=None, put=put, writable=True)
    if request.param == "s3":
        s3 = request.getfixturevalue("s3")
        import fsspec

        fs = fsspec.filesystem("s3", **s3.storage_options)
        prefix = f"{s3.root}/{tmp_path.name}"

        def put(local, name):
            fs.put(str(local), f"{prefix}/{name}", recursive=True)
            return f"{prefix}/{name}"

        return SimpleNamespace(kind="s3", root=prefix, options=s3.storage_options, put=put, writable=True, fs=fs)
    folder, url = http_root
    sub = folder / tmp_path.name
    sub.mkdir()

    def put(local, name):
        shutil.copytree(local, sub / name)
        return f"{url}/{tmp_path.name}/{name}"

    return SimpleNamespace(kind="https", root=f"{url}/{tmp_path.name}", options=None, put=put, writable=False)


def _option_args(options) -> list[str]:
    return [a for k, v in (options or {}).items() for a in ("--storage-option", f"{k}={json.dumps(v)}")]


def _cli(*args, env=None, cwd=None, timeout=300):
    """The ``daskbicl`` command in a subprocess (this worktree's code): (status, stdout, stderr)."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ = {k: v for k, v in environ.items() if v is not None}
    done = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          env=environ, cwd=cwd, timeout=timeout)
    return done.returncode, done.stdout, done.stderr



def _close(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-12), k


# --------------------------------------------------------------------------- the read doors


def test_score_through_python_the_accessor_and_the_cli_gives_the_local_values(where, local_pair):
    truth = where.put(local_pair.paths["truth.zarr"], "truth.zarr")
    pred = where.put(local_pair.paths["pred-000.zarr"], "pred-000.zarr")
    expected = local_pair.expected["pred-000.zarr"]

    _close(daskbicl.score(truth, pred, measures=MEASURES, storage_options=where.options), expected)
    opened = daskbicl.open(truth, storage_options=where.options)
    _close(opened.bicl.score(pred, measures=MEASURES, storage_options=where.options), expected)
    code, out, err = _cli("score", truth, pred, "--json", *sum((["--measure", m] for m in MEASURES), []),
                          *_option_args(where.options))
    assert code == 0, err
    _close(json.loads(out), expected)


def test_batch_globs_reuse_and_missing_give_the_local_values(where, local_pair, tmp_path, local_cluster, capsys):
    truth = where.put(local_pair.paths["truth.zarr"], "truth.zarr")
    for name in ("pred-000.zarr", "pred-001.zarr"):
        where.put(local_pair.paths[name], f"preds/{name}")
    manifest = tmp_path / "night.toml"
    manifest.write_text(
        f'results = "night.sqlite"\n[truth]\nsim = "{truth}"\n[pred]\nrun = "{where.root}/preds/pred-*.zarr"\n'
        f'[[pairs]]\ntruth = "sim"\npred = "run"\nmeasures = {json.dumps(MEASURES)}\n'
        + (storage_options_toml(where.options) if where.options else ""))
    code, out, err = _cli("batch", manifest, "--json", "--scheduler", local_cluster.scheduler_address)
    assert code == 0, err
    first = json.loads(out)
    assert (first["scored"], first["failed"]) == (2, 0), first
    code, out, err = run_main(capsys, "results", tmp_path / "night.sqlite", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    for name in ("pred-000.zarr", "pred-001.zarr"):
        got = {r["measure"]: r["value"] for r in rows if r["pred"].endswith(name)}
        _close(got, local_pair.expected[name])

    if where.writable:  # results -o and the history figure, written where the stores are
        _results_outputs_match_local(where, tmp_path / "night.sqlite", tmp_path, capsys)

    code, out, err = _cli("batch", manifest, "--json", "--scheduler", local_cluster.scheduler_address)  # nothing new
    assert code == 0, err
    assert (json.loads(out)["scored"], json.loads(out)["skipped"]) == (0, 2)
    if where.kind == "https":
        return  # read-only: nothing can be deleted
    if where.kind == "s3":
        where.fs.rm(f"{where.root}/preds/pred-001.zarr", recursive=True)
    else:
        shutil.rmtree(f"{where.root}/preds/pred-001.zarr")
    code, out, err = _cli("batch", manifest, "--json", "--scheduler", local_cluster.scheduler_address)
    assert code == 0, err  # a disappearance is reported once, as missing; it fails nothing (--fail-on-missing: 4)
    assert (json.loads(out)["missing"], json.loads(out)["failed"]) == (1, 0), out
    code, out, err = run_main(capsys, "results", tmp_path / "night.sqlite", "--latest", "--format", "json")
    statuses = {r["pred_name"]: r["status"] for r in json.loads(out)}
    assert statuses == {"run/pred-000.zarr": "current", "run/pred-001.zarr": "missing"}, statuses


def _results_outputs_match_local(where, results, tmp_path, capsys) -> None:
    """``results`` (in this process: pure Python, no cluster) written where the stores are and locally: the same bytes."""
    import fsspec

    fs = fsspec.filesystem("file") if where.kind == "local" else where.fs
    if where.kind == "local":
        os.makedirs(f"{where.root}/out")  # a local output needs its folder; an object store has none
    for fmt, name in (("csv", "scores.csv"), ("json", "scores.json"), ("parquet", "scores.parquet")):
        code, _, err = run_main(capsys, "results", results, "--format", fmt, "-o", f"{where.root}/out/{name}",
                            *_option_args(where.options))
        assert code == 0, err
        code, _, err = run_main(capsys, "results", results, "--format", fmt, "-o", tmp_path / name)
        assert code == 0, err
        assert fs.cat_file(f"{where.root}/out/{name}") == (tmp_path / name).read_bytes(), fmt
    code, _, err = run_main(capsys, "results", results, "--plot", "-o", f"{where.root}/out/history.png",
                        *_option_args(where.options))
    assert code == 0, err
    assert fs.cat_file(f"{where.root}/out/history.png")[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- the write doors


def test_save_open_generate_and_convert_give_the_local_values(where, local_pair, tmp_path):
    if not where.writable:
        pytest.skip("a read-only HTTP server takes no writes")
    truth, pred = _pair(0)
    daskbicl.save(truth, f"{where.root}/saved-truth.zarr", storage_options=where.options)
    daskbicl.save(pred, f"{where.root}/saved-pred.zarr", storage_options=where.options)
    back = daskbicl.open(f"{where.root}/saved-truth.zarr", storage_options=where.options)
    np.testing.assert_array_equal(back.row_labels.values, truth.row_labels.values)
    _close(daskbicl.score(f"{where.root}/saved-truth.zarr", f"{where.root}/saved-pred.zarr", measures=MEASURES,
                          storage_options=where.options), local_pair.expected["pred-000.zarr"])

    code, out, err = _cli("generate", f"{where.root}/gen", "--rows", "2000", "--cols", "300", "--preds", "2",
                          "--chunk", "512", *_option_args(where.options))
    assert code == 0, err
    code, _, err = _cli("generate", tmp_path / "gen-local", "--rows", "2000", "--cols", "300", "--preds", "2",
                        "--chunk", "512")
    assert code == 0, err
    assert not (Path.cwd() / "s3:").exists()  # no local folder named after a URL
    remote = daskbicl.score(f"{where.root}/gen/truth.zarr", f"{where.root}/gen/pred-001.zarr",
                            storage_options=where.options)
    _close(remote, daskbicl.score(tmp_path / "gen-local/truth.zarr", tmp_path / "gen-local/pred-001.zarr"))

    np.save(tmp_path / "rows.npy", truth.row_labels.values)
    np.save(tmp_path / "cols.npy", truth.col_labels.values)
    code, out, err = _cli("convert", f"{where.root}/converted.zarr", "--rows", tmp_path / "rows.npy",
                          "--cols", tmp_path / "cols.npy", *_option_args(where.options))
    assert code == 0, err
    converted = daskbicl.open(f"{where.root}/converted.zarr", storage_options=where.options)
    np.testing.assert_array_equal(converted.col_labels.values, truth.col_labels.values)


# --------------------------------------------------------------------------- globs


def test_globs_on_s3_skip_hidden_temporary_prefixes(s3, local_pair, tmp_path):
    import fsspec

    from daskbicl.batch.manifest import parse_manifest

    fs = fsspec.filesystem("s3", **s3.storage_options)
    for name in ("pred-000.zarr", ".pred-001.zarr.tmp-4f2a", ".pred-002.zarr.old-9c1d"):
        fs.put(str(local_pair.paths["pred-000.zarr"]), f"{s3.root}/runs/{name}", recursive=True)
    fs.put(str(local_pair.paths["truth.zarr"]), f"{s3.root}/truth.zarr", recursive=True)
    text = (f'[truth]\nsim = "{s3.root}/truth.zarr"\n[pred]\nall = "{s3.root}/runs/*"\n'
            f'dotted = "{s3.root}/runs/*pred-00[0-2]*"\n[[pairs]]\ntruth = "sim"\npred = ["all", "dotted"]\n')
    manifest = parse_manifest(text, base_dir=str(tmp_path), storage_options=s3.storage_options)
    assert sorted({p for _, p in manifest.pairs}) == [f"{s3.root}/runs/pred-000.zarr"]
    # a pattern that names a hidden prefix on purpose still reaches it
    text = f'[truth]\nsim = "{s3.root}/truth.zarr"\n[pred]\nx = "{s3.root}/runs/.pred-001*"\n[[pairs]]\n' \
           'truth = "sim"\npred = "x"\n'
    manifest = parse_manifest(text, base_dir=str(tmp_path), storage_options=s3.storage_options)
    assert [p for _, p in manifest.pairs] == [f"{s3.root}/runs/.pred-001.zarr.tmp-4f2a"]


# --------------------------------------------------------------------------- time-outs and exit statuses

_FAST = {"DASK_DASKBICL__STORAGE__CONNECT_TIMEOUT": "1s", "DASK_DASKBICL__STORAGE__READ_TIMEOUT": "1s",
         "DASK_DASKBICL__STORAGE__NOTICE_AFTER": "0.5s", "DASK_DASKBICL__STORAGE__ATTEMPTS": "1"}


def _endpoint(port: int) -> str:
    return json.dumps({"endpoint_url": f"http://127.0.0.1:{port}", "region_name": "us-east-1"})


@pytest.mark.parametrize("scheme", ["s3", "http"])
def test_a_hung_endpoint_exits_3_after_the_time_outs_with_a_notice(hung_port, local_pair, scheme):
    if scheme == "s3":
        url = "s3://nightly/truth.zarr"
        extra = ["--storage-option", "key=k", "--storage-option", "secret=s",
                 "--storage-option", f"client_kwargs={_endpoint(hung_port)}"]
    else:
        url, extra = f"http://alice:{SECRET}@127.0.0.1:{hung_port}/truth.zarr", []
    code, out, err = _cli("score", url, local_pair.paths["pred-000.zarr"], *extra,
                          env=_FAST)  # one attempt of 1 s, past the 0.5 s notice (tests/io/test_s3.py)
    assert code == 3, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("daskbicl: error: cannot read truth ") and "retry later" in lines[-1], err
    assert any(line.startswith("daskbicl: still reading ") for line in lines), err
    assert ("1 attempt per request" in err) == (scheme == "s3"), err
    assert SECRET not in err + out


def test_a_refused_endpoint_exits_3(local_pair):
    port = _refused_port()
    code, out, err = _cli("score", "s3://nightly/truth.zarr", local_pair.paths["pred-000.zarr"],
                          "--storage-option", "key=k", "--storage-option", "secret=s",
                          "--storage-option", f"client_kwargs={_endpoint(port)}", env=_FAST)
    assert code == 3, err
    assert err.count("daskbicl: error:") == 1 and "did not answer" in err, err
    with dask.config.set({"daskbicl.storage.connect_timeout": "1s", "daskbicl.storage.read_timeout": "1s"}):
        with pytest.raises(StorageUnavailableError, match="retry later"):
            daskbicl.open(f"http://127.0.0.1:{port}/truth.zarr")


def test_a_missing_bucket_exits_2_naming_the_location(s3, local_pair):
    missing = "s3://no-such-bucket-here/truth.zarr"
    code, out, err = _cli("score", missing, local_pair.paths["pred-000.zarr"], *_option_args(s3.storage_options))
    assert code == 2, err
    assert err.count("daskbicl: error:") == 1 and missing in err, err
    with pytest.raises(StoreError) as caught:
        daskbicl.open(missing, storage_options=s3.storage_options)
    assert not isinstance(caught.value, StorageUnavailableError)


# --------------------------------------------------------------------------- no secret anywhere


def test_no_secret_in_results_exports_mlflow_output_or_worker_logs(http_root, local_pair, tmp_path, client):
    folder, url = http_root
    sub = folder / f"secret-{tmp_path.name}"
    sub.mkdir()
    for name in ("truth.zarr", "pred-000.zarr"):
        shutil.copytree(local_pair.paths[name], sub / name)
    host = url.removeprefix("http://")
    with_password = f"http://alice:{SECRET}@{host}/{sub.name}"
    signed = f"http://{host}/{sub.name}/pred-000.zarr?X-Amz-Credential=AKIA{SECRET}&X-Amz-Signature={SECRET}"
    manifest = tmp_path / "night.toml"
    manifest.write_text(
        f'results = "night.sqlite"\n[truth]\nsim = "{with_password}/truth.zarr"\n'
        f'[pred]\nok = "{with_password}/pred-000.zarr"\nsigned = "{signed}"\n'
        f'gone = "http://bob:{SECRET}@{host}/{sub.name}/missing.zarr"\n'
        f'[[pairs]]\ntruth = "sim"\npred = ["ok", "signed", "gone"]\nmeasures = ["cari"]\n')
    seen = []
    client.get_worker_logs()  # the logs so far are not this test's
    address = client.scheduler.address
    code, out, err = _cli("batch", manifest, "--json", "--scheduler", address)
    seen += [out, err]
    assert code == 1, err  # the signed URL and the missing store fail; the password URL is scored
    report = json.loads(out)
    # (until batch reads HTTP stores, branch s3nights, the password URL's pair fails too, its reason recorded)
    assert report["failed"] >= 2 and report["scored"] + report["failed"] == 3, report
    code, out, err = _cli("--debug", "batch", manifest, "--force", "--scheduler", address)
    seen += [out, err]
    for args in (["--format", "csv", "-o", tmp_path / "scores.csv"], ["--format", "json", "-o", tmp_path / "s.json"],
                 ["--failures", "--format", "csv", "-o", tmp_path / "failures.csv"], ["--runs", "--format", "json"],
                 ["--latest", "--format", "json"]):
        code, out, err = _cli("results", tmp_path / "night.sqlite", *args)
        assert code == 0, err
        seen += [out, err]
    uri = (tmp_path / "mlruns").as_uri()
    code, out, err = _cli("results", tmp_path / "night.sqlite", "--to-mlflow", uri,
                          env={"MLFLOW_ALLOW_FILE_STORE": "true"})
    assert code == 0, err
    seen += [out, err]
    for argv in (["score", f"{with_password}/truth.zarr", signed, "--workers", "0"],
                 ["--debug", "score", f"{with_password}/truth.zarr", signed],
                 ["--debug", "score", f"{with_password}/nothing.zarr", f"{with_password}/pred-000.zarr"],
                 ["score", f"{with_password}/truth.zarr", f"{with_password}/pred-000.zarr", "--json"]):
        code, out, err = _cli(*argv)
        assert code in (0, 1, 2), err
        seen += [out, err]
    with pytest.raises(StoreError) as caught:
        daskbicl.score(f"{with_password}/truth.zarr", signed)
    seen.append(str(caught.value))
    future = client.submit(daskbicl.open, f"{with_password}/nothing.zarr", pure=False)
    with pytest.raises(StoreError):
        future.result()
    client.run(_log_on_worker, f"{with_password}/truth.zarr", signed)  # what a worker logs passes the filter
    logs = client.get_worker_logs()
    assert any("***@" in line for entries in logs.values() for _, line in entries), logs
    seen += [line for entries in logs.values() for _, line in entries]
    for path in tmp_path.rglob("*"):
        if path.is_file() and path != manifest:  # the manifest is the user's, with the secrets given
            seen.append(path.read_bytes().decode("utf-8", "replace"))
    leaks = [text[max(0, text.find(SECRET) - 200):text.find(SECRET) + 50] for text in seen if SECRET in text]
    assert not leaks, leaks
    assert "***@" in (tmp_path / "failures.csv").read_text()  # the location is still there, redacted


def test_tradeoff_names_its_sweeps_by_their_locations_redacted(http_root, tmp_path):
    """``tradeoff``'s default names are the sweeps' locations: a password in a URL is in no name, no output."""
    folder, url = http_root
    sub = folder / f"tradeoff-{tmp_path.name}"
    truth, sweep = _biclusterings(5)
    daskbicl.save(truth, sub / "bt.zarr")
    daskbicl.save(sweep, sub / "bp.zarr")
    host = url.removeprefix("http://")
    with_password = f"http://alice:{SECRET}@{host}/{sub.name}"
    result = daskbicl.tradeoff(f"{with_password}/bt.zarr", f"{with_password}/bp.zarr", truth_bicluster=0)
    name = f"http://***@{host}/{sub.name}/bp.zarr"
    assert list(result.optimal) == [name] and set(result.results["algorithm"]) == {name}
    want = daskbicl.tradeoff(sub / "bt.zarr", sub / "bp.zarr", names=[name], truth_bicluster=0)
    assert result.results.equals(want.results)
    for argv in ([], ["--json"]):
        code, out, err = _cli("tradeoff", f"{with_password}/bt.zarr", f"{with_password}/bp.zarr",
                              "--truth-bicluster", "0", *argv)
        assert code == 0, err
        assert SECRET not in out + err and name in out, out + err


def _log_on_worker(*locations) -> None:
    import logging

    for where in locations:
        logging.getLogger("distributed.worker").error("cannot read %s: the storage did not answer", where)


# --------------------------------------------------------------------------- storage_options at every door


def _doors() -> list[str]:
    """Every public function of daskbicl that reads a truth (its first parameter): the registry of doors."""
    import inspect

    out = []
    for name in daskbicl.__all__:
        func = getattr(daskbicl, name)
        if callable(func) and not isinstance(func, type):
            try:
                first = next(iter(inspect.signature(func).parameters), None)
            except (TypeError, ValueError):
                continue
            if first == "truth":
                out.append(name)
    return out


def test_every_door_that_reads_a_truth_takes_storage_options():
    import inspect

    doors = _doors()
    assert {"score", "cari", "contingency", "explain", "null", "tradeoff", "pair_scores", "element_scores"} <= set(doors)
    lacking = [name for name in doors if "storage_options" not in inspect.signature(getattr(daskbicl, name)).parameters]
    assert not lacking, lacking


def _biclusterings(seed: int):
    rng = np.random.default_rng(seed)
    return [daskbicl.biclustering(rng.random((3, 600)) < 0.3, rng.random((3, 80)) < 0.3) for _ in range(2)]


#: How each door is called on a pair given as URLs (``t``, ``p``: co-clusterings; ``bt``, ``bp``: biclusterings),
#: and the value compared with the same call on the local stores.
_CALLS = {
    "score": lambda f, t, p, bt, bp, o: f(t, p, measures=MEASURES, storage_options=o),
    "cari": lambda f, t, p, bt, bp, o: f(t, p, storage_options=o),
    "contingency": lambda f, t, p, bt, bp, o: f(t, p, storage_options=o).rows.values.tolist(),
    "explain": lambda f, t, p, bt, bp, o: float(f(t, p, measures=["cari"], storage_options=o).score.sum()),
    "null": lambda f, t, p, bt, bp, o: f(t, p, measures="ari_rows", n=9, seed=0, storage_options=o)["ari_rows"].p_value,
    "element_scores": lambda f, t, p, bt, bp, o: f(t, p, storage_options=o).values.tolist(),
    "pair_scores": lambda f, t, p, bt, bp, o: f(bt, bp, storage_options=o).precision.values.tolist(),
    "tradeoff": lambda f, t, p, bt, bp, o: f(bt, bp, names=["a"], truth_bicluster=0,
                                             storage_options=o).results[["pre", "rec"]].values.tolist(),
}


@pytest.mark.parametrize("door", sorted(_CALLS))
def test_each_door_reads_s3_stores_with_storage_options_as_local_ones(door, s3, local_pair, tmp_path):
    import s3fs

    fs = s3fs.S3FileSystem(**s3.storage_options)
    bt, bp = _biclusterings(3)
    local = {name: str(path) for name, path in local_pair.paths.items()}
    local["bt.zarr"] = str(daskbicl.save(bt, tmp_path / "bt.zarr"))
    local["bp.zarr"] = str(daskbicl.save(bp, tmp_path / "bp.zarr"))
    urls = {}
    for name in ("truth.zarr", "pred-000.zarr", "bt.zarr", "bp.zarr"):
        fs.put(local[name], f"{s3.bucket}/{name}", recursive=True)
        urls[name] = f"{s3.root}/{name}"
    call, func = _CALLS[door], getattr(daskbicl, door)
    names = ("truth.zarr", "pred-000.zarr", "bt.zarr", "bp.zarr")
    on_s3 = call(func, *(urls[n] for n in names), s3.storage_options)
    assert on_s3 == call(func, *(local[n] for n in names), None)
    assert s3.server.requests(), "the door read the bucket"
