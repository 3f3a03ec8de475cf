"""The compiled shared-members kernel of sparse bicluster masks (kernels/bicluster/mask_pairs.py).

Checked against the definition (an integer matrix product of the 0/1
masks) on random masks of many shapes and densities, against the scipy
route it replaces, for read-only and non-contiguous chunks, and through
a whole score: large sparse chunks take the kernel, and the scores equal
those of the same masks counted by scipy.
"""

from __future__ import annotations

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels.bicluster import mask_counting
from daskbicl.kernels.bicluster.mask_pairs import shared_members


def _brute(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return t.astype(np.int64) @ p.astype(np.int64).T


def _sizes(mask: np.ndarray) -> np.ndarray:
    return mask.sum(axis=1, dtype=np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_shared_members_is_the_integer_product_of_the_masks(seed):
    rng = np.random.default_rng(seed)
    k, l_, m = rng.integers(1, 40), rng.integers(1, 40), rng.integers(1, 3000)
    density = rng.choice([0.0005, 0.01, 0.1, 0.5, 1.0])
    t = rng.random((k, m)) < density
    p = rng.random((l_, m)) < density
    if seed % 3 == 0:  # biclusters holding nothing, and one holding everything
        t[0] = False
        p[-1] = True
    got = shared_members(t, p, _sizes(t), _sizes(p))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, _brute(t, p))


def test_empty_chunks_and_empty_masks():
    for k, l_, m in [(3, 4, 0), (0, 4, 10), (3, 0, 10)]:
        t, p = np.zeros((k, m), bool), np.zeros((l_, m), bool)
        np.testing.assert_array_equal(shared_members(t, p, _sizes(t), _sizes(p)), np.zeros((k, l_), np.int64))


def test_read_only_and_sliced_chunks_through_intersect_counts(monkeypatch):
    """A dask chunk of a zarr store is often read-only; a chunk of an in-memory mask may be a strided slice."""
    monkeypatch.setattr(mask_counting, "MASK_KERNEL_MIN", 0)  # every sparse chunk through the kernel
    rng = np.random.default_rng(4)
    t, p = rng.random((30, 9000)) < 0.01, rng.random((25, 9000)) < 0.01
    t.flags.writeable = False
    got = mask_counting.intersect_counts(t[:, ::2], p[:, ::2])
    np.testing.assert_array_equal(got.shared, _brute(t[:, ::2], p[:, ::2]))
    np.testing.assert_array_equal(got.truth_sizes, _sizes(t[:, ::2]))


def test_large_sparse_chunks_take_the_kernel_and_score_as_scipy_does(monkeypatch):
    rng = np.random.default_rng(28)
    rows, cols, k = 30000, 900, 150  # 150 x 30000 x 2 entries: above MASK_KERNEL_MIN in one chunk
    assert 2 * k * rows >= mask_counting.MASK_KERNEL_MIN
    truth = daskbicl.biclustering(rng.random((k, rows)) < 0.01, rng.random((k, cols)) < 0.05)
    pred = daskbicl.biclustering(rng.random((k, rows)) < 0.01, rng.random((k, cols)) < 0.05)
    t, p = truth.row_mask.values, pred.row_mask.values
    assert mask_counting.intersect_counts(t, p).shared.tolist() == _brute(t, p).tolist()
    measures = ["fmeasure", "jaccard", "dice_corrected", "prelic_recovery"]
    by_kernel = daskbicl.score(truth, pred, measures=measures)
    monkeypatch.setattr(mask_counting, "MASK_KERNEL_MIN", 1 << 62)  # the scipy route for every chunk
    assert daskbicl.score(truth, pred, measures=measures) == by_kernel
