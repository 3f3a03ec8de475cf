"""The matched counts of many bootstrap replicates at once (daskbicl/kernels/coclustering/matching_replicates.py):
every count, certified or solved, is the optimum :func:`scipy.optimize.linear_sum_assignment` finds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from daskbicl.kernels.coclustering.contingency import Table
from daskbicl.kernels.coclustering.matching_replicates import ReplicateMatching
from daskbicl.kernels.coclustering.resampling import Redraw, replicate_table


def _optimum(table: Table, counts: np.ndarray) -> int:
    """The brute-force oracle: the best one-to-one matching of the replicate's dense table (zero cells allowed)."""
    dense = np.zeros(table.shape, dtype=np.int64)
    dense[table.rows, table.cols] = counts
    r, c = linear_sum_assignment(dense, maximize=True)
    return int(dense[r, c].sum())


def _table(rng, h: int, hp: int, fill: float, top: int, diagonal: int) -> Table:
    """A random table, ``diagonal`` added on a random matching (so that it is often, not always, certified)."""
    dense = np.where(rng.random((h, hp)) < fill, rng.integers(1, top + 1, (h, hp)), 0)
    k = min(h, hp)
    dense[rng.permutation(h)[:k], rng.permutation(hp)[:k]] += diagonal
    dense[0, 0] += 1  # never empty
    return Table.from_dense(dense)


def _check(table: Table, drawn: np.ndarray, redrawn: bool = True) -> np.ndarray:
    got = ReplicateMatching(table, dense_limit=0 if table.counts.size % 2 else 1 << 22).matched(drawn)
    for i, counts in enumerate(drawn):
        one = replicate_table(table, counts)
        assert got.matched[i] == _optimum(table, counts), (i, bool(got.certified[i]))
        assert (got.truth_clusters[i], got.pred_clusters[i]) == one.shape
        assert got.n == one.n or not redrawn  # a redraw keeps the number of items
    return got.certified


@pytest.mark.parametrize("seed", range(6))
def test_every_replicate_count_is_the_assignment_optimum(seed):
    """Small tables with small counts (ties everywhere), some with a strong diagonal: multinomial replicates."""
    rng = np.random.default_rng(seed)
    certified = []
    for _ in range(25):
        h, hp = rng.integers(1, 7, 2)
        table = _table(rng, int(h), int(hp), fill=rng.uniform(0.2, 1.0), top=3, diagonal=int(rng.choice([0, 2, 8])))
        drawn = Redraw(table.counts).draw(30, rng)
        certified.append(_check(table, drawn))
    certified = np.concatenate(certified)
    assert certified.any() and not certified.all()  # both paths were taken


@pytest.mark.parametrize("seed", range(4))
def test_any_counts_on_the_cells_not_only_a_redraw(seed):
    """Arbitrary counts on the observed cells (rows and columns emptied, ties, the observed matching overtaken)."""
    rng = np.random.default_rng(100 + seed)
    certified = []
    for _ in range(25):
        h, hp = rng.integers(1, 8, 2)
        table = _table(rng, int(h), int(hp), fill=0.5, top=4, diagonal=int(rng.choice([0, 5])))
        drawn = rng.integers(0, 4, (20, table.counts.size)) * (rng.random((20, table.counts.size)) < 0.7)
        drawn[::3] = np.where(drawn[::3] > 0, table.counts[None, :], 0)  # the observed counts, some cells emptied
        drawn[drawn.sum(axis=1) == 0, 0] = 1  # a replicate keeps at least one item
        certified.append(_check(table, drawn, redrawn=False))
    certified = np.concatenate(certified)
    assert certified.any() and not certified.all()


def test_a_noisy_copy_is_certified_without_solving():
    """One clustering a 10 % noisy copy of the other (the benchmark's shape, smaller): every replicate certified."""
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 60, 6000)
    pred = np.where(rng.random(6000) < 0.1, rng.integers(0, 60, 6000), truth)
    table = Table.from_labels(truth, pred)
    drawn = Redraw(table.counts).draw(40, rng)
    assert _check(table, drawn).all()


def test_a_tie_is_left_to_the_solver():
    """[[2, 2], [0, 1]]: the candidate (0,0) ties with (0,1); the count is the optimum, 3, found by solving."""
    table = Table.from_dense([[2, 2], [0, 1]])
    got = ReplicateMatching(table).matched(table.counts[None, :])
    assert got.matched.tolist() == [3] and got.certified.tolist() == [False]


def test_a_batch_cut_into_blocks_gives_the_same_counts(monkeypatch):
    """A table with many cells is matched a few replicates at a time (bounded temporaries): the same counts."""
    from daskbicl.kernels.coclustering import matching_replicates

    rng = np.random.default_rng(3)
    table = _table(rng, 6, 5, fill=0.6, top=3, diagonal=5)
    drawn = Redraw(table.counts).draw(50, rng)
    whole = ReplicateMatching(table).matched(drawn)
    monkeypatch.setattr(matching_replicates, "_BLOCK_CELLS", 2 * table.counts.size + 1)  # blocks of 2 replicates
    cut = ReplicateMatching(table).matched(drawn)
    for a, b in zip(whole, cut):
        np.testing.assert_array_equal(a, b)
    assert cut.matched.tolist() == [_optimum(table, counts) for counts in drawn]
