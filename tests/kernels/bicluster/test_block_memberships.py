"""The blocks of two co-clusterings as biclusters: signatures from the contingency tables equal the masks'.

``recovered``, ``redundancy``, ``ce_sparse`` and ``ce_dense`` of two
co-clusterings read :func:`block_memberships` (no one-hot block masks); here
against the mask path (``signature_counts`` of the block masks, and the
measures on the same blocks given as biclusterings).
"""

from __future__ import annotations

import dask
import numpy as np
import pytest
from dask.callbacks import Callback

import daskbicl
from daskbicl.kernels.bicluster.block_memberships import block_memberships
from daskbicl.kernels.coclustering.contingency import Table
from daskbicl.kernels.micro.memberships import signature_counts

RECOVERY = ["recovered", "redundancy", "ce_sparse", "ce_dense"]


def _masks(z, w):
    hs, ls = np.unique(z), np.unique(w)
    return np.array([z == h for h in hs for _ in ls]), np.array([w == l for _ in hs for l in ls])


def test_signatures_and_gram_tables_equal_the_masks():
    rng = np.random.default_rng(0)
    for _ in range(150):
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 9))
        z, w, zp, wp = (rng.integers(0, 4, x) for x in (n, m, n, m))
        (t_rows, t_cols), (p_rows, p_cols) = _masks(z, w), _masks(zp, wp)
        cases = (("rows", z, zp, t_rows, p_rows, (len(np.unique(w)), len(np.unique(wp)))),
                 ("cols", w, wp, t_cols, p_cols, (len(np.unique(z)), len(np.unique(zp)))))
        for axis, a, b, t_mask, p_mask, other in cases:
            got = block_memberships(Table.from_labels(a, b), other, axis)
            want = signature_counts(t_mask, p_mask)
            assert dict(zip(map(tuple, got.lists()), got.cnt.tolist())) == \
                dict(zip(map(tuple, want.lists()), want.cnt.tolist()))
            np.testing.assert_array_equal(got.gram, want.gram)
            assert (got.n_items, got.n_truth, got.n_pred) == (want.n_items, want.n_truth, want.n_pred)


@pytest.mark.parametrize("share", [0.4, 0.6, 1.0])
def test_recovery_scores_of_coclusterings_equal_their_blocks(share):
    rng = np.random.default_rng(int(share * 10))
    for _ in range(12):
        z, w = rng.integers(0, int(rng.integers(1, 4)), 30), rng.integers(0, 3, 20)
        zp, wp = rng.integers(0, 5, 30), rng.integers(0, int(rng.integers(1, 3)), 20)
        got = daskbicl.score((z, w), (zp, wp), measures=RECOVERY, share=share)
        want = daskbicl.score(daskbicl.biclustering(*_masks(z, w)), daskbicl.biclustering(*_masks(zp, wp)),
                              measures=RECOVERY, share=share)
        for name in RECOVERY:
            np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, equal_nan=True)


def test_unassigned_labels_as_singletons():
    z, zp = np.array([0, 0, 1, -1, 1, -1]), np.array([0, 1, 1, 1, 0, 0])
    w = np.array([0, 1, 1, 0])
    got = daskbicl.score((z, w), (zp, w), measures=RECOVERY, unassigned="singleton")
    singles = np.where(z < 0, 100 + np.arange(6), z)  # each unassigned row a cluster of its own
    want = daskbicl.score(daskbicl.biclustering(*_masks(singles, w)), daskbicl.biclustering(*_masks(zp, w)),
                          measures=RECOVERY)
    for name in RECOVERY:
        np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, equal_nan=True)


def test_coclusterings_on_a_cluster(client, tmp_path):
    rng = np.random.default_rng(7)
    z, w, zp, wp = rng.integers(0, 3, 200), rng.integers(0, 4, 70), rng.integers(0, 4, 200), rng.integers(0, 3, 70)
    t = daskbicl.save(daskbicl.partition(z, w), tmp_path / "t.zarr", chunk=64)
    p = daskbicl.save(daskbicl.partition(zp, wp), tmp_path / "p.zarr", chunk=50)
    got = daskbicl.score(t, p, measures=RECOVERY)
    want = daskbicl.score(daskbicl.biclustering(*_masks(z, w)), daskbicl.biclustering(*_masks(zp, wp)),
                          measures=RECOVERY)
    for name in RECOVERY:
        np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, equal_nan=True)


# --------------------------------------------------------------------------- a co-clustering against a biclustering


def _labels(rng, n: int, kind: str):
    """Labels of one axis: integers with negative (unassigned) entries, strings with None, or floats with NaN."""
    codes = rng.integers(-1, 4, n)
    if kind == "int":
        return codes
    if kind == "str":
        return np.array([None if c < 0 else f"c{c}" for c in codes], dtype=object)
    return np.where(codes < 0, np.nan, codes * 0.5)


def _policy(ds, policy: str):
    """``ds`` with the unassigned policy recorded as the readers record it."""
    from daskbicl.kernels.coclustering.contingency import UNASSIGNED_ATTR

    return ds.assign_attrs({UNASSIGNED_ATTR: policy})


def _mask_pass(co, other, side: str):
    """The oracle: the mask pass over the co-clustering's block masks (as_biclustering), as before the label pass."""
    from daskbicl.engine.bicluster_pass import mask_counts_graph
    from daskbicl.engine.blocks import as_biclustering

    blocks = as_biclustering(co, side)
    pair = (blocks, other) if side == "truth" else (other, blocks)
    rows = mask_counts_graph(pair[0].row_mask.data, pair[1].row_mask.data)
    cols = mask_counts_graph(pair[0].col_mask.data, pair[1].col_mask.data)
    return dask.compute(rows, cols, scheduler="sync") + (np.asarray(blocks["bicluster"].values),)


def _same_counts(a, b) -> None:
    for x, y in ((a.shared, b.shared), (a.truth_sizes, b.truth_sizes), (a.pred_sizes, b.pred_sizes)):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype
    assert a.length == b.length and type(a.length) is type(b.length)


@pytest.mark.parametrize("kind", ["int", "str", "float"])
@pytest.mark.parametrize("side", ["truth", "pred"])
@pytest.mark.parametrize("policy", ["cluster", "singleton"])
def test_blocks_counted_by_label_equal_the_mask_pass_over_the_blocks(kind, side, policy):
    """The label x mask pass (no block masks, nothing computed to build the graph) gives the mask pass's tables and
    block ids exactly, for any label type, with unassigned entries as one cluster or a cluster each, chunked or
    not."""
    from daskbicl.engine.blocks import SUM_BY_LABEL, blocks_against_masks
    from daskbicl.engine.core import counting_pass

    rng = np.random.default_rng(len(kind) + len(side) + len(policy))
    for trial in range(8):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 25))
        co = _policy(daskbicl.partition(_labels(rng, n, kind), _labels(rng, m, kind)), policy)
        k = int(rng.integers(1, 4))
        other = daskbicl.biclustering(rng.random((k, n)) < 0.5, rng.random((k, m)) < 0.5)
        want_rows, want_cols, want_ids = _mask_pass(co, other, side)
        for chunks in ({}, {"row": int(rng.integers(1, 9)), "col": int(rng.integers(1, 9))}):
            c, o = (co.chunk(chunks), other.chunk(chunks)) if chunks else (co, other)
            names = (f"{side} row_labels", f"{side} col_labels")
            rows = counting_pass(SUM_BY_LABEL, (c.row_labels.data, o.row_mask.data), names[0], policy, split_every=3)
            cols = counting_pass(SUM_BY_LABEL, (c.col_labels.data, o.col_mask.data), names[1], policy, split_every=3)
            got = dask.compute(dask.delayed(blocks_against_masks, nout=3)(rows, cols, names, policy, side),
                               scheduler="sync")[0]
            _same_counts(got[0], want_rows)
            _same_counts(got[1], want_cols)
            assert got[2].tolist() == want_ids.tolist(), trial


def test_unassigned_labels_under_the_error_policy_get_the_same_message():
    z = np.array([0, 1, -1, 1])
    co = daskbicl.partition(z, np.array([0, 1]))  # default policy: unassigned entries are an error
    other = daskbicl.biclustering(np.array([[1, 1, 0, 0]], bool), np.array([[1, 0]], bool))
    with pytest.raises(daskbicl.DaskbiclError) as before:
        _mask_pass(co, other, "truth")
    with pytest.raises(daskbicl.DaskbiclError) as after:
        daskbicl.score(co.chunk({"row": 2}), other.chunk({"row": 2}), measures=["fmeasure"])
    assert str(after.value) == str(before.value)
    assert "truth row_labels has 1 unassigned entry" in str(after.value)


class _Computes(Callback):
    """Counts the computations started on the local schedulers while it is active."""

    def __init__(self):
        super().__init__()
        self.started = 0

    def _start(self, dsk):
        self.started += 1


@pytest.mark.parametrize("policy", ["cluster", "singleton"])
def test_building_the_bicluster_graph_computes_nothing(policy):
    """A co-clustering scored against a biclustering: building the plan's graphs starts no computation (the labels
    are counted in the graph), the "singleton" policy (a cluster per unassigned entry) included.  The counter sees
    the pass over the labels that reading the co-clustering as block masks runs, so it would see it here too."""
    from daskbicl.engine.blocks import as_biclustering
    from daskbicl.measures.plan import ScorePlan
    from daskbicl.measures.registry import REGISTRY

    rng = np.random.default_rng(4)
    co = _policy(daskbicl.partition(_labels(rng, 50, "int"), _labels(rng, 30, "int")), policy).chunk({"row": 16})
    other = daskbicl.biclustering(rng.random((3, 50)) < 0.5, rng.random((3, 30)) < 0.5).chunk({"row": 16})
    names = [k for k, r in REGISTRY.items() if r.provider == "bicluster"]
    for truth, pred in ((co, other), (other, co)):
        with _Computes() as counter:
            plan = ScorePlan.build(truth, pred, measures=names, unassigned=policy)
            graphs = plan.graphs()
        assert counter.started == 0
        values = plan.finalize(dict(zip(graphs, dask.compute(*graphs.values(), scheduler="sync"))))
        assert values == daskbicl.score(truth.compute(), pred.compute(), measures=names, unassigned=policy)
    with _Computes() as counter:
        as_biclustering(co, "truth")
    assert counter.started > 0


def test_a_coclustering_store_against_a_biclustering_store_on_a_cluster(client, tmp_path):
    """Zarr stores on disk, the LocalCluster: the bicluster measures of a co-clustering (counted by label) equal
    those of its blocks given as a biclustering (counted by mask), both ways round."""
    from daskbicl.measures.registry import REGISTRY

    rng = np.random.default_rng(9)
    z, w = rng.integers(0, 3, 300), rng.integers(0, 4, 90)
    masks = rng.random((4, 300)) < 0.3, rng.random((4, 90)) < 0.4
    co = daskbicl.save(daskbicl.partition(z, w), tmp_path / "co.zarr", chunk=64)
    bic = daskbicl.save(daskbicl.biclustering(*masks), tmp_path / "bic.zarr", chunk=50)
    blocks = daskbicl.biclustering(*_masks(z, w))
    names = [k for k, r in REGISTRY.items() if r.provider == "bicluster"]
    for got, want in ((daskbicl.score(co, bic, measures=names), daskbicl.score(blocks, bic, measures=names)),
                      (daskbicl.score(bic, co, measures=names), daskbicl.score(bic, blocks, measures=names))):
        for name in names:
            np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, equal_nan=True, err_msg=name)
