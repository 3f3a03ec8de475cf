"""Tests of daskbicl.kernels.bicluster.precision_recall against brute-force cell-set oracles."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daskbicl.errors import InputError, MeasureError
from daskbicl.kernels.bicluster.precision_recall import (
    MEASURE_KEYS,
    PAIR_KEYS,
    aggregate_measures,
    best_match_mean,
    corrected_precision_recall,
    empty_biclusters,
    pair_measures,
)

from ...support import oracles_bicluster as orc

PARAMS = [Fraction(1), Fraction(2), Fraction(1, 3), Fraction(3, 2)]


# ---------------------------------------------------------------- strategies
def _nonempty_mask(draw, n):
    mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not any(mask):
        mask[draw(st.integers(0, n - 1))] = True
    return mask


@st.composite
def biclusterings(draw, max_dim=6, max_k=3):
    I = draw(st.integers(1, max_dim))
    J = draw(st.integers(1, max_dim))

    def side():
        k = draw(st.integers(1, max_k))
        return [(_nonempty_mask(draw, I), _nonempty_mask(draw, J)) for _ in range(k)]

    return I, J, side(), side()


def _close(a, b, rtol=1e-12, atol=1e-12):
    return math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=atol)


# ---------------------------------------------------------------- oracle
@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(biclusterings(), st.sampled_from(PARAMS), st.sampled_from(PARAMS), st.booleans())
def test_pair_measures_match_cell_set_oracle(case, R, beta, clip):
    I, J, truth, pred = case
    rs, cs, tr, tc, pr, pc = orc.tables_from_masks(truth, pred)
    got = pair_measures(rs, cs, tr, tc, pr, pc, I * J, R=float(R), beta=float(beta), clip=clip)
    want = orc.pair_oracle(truth, pred, I, J, R, beta)
    assert set(got) == set(PAIR_KEYS)
    assert got["intersection"].dtype == np.int64
    np.testing.assert_array_equal(got["intersection"], want["intersection"].astype(np.int64))
    for key in PAIR_KEYS[1:]:
        assert got[key].dtype == np.float64 and got[key].shape == (len(truth), len(pred))
        for idx in np.ndindex(got[key].shape):
            w = want[key][idx]
            if clip and key.endswith(("_corrected", "_space")):
                w = max(w, 0)
            assert _close(got[key][idx], w), (key, idx, got[key][idx], w)
    pc_, rc_ = corrected_precision_recall(rs, cs, tr, tc, pr, pc, I * J)
    for idx in np.ndindex(pc_.shape):
        assert _close(pc_[idx], want["pre_c"][idx]) and _close(rc_[idx], want["rec_c"][idx])


@settings(max_examples=60, deadline=None, database=None)
@given(biclusterings(), st.sampled_from(PARAMS))
def test_aggregate_matches_oracle(case, beta):
    I, J, truth, pred = case
    rs, cs, tr, tc, pr, pc = orc.tables_from_masks(truth, pred)
    got = aggregate_measures(rs, cs, tr, tc, pr, pc, I * J, beta=float(beta))
    want = orc.pair_oracle(truth, pred, I, J, beta=beta)
    assert set(got) == set(MEASURE_KEYS)
    for key in MEASURE_KEYS:
        assert isinstance(got[key], float)
        assert _close(got[key], orc.aggregate_oracle(want, key)), key


# ---------------------------------------------------------------- expectations
@pytest.mark.parametrize("measure", ["goodness", "fmeasure", "dice"])
@pytest.mark.parametrize("R", [Fraction(1), Fraction(3)])
def test_expectation_table_is_exact_for_linear_measures(measure, R):
    """The SPEC E[M] (Goodness erratum form) equals the enumerated mean."""
    I, J = 3, 4
    D = orc.cells(range(I), range(J))
    B = orc.cells([0, 1], [1, 2, 3])  # |B| = 6
    beta = Fraction(2)
    for x in (1, 4, 7, 12):
        e = orc.expectations(len(B), x, I * J, R, beta)[measure]
        assert orc.expected_by_enumeration(B, D, x, measure, R, beta) == e
    # random biclusters of a fixed shape have the same expectation
    e = orc.expectations(len(B), 4, I * J, R, beta)[measure]
    assert orc.expected_over_biclusters(B, I, J, 2, 2, measure, R, beta) == e


def test_published_goodness_expectation_is_wrong():
    """Erratum: (R|X| + |B|)/(|D|(R+1)) (|B| and |X| swapped) misses the mean."""
    I, J, R = 3, 4, Fraction(3)
    D = orc.cells(range(I), range(J))
    B = orc.cells([0], [0, 1])
    b, x, n = len(B), 6, I * J
    exact = orc.expected_by_enumeration(B, D, x, "goodness", R)
    assert exact == Fraction(R * b + x, n * (R + 1))
    assert exact != Fraction(R * x + b, n * (R + 1))


def test_jaccard_expectation_is_only_approximate():
    I, J = 3, 4
    D = orc.cells(range(I), range(J))
    B = orc.cells([0, 1], [0, 1])
    exact = orc.expected_by_enumeration(B, D, 5, "jaccard")
    approx = orc.expectations(len(B), 5, I * J, 1, 1)["jaccard"]
    assert exact != approx and abs(float(exact - approx)) < 0.05


# ---------------------------------------------------------------- properties
def _single(n_rows, n_cols, tr, tc, pr, pc, D, **kw):
    m = pair_measures([[n_rows]], [[n_cols]], [tr], [tc], [pr], [pc], D, **kw)
    return {k: (int(v[0, 0]) if k == "intersection" else float(v[0, 0])) for k, v in m.items()}


CORRECTED = [k for k in MEASURE_KEYS if k.endswith(("_corrected", "_space"))]


@pytest.mark.parametrize("beta", [0.5, 1.0, 3.0])
def test_whole_matrix_prediction_scores_zero_corrected(beta):
    m = _single(2, 3, 2, 3, 10, 7, 70, beta=beta, R=2.0)
    assert all(m[k] == 0.0 for k in CORRECTED)
    assert m["recall"] == 1.0 and m["precision"] == pytest.approx(6 / 70)
    # a truth bicluster equal to the whole matrix too
    m = _single(2, 3, 10, 7, 2, 3, 70)
    assert all(m[k] == 0.0 for k in CORRECTED)
    # both whole: raw 1, corrected 0 by definition
    m = _single(10, 7, 10, 7, 10, 7, 70)
    assert m["dice"] == 1.0 and all(m[k] == 0.0 for k in CORRECTED)


@pytest.mark.parametrize("D", [70, 10**18])
def test_perfect_match_scores_one(D):
    m = _single(5, 4, 5, 4, 5, 4, D, beta=2.0, R=0.3)
    assert all(m[k] == pytest.approx(1.0, abs=1e-15) for k in MEASURE_KEYS)


@settings(max_examples=150, deadline=None, database=None)
@given(
    st.integers(1, 60),
    st.integers(1, 60),
    st.integers(1, 60),
    st.integers(1, 60),
    st.integers(0, 60),
    st.integers(0, 60),
    st.integers(0, 20),
    st.integers(0, 20),
    st.floats(0.05, 20),
)
def test_space_fmeasure_equals_corrected_fmeasure(tr, tc, pr, pc, nr, nc, er, ec, beta):
    """Hanczar & Nadif: F^c = F(pre^c, rec^c) whenever pre^c, rec^c > 0 (any beta).

    Both equal (1+b²)N / (b²|B|(|D|-|X|) + |X|(|D|-|B|)); when N <= 0 the
    space value is 0 by the SPEC rule while F^c is <= 0.
    """
    I, J = max(tr, pr) + er, max(tc, pc) + ec
    nr = max(min(nr, tr, pr), tr + pr - I)  # consistent with I rows
    nc = max(min(nc, tc, pc), tc + pc - J)
    m = pair_measures([[nr]], [[nc]], [tr], [tc], [pr], [pc], I * J, beta=beta)
    pre_c, rec_c = corrected_precision_recall([[nr]], [[nc]], [tr], [tc], [pr], [pc], I * J)
    assert np.sign(pre_c) == np.sign(rec_c)  # same numerator N
    for key in ("fmeasure", "dice"):
        c, s = m[f"{key}_corrected"][0, 0], m[f"{key}_space"][0, 0]
        if pre_c[0, 0] > 0:
            assert s == pytest.approx(c, rel=1e-12)
        else:
            assert s == 0.0 and c <= 1e-15


def test_space_fmeasure_equality_is_exact_in_fractions():
    for n, b, x, D in [(3, 6, 8, 100), (1, 2, 2, 5), (7, 9, 40, 41), (2, 4, 3, 9)]:
        for beta in PARAMS:
            o = orc.measures_from_counts(n, b, x, D, beta=beta)
            if o["pre_c"] > 0:
                assert o["fmeasure_space"] == o["fmeasure_corrected"]


@settings(max_examples=100, deadline=None, database=None)
@given(
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(0, 40),
    st.integers(1, 40),
    st.integers(0, 30),
    st.floats(0.05, 20),
)
def test_goodness_space_equals_corrected_iff_same_size(b, x, n, extra, _, R):
    """Corrected Goodness weights pre^c, rec^c by R(|D|-|B|) and |D|-|X|; the
    space form by R and 1: they agree when |B| = |X| (or N = 0)."""
    n = min(n, b, x)
    D = max(b, x) + extra
    m = _single(n, 1, b, 1, x, 1, D, R=R)
    same = math.isclose(m["goodness_corrected"], m["goodness_space"], rel_tol=1e-12, abs_tol=1e-14)
    N = D * n - b * x
    if b == x or N == 0:
        assert same
    else:
        assert not same


@settings(max_examples=100, deadline=None, database=None)
@given(biclusterings(max_dim=7, max_k=4))
def test_jaccard_and_dice_rank_alike(case):
    """J = F1/(2 - F1) exactly, for the raw and the corrected-space forms."""
    I, J, truth, pred = case
    m = pair_measures(*orc.tables_from_masks(truth, pred), I * J)
    for suf in ("", "_space"):
        f, j = m["dice" + suf], m["jaccard" + suf]
        np.testing.assert_allclose(j, f / (2 - f), rtol=1e-12, atol=1e-15)
        order = np.argsort(f, axis=None, kind="stable")
        assert np.all(np.diff(j.ravel()[order]) >= -1e-15)


def test_corrected_jaccard_and_dice_can_rank_differently():
    """Not a bug: the two corrections subtract different expectations, so
    J^c = Dice^c (|B|+|X|) / (2(|B|+|X|-|B∩X|)) is not a function of Dice^c."""
    m = pair_measures([[1, 2]], [[11, 1]], [2], [12], [8, 5], [15, 3], 400)
    d, j = m["dice_corrected"][0], m["jaccard_corrected"][0]
    assert (d > 0).all() and (j > 0).all()
    assert (d[0] < d[1]) and (j[0] > j[1])
    s = np.array([24 + 120, 24 + 15])  # |B| + |X|
    n = np.array([11, 2])  # |B ∩ X|
    np.testing.assert_allclose(j, d * s / (2 * (s - n)), rtol=1e-12)


def test_clip():
    args = ([[0, 2]], [[0, 3]], [2], [3], [4, 5], [5, 3], 100)
    raw = pair_measures(*args)
    clipped = pair_measures(*args, clip=True)
    assert raw["dice_corrected"][0, 0] < 0 and raw["goodness_space"][0, 0] < 0
    for key in PAIR_KEYS:
        if key in CORRECTED:
            np.testing.assert_array_equal(clipped[key], np.maximum(raw[key], 0))
        else:
            np.testing.assert_array_equal(clipped[key], raw[key])


# ---------------------------------------------------------------- numerics
@settings(max_examples=100, deadline=None, database=None)
@given(
    st.integers(1, 10**9),
    st.integers(1, 10**9),
    st.integers(1, 10**9),
    st.integers(1, 10**9),
    st.integers(-(10**6), 10**6),
    st.integers(-(10**6), 10**6),
    st.sampled_from(PARAMS),
)
def test_huge_counts_match_exact_fractions(tr, tc, pr, pc, dr, dc, R):
    """|D| = 10^18 and intersections placed near the random expectation, where
    N = |D||B∩X| - |B||X| cancels almost completely."""
    I = J = 10**9
    nr = min(tr, pr, max(0, tr * pr // I + dr))
    nc = min(tc, pc, max(0, tc * pc // J + dc))
    got = _single(nr, nc, tr, tc, pr, pc, I * J, R=float(R), beta=float(R))
    want = orc.measures_from_counts(nr * nc, tr * tc, pr * pc, I * J, R, R)
    for key in PAIR_KEYS:
        assert _close(got[key], want[key], rtol=1e-11, atol=1e-300), key


def test_huge_counts_naive_float_would_fail():
    """Documents why N is computed in integers: the naive float formula is wrong."""
    I = J = 10**9
    tr, tc, pr, pc = 317808277, 898498397, 642199858, 562747939
    nr, nc = 204096430, 505628122  # a hair above the random expectation
    got = _single(nr, nc, tr, tc, pr, pc, I * J)
    want = orc.measures_from_counts(nr * nc, tr * tc, pr * pc, I * J)
    pre = nr * nc / (pr * pc)
    naive = (1e18 * pre - float(tr * tc)) / (1e18 - float(tr * tc))
    assert got["intersection"] == nr * nc
    assert _close(got["precision"], want["precision"])
    assert _close(got["dice_space"], want["dice_space"], rtol=1e-12, atol=0)
    assert not _close(naive, want["pre_c"], rtol=1e-4, atol=0)
    assert _close(got["goodness_space"], want["goodness_space"], rtol=1e-12, atol=0)


def test_object_path_when_cells_exceed_int64():
    D = 3 * 10**18 * 3  # I*J above 2**63
    got = _single(3 * 10**9, 10**9, 3 * 10**9, 10**9, 3 * 10**9, 2 * 10**9, D)
    want = orc.measures_from_counts(3 * 10**18, 3 * 10**18, 6 * 10**18, D)
    assert got["intersection"] == 3 * 10**18
    for key in PAIR_KEYS:
        assert _close(got[key], want[key]), key


@pytest.mark.parametrize("D", [2**31 - 1, 2**31, 2**31 + 1])
def test_int64_threshold(D):
    got = _single(7, 1, 9, 1, 11, 1, D)
    want = orc.measures_from_counts(7, 9, 11, D)
    for key in PAIR_KEYS:
        assert _close(got[key], want[key]), key


def test_zero_intersection_and_empty_pred_side():
    m = _single(0, 3, 2, 3, 2, 3, 100)
    assert m["intersection"] == 0
    for key in ("precision", "recall", "goodness", "fmeasure", "dice", "jaccard"):
        assert m[key] == 0.0
    for key in ("fmeasure_space", "dice_space", "jaccard_space"):
        assert m[key] == 0.0
    assert m["goodness_space"] < 0 and m["dice_corrected"] < 0
    pairs = pair_measures(np.zeros((2, 0), int), np.zeros((2, 0), int), [1, 2], [1, 1], [], [], 10)
    assert all(v.shape == (2, 0) for v in pairs.values())
    assert best_match_mean(pairs) == dict.fromkeys(MEASURE_KEYS, 0.0)


# ---------------------------------------------------------------- errors
def test_empty_biclusters_helper():
    assert empty_biclusters([1, 0, 3], [2, 2, 0]).tolist() == [1, 2]
    assert empty_biclusters([], []).tolist() == []
    with pytest.raises(InputError, match="same length"):
        empty_biclusters([1, 2], [1])


BAD_WEIGHTS = [("R", 0), ("R", -1.0), ("R", float("inf")), ("beta", float("nan")), ("beta", "two"), ("beta", 0.0)]


@pytest.mark.parametrize("name, value", BAD_WEIGHTS)
def test_bad_weights_are_refused_by_their_record_at_every_python_door(name, value, tmp_path):
    """R and beta are checked once, by their records, before any input is opened (stores that do not exist)."""
    import daskbicl
    from daskbicl.measures.bicluster import BETA, R_PARAM

    record = {"R": R_PARAM, "beta": BETA}[name]
    with pytest.raises(MeasureError) as expected:
        record.validate(name, value)
    message = str(expected.value)
    assert message.startswith(f"parameter {name} must be a number in (0, inf)")
    missing = (str(tmp_path / "no_truth.zarr"), str(tmp_path / "no_pred.zarr"))
    measure = "goodness" if name == "R" else "fmeasure"
    doors = [
        lambda: daskbicl.pair_scores(*missing, **{name: value}),
        lambda: getattr(daskbicl, measure)(*missing, **{name: value}),
        lambda: daskbicl.score(*missing, measures=[measure], **{name: value}),
    ]
    for door in doors:
        with pytest.raises(MeasureError) as got:
            door()
        assert str(got.value) == message


def test_the_kernel_does_not_check_the_weights_again():
    """One check (the records'): the kernel has no second one, and takes the validated floats as given."""
    import inspect

    from daskbicl.kernels.bicluster import precision_recall

    assert not hasattr(precision_recall, "check_parameters")
    assert "MeasureError" not in inspect.getsource(precision_recall)
    a = pair_measures([[1, 0]], [[1, 1]], [2], [2], [1, 3], [2, 1], 16, R=3.0, beta=2.0)
    b = pair_measures([[1, 0]], [[1, 1]], [2], [2], [1, 3], [2, 1], 16, R=3, beta=2)
    assert all(np.array_equal(a[k], b[k]) for k in a)


GOOD = ([[1, 0]], [[1, 1]], [2], [2], [1, 3], [2, 1], 16)


@pytest.mark.parametrize(
    "i, value, match",
    [
        (2, [0], r"truth bicluster\(s\) 0 are empty"),
        (5, [2, 0], r"pred bicluster\(s\) 1 are empty"),
        (0, [[1, 0, 0]], r"shape \(K, L\)"),
        (1, [[1.0, 1.0]], "integer dtype"),
        (0, [[-1, 0]], "non-negative"),
        (0, [[2, 0]], "exceed the size"),
        (6, 3, "more rows or columns than the matrix|more cells"),
        (6, 0, "n_cells must be >= 1"),
        (6, 16.0, "n_cells must be an integer"),
        (3, [2, 2], "lengths"),
        (0, [1, 0], "must be 2-D"),
    ],
)
def test_bad_inputs(i, value, match):
    args = list(GOOD)
    args[i] = value
    with pytest.raises(InputError, match=match):
        pair_measures(*args)


def test_bicluster_larger_than_matrix():
    with pytest.raises(InputError, match="more cells than the matrix"):
        pair_measures([[1]], [[1]], [3], [3], [1], [1], 8)


def test_aggregate_errors():
    with pytest.raises(InputError, match="K >= 1"):
        best_match_mean({"dice": np.zeros((0, 3))}, ["dice"])
    with pytest.raises(InputError, match="missing"):
        best_match_mean({"dice": np.zeros((1, 3))}, ["jaccard"])


def test_pair_measures_documents_the_approximate_jaccard_expectation():
    doc = " ".join(pair_measures.__doc__.split())
    assert "*approximation*" in doc and '"≈" row' in doc
    assert "not the exact expectation" in doc
