"""Exactness where float64 arithmetic would fail: 10^10 cells and beyond."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels.coclustering import cocluster_scores as K
from daskbicl.kernels.coclustering.contingency import Table


def _ari_from_pair_counts(a, r, c, n):
    """Hubert–Arabie ARI in exact rationals from pair counts (independent of the kernel)."""
    N = comb(n, 2)
    expected = Fraction(r * c, N)
    return (a - expected) / (Fraction(r + c, 2) - expected)


def test_cari_exact_on_ten_billion_cells():
    """I = J = 10^5 (10^10 cells): truth has 4 equal blocks, pred merges the column halves.

    Cell clusters: truth = 4 blocks of m = n²/4 cells; pred = 2 blocks of 2m
    cells, each the union of two truth blocks.  Then
    a = 4·C(m,2), r = 4·C(m,2), c = 2·C(2m,2), N = C(4m,2).
    """
    n = 100_000
    half = np.repeat([0, 1], n // 2).astype(np.int64)
    one = np.zeros(n, dtype=np.int64)
    truth = (half, half)  # rows and columns in halves
    pred = (half, one)  # same rows, one column cluster
    m = (n // 2) ** 2
    expected = _ari_from_pair_counts(4 * comb(m, 2), 4 * comb(m, 2), 2 * comb(2 * m, 2), 4 * m)
    value = daskbicl.cari(truth, pred)
    assert value == float(expected)
    assert 0 < value < 1


def test_cari_exact_with_huge_counts_at_kernel_level():
    """10^9 x 10^9 matrix (10^18 cells): sums of squares ~10^36 must not overflow.

    Tables with billion-sized clusters exercise the exact integer path; the
    expected value comes from pair counts computed with Python's math.comb.
    """
    rows = np.array([[400_000_000, 100_000_000], [0, 500_000_000]], dtype=np.int64)
    cols = np.array([[700_000_000, 0], [50_000_000, 250_000_000]], dtype=np.int64)
    I, J = int(rows.sum()), int(cols.sum())
    cells = np.kron(rows.astype(object), cols.astype(object))  # 4x4 table of Python ints
    a = sum(comb(int(x), 2) for x in cells.ravel())
    r = sum(comb(int(x), 2) for x in cells.sum(axis=1))
    c = sum(comb(int(x), 2) for x in cells.sum(axis=0))
    expected = _ari_from_pair_counts(a, r, c, I * J)
    value = K.cari(Table.from_dense(rows), Table.from_dense(cols))
    assert value == float(expected)
    # The same sum of squares in int64 overflows silently: the exact path is needed.
    as_int64 = cells.astype(np.int64)
    with np.errstate(over="ignore"):
        assert int(np.sum(as_int64 * as_int64)) != sum(int(x) ** 2 for x in cells.ravel())


def test_huge_label_values_cost_nothing():
    """Labels near 2**63 are compacted: the table is 2x2, not 2**63 wide."""
    z = np.array([2**63 - 1, 2**62, 2**62, 2**63 - 1] * 1000, dtype=np.int64)
    zp = np.array([0, 1, 1, 0] * 1000, dtype=np.int64)
    s = daskbicl.score((z, z), (zp, zp))
    assert s["cari"] == 1.0 and s["nce"] == 1.0


def test_ce_exact_rational():
    # d_r = 1/3, d_c = 1/7 -> CE = 1/3 + 1/7 - 1/21 = 3/7
    z, zp = [0, 0, 1], [0, 1, 1]
    w, wp = [0] * 6 + [1], [0] * 7
    assert daskbicl.ce((z, w), (zp, wp)) == float(Fraction(3, 7))


@pytest.mark.parametrize("n", [10, 1000])
def test_sum_squares_matches_python(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2**62, n)
    assert K.sum_squares(x) == sum(int(v) ** 2 for v in x)


@pytest.mark.parametrize(
    "truth, pred",
    [
        ([1], [2**63 - 1]),  # found by hypothesis: folded offsets overflowed int64
        ([2**62, 2**62, 2**62], [0, 1, 2]),
        ([2**63 - 1, 2**63 - 2], [2**63 - 1, 2**63 - 1]),
        ([0, 2**63 - 1], [5, 5]),  # wide range: the factorizing path
    ],
)
def test_count_pairs_with_extreme_labels(truth, pred):
    from daskbicl.kernels.coclustering.contingency import count_pairs

    t = np.array(truth, dtype=np.int64)
    p = np.array(pred, dtype=np.int64)
    pc = count_pairs(t, p).to_pairs()
    got = sorted(zip(pc.truth.tolist(), pc.pred.tolist(), pc.count.tolist()))
    from collections import Counter

    assert got == sorted((a, b, c) for (a, b), c in Counter(zip(truth, pred)).items())
    u = count_pairs(t.astype(np.uint64), p.astype(np.uint64)).to_pairs()
    assert sorted(zip(u.truth.tolist(), u.pred.tolist(), u.count.tolist())) == got
