"""What docs/guide/from-algorithms.md promises: the two-views note, and "NA" labels in CSV files."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import daskbicl
from daskbicl.io.inputs import TwoViewsWarning, count_missing, read_labels

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def models():
    from sklearn.cluster import SpectralBiclustering, SpectralCoclustering
    from sklearn.datasets import make_biclusters, make_checkerboard

    X, rows, cols = make_biclusters((90, 60), 3, noise=5, random_state=0)
    cocl = SpectralCoclustering(n_clusters=3, random_state=0).fit(X)
    Xc, _, _ = make_checkerboard((60, 40), (3, 2), noise=5, random_state=1)
    bicl = SpectralBiclustering(n_clusters=(3, 2), random_state=0).fit(Xc)
    return rows, cols, cocl, bicl


def test_a_model_with_two_different_views_says_so_once_per_read(models):
    from sklearn.metrics import consensus_score

    rows, cols, cocl, _ = models
    truth = daskbicl.biclustering(rows, cols)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = daskbicl.consensus(truth, cocl)
    notes = [w for w in caught if issubclass(w.category, TwoViewsWarning)]
    assert len(notes) == 1
    text = str(notes[0].message)
    assert "\n" not in text and "9 blocks" in text and "3 biclusters" in text and "kind='biclustering'" in text
    assert notes[0].filename == __file__  # points at the user's line, not inside daskbicl
    # what the note promises: kind="biclustering" gives scikit-learn's number, the default does not
    own = daskbicl.consensus(truth, daskbicl.from_estimator(cocl, kind="biclustering"))
    assert own == pytest.approx(consensus_score((rows, cols), (cocl.rows_, cocl.columns_)), abs=1e-12)
    assert value != pytest.approx(own)


@pytest.mark.parametrize("kind", ["partition", "biclustering"])
def test_no_note_when_the_view_is_chosen(models, kind):
    _, _, cocl, _ = models
    with warnings.catch_warnings():
        warnings.simplefilter("error", TwoViewsWarning)
        daskbicl.from_estimator(cocl, kind=kind)


def test_no_note_when_both_views_are_the_same_biclusters(models):
    *_, bicl = models  # SpectralBiclustering: rows_/columns_ are its 3 x 2 checkerboard blocks
    assert bicl.rows_.shape[0] == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error", TwoViewsWarning)
        daskbicl.from_estimator(bicl)


def _convert(tmp_path, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "daskbicl", "convert", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def na_files(tmp_path):
    labels = ["NA", "NA", "N/A", "K", "K", "", "null", "K"]
    (tmp_path / "rows.csv").write_text("gene,cluster\n" + "".join(f"g{i},{v}\n" for i, v in enumerate(labels)))
    (tmp_path / "cols.tsv").write_text("cluster\nNA\nx\n")
    return tmp_path, labels


def test_read_labels_missing_markers(na_files):
    folder, labels = na_files
    default = read_labels(str(folder / "rows.csv:cluster"))
    assert count_missing(default) == sum(v in ("NA", "N/A", "", "null") for v in labels) == 5
    kept = read_labels(str(folder / "rows.csv:cluster"), keep_na=True)
    assert count_missing(kept) == 1  # the empty cell only
    assert [v for v in kept.tolist() if isinstance(v, str)] == [v for v in labels if v]


def test_convert_says_what_it_read_as_missing_and_keep_na_keeps_it(na_files):
    folder, labels = na_files
    done = _convert(folder, "default.zarr", "--rows", "rows.csv:cluster", "--cols", "cols.tsv")
    assert done.returncode == 0, done.stderr
    assert "rows.csv:cluster: 5 of 8 labels read as missing" in done.stderr and "--keep-na" in done.stderr
    assert "cols.tsv: 1 of 2 labels read as missing" in done.stderr
    done = _convert(folder, "kept.zarr", "--rows", "rows.csv:cluster", "--cols", "cols.tsv", "--keep-na")
    assert done.returncode == 0, done.stderr
    assert "rows.csv:cluster: 1 of 8 labels read as missing" in done.stderr and "cols.tsv" not in done.stderr
    # the kept store is the labels as written (the empty cell an unassigned singleton); the default one is not
    z = np.array([v if v else None for v in labels], dtype=object)
    truth = (z, np.array(["NA", "x"], dtype=object))
    assert daskbicl.cari(truth, str(folder / "kept.zarr"), unassigned="singleton") == 1.0
    assert daskbicl.cari(truth, str(folder / "default.zarr"), unassigned="singleton") < 0.9
    stored = daskbicl.open(str(folder / "kept.zarr"))
    assert pd.isna(stored.row_labels.values).sum() == 1
    assert sorted(v for v in stored.row_labels.values.tolist() if isinstance(v, str)) == sorted(v for v in labels if v)
    # by default the "NA" cluster is gone: 5 unassigned rows, an error unless a policy is chosen
    with pytest.raises(daskbicl.LabelError, match="5"):
        daskbicl.score(str(folder / "default.zarr"), str(folder / "kept.zarr"), measures=["cari"])
