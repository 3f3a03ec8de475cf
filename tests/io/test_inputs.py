"""Results as users have them: fitted estimators, mask tuples, index lists, files, generate --kind biclustering.

Every form is scored against its integer-coded / boolean-mask equivalent and
must give the same values to the last bit, locally and on a LocalCluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import daskbicl

MEASURES_B = ["fmeasure", "jaccard_corrected", "e4sc", "micro_ce", "micro_rnia", "mocice_bcubed"]


def _cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


# --------------------------------------------------------------------------- estimators


@pytest.fixture(scope="module")
def fitted():
    from sklearn.cluster import SpectralBiclustering, SpectralCoclustering
    from sklearn.datasets import make_biclusters, make_checkerboard

    X, rows, cols = make_biclusters((80, 50), 3, noise=5, random_state=0)
    cocl = SpectralCoclustering(n_clusters=3, random_state=0).fit(X)
    Xc, crow, ccol = make_checkerboard((60, 40), (3, 2), noise=5, random_state=1)
    bicl = SpectralBiclustering(n_clusters=(3, 2), random_state=0).fit(Xc)
    return (rows, cols, cocl), (crow, ccol, bicl)


def test_coclustering_estimator_is_its_labels(fitted):
    (rows, cols, model), _ = fitted
    truth = daskbicl.biclustering(rows, cols)
    want = daskbicl.score(truth, (model.row_labels_, model.column_labels_), measures=MEASURES_B)
    assert daskbicl.score(truth, model, measures=MEASURES_B) == want
    assert daskbicl.from_estimator(model).attrs["daskbicl_kind"] == "partition"
    # the other side too, and the co-clustering measures between two models
    assert daskbicl.cari(model, model) == 1.0


def test_biclustering_estimator_without_labels_uses_rows_and_columns(fitted):
    (rows, cols, _), _ = fitted

    class Duck:  # any object with fitted rows_ / columns_ (no row_labels_)
        rows_ = rows
        columns_ = cols

    truth = daskbicl.biclustering(rows, cols)
    assert daskbicl.from_estimator(Duck()).attrs["daskbicl_kind"] == "biclustering"
    assert daskbicl.score(truth, Duck(), measures=MEASURES_B) == daskbicl.score(truth, truth, measures=MEASURES_B)


def test_spectral_biclustering_and_mask_tuples(fitted):
    _, (crow, ccol, model) = fitted
    truth = daskbicl.biclustering(crow, ccol)
    as_masks = daskbicl.score(truth, (model.rows_, model.columns_), measures=MEASURES_B)
    assert as_masks == daskbicl.score(truth, daskbicl.biclustering(model.rows_, model.columns_), measures=MEASURES_B)
    # row_labels_ wins: the checkerboard model read as a co-clustering
    assert daskbicl.score(truth, model, measures=["fmeasure"]) == daskbicl.score(
        truth, (model.row_labels_, model.column_labels_), measures=["fmeasure"])


def test_kind_biclustering_reads_the_models_own_biclusters(fitted):
    from sklearn.metrics import consensus_score

    (rows, cols, model), (crow, ccol, bicl) = fitted
    truth = daskbicl.biclustering(rows, cols)
    pred = daskbicl.from_estimator(model, kind="biclustering")
    assert pred.attrs["daskbicl_kind"] == "biclustering" and pred.sizes["bicluster"] == 3
    assert (pred.row_mask.values == model.rows_).all() and (pred.col_mask.values == model.columns_).all()
    got = daskbicl.score(truth, pred, measures=["consensus"])["consensus"]
    assert got == pytest.approx(consensus_score((rows, cols), (model.rows_, model.columns_)), abs=1e-12)
    # the co-clustering view of the same model has all 3 x 3 blocks
    from daskbicl.engine.blocks import as_biclustering

    assert as_biclustering(daskbicl.from_estimator(model)).sizes["bicluster"] == 9
    assert daskbicl.from_estimator(model, kind="partition").attrs["daskbicl_kind"] == "partition"
    # SpectralBiclustering's rows_/columns_ are its checkerboard's blocks
    got = daskbicl.score(daskbicl.biclustering(crow, ccol), daskbicl.from_estimator(bicl, kind="biclustering"),
                         measures=["consensus"])["consensus"]
    assert got == pytest.approx(consensus_score((crow, ccol), (bicl.rows_, bicl.columns_)), abs=1e-12)


def test_kind_names_what_is_missing(fitted):
    (rows, cols, _), _ = fitted

    class Duck:
        rows_ = rows
        columns_ = cols

    with pytest.raises(daskbicl.InputError, match="kind='partition' reads the labels"):
        daskbicl.from_estimator(Duck(), kind="partition")
    with pytest.raises(daskbicl.InputError, match="kind must be"):
        daskbicl.from_estimator(Duck(), kind="blocks")


def test_estimators_on_a_cluster(client, fitted):
    (rows, cols, model), _ = fitted
    truth = daskbicl.biclustering(rows, cols)
    want = daskbicl.score(truth, (model.row_labels_, model.column_labels_), measures=MEASURES_B)
    assert daskbicl.score(truth, model, measures=MEASURES_B) == want


def test_unfitted_or_wrong_objects_are_named():
    from sklearn.cluster import SpectralCoclustering

    with pytest.raises(daskbicl.InputError, match="fit it first"):
        daskbicl.score(([0, 1], [0]), SpectralCoclustering())
    with pytest.raises(daskbicl.InputError, match="neither row_labels_"):
        daskbicl.from_estimator(object())
    with pytest.raises(daskbicl.InputError, match="must be boolean"):
        daskbicl.score(([0, 1], [0]), (np.ones((2, 2), dtype=np.int64), np.ones((2, 1), dtype=np.int64)))


# --------------------------------------------------------------------------- index lists


def test_biclustering_from_indices_matches_masks():
    rng = np.random.default_rng(3)
    rm = rng.random((4, 30)) < 0.3
    cm = rng.random((4, 20)) < 0.3
    pairs = [(np.flatnonzero(r).tolist(), np.flatnonzero(c).tolist()) for r, c in zip(rm, cm)]
    ds = daskbicl.biclustering_from_indices(pairs, shape=(30, 20))
    assert (ds.row_mask.values == rm).all() and (ds.col_mask.values == cm).all()
    other = daskbicl.biclustering(rm[::-1], cm[::-1])
    assert daskbicl.score(ds, other, measures=MEASURES_B) == daskbicl.score(
        daskbicl.biclustering(rm, cm), other, measures=MEASURES_B)
    as_dicts = daskbicl.biclustering_from_indices([{"rows": r, "cols": c} for r, c in pairs], shape=(30, 20))
    assert (as_dicts.row_mask.values == rm).all()


def test_biclustering_from_indices_by_coordinate_label():
    genes = [f"g{i}" for i in range(6)]
    ds = daskbicl.biclustering_from_indices([(["g5", "g0"], [11])], row=genes, col=[10, 11])
    assert ds.row_mask.values[0].tolist() == [True, False, False, False, False, True]
    assert ds.col_mask.values[0].tolist() == [False, True]
    with pytest.raises(daskbicl.InputError, match=r"rows \['nope'\] not among"):
        daskbicl.biclustering_from_indices([(["nope"], [10])], row=genes, col=[10, 11])


@pytest.mark.parametrize(
    "args, match",
    [
        (([([0], [0])],), "needs shape"),
        (([([5], [0])], (3, 2)), "outside 0..2"),
        (([([0], [0], [1])], (3, 2)), "expected a \\(rows, cols\\) pair"),
        ((["ab"], (3, 2)), "expected a \\(rows, cols\\) pair"),
        (("ab", (3, 2)), "list of \\(rows, cols\\) pairs"),
        (([(["x"], [0])], (3, 2)), "must be integer positions"),
    ],
)
def test_biclustering_from_indices_errors(args, match):
    with pytest.raises(daskbicl.InputError, match=match):
        daskbicl.biclustering_from_indices(*args)


# --------------------------------------------------------------------------- files and the shell


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(7)
    z, w = rng.integers(0, 4, 200), rng.integers(0, 3, 60)
    zp, wp = rng.integers(0, 4, 200), rng.integers(0, 3, 60)
    np.save(tmp_path / "z.npy", z)
    (tmp_path / "w.txt").write_text("\n".join(map(str, w)) + "\n")
    pd.DataFrame({"gene": [f"g{i}" for i in range(200)], "cl": zp}).to_csv(tmp_path / "rows.csv", index=False)
    pd.DataFrame({"cl": wp}).to_csv(tmp_path / "cols.tsv", sep="\t", index=False)
    rm, cm = rng.random((3, 200)) < 0.2, rng.random((3, 60)) < 0.3
    np.save(tmp_path / "rm.npy", rm)
    np.savetxt(tmp_path / "cm.csv", cm.astype(int), fmt="%d", delimiter=",")
    (tmp_path / "b.json").write_text(json.dumps(
        [{"rows": np.flatnonzero(r).tolist(), "cols": np.flatnonzero(c).tolist()} for r, c in zip(rm, cm)]))
    return tmp_path, (z, w), (zp, wp), (rm, cm)


def test_convert_files_score_like_the_arrays(files):
    d, (z, w), (zp, wp), (rm, cm) = files
    assert _cli("convert", d / "t.zarr", "--rows", d / "z.npy", "--cols", d / "w.txt")[0] == 0
    code, out, err = _cli("convert", d / "p.zarr", "--rows", f"{d / 'rows.csv'}:cl", "--cols", d / "cols.tsv")
    assert code == 0, err
    assert "partition" in out
    assert _cli("convert", d / "m.zarr", "--row-mask", d / "rm.npy", "--col-mask", d / "cm.csv")[0] == 0
    assert _cli("convert", d / "j.zarr", "--biclusters", d / "b.json", "--shape", 200, 60)[0] == 0
    assert daskbicl.score(d / "t.zarr", d / "p.zarr") == daskbicl.score((z, w), (zp, wp))
    masks = daskbicl.biclustering(rm, cm)
    want = daskbicl.score((z, w), masks, measures=MEASURES_B)
    assert daskbicl.score(str(d / "t.zarr"), str(d / "m.zarr"), measures=MEASURES_B) == want
    assert daskbicl.score(str(d / "t.zarr"), str(d / "j.zarr"), measures=MEASURES_B) == want


def test_convert_with_row_coordinates_matches_by_label(files):
    d, (z, w), (zp, wp), _ = files
    code, _, err = _cli("convert", d / "p.zarr", "--rows", f"{d / 'rows.csv'}:cl", "--cols", d / "cols.tsv",
                        "--row-coords", f"{d / 'rows.csv'}:gene")
    assert code == 0, err
    ds = daskbicl.open(str(d / "p.zarr"))
    assert ds["row"].values[:2].tolist() == ["g0", "g1"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rows", "missing.npy", "--cols", "w.txt"], "missing.npy: no such file"),
        (["--rows", "rows.csv", "--cols", "w.txt"], "name one as"),
        (["--rows", "rows.csv:nope", "--cols", "w.txt"], "has no column 'nope'"),
        (["--rows", "z.npy"], "needs both --rows FILE and --cols FILE"),
        ([], "needs exactly one of"),
        (["--rows", "z.npy", "--cols", "w.txt", "--biclusters", "b.json"], "needs exactly one of"),
        (["--row-mask", "rm.npy", "--col-mask", "z.npy"], "must be 2-D"),
        (["--biclusters", "b.json"], "needs shape"),
        (["--biclusters", "w.txt", "--shape", "200", "60"], "invalid JSON"),
        (["--rows", "z.npy:x", "--cols", "w.txt"], "has no columns"),
    ],
)
def test_convert_bad_files_exit_2_and_write_nothing(files, args, message):
    d = files[0]
    code, out, err = _cli("convert", "out.zarr", *args, cwd=d)
    assert code == 2, (out, err)
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert not os.path.exists(d / "out.zarr")


def test_generate_biclustering_from_the_shell(tmp_path, client):
    code, out, err = _cli("generate", tmp_path, "--kind", "biclustering", "--rows", 3000, "--cols", 500,
                          "--biclusters", 4, "--density", 0.2, "--noise", 0.1, "--preds", 2, "--chunk", 1000)
    assert code == 0, err
    truth = daskbicl.open(str(tmp_path / "truth.zarr"))
    assert dict(truth.sizes) == {"bicluster": 4, "row": 3000, "col": 500}
    share = float(truth.row_mask.mean())
    assert 0.15 < share < 0.25
    pred = str(tmp_path / "pred-001.zarr")
    local = daskbicl.score(str(tmp_path / "truth.zarr"), pred, measures=MEASURES_B)
    assert 0.5 < local["fmeasure"] < 1.0
    code, out, err = _cli("score", tmp_path / "truth.zarr", pred, "--json", *sum((["--measure", m] for m in MEASURES_B), []))
    assert code == 0, err
    shell = json.loads(out)
    assert shell["fmeasure"] == local["fmeasure"] and shell["e4sc"] == local["e4sc"]
    # a contiguous-blocks layout, as generated twice, is the same data
    for name in ("a", "b"):
        assert _cli("generate", tmp_path / name, "--kind", "biclustering", "--rows", 100, "--cols", 40,
                    "--layout", "blocks", "--overlap", 0.5, "--seed", 3)[0] == 0
    a, b = daskbicl.open(str(tmp_path / "a" / "truth.zarr")), daskbicl.open(str(tmp_path / "b" / "truth.zarr"))
    assert (a.row_mask.values == b.row_mask.values).all()


@pytest.mark.parametrize("args, message", [
    (["--density", "0"], "--density"), (["--density", "1.5"], "--density"), (["--overlap", "2"], "--overlap"),
])
def test_generate_biclustering_bad_arguments(tmp_path, args, message):
    code, _, err = _cli("generate", tmp_path / "g", "--kind", "biclustering", "--rows", 10, "--cols", 10, *args)
    assert code == 2 and message in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "g" / "truth.zarr")


# --------------------------------------------------------------------------- empty results (SPEC §2)

def _empty(n_rows=5, n_cols=4):
    return daskbicl.biclustering(np.zeros((0, n_rows), bool), np.zeros((0, n_cols), bool))


@pytest.mark.parametrize("truth", [
    daskbicl.biclustering([[1, 1, 0, 0, 1]], [[0, 1, 1, 0]]),
    daskbicl.partition([0, 0, 1, 1, 2], [0, 1, 1, 0]),
])
def test_a_pred_that_found_nothing_scores_zero(truth):
    got = daskbicl.score(truth, _empty())
    similarities = [n for n in got if n not in ("micro_ce", "micro_rnia")]
    assert len(got) == 16 and all(got[n] == 0.0 or tuple(got[n]) == (0.0, 0.0, 0.0) for n in similarities)
    assert got["micro_ce"] == got["micro_rnia"] == 1.0
    assert daskbicl.fmeasure(truth, _empty(), beta=2) == 0.0


def test_a_pred_that_found_nothing_on_a_cluster(client):
    truth = daskbicl.biclustering([[1, 1, 0, 0, 1]], [[0, 1, 1, 0]])
    assert daskbicl.score(truth, _empty(), measures=["e4sc", "micro_ce"]) == {"e4sc": 0.0, "micro_ce": 1.0}


def test_an_empty_truth_or_nothing_covered_is_an_error_naming_the_side():
    with pytest.raises(daskbicl.InputError, match="truth has no biclusters"):
        daskbicl.score(_empty(), daskbicl.biclustering([[1, 0, 0, 0, 0]], [[1, 0, 0, 0]]))
    truth_covers_nothing = daskbicl.biclustering([[0, 0, 0, 0, 0]], [[1, 0, 0, 0]])
    with pytest.raises(daskbicl.InputError, match="truth covers no cell"):
        daskbicl.score(truth_covers_nothing, _empty(), measures=["e4sc"])
    with pytest.raises(daskbicl.MeasureError, match="parameter beta"):  # parameters are still checked
        daskbicl.score(daskbicl.biclustering([[1, 0, 0, 0, 0]], [[1, 0, 0, 0]]), _empty(), beta=-1)
