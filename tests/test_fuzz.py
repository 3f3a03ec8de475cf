"""Fuzz: the command line and ``score`` take anything and answer with a result or a DaskbiclError, never anything else.

Bounded for CI (``max_examples`` below; ``HYPOTHESIS_PROFILE=thorough`` runs
1,000 examples each).  The argument fuzz runs ``daskbicl.cli.main`` in this
process against real stores, damaged stores, manifests and results files;
commands that would start a cluster are pointed at an unreachable address
or an in-process scheduler so that an example stays well under a second.
"""

from __future__ import annotations

import os
import string
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import daskbicl
from daskbicl.batch import ResultsDB

from .support.damaged import make_stores

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
EXAMPLES = 1000 if PROFILE == "thorough" else 80
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = make_stores(tmp_path_factory.mktemp("fuzz"))
    (root / "m.toml").write_text('[truth]\nt = "t.zarr"\n[pred]\np = ["t.zarr", "truncated.zarr"]\n'
                                 '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\n')
    (root / "bad.toml").write_text("[truth\n")
    with ResultsDB(root / "r.sqlite"):
        pass
    np.save(root / "rows.npy", np.arange(4000) % 5)
    np.save(root / "cols.npy", np.arange(300) % 3)
    return root


# --------------------------------------------------------------------------- the command line

COMMON = ["--json", "--progress", "--no-progress", "--debug", "--help", "--overwrite", "--force", "--dry-run",
          "--latest", "--failures", "--drop-empty"]
OPTIONS = {
    "score": ["--measure", "--measures", "--param", "--null", "--seed", "--unassigned", "--scheduler", "--workers"],
    "generate": ["--rows", "--cols", "--row-clusters", "--col-clusters", "--noise", "--seed", "--kind", "--biclusters",
                 "--density", "--layout", "--overlap", "--preds", "--chunk"],
    "convert": ["--rows", "--cols", "--row-mask", "--col-mask", "--biclusters", "--shape", "--row-coords",
                "--col-coords"],
    "tradeoff": ["--index", "--name", "--truth-bicluster", "--pre-min", "--rec-min", "--lam", "--plot", "--pr-plot",
                 "--unassigned"],
    "batch": ["--results", "--scheduler"],
    "results": ["--format", "--truth", "--pred", "--measure", "--output", "--plot"],
    "measures": [],
}
WORDS = ["0", "1", "2", "-1", "3", "1e3", "1e30", "2.5", "nan", "inf", "-inf", "x", "", " ", "beta=2", "beta=x",
         "beta=1e400", "R=-1", "=", "a=b=c", "cari", "CARI", "nce", "fmeasure", "carri", "cluster", "error",
         "singleton", "csv", "json", "table", "parquet", "random", "blocks", "biclustering", "partition", "jaccard",
         "threads", "synchronous", "nonsense::", "tcp://127.0.0.1:9", "memory://nowhere.zarr", "'; DROP TABLE x;--",
         "*", "{s}/t.zarr", "{s}/b.zarr", "{s}/truncated.zarr", "{s}/flipped.zarr", "{s}/deleted_metadata.zarr",
         "{s}/kind_array.zarr", "{s}/file.zarr", "{s}/loop.zarr", "{s}/missing.zarr", "{s}/m.toml",
         "{s}/bad.toml", "{s}/r.sqlite", "{s}/rows.npy", "{s}/cols.npy", "{s}", "out.zarr", "fig.png", "fig.bmp",
         "nowhere/fig.png", "gen"]


PATHS = [w for w in WORDS if w.startswith("{s}")] + ["out.zarr", "gen", "missing.zarr", "memory://nowhere.zarr"]
POSITIONAL = {"score": 2, "generate": 1, "convert": 1, "tradeoff": 2, "batch": 1, "results": 1, "measures": 0}


@st.composite
def argvs(draw):
    """A subcommand, positional paths, options with values, and now and then a stray token."""
    command = draw(st.sampled_from(sorted(OPTIONS)))
    tokens = [command] + [draw(st.sampled_from(PATHS)) for _ in range(draw(st.integers(0, POSITIONAL[command] + 1)))]
    for _ in range(draw(st.integers(0, 4))):
        tokens.append(draw(st.sampled_from(OPTIONS[command] + COMMON if OPTIONS[command] else COMMON)))
        if draw(st.integers(0, 4)):
            tokens.append(draw(st.one_of(st.sampled_from(WORDS), st.text(string.printable, max_size=6))))
    if not draw(st.integers(0, 5)):
        tokens.insert(draw(st.integers(0, len(tokens))), draw(st.text(string.printable, max_size=6)))
    # Keep every example fast and local: nothing starts a cluster, nothing generates millions of labels.
    if command in ("score", "tradeoff", "batch") and "--scheduler" not in tokens:
        tokens += ["--scheduler", "threads" if command != "batch" else "tcp://127.0.0.1:9"]
    for flag, most in (("--rows", 10_000), ("--cols", 10_000), ("--null", 20), ("--preds", 3), ("--biclusters", 10),
                       ("--row-clusters", 50), ("--col-clusters", 50)):
        tokens = [t if tokens[i - 1] != flag or not _large(t, most) else "2" for i, t in enumerate(tokens)]
    return tokens


def _large(token: str, most: int) -> bool:
    try:
        return float(token) > most
    except ValueError:
        return False


@FUZZ
@given(argv=argvs())
def test_the_command_line_answers_with_a_status_never_a_traceback(argv, root, tmp_path, capfd):
    from daskbicl.cli import main

    argv = [a.replace("{s}", str(root)) for a in argv]
    capfd.readouterr()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with dask.config.set({"daskbicl.connect_timeout": "0.2s"}):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: --help, usage errors
                code = exc.code
            except daskbicl.DaskbiclError:
                assert "--debug" in argv  # --debug shows the traceback of a DaskbiclError, nothing else
                code = None
    finally:
        os.chdir(old)
    out, err = capfd.readouterr()
    event(f"{argv[0]}: exit {code}")
    assert code in (0, 1, 2, 3, None), (argv, code, err)
    if code is not None:
        assert "Traceback" not in err, (argv, err)
    if code in (2, 3):
        assert err.count("daskbicl: error:") == 1, (argv, err)


# --------------------------------------------------------------------------- score's inputs

SCALARS = st.one_of(st.integers(-3, 5), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.booleans(), st.none(), st.text(max_size=3), st.binary(max_size=2),
                    st.tuples(st.integers(0, 2)), st.lists(st.integers(0, 2), max_size=2),
                    st.complex_numbers(max_magnitude=3))
DTYPES = ["int8", "int64", "uint8", "uint64", "float32", "float64", "bool", "U2", "S2", "object", "complex128",
          "datetime64[s]", "timedelta64[s]", "V2"]


@st.composite
def label_arrays(draw, n):
    """Labels as users have them: numpy of every dtype, lists of anything, pandas, dask, odd containers."""
    # weighted towards labels that are valid, so that many examples reach the counting pass
    form = draw(st.sampled_from(["numpy"] * 4 + ["list"] * 3 + ["dask"] * 2 + ["pandas", "odd", "masked",
                                                                               "categorical"]))
    length = draw(st.sampled_from([n] * 8 + [0, n + 1]))
    if form == "list":
        return draw(st.lists(SCALARS, min_size=length, max_size=length))
    if form == "odd":
        return draw(st.sampled_from([None, 5, "abcd", {0, 1, 2, 3}, {0: 1}, 1.5, b"ab", object(), (0, 1),
                                     range(n), iter(range(n))]))
    dtype = draw(st.sampled_from(DTYPES + ["int64", "float64", "U2", "object"] * 3))
    shape = draw(st.sampled_from([(length,)] * 8 + [(length, 2), (), (1, length)]))
    values = np.asarray(draw(st.lists(st.integers(-2, 4), min_size=int(np.prod(shape)),
                                      max_size=int(np.prod(shape))))).reshape(shape)
    try:
        arr = values.astype(dtype)
    except (TypeError, ValueError):
        arr = values
    if form == "numpy":
        if arr.dtype.kind == "f" and arr.size and draw(st.booleans()):
            arr = arr.copy()
            with np.errstate(over="ignore"):
                arr.flat[0] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e300]))
        return arr
    if form == "masked":
        return np.ma.array(arr, mask=draw(st.booleans()))
    if form == "pandas":
        return pd.Series(arr.ravel()) if arr.ndim else pd.Series([arr.item()])
    if form == "categorical":
        try:
            return pd.Categorical(arr.ravel().astype(str))
        except ValueError:  # raw bytes that are not text
            return arr
    if arr.ndim == 0 or arr.dtype.kind in "OV":
        return arr
    return da.from_array(arr, chunks=draw(st.integers(1, 3)))


@st.composite
def inputs(draw, n=4, m=3):
    kind = draw(st.sampled_from(["labels"] * 5 + ["masks"] * 2 + ["dataset", "odd", "path"]))
    if kind == "labels":
        pair = (draw(label_arrays(n)), draw(label_arrays(m)))
        return pair if draw(st.integers(0, 9)) else pair[: draw(st.integers(0, 1))] + (pair[0],) * 2
    if kind == "masks":
        k = draw(st.integers(0, 3))
        dtype = draw(st.sampled_from(["bool", "bool", "int64", "float64"]))
        rows = np.asarray(draw(st.lists(st.booleans(), min_size=k * n, max_size=k * n)), dtype).reshape(k, n)
        cols = np.asarray(draw(st.lists(st.booleans(), min_size=k * m, max_size=k * m)), dtype).reshape(k, m)
        return (lambda: daskbicl.biclustering(rows, cols)) if draw(st.booleans()) else (rows, cols)
    if kind == "dataset":
        names = draw(st.lists(st.sampled_from(["row_labels", "col_labels", "row_mask", "col_mask", "z"]),
                              min_size=1, max_size=3, unique=True))
        dims = {"row_labels": ("row",), "col_labels": ("col",), "row_mask": ("bicluster", "row"),
                "col_mask": ("bicluster", "col"), "z": ("row",)}
        sizes = {"row": n, "col": m, "bicluster": 2}
        data = {}
        for name in names:
            shape = tuple(sizes[d] for d in dims[name])
            data[name] = (dims[name], np.ones(shape, dtype=bool if "mask" in name else np.int64))
        attrs = draw(st.sampled_from([{}, {"daskbicl_kind": "partition"}, {"daskbicl_kind": "tree"},
                                      {"daskbicl_kind": np.array([1])}, {"daskbicl_unassigned": "maybe"}]))
        coords = draw(st.sampled_from([{}, {"row": ["a", "b", "c", "d"]}, {"row": [True, False, True, True]},
                                       {"row": ["a", "a", "b", "c"]}]))
        return xr.Dataset(data, coords=coords if "row" in {d for v in data.values() for d in v[0]} else {},
                          attrs=attrs)
    if kind == "path":
        return draw(st.sampled_from(["t.zarr", "truncated.zarr", "b.zarr", "file.zarr", "missing.zarr",
                                     "kind_array.zarr", "memory://nothing.zarr", "", "."]))
    return draw(st.sampled_from([None, 42, 1.5, "x", [], [[0, 1]], {}, object(), b"t.zarr"]))


PARAMS = st.dictionaries(
    st.sampled_from(["beta", "R", "clip", "multiset", "normalizer", "average_method", "aggregate", "gamma"]),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**400), 10**400), st.booleans(),
              st.text(max_size=6), st.lists(st.integers(0, 3), max_size=2), st.none()),
    max_size=2)
MEASURES = st.one_of(st.none(), st.none(), st.none(), st.sampled_from(sorted(daskbicl.MEASURES)),
                     st.lists(st.sampled_from(sorted(daskbicl.MEASURES) + ["CARI", "carri", ""]), max_size=3),
                     st.integers(), st.lists(st.lists(st.just("cari"), max_size=1), max_size=1))


@FUZZ
@given(truth=inputs(), pred=inputs(), measures=MEASURES, params=st.one_of(st.just({}), st.just({}), PARAMS),
       unassigned=st.sampled_from(["error", "cluster", "singleton", "ERROR", "", None, 1]))
def test_score_answers_with_a_result_or_a_daskbicl_error(truth, pred, measures, params, unassigned, root):
    def where(x):
        return str(root / x) if isinstance(x, str) and x and "://" not in x else x

    try:
        truth, pred = (where(x() if callable(x) else x) for x in (truth, pred))
        result = daskbicl.score(truth, pred, measures=measures, unassigned=unassigned, **params)
    except daskbicl.DaskbiclError as exc:
        assert str(exc)  # a message a user can act on
        event(type(exc).__name__)
        return
    event("scored")
    assert isinstance(result, dict) and result
    for value in result.values():
        fields = value._asdict().values() if hasattr(value, "_asdict") else [value]
        assert all(isinstance(v, float) for v in fields)
