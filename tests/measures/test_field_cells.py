"""``ecs`` on the cells (docs/measures/field.md): element-centric similarity of the cell clusterings.

Against a brute-force oracle written from Gates et al.'s definition (each
cell's personalised-PageRank affinity vector over all cells, built cell by
cell, and the L1 distance between the two), against clusim's
``element_sim`` on the cell memberships (skipped when clusim is absent), the
co-clustering path against the biclustering path on the same blocks, and
through a LocalCluster with Zarr stores, the contingency tables, the CLI and
a manifest.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl

from ..support.manifests import batch_command, one_pair

ALPHA = 0.9


def _cell_clusters_of_coclustering(z, w) -> np.ndarray:
    """One cluster id per cell (row-major), the block (z_i, w_j)."""
    z, w = np.asarray(z), np.asarray(w)
    return np.array([f"{a}/{b}" for a in z.tolist() for b in w.tolist()], dtype=object)


def _cell_clusters_of_biclustering(rows, cols) -> np.ndarray:
    """Cluster id per cell: its bicluster, or a singleton of its own; fails on overlapping biclusters."""
    n_r, n_c = rows.shape[1], cols.shape[1]
    out = np.array([f"cell{i}" for i in range(n_r * n_c)], dtype=object)
    for k in range(rows.shape[0]):
        cells = (np.flatnonzero(rows[k])[:, None] * n_c + np.flatnonzero(cols[k])[None, :]).ravel()
        assert all(str(x).startswith("cell") for x in out[cells]), "overlapping biclusters"
        out[cells] = f"b{k}"
    return out


def _affinities(labels: np.ndarray) -> np.ndarray:
    """p_i(j) = α/|C(i)| for j in i's cluster, plus 1 − α on the diagonal (the PageRank of a partition)."""
    n = len(labels)
    p = np.zeros((n, n))
    for i in range(n):
        members = np.flatnonzero(labels == labels[i])
        p[i, members] = ALPHA / len(members)
        p[i, i] += 1 - ALPHA
    return p


def ecs_brute(truth_labels, pred_labels) -> float:
    p, q = _affinities(truth_labels), _affinities(pred_labels)
    scores = 1 - np.abs(p - q).sum(axis=1) / (2 * ALPHA)
    return float(scores.mean())


def element_shares(truth_labels, pred_labels) -> np.ndarray:
    """Each element's |A ∩ B| / max(|A|, |B|), element by element (the partition closed form)."""
    _, t_idx, t_size = np.unique(truth_labels, return_inverse=True, return_counts=True)
    _, p_idx, p_size = np.unique(pred_labels, return_inverse=True, return_counts=True)
    _, j_idx, j_size = np.unique(t_idx * len(p_size) + p_idx, return_inverse=True, return_counts=True)
    return j_size[j_idx] / np.maximum(t_size[t_idx], p_size[p_idx])


def ecs_cell_by_cell(truth_labels, pred_labels) -> float:
    """The mean of :func:`element_shares` over the cells (for 12 000 cells, where the affinities are too big)."""
    return float(np.mean(element_shares(truth_labels, pred_labels)))


def test_the_cell_by_cell_oracle_equals_the_pagerank_definition():
    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b = rng.integers(0, 4, 30), rng.integers(0, 5, 30)
        assert ecs_cell_by_cell(a, b) == pytest.approx(ecs_brute(a, b), abs=1e-12)


@st.composite
def coclusterings(draw, max_rows=7, max_cols=6):
    n_r, n_c = draw(st.integers(1, max_rows)), draw(st.integers(1, max_cols))
    labels = [np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))) for n in (n_r, n_c, n_r, n_c)]
    return (labels[0], labels[1]), (labels[2], labels[3])


@given(coclusterings())
@settings(max_examples=60)
def test_coclusterings_match_the_definition(pair):
    (z, w), (zp, wp) = pair
    want = ecs_brute(_cell_clusters_of_coclustering(z, w), _cell_clusters_of_coclustering(zp, wp))
    assert daskbicl.ecs((z, w), (zp, wp)) == pytest.approx(want, abs=1e-12)


def _disjoint_biclustering(rng, n_r, n_c, k):
    """k biclusters on disjoint row sets (so their cells never overlap), some cells uncovered."""
    owner = rng.integers(-1, k, n_r)
    rows = np.stack([owner == b for b in range(k)]) if k else np.zeros((0, n_r), bool)
    cols = rng.random((k, n_c)) < 0.6
    return rows, cols


def test_biclusterings_match_the_definition():
    rng = np.random.default_rng(19)
    for _ in range(40):
        n_r, n_c = int(rng.integers(1, 9)), int(rng.integers(1, 7))
        truth = _disjoint_biclustering(rng, n_r, n_c, int(rng.integers(1, 4)))
        pred = _disjoint_biclustering(rng, n_r, n_c, int(rng.integers(1, 4)))
        want = ecs_brute(_cell_clusters_of_biclustering(*truth), _cell_clusters_of_biclustering(*pred))
        got = daskbicl.ecs(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred))
        assert got == pytest.approx(want, abs=1e-12)


def test_the_coclustering_path_equals_the_biclustering_path_on_its_blocks():
    rng = np.random.default_rng(4)
    for _ in range(10):
        z, w = rng.integers(0, 4, 30), rng.integers(0, 3, 17)
        zp, wp = rng.integers(0, 5, 30), rng.integers(0, 2, 17)

        def blocks(a, b):
            return daskbicl.biclustering([a == h for h in np.unique(a) for _ in np.unique(b)],
                                         [b == l for _ in np.unique(a) for l in np.unique(b)])

        assert daskbicl.ecs((z, w), (zp, wp)) == pytest.approx(daskbicl.ecs(blocks(z, w), blocks(zp, wp)), abs=1e-12)
        mixed = daskbicl.ecs((z, w), blocks(zp, wp))  # a co-clustering against a biclustering
        assert mixed == pytest.approx(daskbicl.ecs((z, w), (zp, wp)), abs=1e-12)


def test_equal_to_clusim_element_sim():
    clusim_sim = pytest.importorskip("clusim.sim")
    from clusim.clustering import Clustering

    def clustering(labels):
        return Clustering(elm2clu_dict={i: [str(c)] for i, c in enumerate(labels.tolist())})

    rng = np.random.default_rng(8)
    for trial in range(12):
        n_r, n_c = int(rng.integers(2, 12)), int(rng.integers(2, 9))
        if trial % 2:
            truth, pred = (_disjoint_biclustering(rng, n_r, n_c, int(rng.integers(1, 4))) for _ in range(2))
            labels = [_cell_clusters_of_biclustering(*m) for m in (truth, pred)]
            got = daskbicl.ecs(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred))
        else:
            z, w, zp, wp = (rng.integers(0, 3, n) for n in (n_r, n_c, n_r, n_c))
            labels = [_cell_clusters_of_coclustering(z, w), _cell_clusters_of_coclustering(zp, wp)]
            got = daskbicl.ecs((z, w), (zp, wp))
        peer = clusim_sim.element_sim(clustering(labels[0]), clustering(labels[1]), alpha=ALPHA)
        assert got == pytest.approx(peer, abs=1e-9)  # clusim's affinities are floating-point PageRank


def test_large_tables_agree_with_the_per_axis_closed_form():
    """One column cluster on each side: the cells' ECS is the rows' ECS (every cell scores as its row)."""
    rng = np.random.default_rng(1)
    z, zp = rng.integers(0, 300, 20_000), rng.integers(0, 250, 20_000)
    w = np.zeros(40, int)
    assert daskbicl.ecs((z, w), (zp, w)) == pytest.approx(daskbicl.ecs_rows((z, w), (zp, w)), rel=1e-13)
    assert daskbicl.ecs((z, w), (z, w)) == 1.0


def test_overlapping_biclusters_are_scored_by_their_pagerank():
    """Overlapping biclusters: no closed form; the class PageRank (tests/kernels/bicluster/test_element_centric_overlap.py) is used."""
    from ..kernels.bicluster.test_element_centric_overlap import cells_of, scores_brute

    rows, cols = np.array([[1, 1, 0], [0, 1, 1]], bool), np.array([[1, 1], [1, 0]], bool)
    t = daskbicl.biclustering(rows, cols)
    p = daskbicl.biclustering([[1, 0, 0]], [[1, 1]])
    want = scores_brute(cells_of(rows, cols), cells_of(np.array([[1, 0, 0]], bool), np.array([[1, 1]], bool)))
    assert daskbicl.ecs(t, p) == pytest.approx(want.mean(), abs=1e-12)
    assert daskbicl.ecs(p, t) == pytest.approx(want.mean(), abs=1e-12)
    # sharing rows but not columns is no overlap of cells: the closed form
    ok = daskbicl.biclustering([[1, 1, 0], [0, 1, 1]], [[1, 0], [0, 1]])
    assert daskbicl.ecs(ok, ok) == 1.0


# --------------------------------------------------------------------------- every door


def _stores(tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    truth = daskbicl.partition(rng.integers(0, 5, 200), rng.integers(0, 4, 60))
    pred = daskbicl.partition(rng.integers(0, 6, 200), rng.integers(0, 3, 60))
    t = daskbicl.save(truth, tmp_path / "t.zarr", chunk=64)
    p = daskbicl.save(pred, tmp_path / "p.zarr", chunk=64)
    labels = [_cell_clusters_of_coclustering(ds.row_labels.values, ds.col_labels.values) for ds in (truth, pred)]
    return t, p, labels


def test_distributed_contingency_and_accessor(client, tmp_path):
    t, p, labels = _stores(tmp_path)
    local = ecs_cell_by_cell(*labels)
    assert daskbicl.ecs(t, p) == pytest.approx(local, abs=1e-12)
    tables = daskbicl.contingency(t, p)
    assert daskbicl.score(tables, measures=["ecs"])["ecs"] == pytest.approx(local, abs=1e-12)
    assert daskbicl.open(t).bicl.ecs(daskbicl.open(p)) == pytest.approx(local, abs=1e-12)


def test_cli_and_manifest(tmp_path):
    from daskbicl.batch import ResultsDB

    t, p, labels = _stores(tmp_path, 1)
    want = ecs_cell_by_cell(*labels)
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(t), str(p), "--json", "--workers", "0",
                           "--measure", "ecs"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ecs"] == pytest.approx(want, abs=1e-12)
    one_pair(tmp_path, ["ecs"])
    proc = batch_command(tmp_path / "m.toml", tmp_path / "r.sqlite")
    assert proc.returncode == 0, proc.stderr
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        values = {r["measure"]: r["value"] for r in db.scores()}
    assert values["ecs"] == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------- per-element scores


@pytest.mark.parametrize("axis", ["rows", "cols"])
@given(pair=coclusterings(max_rows=9, max_cols=8), data=st.data())
@settings(max_examples=30)
def test_element_scores_are_each_elements_share(axis, pair, data):
    import dask.array as da

    from ..support.strategies import chunks_for

    (z, w), (zp, wp) = pair
    labels = (z, zp) if axis == "rows" else (w, wp)
    want = [ecs_brute_one(labels[0], labels[1], i) for i in range(len(labels[0]))]
    got = daskbicl.element_scores((z, w), (zp, wp), axis=axis)
    assert got.dims == ("row" if axis == "rows" else "col",) and got.name == f"ecs_{axis}"
    np.testing.assert_allclose(got.values, want, rtol=0, atol=1e-12)
    assert float(got.mean()) == pytest.approx(getattr(daskbicl, f"ecs_{axis}")((z, w), (zp, wp)), abs=1e-12)
    chunked = [tuple(da.from_array(x, chunks=(data.draw(chunks_for(len(x))),)) for x in side)
               for side in ((z, w), (zp, wp))]  # truth and pred chunked differently
    np.testing.assert_allclose(daskbicl.element_scores(*chunked, axis=axis).values, want, rtol=0, atol=1e-12)


def ecs_brute_one(truth, pred, i) -> float:
    """Element i's score from its PageRank affinity vectors (the definition, α = 0.9)."""
    p, q = _affinities(np.asarray(truth)), _affinities(np.asarray(pred))
    return float(1 - np.abs(p[i] - q[i]).sum() / (2 * ALPHA))


def test_element_scores_keep_coordinates_and_run_on_a_cluster(client, tmp_path):
    rng = np.random.default_rng(3)
    genes = [f"g{i}" for i in range(300)]
    truth = daskbicl.partition(rng.choice(["a", "b", "c"], 300), rng.integers(0, 3, 20), row=genes)
    pred = daskbicl.partition(rng.integers(0, 4, 300), rng.integers(0, 2, 20), row=genes)
    t = daskbicl.save(truth, tmp_path / "t.zarr", chunk=64)
    p = daskbicl.save(pred, tmp_path / "p.zarr", chunk=64)
    scores = daskbicl.element_scores(t, p)
    assert scores.chunks is not None  # lazy until asked for
    assert list(scores.row.values[:3]) == genes[:3]
    want = element_shares(truth.row_labels.values, pred.row_labels.values)
    np.testing.assert_allclose(scores.values, want, rtol=0, atol=1e-12)
    assert float(scores.sel(row="g7")) == want[7]


def test_element_scores_refuse_a_bad_axis():
    with pytest.raises(daskbicl.InputError, match="axis must be 'rows', 'cols' or 'cells', got 'blocks'"):
        daskbicl.element_scores(([0, 1], [0]), ([0, 0], [0]), axis="blocks")
