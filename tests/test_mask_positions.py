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
