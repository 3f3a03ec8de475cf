"""Bootstrap intervals over the items: ``score(..., ci=0.95)`` and ``daskbicl score --ci``."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels.coclustering.resampling import (
    POOLED_AT_MOST,
    Bootstrapped,
    Redraw,
    redraw_counts,
    replicate_table,
)
from daskbicl.measures import REGISTRY, ScorePlan
from daskbicl.measures.bootstrap import MATCHED, VECTORISED, bootstrappable, replicate_values


def _pair(seed, n_rows=300, n_cols=80, noise=0.3):
    rng = np.random.default_rng(seed)
    t = (rng.integers(0, 5, n_rows), rng.integers(0, 4, n_cols))
    p = tuple(np.where(rng.random(x.size) < noise, rng.integers(0, 6, x.size), x) for x in t)
    return t, p


def test_the_vectorised_measures_are_bootstrappable_records():
    for name in VECTORISED:
        assert bootstrappable(REGISTRY[name]), name


@pytest.mark.parametrize("seed", range(4))
def test_vectorised_replicates_equal_each_measures_own_finalize(seed):
    truth, pred = _pair(seed, n_rows=40 + 30 * seed, n_cols=10 + 5 * seed)
    plan = ScorePlan.build(truth, pred, list(VECTORISED))
    rows, cols = daskbicl.contingency(truth, pred).row_table, daskbicl.contingency(truth, pred).col_table
    fast = replicate_values(plan, rows, cols, replicates=70, seed=seed)
    slow = replicate_values(plan, rows, cols, replicates=70, seed=seed, vectorised=False)
    for name in VECTORISED:
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9, atol=1e-12, err_msg=name)


def test_the_matching_measures_are_bootstrappable_records():
    for name in MATCHED:
        assert bootstrappable(REGISTRY[name]), name


@pytest.mark.parametrize(("seed", "normalizer"), [(0, "corrected"), (1, "printed"), (2, "per_axis"), (3, "corrected"),
                                                  (4, "printed")])
def test_matching_replicates_equal_each_measures_own_finalize(seed, normalizer):
    """CE, NCE and the accuracies from the replicates' matched counts (certified for a batch, or solved): the very
    values their finalize gives on each replicate's tables, on noisy copies (mostly certified) and on noisy tables
    (mostly solved)."""
    truth, pred = _pair(seed, n_rows=40 + 60 * seed, n_cols=10 + 9 * seed, noise=(0.1, 0.6)[seed % 2])
    plan = ScorePlan.build(truth, pred, list(MATCHED), normalizer=normalizer)
    rows, cols = daskbicl.contingency(truth, pred).row_table, daskbicl.contingency(truth, pred).col_table
    fast = replicate_values(plan, rows, cols, replicates=90, seed=seed)
    slow = replicate_values(plan, rows, cols, replicates=90, seed=seed, vectorised=False)
    for name in MATCHED:
        np.testing.assert_array_equal(fast[name], slow[name], err_msg=name)


def test_a_replicate_is_a_multinomial_redraw_of_the_cells():
    counts = np.array([50, 30, 15, 5])
    drawn = redraw_counts(counts, 4000, np.random.default_rng(0))
    assert (drawn.sum(axis=1) == 100).all() and (drawn >= 0).all()
    np.testing.assert_allclose(drawn.mean(axis=0), counts, rtol=0.03)
    p = counts / 100
    np.testing.assert_allclose(drawn.var(axis=0), 100 * p * (1 - p), rtol=0.1)
    few = redraw_counts(np.array([1, 1, 1, 1, 1, 1]), 3000, np.random.default_rng(1))  # fewer items than cells path
    assert (few.sum(axis=1) == 6).all()
    np.testing.assert_allclose(few.mean(axis=0), 1.0, rtol=0.05)


def _chi_square_against_the_multinomial(counts, drawn) -> tuple[float, int]:
    """Pearson's statistic of the drawn outcomes against the exact Multinomial(n, counts / n) law, and its degrees
    of freedom (outcomes expected fewer than 5 times pooled into one class)."""
    from math import lgamma, log

    n, p = int(counts.sum()), counts / counts.sum()
    outcomes, seen = np.unique(drawn, axis=0, return_counts=True)
    grid = np.stack(np.meshgrid(*[np.arange(n + 1)] * counts.size, indexing="ij"), -1).reshape(-1, counts.size)
    grid = grid[grid.sum(axis=1) == n]  # every outcome
    log_pmf = np.array([lgamma(n + 1) - sum(lgamma(x + 1) - x * log(q) for x, q in zip(row, p)) for row in grid])
    expected = np.exp(log_pmf) * drawn.shape[0]
    found = dict(zip(map(tuple, outcomes.tolist()), seen.tolist()))
    observed = np.array([found.pop(tuple(row), 0) for row in grid.tolist()])
    assert not found  # no impossible outcome
    big = expected >= 5
    rest_e, rest_o = expected[~big].sum(), observed[~big].sum()
    stat = float((((observed[big] - expected[big]) ** 2) / expected[big]).sum() + (rest_o - rest_e) ** 2 / rest_e)
    return stat, int(big.sum())


@pytest.mark.parametrize("counts", [[1, 1, 1, 2, 2, 4], [3, 3, 1, 1, 1, 2], [7, 1, 1, 1]])
def test_the_pooled_redraw_is_exactly_the_multinomial(counts):
    """Pools of equal small counts (one category, then spread uniformly) give the multinomial's law exactly:
    every outcome's frequency against its exact probability, for the pooled draw and numpy's own."""
    from scipy.stats import chi2

    counts = np.array(counts)
    redraw = Redraw(counts)
    assert redraw.members.size > 0  # the pooled path is the one under test
    pooled = redraw.draw(60_000, np.random.default_rng(7))
    plain = np.random.default_rng(7).multinomial(counts.sum(), counts / counts.sum(), size=60_000)
    for drawn in (pooled, plain):
        stat, df = _chi_square_against_the_multinomial(counts, drawn)
        assert stat < chi2.ppf(1 - 1e-6, df), (stat, df)
    assert chi2.sf(_chi_square_against_the_multinomial(counts, np.sort(pooled, axis=1))[0], df) < 1e-12  # it can fail


def test_pools_are_the_cells_of_an_equal_small_count():
    counts = np.array([1, 90, 1, POOLED_AT_MOST, 2, POOLED_AT_MOST, POOLED_AT_MOST + 1, POOLED_AT_MOST + 1, 1])
    redraw = Redraw(counts)
    assert redraw.single.tolist() == [1, 4, 6, 7]  # alone in their count, or above the pooled counts
    assert sorted(redraw.members.tolist()) == [0, 2, 3, 5, 8] and redraw.pool_sizes.tolist() == [3, 2]
    drawn = redraw.draw(500, np.random.default_rng(0))
    assert (drawn.sum(axis=1) == counts.sum()).all()
    np.testing.assert_allclose(drawn.mean(axis=0), counts, rtol=0.2)


def test_a_replicate_table_keeps_the_users_labels():
    t = daskbicl.contingency((np.array(["a", "a", "b", "c"]), [0]), ([7, 8, 8, 9], [0])).row_table
    r = replicate_table(t, np.array([2, 0, 0, 2]))
    assert r.truth_labels.tolist() == ["a", "c"] and r.pred_labels.tolist() == [7, 9]
    assert r.dense().tolist() == [[2, 0], [0, 2]] and r.n == 4


def test_intervals_are_seeded_and_labelled():
    truth, pred = _pair(10)
    a = daskbicl.score(truth, pred, ci=0.9, replicates=200)
    b = daskbicl.score(truth, pred, ci=0.9, replicates=200)
    c = daskbicl.score(truth, pred, ci=0.9, replicates=200, seed=5)
    plain = daskbicl.score(truth, pred)
    for name, value in a.items():
        assert isinstance(value, Bootstrapped) and isinstance(value, daskbicl.Estimate)
        assert float(value) == plain[name]  # the value itself is the exact one
        assert (value.low, value.high) == (b[name].low, b[name].high)
        assert value.low <= value.high and value.method == "bootstrap-bc" and value.level == 0.9  # bc: the default
        assert value.samples == 200 and value.exact
    assert any((a[k].low, a[k].high) != (c[k].low, c[k].high) for k in a)


def test_rows_and_columns_are_redrawn_independently():
    truth, pred = _pair(11)
    other_cols = (pred[0], np.random.default_rng(3).integers(0, 3, truth[1].size))
    a = daskbicl.score(truth, pred, measures=["ari_rows", "ari_cols"], ci=0.95, replicates=100)
    b = daskbicl.score(truth, other_cols, measures=["ari_rows", "ari_cols"], ci=0.95, replicates=100)
    assert (a["ari_rows"].low, a["ari_rows"].high) == (b["ari_rows"].low, b["ari_rows"].high)
    assert (a["ari_cols"].low, a["ari_cols"].high) != (b["ari_cols"].low, b["ari_cols"].high)


def test_a_wider_level_gives_a_wider_interval():
    truth, pred = _pair(12)
    narrow = daskbicl.score(truth, pred, measures="cari", ci=0.5, replicates=300)["cari"]
    wide = daskbicl.score(truth, pred, measures="cari", ci=0.99, replicates=300)["cari"]
    assert wide.low < narrow.low < narrow.high < wide.high


def test_from_counted_tables_and_lazily_the_same_digits():
    import dask

    truth, pred = _pair(13)
    direct = daskbicl.score(truth, pred, ci=0.95, replicates=100)
    counted = daskbicl.score(daskbicl.contingency(truth, pred), ci=0.95, replicates=100)
    lazy = dask.compute(daskbicl.score(truth, pred, ci=0.95, replicates=100, compute=False))[0]
    for name in direct:
        assert (direct[name].low, direct[name].high) == (counted[name].low, counted[name].high)
        assert (direct[name].low, direct[name].high) == (lazy[name].low, lazy[name].high)


def test_the_value_pickles_and_prints():
    b = Bootstrapped(0.61, 0.58, 0.65, 999, level=0.9)
    back = pickle.loads(pickle.dumps(b))
    assert (float(back), back.low, back.high, back.level, back.samples) == (0.61, 0.58, 0.65, 0.9, 999)
    bc = pickle.loads(pickle.dumps(Bootstrapped(0.61, 0.5, 0.6, 99, method="bootstrap-bc")))
    assert bc.method == "bootstrap-bc" and bc.as_dict()["method"] == "bootstrap-bc" and "bootstrap-bc" in repr(bc)
    assert str(b) == "0.6100 [0.5800, 0.6500]"
    assert b.as_dict() == {"value": 0.61, "exact": True, "low": 0.58, "high": 0.65, "method": "bootstrap",
                           "level": 0.9, "samples": 999, "undefined": 0.0}


def test_measures_of_other_passes_are_returned_as_they_are():
    truth = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 0, 1]])
    pred = daskbicl.biclustering([[1, 1, 1, 0]], [[1, 1, 0]])
    out = daskbicl.score(truth, pred, measures=["jaccard", "e4sc", "omega_rows"], ci=0.95, replicates=50)
    assert type(out["e4sc"]) is float and type(out["omega_rows"]) is float
    assert isinstance(out["jaccard"], Bootstrapped)  # the bicluster overlap tables: tests/measures/test_bootstrap_bicluster.py


def test_the_bias_corrected_interval_moves_against_the_bias():
    """NMI's plug-in value is biased upwards: its replicates sit above it, and "bc" moves the interval down."""
    truth, pred = _pair(17, n_rows=150, n_cols=40, noise=0.6)
    plain = daskbicl.score(truth, pred, measures=["nmi_rows", "cari"], ci=0.9, replicates=300, ci_method="percentile")
    bc = daskbicl.score(truth, pred, measures=["nmi_rows", "cari"], ci=0.9, replicates=300)  # bc: the default
    assert bc["nmi_rows"].method == "bootstrap-bc" and plain["nmi_rows"].method == "bootstrap"
    assert float(bc["nmi_rows"]) == float(plain["nmi_rows"])
    assert bc["nmi_rows"].low < plain["nmi_rows"].low and bc["nmi_rows"].high < plain["nmi_rows"].high
    with pytest.raises(daskbicl.MeasureError, match="ci_method"):
        daskbicl.score(truth, pred, ci=0.9, ci_method="bca")


@pytest.mark.parametrize("kwargs, word", [({"ci": 1.0}, "ci"), ({"ci": 0.95, "replicates": 0}, "replicates"),
                                          ({"ci": 0.95, "replicates": 2.5}, "replicates"),
                                          ({"ci": 0.95, "seed": -1}, "seed")])
def test_bad_interval_options_are_refused_before_any_read(kwargs, word):
    with pytest.raises(daskbicl.MeasureError, match=word):
        daskbicl.score("/nonexistent/t.zarr", "/nonexistent/p.zarr", **kwargs)


def test_the_same_digits_on_a_cluster(client, tmp_path):
    truth, pred = _pair(14, n_rows=2000, n_cols=300)
    daskbicl.save(daskbicl.partition(*truth), tmp_path / "t.zarr", chunk=256)
    daskbicl.save(daskbicl.partition(*pred), tmp_path / "p.zarr", chunk=256)
    there = daskbicl.score(str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"), ci=0.95, replicates=100)
    here = daskbicl.score(truth, pred, ci=0.95, replicates=100)
    assert {k: (v.low, v.high) for k, v in there.items()} == {k: (v.low, v.high) for k, v in here.items()}


def test_the_command_line_prints_the_intervals(tmp_path):
    truth, pred = _pair(15)
    daskbicl.save(daskbicl.partition(*truth), tmp_path / "t.zarr")
    daskbicl.save(daskbicl.partition(*pred), tmp_path / "p.zarr")

    def run(*args):
        proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"),
                               str(tmp_path / "p.zarr"), *args], capture_output=True, text=True, timeout=180)
        return proc.returncode, proc.stdout, proc.stderr

    code, out, err = run("--ci", "0.9", "--replicates", "150", "--json", "--measures", "cari", "nce")
    assert code == 0, err
    expected = daskbicl.score(truth, pred, measures=["cari", "nce"], ci=0.9, replicates=150)
    assert json.loads(out) == {k: v.as_dict() for k, v in expected.items()}
    code, out, err = run("--ci", "0.9", "--replicates", "150", "--measure", "cari")
    assert code == 0 and str(expected["cari"]) in out and "0.9 bias-corrected bootstrap interval" in out
    code, out, err = run("--ci", "2")
    assert code == 2 and "ci" in err and "Traceback" not in err
    code, out, err = run("--ci", "0.9", "--null", "5")
    assert code == 2 and "--null" in err


def test_the_coverage_simulation_runs_quick():
    """benchmarks/bootstrap_coverage.py --quick: the simulation cannot rot; its coverage column is a share."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "bootstrap_coverage.py"), "--quick"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(root)))
    assert proc.returncode == 0, proc.stderr
    lines = [line.split(" | ") for line in proc.stdout.splitlines() if " | " in line]
    assert lines[0][:3] == ["measure", "population", "coverage"]
    assert {row[0] for row in lines[1:]} == {"cari", "ari_rows", "nmi_rows", "nce", "fmeasure_corrected"}
    assert {row[5] for row in lines[1:]} == {"percentile", "bc"}
    assert all(0.0 <= float(row[2]) <= 1.0 for row in lines[1:])


def test_lazy_intervals_add_no_read(tmp_path):
    """score(ci=..., compute=False) is score's graph with the intervals in its last task: no input is loaded whole."""
    truth, pred = _pair(16)
    daskbicl.save(daskbicl.partition(*truth), tmp_path / "t.zarr", chunk=64)
    daskbicl.save(daskbicl.partition(*pred), tmp_path / "p.zarr", chunk=64)
    t, p = str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr")
    plain = daskbicl.score(t, p, measures="cari", compute=False)
    lazy = daskbicl.score(t, p, measures="cari", ci=0.95, replicates=50, compute=False)
    assert len(dict(lazy.__dask_graph__())) == len(dict(plain.__dask_graph__()))
    assert float(lazy.compute()["cari"]) == plain.compute()["cari"]
