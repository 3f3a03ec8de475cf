"""``element_scores(truth, pred, axis="cells")``: each cell's element-centric score as a lazy DataArray.

Oracle: every cell's score from its PageRank affinity vectors built cell by
cell (tests/kernels/bicluster/test_element_centric_overlap.py's ``scores_brute``), for
co-clusterings, biclusterings with and without overlaps, and a co-clustering
against a biclustering; chunkings of truth and pred differ; on a
LocalCluster from Zarr stores with coordinates.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest

import daskbicl

from ..kernels.bicluster.test_element_centric_overlap import cells_of, scores_brute


def _blocks(z, w) -> tuple[np.ndarray, np.ndarray]:
    """A co-clustering's blocks as biclusters (row and column masks)."""
    hs, ls = np.unique(z), np.unique(w)
    return (np.array([z == h for h in hs for _ in ls]), np.array([w == l for _ in hs for l in ls]))


def _check(got, truth_masks, pred_masks):
    want = scores_brute(cells_of(*truth_masks), cells_of(*pred_masks))
    shape = (truth_masks[0].shape[1], truth_masks[1].shape[1])
    assert got.dims == ("row", "col") and got.name == "ecs" and got.shape == shape
    np.testing.assert_allclose(got.values, want.reshape(shape), rtol=0, atol=1e-12)
    return want


def test_coclusterings_cell_by_cell():
    rng = np.random.default_rng(0)
    for _ in range(25):
        n_r, n_c = int(rng.integers(1, 9)), int(rng.integers(1, 8))
        z, w, zp, wp = (rng.integers(0, 3, n) for n in (n_r, n_c, n_r, n_c))
        chunks = [int(rng.integers(1, n + 1)) for n in (n_r, n_c, n_r, n_c)]
        truth = (da.from_array(z, chunks=chunks[0]), da.from_array(w, chunks=chunks[1]))
        pred = (da.from_array(zp, chunks=chunks[2]), da.from_array(wp, chunks=chunks[3]))
        got = daskbicl.element_scores(truth, pred, axis="cells")
        want = _check(got, _blocks(z, w), _blocks(zp, wp))
        assert daskbicl.ecs((z, w), (zp, wp)) == pytest.approx(want.mean(), abs=1e-12)


@pytest.mark.parametrize("density", [0.3, 0.7])  # few overlaps, many
def test_biclusterings_cell_by_cell(density):
    rng = np.random.default_rng(int(density * 10))
    for _ in range(20):
        n_r, n_c = int(rng.integers(1, 9)), int(rng.integers(1, 7))
        truth = rng.random((int(rng.integers(1, 4)), n_r)) < density, rng.random((3, n_c)) < density
        truth = truth[0], truth[1][:len(truth[0])]
        k = int(rng.integers(1, 4))
        pred = rng.random((k, n_r)) < density, rng.random((k, n_c)) < density
        got = daskbicl.element_scores(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), axis="cells")
        want = _check(got, truth, pred)
        assert float(got.mean()) == pytest.approx(
            daskbicl.ecs(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)), abs=1e-12)
        assert want.size == 0 or np.isfinite(got.values).all()


def test_a_coclustering_against_a_biclustering():
    rng = np.random.default_rng(3)
    for _ in range(10):
        z, w = rng.integers(0, 3, 7), rng.integers(0, 2, 5)
        pred = rng.random((3, 7)) < 0.5, rng.random((3, 5)) < 0.5
        got = daskbicl.element_scores((z, w), daskbicl.biclustering(*pred), axis="cells")
        _check(got, _blocks(z, w), pred)


def test_cells_on_a_cluster_from_stores_with_coordinates(client, tmp_path):
    rng = np.random.default_rng(4)
    genes, samples = [f"g{i}" for i in range(90)], [f"s{j}" for j in range(40)]
    truth = rng.random((4, 90)) < 0.3, rng.random((4, 40)) < 0.4
    pred = rng.random((3, 90)) < 0.3, rng.random((3, 40)) < 0.4
    t = daskbicl.save(daskbicl.biclustering(*truth, row=genes, col=samples), tmp_path / "t.zarr", chunk=16)
    p = daskbicl.save(daskbicl.biclustering(*pred, row=genes, col=samples), tmp_path / "p.zarr", chunk=32)
    got = daskbicl.element_scores(t, p, axis="cells")
    assert isinstance(got.data, da.Array)  # lazy until asked for
    assert list(got.row.values[:2]) == genes[:2] and list(got.col.values[-1:]) == samples[-1:]
    want = _check(got, truth, pred)
    assert float(got.sel(row="g5", col="s3")) == pytest.approx(want.reshape(90, 40)[5, 3], abs=1e-12)
    through_accessor = daskbicl.open(t).bicl.element_scores(daskbicl.open(p), axis="cells")
    assert np.array_equal(through_accessor.values, got.values)  # the accessor is the function
    zt = daskbicl.save(daskbicl.partition(rng.integers(0, 3, 90), rng.integers(0, 2, 40), row=genes, col=samples),
                       tmp_path / "zt.zarr", chunk=16)
    zp = daskbicl.save(daskbicl.partition(rng.integers(0, 4, 90), rng.integers(0, 3, 40), row=genes, col=samples),
                       tmp_path / "zp.zarr", chunk=25)
    scores = daskbicl.element_scores(zt, zp, axis="cells")
    assert float(scores.mean()) == pytest.approx(daskbicl.ecs(zt, zp), abs=1e-12)


def test_blocks_stay_small():
    z = np.zeros(5000, int)
    got = daskbicl.element_scores((z, z[:3000]), (z, z[:3000]), axis="cells")
    assert max(got.chunks[0]) <= 2048 and max(got.chunks[1]) <= 2048
    assert float(got[4999, 2999]) == 1.0


def test_a_class_budget_refusal_names_the_counts():
    rng = np.random.default_rng(5)
    rows = rng.random((16, 3000)) < 0.5  # ~3000 row classes x ~1000 column classes: over 2,000,000 pairs
    cols = rng.random((16, 1000)) < 0.5
    t = daskbicl.biclustering(rows[:8], cols[:8])
    p = daskbicl.biclustering(rows[8:], cols[8:])
    with pytest.raises(daskbicl.InputError, match=r"row x .* column signature classes make .* budget of 2,000,000"):
        daskbicl.element_scores(t, p, axis="cells")


def test_the_score_table_is_one_piece_of_the_graph():
    """Every block reads the per-pair score table from one graph key: pickled, the graph holds it once."""
    import cloudpickle

    rng = np.random.default_rng(6)
    truth = rng.random((5, 5000)) < 0.5, rng.random((5, 5000)) < 0.5  # ~1000 row and column classes
    pred = rng.random((5, 5000)) < 0.5, rng.random((5, 5000)) < 0.5
    got = daskbicl.element_scores(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), axis="cells")
    assert len(got.chunks[0]) * len(got.chunks[1]) == 9
    graph = dict(got.__dask_graph__())
    tables = [v for v in graph.values() if isinstance(v, np.ndarray) and v.dtype == np.float64]
    assert len(tables) == 1 and tables[0].nbytes > 4e6
    tasks = sum(len(cloudpickle.dumps(v)) for v in graph.values() if not isinstance(v, np.ndarray))
    assert tasks < 0.2 * tables[0].nbytes  # no task carries a copy of it
