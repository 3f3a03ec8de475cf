"""``ecs`` on overlapping clusters (docs/measures/field.md): the PageRank solved on signature classes.

Oracles: the definition on the element graph with dense numpy (each
element's personalised PageRank as a matrix inverse, the L1 distances),
and clusim's own PageRank (igraph's prpack) through its
``numerical_ppr_scores`` and ``cL1``.  clusim 0.4's ``make_cielg`` calls
``.tolist()`` on a sparse matrix, which scipy 1.x no longer has, so every
overlapping ``element_sim`` call fails there; the graph is built as
clusim's repository builds it since the fix (Hoosier-Clusters/clusim
commit 2736a23, ``clusim/clusimelement.py`` ``make_cielg``), and clusim
computes the rest.
"""

from __future__ import annotations

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels.bicluster.element_centric_cells import cell_classes, signature_bits
from daskbicl.kernels.bicluster.element_centric_overlap import (
    class_scores,
    joint_classes,
    overlapping_similarity,
)
from daskbicl.kernels.coclustering.contingency import Table
from daskbicl.kernels.coclustering.element_centric import element_centric_similarity
from daskbicl.kernels.micro.memberships import signature_counts

from ...support.clusim_reference import clusim_scores

ALPHA = 0.9


def _ppr(member: np.ndarray, alpha: float) -> np.ndarray:
    """Every element's PageRank affinity vector (rows), an element in no cluster a cluster of its own."""
    n = len(member)
    alone = np.eye(n, dtype=bool)[:, ~member.any(axis=1)]
    b = np.concatenate([member, alone], axis=1).astype(float)
    b = b[:, b.sum(axis=0) > 0]
    walk = (b / b.sum(axis=1, keepdims=True)) @ (b / b.sum(axis=0, keepdims=True)).T
    return (1 - alpha) * np.linalg.inv(np.eye(n) - alpha * walk)


def scores_brute(truth: np.ndarray, pred: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Each element's score from the definition (elements x clusters membership matrices)."""
    return 1 - np.abs(_ppr(truth, alpha) - _ppr(pred, alpha)).sum(axis=1) / (2 * alpha)


def cells_of(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Cells (row-major) x biclusters: a cell is in a bicluster when its row and column are."""
    return (rows[:, :, None] & cols[:, None, :]).reshape(len(rows), rows.shape[1] * cols.shape[1]).T


def _random_biclustering(rng, n_r, n_c, k, density=0.5):
    return rng.random((k, n_r)) < density, rng.random((k, n_c)) < density


def test_the_class_solution_equals_the_pagerank_on_elements():
    rng = np.random.default_rng(0)
    for trial in range(150):
        n = int(rng.integers(1, 30))
        truth = rng.random((n, int(rng.integers(0, 6)))) < rng.random()
        pred = rng.random((n, int(rng.integers(0, 6)))) < rng.random()
        alpha = [ALPHA, 0.5, 0.15][trial % 3]
        want = scores_brute(truth, pred, alpha)
        t, p, c, inverse = joint_classes(truth, pred, np.ones(n, np.int64), with_inverse=True)
        np.testing.assert_allclose(class_scores(t, p, c, alpha=alpha)[inverse], want, rtol=0, atol=1e-12)
        got = overlapping_similarity(truth, pred, np.ones(n, np.int64), alpha=alpha)
        assert got == pytest.approx(want.mean(), abs=1e-12)


def test_counts_stand_for_repeated_elements():
    """A class of weight w is w identical elements: the same ECS as the expanded membership list."""
    rng = np.random.default_rng(1)
    for _ in range(40):
        j = int(rng.integers(1, 8))
        truth, pred = rng.random((j, 3)) < 0.5, rng.random((j, 4)) < 0.5
        counts = rng.integers(1, 5, j)
        expanded = np.repeat(np.arange(j), counts)
        want = scores_brute(truth[expanded], pred[expanded]).mean()
        assert overlapping_similarity(truth, pred, counts) == pytest.approx(want, abs=1e-12)


def test_partitions_give_the_closed_form():
    rng = np.random.default_rng(2)
    for _ in range(30):
        a, b = rng.integers(0, 5, 60), rng.integers(0, 4, 60)
        truth, pred = a[:, None] == np.arange(5), b[:, None] == np.arange(4)
        want = element_centric_similarity(Table.from_labels(a, b))
        assert overlapping_similarity(truth, pred, np.ones(60, np.int64)) == pytest.approx(want, abs=1e-13)


def _clusim_scores(truth: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """clusim's element scores: its PageRank per element group and its corrected L1 (module docstring)."""
    pytest.importorskip("clusim.clusimelement")
    pytest.importorskip("igraph")
    return clusim_scores(truth, pred, ALPHA)


def test_equal_to_clusim_on_overlapping_memberships():
    rng = np.random.default_rng(3)
    for _ in range(12):
        n = int(rng.integers(2, 25))
        truth = rng.random((n, int(rng.integers(1, 5)))) < 0.45
        pred = rng.random((n, int(rng.integers(1, 5)))) < 0.45
        peer = _clusim_scores(truth, pred)
        got = overlapping_similarity(truth, pred, np.ones(n, np.int64))
        assert got == pytest.approx(float(np.mean(peer)), abs=1e-9)  # prpack's floating-point PageRank


def test_equal_to_clusim_on_the_rows_of_biclusterings():
    """The rows as elements, memberships from the signature pass (rows in no bicluster alone)."""
    rng = np.random.default_rng(4)
    for _ in range(8):
        n_r = int(rng.integers(3, 20))
        t_rows, p_rows = rng.random((3, n_r)) < 0.4, rng.random((4, n_r)) < 0.4
        bits, counts = signature_bits(signature_counts(t_rows, p_rows))
        got = overlapping_similarity(bits[:, :3], bits[:, 3:], counts)
        assert got == pytest.approx(float(np.mean(_clusim_scores(t_rows.T, p_rows.T))), abs=1e-9)


def test_overlapping_biclusterings_equal_the_cell_graph():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n_r, n_c = int(rng.integers(1, 8)), int(rng.integers(1, 7))
        truth = _random_biclustering(rng, n_r, n_c, int(rng.integers(1, 4)))
        pred = _random_biclustering(rng, n_r, n_c, int(rng.integers(1, 4)))
        want = scores_brute(cells_of(*truth), cells_of(*pred)).mean()
        t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
        assert daskbicl.ecs(t, p) == pytest.approx(want, abs=1e-12)
        assert daskbicl.ecs(p, t) == pytest.approx(want, abs=1e-12)  # symmetric
        order = rng.permutation(len(truth[0]))  # the biclusters' order does not matter
        shuffled = daskbicl.biclustering(truth[0][order], truth[1][order])
        assert daskbicl.ecs(shuffled, p) == pytest.approx(want, abs=1e-12)


def test_equal_to_clusim_on_the_cells_of_overlapping_biclusterings():
    rng = np.random.default_rng(6)
    for _ in range(6):
        n_r, n_c = int(rng.integers(2, 8)), int(rng.integers(2, 6))
        truth, pred = (_random_biclustering(rng, n_r, n_c, 3, 0.6) for _ in range(2))
        peer = float(np.mean(_clusim_scores(cells_of(*truth), cells_of(*pred))))
        got = daskbicl.ecs(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred))
        assert got == pytest.approx(peer, abs=1e-9)


def test_cell_classes_count_every_cell_exactly():
    rng = np.random.default_rng(7)
    truth, pred = _random_biclustering(rng, 40, 30, 4), _random_biclustering(rng, 40, 30, 3)
    rows = signature_counts(truth[0], pred[0])
    cols = signature_counts(truth[1], pred[1])
    t, p, counts = cell_classes(rows, cols)
    assert counts.sum() == 40 * 30 and counts.dtype == np.int64
    cells = np.concatenate([cells_of(*truth), cells_of(*pred)], axis=1)
    uniq, want = np.unique(cells, axis=0, return_counts=True)
    got = {tuple(np.concatenate([a, b]).tolist()): int(c) for a, b, c in zip(t, p, counts)}
    assert got == {tuple(u.tolist()): int(c) for u, c in zip(uniq, want)}


def test_budgets_refuse_with_the_sizes():
    rng = np.random.default_rng(8)
    truth, pred = rng.random((50, 8)) < 0.5, rng.random((50, 8)) < 0.5
    t, p, c = joint_classes(truth, pred, np.ones(50, np.int64))
    with pytest.raises(daskbicl.InputError, match=rf"{len(c)} classes .* budget of 10"):
        class_scores(t, p, c, max_classes=10)
    with pytest.raises(daskbicl.InputError, match="alpha must lie strictly between 0 and 1"):
        class_scores(t, p, c, alpha=1.0)
    m = _random_biclustering(rng, 30, 30, 5)
    rows, cols = signature_counts(m[0], m[0]), signature_counts(m[1], m[1])
    with pytest.raises(daskbicl.InputError, match=r"row x .* column signature classes make .* budget of 4"):
        cell_classes(rows, cols, max_pairs=4)


def test_overlapping_stores_on_a_cluster(client, tmp_path):
    rng = np.random.default_rng(9)
    truth, pred = _random_biclustering(rng, 70, 50, 4, 0.3), _random_biclustering(rng, 70, 50, 5, 0.3)
    want = scores_brute(cells_of(*truth), cells_of(*pred)).mean()
    t = daskbicl.save(daskbicl.biclustering(*truth), tmp_path / "t.zarr", chunk=16)
    p = daskbicl.save(daskbicl.biclustering(*pred), tmp_path / "p.zarr", chunk=16)
    assert daskbicl.ecs(t, p) == pytest.approx(want, abs=1e-12)
    assert daskbicl.open(t).bicl.ecs(daskbicl.open(p)) == pytest.approx(want, abs=1e-12)


def test_row_class_blocks_give_the_same_classes(monkeypatch):
    """The pairs are formed a block of row classes at a time; tiny blocks change nothing."""
    from daskbicl.kernels.bicluster import element_centric_cells

    rng = np.random.default_rng(10)
    truth, pred = _random_biclustering(rng, 30, 20, 4), _random_biclustering(rng, 30, 20, 3)
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    want = scores_brute(cells_of(*truth), cells_of(*pred))
    monkeypatch.setattr(element_centric_cells, "_CELL_BITS", 16)  # one row class per block
    assert daskbicl.ecs(t, p) == pytest.approx(want.mean(), abs=1e-12)
    got = daskbicl.element_scores(t, p, axis="cells").values
    np.testing.assert_allclose(got, want.reshape(30, 20), rtol=0, atol=1e-12)
    disjoint = (np.eye(3, 30, dtype=bool) | np.eye(3, 30, 3, dtype=bool), rng.random((3, 20)) < 0.5)
    got = daskbicl.element_scores(daskbicl.biclustering(*disjoint), p, axis="cells").values
    np.testing.assert_allclose(got, scores_brute(cells_of(*disjoint), cells_of(*pred)).reshape(30, 20),
                               rtol=0, atol=1e-12)


def test_cell_classes_refuse_above_the_class_budget():
    rng = np.random.default_rng(11)
    m = _random_biclustering(rng, 30, 30, 5)
    rows, cols = signature_counts(m[0], m[0]), signature_counts(m[1], m[1])
    n_classes = len(cell_classes(rows, cols)[2])
    with pytest.raises(daskbicl.InputError, match=rf"fall into {n_classes} classes .* budget of 3"):
        cell_classes(rows, cols, max_classes=3)
