"""Contingency tables in and out, and lazy scores (score(..., compute=False))."""

from __future__ import annotations

import dask
import numpy as np
import pandas as pd
import pytest

import daskbicl

from ..test_invariance import BICLUSTER, MICRO, PARTITION


def _pair(seed=0, n=300, m=80, k=5):
    rng = np.random.default_rng(seed)
    return ((rng.integers(0, k, n), rng.integers(0, k - 2, m)), (rng.integers(0, k + 1, n), rng.integers(0, k, m)))


def test_scores_from_tables_equal_scores_from_data():
    truth, pred = _pair()
    tables = daskbicl.contingency(truth, pred)
    names = PARTITION + BICLUSTER + MICRO
    assert daskbicl.score(tables, measures=names) == daskbicl.score(truth, pred, measures=names)
    assert daskbicl.score(tables) == daskbicl.score(truth, pred)  # the default: co-clustering measures
    assert daskbicl.cari(tables) == daskbicl.cari(truth, pred)
    assert daskbicl.fmeasure(tables, beta=2) == daskbicl.fmeasure(truth, pred, beta=2)


def test_tables_are_labelled_dense_or_sparse():
    truth = ([10, 10, 20, 20, 20], [7, 8])
    pred = ([1, 2, 2, 2, 3], [0, 0])
    t = daskbicl.contingency(truth, pred)
    rows = t.rows
    assert rows.dims == ("truth", "pred") and rows.coords["truth"].values.tolist() == [10, 20]
    assert rows.sel(truth=20, pred=2).item() == 2
    sparse = daskbicl.contingency(truth, pred, dense_cells=1).rows
    assert isinstance(sparse, pd.Series) and sparse.loc[(20, 2)] == 2 and sparse.sum() == 5
    assert t.to_pandas("cols").to_dict() == {(7, 0): 1, (8, 0): 1}
    with pytest.raises(daskbicl.TooLargeError, match="to_pandas"):
        daskbicl.contingency(truth, pred, dense_cells=1).to_xarray("rows")
    with pytest.raises(daskbicl.InputError, match="axis must be"):
        t.to_pandas("diagonal")
    assert "rows: 2 x 3 clusters" in repr(t)


def test_tables_on_a_cluster(client):
    truth, pred = _pair(1, n=5000, m=300)
    tables = daskbicl.contingency(truth, pred)
    assert daskbicl.score(tables) == daskbicl.score(truth, pred)


def test_tables_misuse_is_named():
    truth, pred = _pair()
    tables = daskbicl.contingency(truth, pred)
    with pytest.raises(daskbicl.InputError, match="pass no pred"):
        daskbicl.score(tables, pred)
    with pytest.raises(daskbicl.InputError, match="pred is missing"):
        daskbicl.score(truth)
    with pytest.raises(daskbicl.MeasureError, match="parameter beta"):
        daskbicl.score(tables, measures=["fmeasure"], beta=0)


def test_lazy_scores_compute_to_the_same_dicts():
    pairs = [_pair(s) for s in range(4)]
    lazy = [daskbicl.score(t, p, compute=False) for t, p in pairs]
    assert all(dask.is_dask_collection(x) for x in lazy)
    assert list(dask.compute(*lazy)) == [daskbicl.score(t, p) for t, p in pairs]
    b = daskbicl.biclustering([[1, 1, 0]], [[1, 0]])
    assert dask.compute(daskbicl.score(b, b, measures=MICRO, compute=False))[0] == daskbicl.score(b, b, measures=MICRO)


def test_lazy_scores_on_a_cluster(client):
    pairs = [_pair(s, n=2000) for s in range(3)]
    lazy = [daskbicl.score(t, p, compute=False) for t, p in pairs]
    assert list(dask.compute(*lazy)) == [daskbicl.score(t, p) for t, p in pairs]
