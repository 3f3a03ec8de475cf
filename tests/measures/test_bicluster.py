"""Bicluster precision–recall measures end to end: engine + registry + score,
against the brute-force cell-set oracle, with their invariances."""

from __future__ import annotations

from fractions import Fraction

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl
from daskbicl.engine.blocks import as_biclustering
from daskbicl.errors import InputError

from ..support import oracles_bicluster as OB
from ..support.strategies import biclustering_pair, chunks_for, coclustering_pair

#: The twelve published bicluster measures (consensus and Prelić: tests/measures/test_more_measures.py).
BICLUSTER = [n for n, m in daskbicl.MEASURES.items() if m.family == "bicluster" and m.default]


def _ds(masks, **coords):
    return daskbicl.biclustering(masks[0], masks[1], **coords)


def _oracle(truth, pred, shape, R, beta):
    t = list(zip(truth[0].tolist(), truth[1].tolist()))
    p = list(zip(pred[0].tolist(), pred[1].tolist()))
    table = OB.pair_oracle(t, p, *shape, R=Fraction(R), beta=Fraction(beta))
    return {k: float(OB.aggregate_oracle(table, k)) for k in BICLUSTER}


@given(biclustering_pair(), st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([0.5, 1.0, 3.0]))
def test_score_matches_cell_set_oracle(pair, R, beta):
    truth, pred, shape = pair
    result = daskbicl.score(_ds(truth), _ds(pred), R=R, beta=beta)
    expected = _oracle(truth, pred, shape, R, beta)
    assert set(BICLUSTER) <= set(result)
    for k in BICLUSTER:
        assert result[k] == pytest.approx(expected[k], abs=1e-12), k


@given(biclustering_pair(max_rows=20, max_cols=15), st.data())
def test_chunking_and_dask_inputs(pair, data):
    truth, pred, (n_rows, n_cols) = pair
    expected = daskbicl.score(_ds(truth), _ds(pred), measures=BICLUSTER)

    def chunked(m):
        rc = data.draw(chunks_for(n_rows))
        cc = data.draw(chunks_for(n_cols))
        return (da.from_array(m[0], chunks=(-1, rc)), da.from_array(m[1], chunks=(-1, cc)))

    got = daskbicl.score(_ds(chunked(truth)), _ds(chunked(pred)), measures=BICLUSTER)
    for k in BICLUSTER:
        assert got[k] == pytest.approx(expected[k], abs=1e-12), k


@given(biclustering_pair(), st.randoms())
def test_bicluster_order_and_coordinate_order_do_not_matter(pair, rnd):
    truth, pred, (n_rows, n_cols) = pair
    expected = daskbicl.score(_ds(truth), _ds(pred), measures=BICLUSTER)
    kt, kp = truth[0].shape[0], pred[0].shape[0]
    ot, op = rnd.sample(range(kt), kt), rnd.sample(range(kp), kp)
    pr, pc = rnd.sample(range(n_rows), n_rows), rnd.sample(range(n_cols), n_cols)
    rows = np.array([f"r{i}" for i in range(n_rows)])
    cols = np.array([f"c{j}" for j in range(n_cols)])
    t2 = _ds((truth[0][ot], truth[1][ot]), row=rows, col=cols)
    p2 = _ds((pred[0][op][:, pr], pred[1][op][:, pc]), row=rows[pr], col=cols[pc])
    got = daskbicl.score(t2, p2, measures=BICLUSTER)
    for k in BICLUSTER:
        assert got[k] == pytest.approx(expected[k], abs=1e-12), k


@given(coclustering_pair(max_rows=8, max_cols=6, huge=False))
@settings(max_examples=30)
def test_coclustering_is_the_biclustering_of_its_blocks(pair):
    truth, pred = pair
    via_tables = daskbicl.score(truth, pred, measures=BICLUSTER)  # contingency shortcut
    t_ds = as_biclustering(daskbicl.as_dataset(truth))
    p_ds = as_biclustering(daskbicl.as_dataset(pred))
    via_masks = daskbicl.score(t_ds, p_ds, measures=BICLUSTER)
    mixed = daskbicl.score(truth, p_ds, measures=BICLUSTER)
    masks = lambda ds: (ds.row_mask.values, ds.col_mask.values)  # noqa: E731
    expected = _oracle(masks(t_ds), masks(p_ds), (len(truth[0]), len(truth[1])), 1, 1)
    for k in BICLUSTER:
        assert via_tables[k] == pytest.approx(expected[k], abs=1e-12), k
        assert via_masks[k] == pytest.approx(expected[k], abs=1e-12), k
        assert mixed[k] == pytest.approx(expected[k], abs=1e-12), k


def test_perfect_match_and_whole_matrix():
    t = ([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 0, 1]])
    s = daskbicl.score(_ds(t), _ds(t), measures=BICLUSTER)
    assert all(v == pytest.approx(1.0) for v in s.values())
    whole = ([[1, 1, 1, 1]], [[1, 1, 1]])
    w = daskbicl.score(_ds(t), _ds(whole), measures=BICLUSTER)
    for k in BICLUSTER:
        if k.endswith("_corrected") or k.endswith("_space"):
            assert w[k] == pytest.approx(0.0, abs=1e-12), k


def test_pair_scores_dataset():
    truth = _ds(([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 1, 1]]), bicluster=["A", "B"])
    pred = _ds(([[1, 1, 1, 0]], [[1, 1, 0]]), bicluster=["x"])
    ds = daskbicl.pair_scores(truth, pred, beta=2.0)
    assert ds.sizes == {"truth_bicluster": 2, "pred_bicluster": 1}
    assert list(ds.truth_bicluster.values) == ["A", "B"]
    assert int(ds.intersection.sel(truth_bicluster="A", pred_bicluster="x")) == 4
    assert float(ds.precision.sel(truth_bicluster="A", pred_bicluster="x")) == pytest.approx(4 / 6)
    assert float(ds.recall.sel(truth_bicluster="B", pred_bicluster="x")) == pytest.approx(1 / 4)  # 1 of 4 cells
    oracle = OB.pair_oracle(
        [([1, 1, 0, 0], [1, 1, 0]), ([0, 0, 1, 1], [0, 1, 1])], [([1, 1, 1, 0], [1, 1, 0])], 4, 3, beta=Fraction(2)
    )
    for key in ("fmeasure", "fmeasure_corrected", "jaccard_space"):
        np.testing.assert_allclose(ds[key].values, oracle[key].astype(float), atol=1e-12)


def test_empty_bicluster_is_named_unless_dropped():
    truth = _ds(([[1, 1, 0], [0, 0, 0]], [[1, 0], [1, 1]]), bicluster=["good", "hollow"])
    pred = _ds(([[1, 1, 0]], [[1, 0]]))
    with pytest.raises(InputError, match="truth has 1 empty bicluster.*'hollow'"):
        daskbicl.score(truth, pred)
    s = daskbicl.score(truth, pred, drop_empty=True, measures=["jaccard"])
    assert s["jaccard"] == 1.0


def test_parameters_are_validated():
    t = _ds(([[1, 0]], [[1, 0]]))
    with pytest.raises(daskbicl.MeasureError, match="unknown parameter"):
        daskbicl.score(t, t, measures=["jaccard"], beta=2.0)
    with pytest.raises(daskbicl.DaskbiclError, match="beta"):
        daskbicl.fmeasure(t, t, beta=-1.0)
    with pytest.raises(daskbicl.MeasureError, match="needs co-clusterings"):
        daskbicl.cari(t, t)


def test_large_sparse_masks_use_exact_counts():
    """Sparse and dense chunk strategies agree (the product is exact)."""
    rng = np.random.default_rng(0)
    tr = rng.random((30, 5000)) < 0.005
    pr = rng.random((20, 5000)) < 0.3
    from daskbicl.kernels.bicluster.mask_counting import _dense_product, _sparse_product, intersect_counts

    exact = tr.astype(np.int64) @ pr.astype(np.int64).T
    np.testing.assert_array_equal(_dense_product(tr, pr), exact)
    np.testing.assert_array_equal(_sparse_product(tr, pr), exact)
    np.testing.assert_array_equal(intersect_counts(tr, pr).shared, exact)


def test_distributed_equals_local(client):
    rng = np.random.default_rng(5)
    truth = (rng.random((6, 3000)) < 0.2, rng.random((6, 400)) < 0.3)
    pred = (rng.random((9, 3000)) < 0.2, rng.random((9, 400)) < 0.3)
    t = _ds((da.from_array(truth[0], chunks=(-1, 700)), da.from_array(truth[1], chunks=(-1, 90))))
    p = _ds((da.from_array(pred[0], chunks=(-1, 1100)), pred[1]))
    on_cluster = daskbicl.score(t, p)
    with dask.config.set(scheduler="sync"):
        local = daskbicl.score(_ds(truth), _ds(pred))
    for k in local:
        assert on_cluster[k] == pytest.approx(local[k], abs=1e-12), k


@pytest.mark.parametrize("name", BICLUSTER)
def test_clip_and_drop_empty_are_accepted_by_every_bicluster_measure(name):
    # a prediction worse than random, so that clip matters for the corrected values
    truth = _ds(([[1, 1, 0, 0, 0, 0]], [[1, 1, 0, 0]]))
    pred = _ds(([[1, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 0]], [[0, 1, 1, 1], [0, 0, 1, 1]]))
    plain = daskbicl.score(truth, pred, measures=[name])[name]
    clipped = daskbicl.score(truth, pred, measures=[name], clip=True, drop_empty=False)[name]
    if name.endswith(("_corrected", "_space")):
        assert clipped == max(plain, 0.0)
    else:  # no effect on raw measures (already >= 0)
        assert clipped == plain
    assert getattr(daskbicl, name)(truth, pred, clip=True) == clipped
    assert daskbicl.MEASURES[name].defaults["clip"] is False


def test_one_parameter_set_works_for_any_selection_of_bicluster_measures():
    truth = _ds(([[1, 1, 0, 0]], [[1, 1, 0]]))
    pred = _ds(([[1, 1, 1, 0]], [[1, 0, 0]]))
    params = {"clip": True, "drop_empty": True}
    everything = daskbicl.score(truth, pred, measures=BICLUSTER, **params)
    for name in BICLUSTER:
        assert daskbicl.score(truth, pred, measures=[name], **params) == {name: everything[name]}


def test_jaccard_corrected_documents_the_approximate_expectation():
    doc = daskbicl.jaccard_corrected.__doc__
    assert "approximation" in doc and "≈" in doc
    assert "not the exact expectation" in " ".join(doc.split())


def test_extreme_finite_parameters_reach_their_limits():
    """beta -> inf is recall alone, beta -> 0 precision alone; R -> inf precision alone (never NaN)."""
    truth = daskbicl.biclustering([[1, 1, 1, 0, 0, 0]], [[1, 1, 0, 0]])
    pred = daskbicl.biclustering([[0, 1, 1, 1, 0, 0]], [[1, 1, 1, 0]])
    pre, rec = 4 / 9, 4 / 6
    assert daskbicl.fmeasure(truth, pred, beta=1e200) == pytest.approx(rec, rel=1e-15)
    assert daskbicl.fmeasure(truth, pred, beta=1.4e154) == pytest.approx(rec, rel=1e-15)
    assert daskbicl.fmeasure(truth, pred, beta=1e-200) == pytest.approx(pre, rel=1e-15)
    assert daskbicl.goodness(truth, pred, R=1.7e308) == pytest.approx(pre, rel=1e-15)
    assert daskbicl.goodness(truth, pred, R=5e-324) == pytest.approx(rec, rel=1e-15)
    for name in ("fmeasure_corrected", "fmeasure_space", "goodness_corrected", "goodness_space"):
        param = {"beta": 1e300} if name.startswith("f") else {"R": 1.7e308}
        value = daskbicl.score(truth, pred, measures=[name], **param)[name]
        assert np.isfinite(value), name
