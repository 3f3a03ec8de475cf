"""The blocks of two co-clusterings as biclusters: signatures from the contingency tables equal the masks'.

``recovered``, ``redundancy``, ``ce_sparse`` and ``ce_dense`` of two
co-clusterings read :func:`block_memberships` (no one-hot block masks); here
against the mask path (``signature_counts`` of the block masks, and the
measures on the same blocks given as biclusterings).
"""

from __future__ import annotations

import numpy as np
import pytest

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
