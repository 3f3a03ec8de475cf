"""The tradeoff space from stores: Python API and CLI (SPEC §5)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import daskbicl
from daskbicl.errors import InputError
from daskbicl.kernels.tradeoff import weighted_index

I, J = 120, 30


def _truth():
    r = np.zeros((1, I), bool)
    r[0, :40] = True
    c = np.zeros((1, J), bool)
    c[0, :10] = True
    return daskbicl.biclustering(r, c, bicluster=["target"])


def _sweep(seed, n=5):
    rng = np.random.default_rng(seed)
    rows = np.zeros((n, I), bool)
    cols = np.zeros((n, J), bool)
    for k in range(n):
        rows[k, rng.integers(0, 30): rng.integers(35, 120)] = True
        cols[k, : rng.integers(2, 30)] = True
    return daskbicl.biclustering(rows, cols, bicluster=[f"s{seed}-{k}" for k in range(n)])


def test_results_are_the_pair_precision_and_recall():
    truth, sweep = _truth(), _sweep(1)
    t = daskbicl.tradeoff(truth, sweep, names=["alg"])
    pairs = daskbicl.pair_scores(truth, sweep)
    np.testing.assert_allclose(t.results["pre"], pairs.precision.values[0])
    np.testing.assert_allclose(t.results["rec"], pairs.recall.values[0])
    assert t.truth_size == 400 and t.n_cells == I * J


@pytest.mark.parametrize("index", ["fmeasure", "jaccard", "kulczynski", "folke"])
def test_optimal_curve_matches_dense_grid(index):
    t = daskbicl.tradeoff(_truth(), _sweep(2, 8), index=index, names=["alg"])
    opt = t.optimal["alg"]
    lam = np.linspace(0, 1, 20001)
    curves = weighted_index(t.results["pre"].to_numpy()[None, :], t.results["rec"].to_numpy()[None, :], lam[:, None], index)
    best = curves.max(axis=1)
    np.testing.assert_allclose(opt.envelope(lam), best, atol=1e-12)
    assert opt.auc == pytest.approx(np.trapezoid(best, lam), abs=1e-6)
    # breakpoints agree with where the dense-grid argmax changes, to the grid's resolution
    arg = curves.argmax(axis=1)
    grid_changes = lam[1:][np.diff(arg) != 0]
    names = t.results["result"].to_numpy()
    assert len(opt.breakpoints) == len(grid_changes)
    np.testing.assert_allclose(opt.breakpoints, grid_changes, atol=1 / 20000 + 1e-9)
    assert list(opt.intervals["winner"]) == [names[a] for a in arg[np.r_[0, np.flatnonzero(np.diff(arg)) + 1]]]


def test_comparison_and_application_domain():
    t = daskbicl.tradeoff(_truth(), _sweep(3), _sweep(4), names=["A", "B"])
    iv = t.comparison.intervals
    assert iv["lam_lo"].iat[0] == 0.0 and iv["lam_hi"].iat[-1] == 1.0
    assert set(iv["algorithm"]) <= {"A", "B"}
    dom = t.domain["A"]
    assert dom.maximal == (400 / (I * J), 1.0) and dom.minimal == (1.0, 1 / 400)
    assert ((t.results["fraction_uninformative"] >= 0) & (t.results["fraction_uninformative"] <= 1)).all()


def test_constraints_and_target_selection():
    truth, sweep = _truth(), _sweep(5)
    t = daskbicl.tradeoff(truth, sweep, pre_min=0.3, names=["alg"])
    kept = t.results[t.results["pre"] >= 0.3]["result"]
    assert set(t.optimal["alg"].intervals["winner"]) <= set(kept)
    two = daskbicl.biclustering(
        np.vstack([truth.row_mask.values, truth.row_mask.values]),
        np.vstack([truth.col_mask.values, truth.col_mask.values]),
        bicluster=["target", "other"],
    )
    with pytest.raises(InputError, match="choose it with truth_bicluster"):
        daskbicl.tradeoff(two, sweep)
    assert daskbicl.tradeoff(two, sweep, truth_bicluster="target").truth_size == 400
    with pytest.raises(InputError, match="at least one sweep"):
        daskbicl.tradeoff(truth)


def test_cli_json_and_plot(tmp_path):
    t = daskbicl.save(_truth(), tmp_path / "t.zarr")
    a = daskbicl.save(_sweep(6), tmp_path / "a.zarr")
    b = daskbicl.save(_sweep(7), tmp_path / "b.zarr")
    figure = tmp_path / "tradeoff.svg"
    proc = subprocess.run(
        [sys.executable, "-m", "daskbicl", "tradeoff", t, a, b, "--name", "A", "--name", "B",
         "--index", "jaccard", "--json", "--plot", figure, "--workers", "1"],
        capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expected = daskbicl.tradeoff(t, a, b, names=["A", "B"], index="jaccard")
    assert out["algorithms"]["A"]["auc"] == pytest.approx(expected.optimal["A"].auc)
    assert [r["algorithm"] for r in out["comparison"]] == list(expected.comparison.intervals["algorithm"])
    svg = figure.read_text()
    assert "algorithm:A" in svg and "algorithm:B" in svg  # both optimal curves were drawn (gid)
