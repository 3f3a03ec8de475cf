"""Tests of the weighted indices (daskbicl.kernels.tradeoff.indices, named by daskbicl.measures.weighted_indices) and the tradeoff space."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import brentq

from daskbicl.errors import InputError, MeasureError
from daskbicl.kernels.tradeoff.indices import (
    R_from_lambda,
    beta_from_lambda,
    lambda_from_beta,
    lambda_from_R,
)
from daskbicl.measures.weighted_indices import INDICES, weighted_index
from daskbicl.tradeoffs.space import (
    Tradeoff,
    application_domain,
    compare_algorithms,
    optimal_tradeoff,
    tradeoff_curves,
)

GRID = np.linspace(0.0, 1.0, 100_001)  # breakpoints, envelopes, AUC
H = GRID[1] - GRID[0]
COARSE = np.linspace(0.0, 1.0, 20_001)  # application domain
HC = COARSE[1] - COARSE[0]


# ---------------------------------------------------------------- indices
@pytest.mark.parametrize(
    "index, value", [("kulczynski", 0.58), ("fmeasure", 0.549), ("folke", 0.562), ("jaccard", 0.489)]
)
def test_spec_check_values(index, value):
    got = float(weighted_index(0.5, 0.9, 0.2, index))
    assert round(got, 3) == value
    assert abs(got - value) < 5e-4


def test_unweighted_forms_and_end_points():
    rng = np.random.default_rng(0)
    p, r = rng.uniform(0.01, 1, 50), rng.uniform(0.01, 1, 50)
    unweighted = {
        "kulczynski": (p + r) / 2,
        "fmeasure": 2 * p * r / (p + r),
        "folke": np.sqrt(p * r),
        "jaccard": p * r / (p + r - p * r),
    }
    for index, u in unweighted.items():
        np.testing.assert_allclose(weighted_index(p, r, 0.5, index), u, rtol=1e-14)
        np.testing.assert_array_equal(weighted_index(p, r, 0.0, index), p)
        np.testing.assert_array_equal(weighted_index(p, r, 1.0, index), r)


def test_broadcasting_and_scalars():
    out = weighted_index([[0.2], [0.4]], [0.5, 0.6, 0.7], np.linspace(0, 1, 3), "folke")
    assert out.shape == (2, 3)
    assert np.isscalar(weighted_index(0.3, 0.4, 0.5)) or weighted_index(0.3, 0.4, 0.5).ndim == 0


@pytest.mark.parametrize("index", INDICES)
def test_zero_over_zero_is_zero(index):
    lam = np.array([0.0, 0.3, 0.5, 1.0])
    np.testing.assert_array_equal(weighted_index(0.0, 0.0, lam, index), 0.0)
    # pre = 0 < rec: 0 inside (0, 1) except Kulczynski, rec at λ = 1
    v = weighted_index(0.0, 0.6, lam, index)
    assert v[0] == 0.0 and v[-1] == 0.6
    if index != "kulczynski":
        assert (v[1:3] == 0).all()


def test_folke_erratum():
    """The published exponents λ/2, 1 - λ/2 break I(1) = rec; the SPEC's do not."""
    p, r = 0.5, 0.9
    published = p ** (1 - 1 / 2) * r ** (1 / 2)  # at λ = 1
    assert abs(published - r) > 0.1
    assert weighted_index(p, r, 1.0, "folke") == r
    lam = np.linspace(0, 1, 11)
    np.testing.assert_allclose(weighted_index(p, r, lam, "folke"), p ** (1 - lam) * r**lam)


@settings(database=None)
@given(st.floats(0.01, 100), st.floats(0.001, 1), st.floats(0.001, 1))
def test_beta_and_R_conversions(beta, p, r):
    lam = lambda_from_beta(beta)
    assert beta_from_lambda(lam) == pytest.approx(beta, rel=1e-9)
    fb = (1 + beta**2) * p * r / (beta**2 * p + r)
    assert weighted_index(p, r, lam, "fmeasure") == pytest.approx(fb, rel=1e-12)
    R = beta  # any positive number
    lam = lambda_from_R(R)
    assert R_from_lambda(lam) == pytest.approx(R, rel=1e-9)
    goodness = (R * p + r) / (R + 1)
    assert weighted_index(p, r, lam, "kulczynski") == pytest.approx(goodness, rel=1e-12)


def test_conversion_edges():
    assert float(lambda_from_beta(0.0)) == 0.0
    assert float(beta_from_lambda(1.0)) == np.inf
    assert float(R_from_lambda(0.0)) == np.inf
    with pytest.raises(MeasureError):
        lambda_from_beta(-1)
    with pytest.raises(MeasureError):
        lambda_from_R(float("nan"))


@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=50, deadline=None, database=None)
@given(st.lists(st.floats(0, 1), min_size=4, max_size=4))
def test_two_curves_cross_at_most_once(index, v):
    """Every index is non-decreasing in pre and rec with I(0)=pre, I(1)=rec, so a
    win-lose-win pattern implies dominance: at most one strict sign change."""
    d = weighted_index(v[0], v[1], GRID[::50], index) - weighted_index(v[2], v[3], GRID[::50], index)
    s = np.sign(np.where(np.abs(d) < 1e-12, 0, d))
    s = s[s != 0]
    assert np.count_nonzero(np.diff(s)) <= 1


# ---------------------------------------------------------------- envelope
unit = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0.0, 1.0))


@st.composite
def result_sets(draw, max_n=8):
    n = draw(st.integers(1, max_n))
    pool = draw(st.lists(st.tuples(unit, unit), min_size=1, max_size=n))
    pts = [draw(st.sampled_from(pool)) for _ in range(n)]  # duplicates happen
    return np.array([p for p, _ in pts]), np.array([r for _, r in pts])


def _grid_curves(t: Tradeoff, lam=GRID):
    return t.curves(lam).to_numpy()


def _check_envelope(t: Tradeoff):
    curves = _grid_curves(t)
    best = curves.max(axis=1)
    env = t.envelope(GRID)
    # the optimal curve is >= every curve, and equal to the best one
    assert np.all(env >= curves.max(axis=1) - 1e-12)
    np.testing.assert_allclose(env, best, atol=1e-12, rtol=0)
    # intervals tile [0, 1]
    iv = t.intervals
    assert iv["lam_lo"].iat[0] == 0.0 and iv["lam_hi"].iat[-1] == 1.0
    np.testing.assert_array_equal(iv["lam_lo"].to_numpy()[1:], iv["lam_hi"].to_numpy()[:-1])
    assert np.all(iv["lam_hi"] - iv["lam_lo"] > 1e-12)
    assert (iv["winner"].to_numpy()[1:] != iv["winner"].to_numpy()[:-1]).all()
    # on the interior of every interval its winner is the best, on the grid
    col = pd.Index(t.results["name"]).get_indexer(t.winner_at(GRID))
    inner = (GRID > 0) & (GRID < 1)
    np.testing.assert_allclose(curves[inner, col[inner]], best[inner], atol=1e-12, rtol=0)
    # where one result wins the grid point by a clear margin, it is the interval winner
    srt = np.sort(curves, axis=1)
    clear = inner & ((srt[:, -1] - srt[:, -2]) > 1e-9 if curves.shape[1] > 1 else inner)
    assert np.all(col[clear] == curves[clear].argmax(axis=1))
    return curves, best


@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=25, deadline=None, database=None)
@given(result_sets())
def test_optimal_curve_against_dense_grid(index, pr):
    pre, rec = pr
    t = optimal_tradeoff(pre, rec, index=index)
    curves, best = _check_envelope(t)
    # AUC: closed form vs the dense trapezoid (error ~ h^2) and vs quad
    # (the end points are excluded: there a degenerate result can jump)
    # (trapezoid error grows with the curvature: a result with rec << pre peaks at λ = 0)
    assert t.partial_auc(H, 1 - H) == pytest.approx(np.trapezoid(best[1:-1], GRID[1:-1]), rel=1e-3, abs=1e-7)
    assert t.auc == pytest.approx(np.trapezoid(best[1:-1], GRID[1:-1]), abs=3 * H)
    assert t.auc == pytest.approx(t.intervals["area"].sum(), abs=0)
    for lo, hi, p, r in t.intervals[["lam_lo", "lam_hi", "pre", "rec"]].itertuples(index=False):
        q = quad(
            lambda x, p=p, r=r: _spec_index(p, r, x, index), lo, hi, points=_log_points(lo, hi), limit=500
        )[0]
        assert q == pytest.approx(_area(t, lo), rel=1e-7, abs=1e-10)
    # breakpoints are crossings of the two neighbouring winners, located to 1e-9
    for k, bp in enumerate(t.breakpoints):
        a = t.intervals.iloc[k]
        b = t.intervals.iloc[k + 1]

        def diff(x, a=a, b=b):
            return _spec_index(a.pre, a.rec, x, index) - _spec_index(b.pre, b.rec, x, index)

        # a wins just left of bp and b just right (the root is bracketed to 1e-9)
        assert diff(max(bp - 1e-9, 0.0)) >= -1e-12 and diff(min(bp + 1e-9, 1.0)) <= 1e-12
        lo, hi = max(bp - 1e-3, 0.0), min(bp + 1e-3, 1.0)
        if diff(lo) > 1e-9 and diff(hi) < -1e-9:
            assert abs(brentq(diff, lo, hi, xtol=1e-14) - bp) < 1e-9
        # and they show up as a change of the grid's winner within one step
        near = np.abs(GRID - bp) <= H
        assert near.any()


def _spec_index(p, r, lam, index):
    """SPEC §5 table, written independently, for one point (used inside quad)."""
    if index == "kulczynski":
        return (1 - lam) * p + lam * r
    if index == "folke":
        return p ** (1 - lam) * r**lam
    if index == "fmeasure":
        den = lam * p + (1 - lam) * r
    else:
        w = lambda t: min(2 * t, 1)  # noqa: E731
        den = w(lam) * p + w(1 - lam) * r - (1 - abs(1 - 2 * lam)) * p * r
    return p * r / den if den else 0.0


def _log_points(lo, hi):
    """Break points for quad that resolve curves peaked at an end (rec << pre)."""
    steps = (hi - lo) * 10.0 ** -np.arange(1, 16)
    pts = np.concatenate([lo + steps, hi - steps, [0.5]])
    return sorted(set(pts[(pts > lo) & (pts < hi)].tolist()))


def _area(t, lo):
    return float(t.intervals.loc[t.intervals["lam_lo"] == lo, "area"].iat[0])


@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=15, deadline=None, database=None)
@given(result_sets(), st.floats(0, 1), st.floats(0, 1))
def test_partial_and_weighted_auc(index, pr, a, b):
    t = optimal_tradeoff(*pr, index=index)
    a, b = min(a, b), max(a, b)
    if b - a < 1e-6:
        b = min(1.0, a + 0.1) if a < 0.9 else 1.0
        a = b - 0.1
    whole = t.partial_auc(0, a) + t.partial_auc(a, 1) if a > 0 else t.partial_auc(0, 1)
    assert whole == pytest.approx(t.auc, abs=1e-12)
    m = (GRID > a) & (GRID < b) & (GRID > 0) & (GRID < 1)
    dense = np.trapezoid(t.envelope(GRID[m]), GRID[m])
    assert t.partial_auc(a, b) == pytest.approx(dense, abs=3 * H)
    assert t.partial_auc(a, b, normalize=True) == pytest.approx(t.partial_auc(a, b) / (b - a))
    # uniform density gives the AUC, whatever its scale
    assert t.weighted_auc(lambda x: 3.0) == pytest.approx(t.auc, abs=1e-10)
    assert t.weighted_auc(np.full(GRID.size, 0.5)) == pytest.approx(t.auc, abs=H)
    # a density concentrated on [a, b] gives the normalised partial AUC
    rho = ((GRID >= a) & (GRID <= b)).astype(float)
    assert t.weighted_auc(rho, GRID) == pytest.approx(t.partial_auc(a, b, normalize=True), abs=1e-3)


def test_weighted_auc_callable_matches_grid():
    t = optimal_tradeoff([0.9, 0.6, 0.3], [0.2, 0.6, 0.95], index="jaccard")
    dens = lambda x: 6 * x * (1 - x)  # noqa: E731  (a Beta(2, 2) density)
    want = np.trapezoid(t.envelope(GRID) * dens(GRID), GRID)
    assert t.weighted_auc(dens) == pytest.approx(want, abs=1e-8)
    assert t.weighted_auc(dens(GRID), GRID) == pytest.approx(want, abs=1e-9)


# ---------------------------------------------------------------- special cases
@pytest.mark.parametrize("index", INDICES)
def test_single_result(index):
    t = optimal_tradeoff([0.4], [0.7], names=["only"], index=index)
    assert t.intervals["winner"].tolist() == ["only"] and t.breakpoints.size == 0
    want = quad(lambda x: float(weighted_index(0.4, 0.7, x, index)), 0, 1, points=[0.5])[0]
    assert t.auc == pytest.approx(np.trapezoid(weighted_index(0.4, 0.7, GRID, index), GRID), abs=1e-9)
    assert t.auc == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("index", INDICES)
def test_ties_go_to_the_first_listed(index):
    t = optimal_tradeoff([0.5, 0.5, 0.2], [0.7, 0.7, 0.9], names=["x", "y", "z"], index=index)
    assert "y" not in set(t.intervals["winner"])
    assert t.intervals["winner"].iat[0] == "x"


@pytest.mark.parametrize("index", INDICES)
def test_touching_at_an_end_point_is_not_a_breakpoint(index):
    """Same precision (or recall): the curves touch at λ = 0 (or 1) only; the
    dominating result wins all of [0, 1] even when listed second."""
    t = optimal_tradeoff([0.5, 0.5], [0.3, 0.9], names=["low", "high"], index=index)
    assert t.intervals[["lam_lo", "lam_hi", "winner"]].values.tolist() == [[0.0, 1.0, "high"]]
    t = optimal_tradeoff([0.1714, 0.641], [1.0, 1.0], names=["low", "high"], index=index)
    assert t.intervals[["lam_lo", "lam_hi", "winner"]].values.tolist() == [[0.0, 1.0, "high"]]
    c = compare_algorithms({"A": ([0.6410, 0.9], [1.0, 0.2]), "B": ([0.5714], [1.0])}, index=index)
    assert c.intervals["algorithm"].tolist() == ["A"]


def test_three_curves_through_one_point():
    """Kulczynski lines through (0.5, 0.5): the middle one never wins an interval."""
    t = optimal_tradeoff([0.8, 0.5, 0.2], [0.2, 0.5, 0.8], names="abc", index="kulczynski")
    assert t.intervals["winner"].tolist() == ["a", "c"]
    assert t.breakpoints.tolist() == [0.5]
    assert t.auc == pytest.approx(2 * (0.8 * 0.5 - 0.6 * 0.125))


def test_jaccard_crossing_on_each_half():
    t = optimal_tradeoff([0.95, 0.7, 0.3], [0.3, 0.72, 0.97], names="abc", index="jaccard")
    assert t.intervals["winner"].tolist() == ["a", "b", "c"]
    lo, hi = t.breakpoints
    assert lo < 0.5 < hi
    _check_envelope(t)


@pytest.mark.parametrize("index", ["fmeasure", "folke", "jaccard"])
def test_degenerate_results(index):
    # (0, 0) never wins; a result with rec = 0 is 0 on (0, 1] but counts at λ = 0
    t = optimal_tradeoff([0.0, 0.9, 0.4], [0.0, 0.0, 0.5], names="zdr", index=index)
    assert t.intervals["winner"].tolist() == ["r"]
    assert t.envelope([0.0])[0] == 0.9
    t = optimal_tradeoff([0.0, 0.9], [0.0, 0.0], index=index)
    assert t.auc == 0.0 and len(t.intervals) == 1
    np.testing.assert_array_equal(t.envelope([0.0, 0.5, 1.0]), [0.9, 0.0, 0.0])


def test_constraints():
    pre, rec = [0.9, 0.6, 0.3, 0.1], [0.2, 0.6, 0.95, 0.99]
    t = optimal_tradeoff(pre, rec, names="abcd", pre_min=0.25, rec_min=0.5)
    assert t.results["name"].tolist() == ["b", "c"]
    assert t.excluded == ("a", "d")
    assert set(t.intervals["winner"]) <= {"b", "c"}
    with pytest.raises(InputError, match="no result satisfies"):
        optimal_tradeoff(pre, rec, pre_min=0.95)


def test_tradeoff_curves_frame():
    df = tradeoff_curves([0.5, 0.8], [0.9, 0.1], names=["u", "v"], index="folke")
    assert list(df.columns) == ["u", "v"] and df.index.name == "lam" and len(df) == 101
    np.testing.assert_allclose(df["u"].to_numpy(), 0.5 ** (1 - df.index) * 0.9**df.index)


# ---------------------------------------------------------------- domain
@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=15, deadline=None, database=None)
@given(result_sets(), st.integers(1, 50), st.integers(0, 500))
def test_application_domain_against_grid(index, pr, b, extra):
    pre, rec = pr
    D = b + extra
    d = application_domain(pre, rec, truth_size=b, n_cells=D, index=index)
    assert d.maximal == (b / D, 1.0) and d.minimal == (1.0, 1 / b)
    mx = d.maximal_curve(COARSE)
    assert mx[0] == b / D and mx[-1] == 1.0
    inner = (COARSE > 0) & (COARSE < 1)
    for k in range(len(pre)):
        cur = weighted_index(pre[k], rec[k], COARSE, index)
        flagged = d.is_uninformative(k, COARSE)
        under = cur < mx
        # agree except within one grid step of a boundary or where the curves (nearly) touch
        bounds = d.uninformative.loc[d.uninformative["result"] == k, ["lam_lo", "lam_hi"]].to_numpy().ravel()
        far = inner & (np.abs(cur - mx) > 1e-9)
        if bounds.size:
            far &= np.min(np.abs(COARSE[:, None] - bounds[None, :]), axis=1) > HC
        assert np.array_equal(flagged[far], under[far])
        assert d.fraction_uninformative[k] == pytest.approx(under[inner].mean(), abs=1e-3)


def test_maximal_result_is_never_uninformative():
    d = application_domain([0.1, 0.05, 1.0], [1.0, 1.0, 0.1], truth_size=10, n_cells=100)
    assert d.fraction_uninformative.tolist()[0] == 0.0
    assert d.fraction_uninformative.tolist()[1] == 1.0  # strictly dominated by X = D
    assert 0 < d.fraction_uninformative.tolist()[2] < 1


# ---------------------------------------------------------------- compare
@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=12, deadline=None, database=None)
@given(result_sets(max_n=5), result_sets(max_n=5), result_sets(max_n=3))
def test_compare_algorithms_against_grid(index, a, b, c):
    comp = compare_algorithms({"A": a, "B": b, "C": c}, index=index)
    envs = np.column_stack([comp.tradeoffs[k].envelope(GRID) for k in "ABC"])
    best = envs.max(axis=1)
    iv = comp.intervals
    assert iv["lam_lo"].iat[0] == 0 and iv["lam_hi"].iat[-1] == 1
    assert (iv["algorithm"].to_numpy()[1:] != iv["algorithm"].to_numpy()[:-1]).all()
    assert np.all(iv["lam_hi"] - iv["lam_lo"] > 1e-12)
    k = np.minimum(np.searchsorted(iv["lam_hi"].to_numpy(), GRID), len(iv) - 1)
    col = pd.Index(list("ABC")).get_indexer(iv["algorithm"].to_numpy()[k])
    inner = (GRID > 0) & (GRID < 1)
    np.testing.assert_allclose(envs[inner, col[inner]], best[inner], atol=1e-12, rtol=0)
    assert comp.auc.to_dict() == {x: comp.tradeoffs[x].auc for x in "ABC"}
    assert iv["area"].sum() == pytest.approx(np.trapezoid(best[1:-1], GRID[1:-1]), abs=3 * H)
    assert comp.segments["lam_hi"].iat[-1] == 1.0


def test_compare_accepts_tradeoff_objects_and_names():
    ta = optimal_tradeoff([0.9, 0.6], [0.2, 0.6], names=["a1", "a2"], index="fmeasure")
    comp = compare_algorithms({"A": ta, "B": ([0.3], [0.95], ["b1"])}, index="fmeasure")
    assert comp.intervals["algorithm"].tolist() == ["A", "B"]
    assert set(comp.segments["winner"]) <= {"a1", "a2", "b1"}
    # identical sweeps: the first algorithm listed wins everywhere
    comp = compare_algorithms({"A": ([0.5], [0.5]), "B": ([0.5], [0.5])})
    assert comp.intervals["algorithm"].tolist() == ["A"]


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "call, err, match",
    [
        (lambda: weighted_index(0.5, 0.5, 0.5, "dice"), MeasureError, "unknown index 'dice'"),
        (lambda: weighted_index(1.5, 0.5, 0.5), InputError, "pre must be finite and within"),
        (lambda: weighted_index(0.5, 0.5, -0.1), InputError, "lam must be"),
        (lambda: optimal_tradeoff([], []), InputError, "at least one"),
        (lambda: optimal_tradeoff([0.1, 0.2], [0.3]), InputError, "equal length"),
        (lambda: optimal_tradeoff([0.1], [0.3], names=["a", "b"]), InputError, "2 names for 1"),
        (lambda: optimal_tradeoff([0.1, 0.2], [0.3, 0.4], names="aa"), InputError, "unique"),
        (lambda: optimal_tradeoff([0.1], [np.nan]), InputError, "rec must be finite"),
        (lambda: optimal_tradeoff([0.1], [0.2]).partial_auc(0.5, 0.5), InputError, "a < b"),
        (lambda: optimal_tradeoff([0.1], [0.2]).weighted_auc(lambda x: x - 0.5), InputError, "non-negative"),
        (lambda: optimal_tradeoff([0.1], [0.2]).weighted_auc([1.0, -1.0, 1.0]), InputError, "non-negative"),
        (
            lambda: optimal_tradeoff([0.1], [0.2]).weighted_auc([1.0, 1.0], [0.0, 0.5, 1.0]),
            InputError,
            "same length",
        ),
        (
            lambda: application_domain([0.1], [0.2], truth_size=5, n_cells=4),
            InputError,
            "truth_size <= n_cells",
        ),
        (lambda: compare_algorithms({}), InputError, "at least one algorithm"),
        (
            lambda: compare_algorithms({"A": ([0.4], [0.9]), "B": ([0.1], [0.9])}, pre_min=0.5),
            InputError,
            "no algorithm has a result satisfying the constraints pre >= 0.5$",
        ),
        (lambda: optimal_tradeoff([0.1], [0.2], rec_min="x"), InputError, "rec_min must be a number"),
    ],
)
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_results_are_inspectable():
    t = optimal_tradeoff([0.9, 0.3], [0.2, 0.95], names=["a", "b"])
    assert isinstance(t.intervals, pd.DataFrame)
    assert list(t.intervals.columns) == ["lam_lo", "lam_hi", "winner", "pre", "rec", "area"]
    assert isinstance(t.auc, float)


# ---------------------------------------------------------------- review fixes
def test_constraint_message_names_only_the_given_bounds():
    with pytest.raises(InputError) as err:
        optimal_tradeoff([0.9, 0.6], [0.2, 0.6], pre_min=0.95)
    assert str(err.value) == "no result satisfies the constraints pre >= 0.95"
    with pytest.raises(InputError) as err:
        optimal_tradeoff([0.9, 0.6], [0.2, 0.6], rec_min=0.7)
    assert str(err.value) == "no result satisfies the constraints rec >= 0.7"
    with pytest.raises(InputError) as err:
        optimal_tradeoff([0.9, 0.6], [0.2, 0.6], pre_min=0.95, rec_min=0.1)
    assert str(err.value) == "no result satisfies the constraints pre >= 0.95 and rec >= 0.1"


def test_compare_excludes_an_algorithm_without_admissible_results():
    algs = {"A": ([0.9, 0.6], [0.2, 0.6]), "B": ([0.3], [0.95]), "C": ([0.7], [0.7])}
    comp = compare_algorithms(algs, index="fmeasure", pre_min=0.5)
    assert comp.excluded == ("B",)
    assert list(comp.tradeoffs) == ["A", "C"] and list(comp.auc.index) == ["A", "C"]
    assert set(comp.intervals["algorithm"]) <= {"A", "C"}
    # the comparison of the others is what it would be without B
    alone = compare_algorithms({"A": algs["A"], "C": algs["C"]}, index="fmeasure", pre_min=0.5)
    pd.testing.assert_frame_equal(comp.intervals, alone.intervals)
    assert compare_algorithms(algs).excluded == ()


@pytest.mark.parametrize("index", INDICES)
@settings(max_examples=30, deadline=None, database=None)
@given(result_sets())
def test_winner_at_agrees_with_envelope_at_the_end_points(index, pr):
    pre, rec = pr
    # add results that are 0 on (0, 1) but may be the best at an end point
    pre = np.r_[pre, 1.0, 0.0]
    rec = np.r_[rec, 0.0, 1.0]
    t = optimal_tradeoff(pre, rec, index=index)
    names = t.results["name"].tolist()
    for lam, column in ((0.0, "pre"), (1.0, "rec")):
        w = t.winner_at(lam)
        value = t.results[column].iat[names.index(w)]
        assert value == t.envelope([lam])[0]
        assert weighted_index(t.results["pre"].iat[names.index(w)], t.results["rec"].iat[names.index(w)],
                              lam, index) == t.envelope([lam])[0]
    ws = t.winner_at(np.array([0.0, 0.5, 1.0]))
    assert ws[0] == t.winner_at(0.0) and ws[2] == t.winner_at(1.0)


def test_winner_at_end_points_specific_case():
    t = optimal_tradeoff([1.0, 0.6, 0.0], [0.0, 0.5, 1.0], names=["r0", "b", "p0"], index="fmeasure")
    assert t.intervals["winner"].tolist() == ["b"]
    assert t.winner_at([0.0, 0.3, 1.0]).tolist() == ["r0", "b", "p0"]
    np.testing.assert_array_equal(t.envelope([0.0, 1.0]), [1.0, 1.0])


# ---------------------------------------------------------------- index names, as users write them
@pytest.mark.parametrize("spelled, name", [("Jaccard", "jaccard"), (" FMEASURE ", "fmeasure"), ("Folke\t", "folke")])
def test_every_function_taking_an_index_ignores_its_case(spelled, name):
    """As ``optimal_tradeoff`` and ``daskbicl tradeoff`` do: the same values, bit for bit, as the lower-case name."""
    from daskbicl.plot import plot_pr_space

    rng = np.random.default_rng(7)
    p, r, lam = rng.uniform(0, 1, 9), rng.uniform(0, 1, 9), rng.uniform(0, 1, 30)
    assert weighted_index(p[None], r[None], lam[:, None], spelled).tobytes() == \
        weighted_index(p[None], r[None], lam[:, None], name).tobytes()
    pd.testing.assert_frame_equal(tradeoff_curves(p, r, lam, index=spelled), tradeoff_curves(p, r, lam, index=name),
                                  check_exact=True)
    assert optimal_tradeoff(p, r, index=spelled).auc == optimal_tradeoff(p, r, index=name).auc
    title = plot_pr_space(p, r, index=spelled).axes[0].get_title()
    assert title == plot_pr_space(p, r, index=name).axes[0].get_title() and name not in title  # the display name


def test_index_records_are_the_kernels_formulas_by_name():
    """The registry layer names each of the kernel's (nameless) formulas once; the default is one of them."""
    from daskbicl.kernels.tradeoff import indices as kernel
    from daskbicl.measures.weighted_indices import DEFAULT_INDEX, INDEX_RECORDS, get_index

    formulas = [v for v in vars(kernel).values() if isinstance(v, kernel.IndexFormula)]
    assert sorted(map(id, formulas)) == sorted(id(r.formula) for r in INDEX_RECORDS.values())
    assert INDICES == tuple(INDEX_RECORDS) and DEFAULT_INDEX in INDICES
    assert len({r.label for r in INDEX_RECORDS.values()}) == len(INDICES)
    for name, record in INDEX_RECORDS.items():
        assert get_index(name) is record is get_index(record) and record.name == name
    with pytest.raises(MeasureError, match=r"unknown index 'dice'; choose one of kulczynski, fmeasure, folke, jaccard"):
        get_index("dice")
