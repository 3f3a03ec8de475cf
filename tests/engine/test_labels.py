"""Labels as users have them (docs/guide/data-model.md): any hashable value, and unassigned entries.

* Every label form scores exactly (``==``, to the last bit) like its integer
  coding, ``pandas.factorize(labels, sort=True)``, which is the order the
  contingency tables use, on the local scheduler and on a LocalCluster, for
  every measure that scores two co-clusterings.
* Unassigned entries (NaN, None, pandas NA, negative integers) are an error
  naming how many, the side and the axis; ``unassigned="cluster"`` and
  ``"singleton"`` agree with a brute-force relabelling of those entries.
* Dask arrays of labels are factorised chunk by chunk and merged jointly.
* String labels go through Zarr stores (ours and a plain ``to_zarr``), the
  CLI (``--unassigned``) and batch manifests (``unassigned = ...``, stored
  with each row).
"""

from __future__ import annotations

import json
import subprocess
import sys

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl
from daskbicl.errors import InputError, LabelError

from ..support import oracles_partition as oracle

#: Every measure that scores two co-clusterings (the bicluster and micro
#: measures through the co-clustering's blocks).
ALL = [name for name, m in daskbicl.MEASURES.items()
       if name not in ("goodness_space", "fmeasure_space", "dice_space", "jaccard_space")]
PARTITION = sorted(n for n, m in daskbicl.MEASURES.items() if m.family == "partition")
NAMES = np.array(["tumour", "normal", "stroma", "immune", "x", "", "ß-cell", "10", "9"], dtype=object)


def _codes(labels) -> np.ndarray:
    """The integer coding of any labels: sorted distinct values -> 0, 1, ...; unassigned -> -1."""
    return pd.factorize(pd.Series(np.asarray(labels, dtype=object)).to_numpy(), sort=True)[0].astype(np.int64)


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, tuple):
            assert all(p == q or (p != p and q != q) for p, q in zip(x, y)), (k, x, y)
        else:
            assert x == y or (x != x and y != y), (k, x, y)


def _objects(values: list) -> np.ndarray:
    """A 1-D object array of ``values`` (numpy would make tuples a 2-D array)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@st.composite
def coded(draw, max_n=14, max_k=5):
    """Integer codes 0..k-1 of one axis (every code used)."""
    n = draw(st.integers(1, max_n))
    k = draw(st.integers(1, min(n, max_k)))
    codes = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    codes[:k] = range(k)
    perm = draw(st.permutations(range(n)))
    return np.asarray(codes, dtype=np.int64)[np.asarray(perm)]


FORMS = {
    "str (numpy U)": lambda c: np.array(sorted(NAMES[: c.max() + 1].astype(str)))[c],
    "str (object)": lambda c: np.array(sorted(NAMES[: c.max() + 1].tolist()), dtype=object)[c],
    "str (numpy StringDType)": lambda c: np.array(sorted(NAMES[: c.max() + 1].astype(str)))[c].astype(
        np.dtypes.StringDType()),
    "bytes": lambda c: np.array(sorted(s.encode() for s in NAMES[: c.max() + 1]))[c],
    "list of str": lambda c: [f"g{x:03d}" for x in c],
    "integral float": lambda c: c.astype(np.float64) * 2.0 + 0.5 - 0.5,
    "float32 non-integral": lambda c: (c.astype(np.float32) / 4),
    "uint8": lambda c: c.astype(np.uint8),
    "int16 offset": lambda c: (c * 7 + 3).astype(np.int16),
    "uint64 beyond int64": lambda c: (np.uint64(2**63) + c.astype(np.uint64) * np.uint64(5)),
    "python ints beyond int64": lambda c: [2**70 + int(x) for x in c],
    "tuples": lambda c: _objects([(int(x), "t") for x in c]),
    "pandas Series of str": lambda c: pd.Series([f"s{x}" for x in c]),
    "pandas Categorical": lambda c: pd.Categorical([f"cat{x}" for x in c]),
    "pandas Categorical (unsorted categories)": lambda c: pd.Categorical(
        [f"cat{x}" for x in c], categories=[f"cat{x}" for x in range(c.max(), -1, -1)]),
    "pandas nullable Int64": lambda c: pd.array(c * 3, dtype="Int64"),
    "pandas UInt64 beyond int64": lambda c: pd.array(np.uint64(2**63) + c.astype(np.uint64), dtype="UInt64"),
    "pandas string dtype": lambda c: pd.array([f"p{x}" for x in c], dtype="string"),
    "dask array of str": lambda c: da.from_array(np.array([f"d{x}" for x in c], dtype=object), chunks=3),
}
#: Forms whose labels are not in the order of the codes: the tables are
#: permuted, so scores agree up to float rounding only.
UNORDERED = {"pandas Categorical (unsorted categories)"}


def _as_labels(form: str, codes: np.ndarray):
    return FORMS[form](codes)


@pytest.mark.parametrize("form", sorted(FORMS))
@given(tz=coded(), tw=coded(), pz=coded(), pw=coded())
@settings(max_examples=8, deadline=None)
def test_every_label_form_scores_like_its_integer_coding(form, tz, tw, pz, pw):
    n, m = min(tz.size, pz.size), min(tw.size, pw.size)
    tz, pz, tw, pw = (_codes(x) for x in (tz[:n], pz[:n], tw[:m], pw[:m]))
    truth = (_as_labels(form, tz), _as_labels(form, tw))
    pred = (_as_labels(form, pz), _as_labels(form, pw))
    want = daskbicl.score((tz, tw), (pz, pw), measures=ALL)
    got = daskbicl.score(truth, pred, measures=ALL)
    if form in UNORDERED:
        for k in want:
            assert got[k] == pytest.approx(want[k], rel=1e-12, abs=1e-12, nan_ok=True), k  # nan: undefined (ce_sparse)
    else:
        _same(got, want)


def test_bool_labels_are_two_clusters():
    z = np.array([True, False, True, True])
    w = np.array([0, 1, 1])
    _same(daskbicl.score((z, w), (z[::-1], w)), daskbicl.score((z.astype(int), w), (z[::-1].astype(int), w)))


@pytest.mark.parametrize("form", ["str (object)", "dask array of str", "uint64 beyond int64", "pandas Categorical",
                                  "python ints beyond int64"])
def test_label_forms_on_a_local_cluster(client, form):
    rng = np.random.default_rng(3)
    tz, pz = _codes(rng.integers(0, 4, 60)), _codes(rng.integers(0, 5, 60))
    tw, pw = _codes(rng.integers(0, 3, 25)), _codes(rng.integers(0, 3, 25))
    want = daskbicl.score((tz, tw), (pz, pw), measures=ALL)
    got = daskbicl.score((FORMS[form](tz), FORMS[form](tw)), (FORMS[form](pz), FORMS[form](pw)), measures=ALL)
    _same(got, want)


def test_truth_and_pred_are_factorised_jointly_across_chunkings():
    """Label 'b' in truth's third chunk and pred's first chunk is one label."""
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "eps"], dtype=object)
    z, zp = words[rng.integers(0, 5, 101)], words[rng.integers(0, 4, 101)]
    w, wp = words[rng.integers(0, 3, 37)], words[rng.integers(0, 5, 37)]
    want = daskbicl.score((_codes(z), _codes(w)), (_codes(zp), _codes(wp)), measures=ALL)
    for ct, cp in [(7, 13), (101, 1), (50, 11)]:
        truth = (da.from_array(z, chunks=ct), da.from_array(w, chunks=max(1, ct // 3)))
        pred = (da.from_array(zp, chunks=cp), da.from_array(wp, chunks=cp))
        _same(daskbicl.score(truth, pred, measures=ALL), want)


@pytest.mark.parametrize("words", [
    ["a", "a\x00", "a\x00\x00\x00\x00", "", "b", "ab", "ba"],  # padding must not merge strings
    ["é", "e", "ß-cell", "tumour"],  # non-ASCII: the variable-width path falls back
    ["x" * 33, "x" * 32, "y"],  # longer than the hashed width
    [f"cluster_{i:03d}" for i in range(300)],
])
@pytest.mark.parametrize("dtype", ["U", "T"])
def test_hashed_string_chunks_give_exact_codes(words, dtype):
    """Chunks of at least 4096 strings are hashed (numpy U and StringDType); codes equal pandas.factorize's."""
    from daskbicl.engine.labels import encode_chunk

    rng = np.random.default_rng(len(words))
    values = np.array(words, dtype=object)[rng.integers(0, len(words), 10_000)]
    arr = values.astype(str) if dtype == "U" else values.astype(np.dtypes.StringDType())
    codes, uniques = encode_chunk(arr, "truth row labels")
    assert uniques.dtype == object and all(type(u) is str for u in uniques)
    # numpy U itself drops trailing NULs ("a\x00" is "a" there); StringDType keeps them
    np.testing.assert_array_equal(uniques[codes], arr.astype(object))
    if dtype == "T":
        np.testing.assert_array_equal(uniques[codes], values)
    assert len(set(uniques.tolist())) == uniques.size  # one code per distinct string


def test_string_dtype_with_a_missing_marker():
    from daskbicl.engine.labels import encode_chunk

    arr = np.array(["a", None, "b"] * 2000, dtype=np.dtypes.StringDType(na_object=None))
    codes, uniques = encode_chunk(arr, "x")
    assert (codes[1::3] == -1).all() and sorted(uniques.tolist()) == ["a", "b"]


def test_mixed_label_types_on_one_side():
    """Strings on one side, integers on the other: labels only need equality within a side."""
    z = np.array(["a", "b", "a", "c"], dtype=object)
    zp = np.array([5, 5, 9, 9])
    w, wp = np.array([0, 1, 1]), np.array(["x", "y", "y"])
    _same(daskbicl.score((z, w), (zp, wp), measures=ALL),
          daskbicl.score((_codes(z), w), (_codes(zp), _codes(wp)), measures=ALL))


def test_partition_function_and_accessor_accept_any_labels():
    truth = daskbicl.partition(pd.Series(["g", "g", "h"]), pd.Categorical(["a", "b"]), row=["r1", "r2", "r3"])
    pred = daskbicl.partition(np.array([1.0, 2.0, 2.0]), ["u", "u"], row=["r3", "r2", "r1"])
    assert truth.bicl.cari(pred) == daskbicl.cari(truth, pred)
    assert daskbicl.cari(truth, pred) == daskbicl.cari(([0, 0, 1], [0, 1]), ([1, 1, 0], [0, 0]))
    assert "daskbicl_unassigned" not in truth.attrs


# --------------------------------------------------------------------------- unassigned entries

UNASSIGNED_FORMS = {
    "negative int": lambda c: np.where(c < 0, -1 - (np.arange(c.size) % 3), c),
    "NaN": lambda c: np.where(c < 0, np.nan, c.astype(float)),
    "None in str": lambda c: np.array([None if x < 0 else f"k{x}" for x in c], dtype=object),
    "float NaN in object": lambda c: np.array([float("nan") if x < 0 else f"k{x}" for x in c], dtype=object),
    "pandas NA": lambda c: pd.array([None if x < 0 else int(x) for x in c], dtype="Int64"),
    "Categorical NaN": lambda c: pd.Categorical([None if x < 0 else f"c{x}" for x in c]),
    "dask NaN": lambda c: da.from_array(np.where(c < 0, np.nan, c.astype(float)), chunks=4),
}


def _with_unassigned(draw, codes):
    hit = draw(st.lists(st.booleans(), min_size=codes.size, max_size=codes.size))
    return np.where(np.asarray(hit, dtype=bool), -1, codes)


def _relabel(codes: np.ndarray, policy: str) -> np.ndarray:
    """Brute force: unassigned entries become one fresh label (cluster) or one each (singleton)."""
    out = codes.copy()
    fresh = int(codes.max(initial=-1)) + 1
    idx = np.flatnonzero(codes < 0)
    out[idx] = fresh if policy == "cluster" else fresh + np.arange(idx.size)
    return out


@pytest.mark.parametrize("form", sorted(UNASSIGNED_FORMS))
@given(data=st.data(), tz=coded(), tw=coded(), pz=coded(), pw=coded())
@settings(max_examples=6, deadline=None)
def test_unassigned_policies_match_brute_force(form, data, tz, tw, pz, pw):
    n, m = min(tz.size, pz.size), min(tw.size, pw.size)
    raw = [_with_unassigned(data.draw, x) for x in (tz[:n], tw[:m], pz[:n], pw[:m])]
    inputs = [UNASSIGNED_FORMS[form](x) for x in raw]
    truth, pred = (inputs[0], inputs[1]), (inputs[2], inputs[3])
    missing = [int((x < 0).sum()) for x in raw]
    if any(missing):
        with pytest.raises(LabelError, match="unassigned"):
            daskbicl.score(truth, pred, measures=["cari"])
    for policy in ("cluster", "singleton"):
        z, w, zp, wp = (_relabel(x, policy) for x in raw)
        got = daskbicl.score(truth, pred, measures=ALL, unassigned=policy)
        want = daskbicl.score((z, w), (zp, wp), measures=ALL)
        for k in want:
            g, e = got[k], want[k]
            if isinstance(e, tuple):
                assert tuple(g) == pytest.approx(tuple(e), rel=1e-12, abs=1e-12, nan_ok=True), (k, policy)
            else:
                assert g == pytest.approx(e, rel=1e-12, abs=1e-12, nan_ok=True), (k, policy)
        z, w, zp, wp = (x.tolist() for x in (z, w, zp, wp))
        assert got["cari"] == pytest.approx(oracle.cari(z, zp, w, wp), rel=1e-12, abs=1e-12, nan_ok=True)


def test_the_unassigned_error_names_count_side_and_axis():
    truth = (np.array([0, -1, 1, -1]), np.array([0, 1, 1]))
    pred = (np.array([0, 0, 1, 1]), np.array(["a", None, "b"], dtype=object))
    with pytest.raises(LabelError) as info:
        daskbicl.score(truth, pred)
    text = str(info.value)
    assert "truth row_labels has 2 unassigned entries" in text
    assert "pred col_labels has 1 unassigned entry" in text
    assert 'unassigned="cluster"' in text and 'unassigned="singleton"' in text


@pytest.mark.parametrize("name", PARTITION)
def test_every_measure_function_takes_the_policy(name):
    truth, pred = ([0, 0, 1, 1], [0, 1, 1]), ([0, -1, 1, 1], [0, 1, -1])
    with pytest.raises(LabelError, match="pred row_labels has 1 unassigned entry"):
        getattr(daskbicl, name)(truth, pred)
    got = getattr(daskbicl, name)(truth, pred, unassigned="cluster")
    want = getattr(daskbicl, name)(truth, ([0, 2, 1, 1], [0, 1, 2]))
    assert got == pytest.approx(want, rel=1e-12)


def test_a_bad_policy_is_an_input_error():
    with pytest.raises(InputError, match="unassigned must be one of 'error', 'cluster', 'singleton', got 'drop'"):
        daskbicl.score(([0], [0]), ([0], [0]), unassigned="drop")


def test_unassigned_policy_on_a_local_cluster(client):
    z = da.from_array(np.array([0, 1, -1, 1, -1, 2, 2, 0]), chunks=3)
    zp = np.array(["a", "a", "b", None, None, "c", "c", "a"], dtype=object)
    w, wp = np.array([0, 0, 1]), np.array([1.0, 1.0, np.nan])
    for policy in ("cluster", "singleton"):
        got = daskbicl.score((z, w), (zp, wp), measures=ALL, unassigned=policy)
        want = daskbicl.score(
            (_relabel(z.compute(), policy), w),
            (_relabel(np.array([0, 0, 1, -1, -1, 2, 2, 0]), policy), _relabel(np.array([0, 0, -1]), policy)),
            measures=ALL)
        for k in want:
            assert np.allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float),
                               rtol=1e-12, atol=1e-12, equal_nan=True), k


def test_contingency_tables_show_the_unassigned_markers():
    truth = (np.array(["a", "a", "b", "b"], dtype=object), np.array([0, 1]))
    pred = (np.array(["x", None, None, "y"], dtype=object), np.array([0, -1]))
    cluster = daskbicl.contingency(truth, pred, unassigned="cluster")
    assert list(cluster.row_table.pred_labels) == ["x", "y", None]
    assert list(cluster.col_table.pred_labels) == [-1, 0]
    single = daskbicl.contingency(truth, pred, unassigned="singleton")
    assert list(single.row_table.pred_labels) == ["x", "y", -1, -2]


def test_bicluster_truth_against_string_coclustering_with_unassigned():
    truth = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 1, 1]])
    pred = (np.array(["p", "p", None, "q"], dtype=object), np.array(["u", "u", "v"]))
    with pytest.raises(LabelError, match="pred row_labels has 1 unassigned entry"):
        daskbicl.score(truth, pred)
    for policy in ("cluster", "singleton"):
        got = daskbicl.score(truth, pred, unassigned=policy)
        want = daskbicl.score(truth, (np.array([0, 0, 2, 1]), np.array([0, 0, 1])))
        for k in want:
            assert np.allclose(np.asarray(got[k], dtype=float), np.asarray(want[k], dtype=float), rtol=1e-12), k


def test_tradeoff_takes_the_policy():
    truth = daskbicl.biclustering([[1, 1, 1, 0, 0, 0]], [[1, 1, 0]])
    sweep = (np.array(["a", "a", "a", None, "b", "b"], dtype=object), np.array([0, 0, 1]))
    with pytest.raises(LabelError, match="unassigned"):
        daskbicl.tradeoff(truth, sweep)
    got = daskbicl.tradeoff(truth, sweep, unassigned="cluster").results
    want = daskbicl.tradeoff(truth, (np.array([0, 0, 0, 2, 1, 1]), np.array([0, 0, 1]))).results
    assert got[["pre", "rec"]].to_numpy().tolist() == want[["pre", "rec"]].to_numpy().tolist()


# --------------------------------------------------------------------------- stores, CLI, batch


def test_string_labels_round_trip_through_a_store(tmp_path):
    ds = daskbicl.partition(np.array(["a", None, "b", "a"], dtype=object), np.array(["x", "y", "x"]))
    path = daskbicl.save(ds, tmp_path / "s.zarr", chunk=2)
    back = daskbicl.open(path)
    assert back.row_labels.values.tolist() == ["a", None, "b", "a"]
    assert back.col_labels.values.tolist() == ["x", "y", "x"]
    assert "daskbicl_missing" not in back.row_labels.attrs
    pred = (np.array([0, 0, 1, 1]), np.array([0, 1, 1]))
    assert daskbicl.score(back, pred, unassigned="singleton") == daskbicl.score(ds, pred, unassigned="singleton")


@pytest.mark.parametrize("labels, message", [
    (np.array(["a", 3, "b"], dtype=object), "int labels such as 3"),
    (np.array([2**70, 1, 2], dtype=object), "do not fit a numpy integer array"),
])
def test_labels_a_store_cannot_hold_are_refused_before_writing(tmp_path, labels, message):
    with pytest.raises(InputError, match=message):
        daskbicl.save(daskbicl.partition(labels, [0, 1]), tmp_path / "s.zarr")
    assert list(tmp_path.iterdir()) == []


def test_the_empty_string_is_a_label_distinct_from_unassigned_in_a_store(tmp_path):
    labels = np.array(["a", "", None, ""], dtype=object)
    back = daskbicl.open(daskbicl.save(daskbicl.partition(labels, [0, 1]), tmp_path / "s.zarr"))
    assert back.row_labels.values.tolist() == ["a", "", None, ""]


def test_python_object_labels_that_fit_are_stored_natively(tmp_path):
    ds = daskbicl.partition(np.array([1, 2, 2], dtype=object), np.array([0.5, None, 1.5], dtype=object))
    back = daskbicl.open(daskbicl.save(ds, tmp_path / "s.zarr"))
    assert back.row_labels.dtype == np.int64
    assert back.col_labels.dtype == np.float64 and np.isnan(back.col_labels.values[1])


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_cli_scores_a_plain_string_store_with_a_policy(tmp_path):
    rows = np.array(["g1", "g2", "g1", "g3", "g2", "g1"])
    xr.Dataset({"row_labels": ("row", rows), "col_labels": ("col", np.array(["s", "t", "s"]))}).to_zarr(
        tmp_path / "truth.zarr")
    pd.DataFrame({"cl": ["a", "a", None, "b", "b", "a"]}).to_csv(tmp_path / "rows.csv", index=False)
    np.save(tmp_path / "cols.npy", np.array([0, -1, 0]))
    done = _cli("convert", tmp_path / "pred.zarr", "--rows", tmp_path / "rows.csv:cl", "--cols",
                tmp_path / "cols.npy")
    assert done.returncode == 0, done.stderr
    failed = _cli("score", tmp_path / "truth.zarr", tmp_path / "pred.zarr", "--measure", "cari")
    assert failed.returncode == 2
    assert "pred row_labels has 1 unassigned entry" in failed.stderr and "--unassigned cluster" in failed.stderr and "Traceback" not in failed.stderr
    out = _cli("score", tmp_path / "truth.zarr", tmp_path / "pred.zarr", "--measure", "cari", "--json",
               "--unassigned", "singleton")
    assert out.returncode == 0, out.stderr
    want = daskbicl.cari((rows, ["s", "t", "s"]), (np.array([0, 0, -1, 1, 1, 0]), [0, -1, 0]), unassigned="singleton")
    assert json.loads(out.stdout) == {"cari": want}


def test_batch_stores_the_policy_with_each_row(tmp_path):
    daskbicl.save(daskbicl.partition(["a", "a", "b", "b"], [0, 1, 1]), tmp_path / "t.zarr")
    daskbicl.save(daskbicl.partition([0, -1, 1, 1], [0, 1, 1]), tmp_path / "p.zarr")
    (tmp_path / "m.toml").write_text(
        'unassigned = "singleton"\n[truth]\nt = "t.zarr"\n[pred]\np = "p.zarr"\n'
        '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\n'
        '[[pairs]]\ntruth = "t"\npred = "p"\nmeasures = ["cari"]\nunassigned = "cluster"\n')
    done = _cli("batch", tmp_path / "m.toml", "--workers", "1")
    assert _cli("batch", tmp_path / "m.toml", "--scheduler", "threads").returncode == 2
    assert done.returncode == 0, done.stderr
    from daskbicl.batch import ResultsDB

    with ResultsDB(tmp_path / "m.sqlite", create=False) as db:
        rows = db.scores()
    got = {json.loads(r["params"])["unassigned"]: r["value"] for r in rows}
    truth = (["a", "a", "b", "b"], [0, 1, 1])
    assert got == {p: daskbicl.cari(truth, ([0, -1, 1, 1], [0, 1, 1]), unassigned=p) for p in ("cluster", "singleton")}
    (tmp_path / "bad.toml").write_text(
        '[truth]\nt = "t.zarr"\n[pred]\np = "p.zarr"\n[[pairs]]\ntruth = "t"\npred = "p"\nunassigned = "drop"\n')
    bad = _cli("batch", tmp_path / "bad.toml")
    assert bad.returncode == 2 and "line 8" in bad.stderr and "unassigned must be one of" in bad.stderr


def _random_strings(rng, n: int, kind: str) -> np.ndarray:
    """n strings of one kind: a random vocabulary drawn with repeats, or special cases."""
    alphabet = np.array(list("ab \x00é€ß😀Z_0"), dtype=object)

    def word(lo, hi):
        return "".join(rng.choice(alphabet, rng.integers(lo, hi)))

    if kind == "one":
        return np.array(["cluster é"] * n, dtype=object)
    if kind == "distinct":
        return np.array([f"{i}{word(0, 4)}" for i in range(n)], dtype=object)
    if kind == "distinct ascii":  # StringDType: many stored forms, factorised by their bytes
        return np.array([f"{i}" + "".join(rng.choice(list("a \x00"), rng.integers(0, 5))) for i in range(n)],
                        dtype=object)
    if kind == "long":  # wider than the unrolled kernels, most of them stored apart in StringDType
        vocab = [word(30, 90) for _ in range(50)] + ["x" * 80, "x" * 80 + "\x00", "x" * 80 + " "]
    else:  # short: empty strings, trailing NULs and spaces, non-ASCII
        vocab = ["", " ", "\x00", "a", "a ", "a\x00", "a\x00b", "é", "😀"] + [word(0, 6) for _ in range(200)]
    return np.array(vocab, dtype=object)[rng.integers(0, len(vocab), n)]


@pytest.mark.parametrize("kind", ["short", "long", "one", "distinct", "distinct ascii"])
@pytest.mark.parametrize("dtype", ["U", "T"])
@pytest.mark.parametrize("seed", [0, 1])
def test_string_chunks_factorise_like_pandas(kind, dtype, seed):
    """numpy U and StringDType chunks get pandas.factorize's codes and uniques (first-appearance order)."""
    from daskbicl.engine.labels import encode_chunk

    rng = np.random.default_rng(seed)
    values = _random_strings(rng, 6000 + 17 * seed, kind)
    arr = values.astype(str) if dtype == "U" else values.astype(np.dtypes.StringDType())
    want_codes, want_uniques = pd.factorize(arr.astype(object))  # numpy U drops trailing NULs itself
    codes, uniques = encode_chunk(arr, "truth row labels")
    assert codes.dtype == np.int64 and uniques.dtype == object
    np.testing.assert_array_equal(codes, want_codes)
    assert uniques.tolist() == list(want_uniques) and all(type(u) is str for u in uniques)


def test_string_dtype_equal_strings_stored_apart_are_one_label():
    """StringDType elements of one chunk can store one string in different words (arena places)."""
    from daskbicl.engine.labels import encode_chunk

    long = ["a label long enough to live outside the element", "another label long enough for the arena"]
    parts = [np.array(long * 3000, dtype=object).astype(np.dtypes.StringDType()) for _ in range(2)]
    arr = np.concatenate(parts)
    codes, uniques = encode_chunk(arr, "x")
    assert uniques.tolist() == long and codes.tolist() == [0, 1] * 6000


def test_integral_floats_take_the_offset_path_and_score_as_their_values():
    """Labels 0.0, 1.0, ... (pandas/R output): codes are offsets; every label keeps its value, NaN is unassigned."""
    from daskbicl.engine.labels import encode_chunk

    rng = np.random.default_rng(11)
    cases = [rng.integers(-3, 9, 50_000).astype(float),  # negative floats are labels, not unassigned
             np.where(rng.random(50_000) < 0.1, np.nan, rng.integers(0, 5, 50_000).astype(float)),
             np.where(rng.random(50_000) < 0.5, -0.0, 3.0),
             rng.integers(0, 5, 50_000) + 0.5,  # not integral: the general path
             rng.integers(0, 10**12, 50_000).astype(float),  # wider than the chunk: the general path
             np.full(50_000, np.nan)]
    for values in cases:
        codes, uniques = encode_chunk(values, "x")
        nan = np.isnan(values)
        assert (codes[nan] == -1).all()
        assert np.array_equal(np.asarray(uniques, dtype=float)[codes[~nan]], values[~nan])
    t, p = rng.integers(0, 6, 200_000), rng.integers(0, 8, 200_000)
    w, v = rng.integers(0, 3, 500), rng.integers(0, 4, 500)
    want = daskbicl.score((t, w), (p, v))
    assert daskbicl.score((t.astype(float) - 2.0, w.astype(float)), (p.astype(float), v)) == want
    tn = t.astype(float)
    tn[::101] = np.nan
    ti = np.where(np.isnan(tn), -1, tn).astype(np.int64)
    assert daskbicl.score((tn, w), (p, v), unassigned="singleton") == daskbicl.score((ti, w), (p, v),
                                                                                    unassigned="singleton")
