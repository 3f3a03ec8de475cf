"""Shared members of sparse bicluster masks from the positions of their True entries
(kernels/bicluster/mask_positions.py), against the integer product of the 0/1 masks.

Random masks of many shapes and densities (empty rows, full rows, chunks
of length 0), read-only and strided chunks through ``intersect_counts``,
and whole scores: the same values by positions, by the byte scan it
replaced and by scipy.
"""

from __future__ import annotations

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels.bicluster import mask_counting
from daskbicl.kernels.bicluster.mask_positions import shared_from_positions


def _brute(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return t.astype(np.int64) @ p.astype(np.int64).T


@pytest.mark.parametrize("seed", range(16))
def test_shared_from_positions_is_the_integer_product(seed):
    rng = np.random.default_rng(1000 + seed)
    k, l_, m = rng.integers(1, 40), rng.integers(1, 40), rng.integers(1, 4000)
    density = rng.choice([0.0005, 0.01, 0.1, 0.5, 1.0])
    t, p = rng.random((k, m)) < density, rng.random((l_, m)) < density
    if seed % 3 == 0:
        t[0] = False
        p[-1] = True
    got = shared_from_positions(t, p)
    assert got.dtype == np.int64 and got.shape == (k, l_)
    np.testing.assert_array_equal(got, _brute(t, p))


def test_empty_shapes():
    for k, l_, m in [(3, 4, 0), (0, 4, 10), (3, 0, 10), (2, 2, 5)]:
        t, p = np.zeros((k, m), bool), np.zeros((l_, m), bool)
        np.testing.assert_array_equal(shared_from_positions(t, p), np.zeros((k, l_), np.int64))


@pytest.mark.parametrize("by_positions", [True, False])
def test_intersect_counts_on_read_only_and_strided_chunks(monkeypatch, by_positions):
    monkeypatch.setattr(mask_counting, "MASK_KERNEL_MIN", 0)
    monkeypatch.setattr(mask_counting, "BY_POSITIONS", by_positions)
    rng = np.random.default_rng(5)
    t, p = rng.random((30, 9001)) < 0.01, rng.random((25, 9001)) < 0.015
    t.flags.writeable = False
    for tt, pp in ((t, p), (t[:, ::3], p[:, ::3]), (t[::2], p[:, :]), (t[:, 1:], p[:, 1:])):
        got = mask_counting.intersect_counts(tt, pp)
        np.testing.assert_array_equal(got.shared, _brute(tt, pp))
        np.testing.assert_array_equal(got.truth_sizes, tt.sum(axis=1))
        np.testing.assert_array_equal(got.pred_sizes, pp.sum(axis=1))
        assert got.truth_sizes.dtype == got.pred_sizes.dtype == np.int64


def test_scores_by_positions_equal_the_byte_scan_and_scipy(monkeypatch):
    rng = np.random.default_rng(280)
    rows, cols, k = 30000, 900, 150
    assert 2 * k * rows >= mask_counting.MASK_KERNEL_MIN  # one chunk above the kernel threshold
    truth = daskbicl.biclustering(rng.random((k, rows)) < 0.01, rng.random((k, cols)) < 0.05)
    pred = daskbicl.biclustering(rng.random((k, rows)) < 0.008, rng.random((k, cols)) < 0.05)
    measures = ["fmeasure", "jaccard", "dice_corrected", "prelic_recovery"]
    monkeypatch.setattr(mask_counting, "BY_POSITIONS", True)
    by_positions = daskbicl.score(truth, pred, measures=measures)
    monkeypatch.setattr(mask_counting, "BY_POSITIONS", False)
    assert daskbicl.score(truth, pred, measures=measures) == by_positions
    monkeypatch.setattr(mask_counting, "MASK_KERNEL_MIN", 1 << 62)
    assert daskbicl.score(truth, pred, measures=measures) == by_positions


@pytest.mark.parametrize("m", [1, 5, 7, 8, 9, 15, 16, 17, 63, 64, 1001])
def test_row_positions_by_words_and_by_bytes_equal_flatnonzero(m):
    """The word scan finds every True entry of every row, rows of any length (words straddling two rows,
    rows shorter than a word), bool bytes other than 0/1 as numpy reads them, and the byte-by-byte path
    (no words: big-endian machines) gives the same positions."""
    from daskbicl.kernels.bicluster.mask_positions import _positions, _row_positions

    rng = np.random.default_rng(m)
    for density in (0.0, 0.01, 0.3, 1.0):
        raw = (rng.random((13, m)) < density) * rng.integers(1, 256, (13, m))  # any non-zero byte is True
        mask = raw.astype(np.uint8).view(bool)
        sizes = np.array([np.count_nonzero(row) for row in mask], np.int64)
        where, row_start = _row_positions(mask, sizes)
        want = [np.flatnonzero(row) for row in mask]
        assert [where[row_start[k]:row_start[k + 1]].tolist() for k in range(13)] == [w.tolist() for w in want]
        bytewise = np.empty_like(where)
        flat = np.ascontiguousarray(mask).reshape(-1).view(np.uint8)
        assert _positions(flat, flat[:0].view(np.uint64), m, row_start, bytewise) == where.size
        np.testing.assert_array_equal(bytewise, where)


def test_row_sizes_that_disagree_with_the_mask_raise_instead_of_writing_past_the_end():
    from daskbicl.kernels.bicluster.mask_positions import _row_positions

    mask = np.ones((3, 20), bool)
    with pytest.raises(ValueError, match="60 True entries, its row sizes say 59"):
        _row_positions(mask, np.array([20, 20, 19]))
