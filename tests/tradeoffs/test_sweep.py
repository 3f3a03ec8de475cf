"""The tradeoff space from stores: Python API and CLI (SPEC §5)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import daskbicl
from daskbicl.errors import InputError
from daskbicl.measures.weighted_indices import weighted_index

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


# ---------------------------------------------------------------- review fixes
def _box(rows, cols):
    r = np.zeros(I, bool)
    c = np.zeros(J, bool)
    r[rows] = True
    c[cols] = True
    return r, c


def _known_sweep(names=("precise", "mid", "loose"), empty=False):
    """Truth rows 0..39 x cols 0..9 (|B| = 400); results with known (pre, rec)."""
    boxes = {
        "precise": _box(slice(0, 10), slice(0, 10)),  # pre 1, rec 0.25
        "mid": _box(np.r_[0:30, 50:60], slice(0, 10)),  # pre 0.75, rec 0.75
        "loose": _box(slice(0, 40), slice(0, 20)),  # pre 0.5, rec 1
        "tight": _box(slice(0, 20), slice(0, 10)),  # pre 1, rec 0.5
        "noise": _box(slice(60, 120), slice(10, 30)),  # pre 0, rec 0
    }
    rows = [boxes[n][0] for n in names]
    cols = [boxes[n][1] for n in names]
    ids = list(names)
    if empty:
        rows.append(np.zeros(I, bool))
        cols.append(np.ones(J, bool))
        ids.append("hollow")
    return daskbicl.biclustering(np.array(rows), np.array(cols), bicluster=ids)


def _by_gid(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def _check_panel(ax, opt):
    """The panel draws exactly ``opt``: its results, envelope, breakpoints, AUC."""
    (line,) = _by_gid(ax, "optimal")
    x, y = line.get_xdata(), line.get_ydata()
    np.testing.assert_allclose(y, opt.envelope(x), atol=0)
    (bp,) = _by_gid(ax, "breakpoints")
    np.testing.assert_array_equal(bp.get_xdata(), opt.breakpoints)
    curves = _by_gid(ax, "curve")
    assert len(curves) == len(opt.results)
    want = weighted_index(opt.results["pre"].to_numpy()[None, :], opt.results["rec"].to_numpy()[None, :],
                          x[:, None], opt.index)
    np.testing.assert_allclose(np.column_stack([c.get_ydata() for c in curves]), want, atol=1e-12)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"optimal tradeoff (AUC = {opt.auc:.3f})" in legend
    labels = [a.get_text() for a in _by_gid(ax, "winner-label")]
    assert labels == [str(w) for w in opt.intervals["winner"]]


def test_single_sweep_plot_draws_what_was_returned_under_constraints(tmp_path):
    t = daskbicl.tradeoff(_truth(), _known_sweep(), index="fmeasure", rec_min=0.5, names=["alg"])
    opt = t.optimal["alg"]
    assert opt.excluded == ("precise",) and t.results["kept"].tolist() == [False, True, True]
    fig = t.plot(tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"
    (ax,) = fig.axes
    _check_panel(ax, opt)
    assert "precise" not in [a.get_text() for a in _by_gid(ax, "winner-label")]
    assert "rec ≥ 0.5" in ax.get_title()
    # another index is computed from the same (pre, rec), with the same constraints
    fig = t.plot(tmp_path / "y.svg", indices=["jaccard", "kulczynski"])
    assert len(fig.axes) == 2
    for ax, idx in zip(fig.axes, ["jaccard", "kulczynski"]):
        want = daskbicl.optimal_tradeoff(t.results["pre"], t.results["rec"], names=t.results["result"],
                                         index=idx, rec_min=0.5)
        assert t.for_index(idx).optimal["alg"].auc == want.auc
        _check_panel(ax, t.for_index(idx).optimal["alg"])


def test_several_sweeps_plot_one_row_per_index_with_each_algorithm(tmp_path):
    t = daskbicl.tradeoff(_truth(), _sweep(3), _sweep(4), names=["A", "B"], index="fmeasure")
    fig = t.plot(tmp_path / "cmp.png", indices=["fmeasure", "jaccard"])
    assert len(fig.axes) == 2 * 3  # rows: indices; columns: comparison, A, B
    for row, idx in enumerate(["fmeasure", "jaccard"]):
        st = t.for_index(idx)
        comp_ax, *alg_axes = fig.axes[3 * row: 3 * row + 3]
        assert st.comparison.index == idx and idx in comp_ax.get_title().lower().replace("-", "")
        for name, opt in st.comparison.tradeoffs.items():
            (ln,) = _by_gid(comp_ax, f"algorithm:{name}")
            np.testing.assert_allclose(ln.get_ydata(), opt.envelope(ln.get_xdata()))
        for ax, alg in zip(alg_axes, ["A", "B"]):
            assert ax.get_title().startswith(f"{alg} — ")
            _check_panel(ax, st.optimal[alg])
    assert len(t.plot(indices="kulczynski", detail=False).axes) == 1
    with pytest.raises(daskbicl.MeasureError, match="unknown index"):
        t.plot(indices=["dice"])


def test_comparison_excludes_a_sweep_with_no_admissible_result(tmp_path):
    good = _known_sweep(("mid", "loose"))
    bad = _known_sweep(("precise",))  # rec 0.25 only
    t = daskbicl.tradeoff(_truth(), good, bad, names=["good", "bad"], rec_min=0.5)
    assert t.excluded == ("bad",) and list(t.optimal) == ["good"]
    assert t.comparison.excluded == ("bad",)
    assert set(t.comparison.intervals["algorithm"]) == {"good"}
    assert t.summary()["excluded_algorithms"] == ["bad"]
    fig = t.plot(tmp_path / "ex.png")
    assert "excluded" in fig.axes[0].get_title() and "bad" in fig.axes[0].get_title()
    with pytest.raises(InputError) as err:  # one sweep: nothing to show is an error
        daskbicl.tradeoff(_truth(), bad, names=["bad"], rec_min=0.5)
    assert str(err.value) == "sweep 'bad': no result satisfies the constraints rec >= 0.5"


def test_empty_result_names_the_sweep_and_drop_empty():
    sweep = _known_sweep(empty=True)
    with pytest.raises(InputError) as err:
        daskbicl.tradeoff(_truth(), sweep, names=["alg"])
    msg = str(err.value)
    assert msg.startswith("sweep 'alg' has 1 empty bicluster(s)") and "'hollow'" in msg
    assert "drop_empty=True" in msg and "--drop-empty" in msg
    assert "pred" not in msg and "--param" not in msg
    t = daskbicl.tradeoff(_truth(), sweep, names=["alg"], drop_empty=True)
    assert t.results["result"].tolist() == ["precise", "mid", "loose"]
    assert t.dropped == {"alg": ("hollow",)}
    assert t.summary()["dropped_empty"] == {"alg": ["hollow"]}


def test_truth_bicluster_by_converted_label_or_position():
    r, c = _truth().row_mask.values, _truth().col_mask.values
    other_r, other_c = np.zeros_like(r), np.zeros_like(c)
    other_r[0, 60:100], other_c[0, 20:30] = True, True
    rows, cols = np.vstack([other_r, r]), np.vstack([other_c, c])
    sweep = _known_sweep()
    ref = daskbicl.tradeoff(_truth(), sweep).results
    labelled = daskbicl.biclustering(rows, cols, bicluster=[3, 5])
    for label in (5, "5", np.int64(5), 5.0):
        got = daskbicl.tradeoff(labelled, sweep, truth_bicluster=label)
        assert got.truth_size == 400
        np.testing.assert_allclose(got.results["pre"], ref["pre"])
    unlabelled = daskbicl.biclustering(rows, cols)
    assert "bicluster" not in unlabelled.coords
    for pos in (1, "1"):
        np.testing.assert_allclose(daskbicl.tradeoff(unlabelled, sweep, truth_bicluster=pos).results["rec"],
                                   ref["rec"])
    with pytest.raises(InputError, match="no bicluster labels, so truth_bicluster is a position 0..1; got 2"):
        daskbicl.tradeoff(unlabelled, sweep, truth_bicluster=2)
    with pytest.raises(InputError, match=r"truth has no bicluster '9' \(its biclusters: 3, 5\)"):
        daskbicl.tradeoff(labelled, sweep, truth_bicluster="9")


def test_coclustering_truth_and_sweep_are_accepted():
    z = np.repeat([0, 1, 2], 40)  # 120 rows
    w = np.repeat([0, 1, 2], 10)  # 30 cols
    truth = daskbicl.partition(z, w)
    sweep = _known_sweep()
    t = daskbicl.tradeoff(truth, sweep, truth_bicluster="0/0", names=["alg"])
    ref = daskbicl.tradeoff(_truth(), sweep, names=["alg"])  # block 0/0 is rows 0..39 x cols 0..9
    pd.testing.assert_frame_equal(t.results, ref.results)
    # a co-clustering sweep: one result per block
    pred = daskbicl.partition(np.repeat([0, 1], 60), np.repeat([0, 1], 15))
    t = daskbicl.tradeoff(_truth(), pred, names=["blocks"])
    assert sorted(t.results["result"]) == ["0/0", "0/1", "1/0", "1/1"]
    row = t.results.set_index("result").loc["0/0"]
    assert row["pre"] == pytest.approx(400 / 900) and row["rec"] == 1.0


def test_pr_figures_from_the_sweep(tmp_path):
    t = daskbicl.tradeoff(_truth(), _sweep(3), _sweep(4), names=["A", "B"])
    res = t.results
    D, B = t.n_cells, t.truth_size
    np.testing.assert_allclose(res["pre_corrected"], (D * res["pre"] - B) / (D - B), atol=1e-12)
    np.testing.assert_allclose(res["rec_corrected"], (D * res["rec"] - res["size"]) / (D - res["size"]), atol=1e-12)
    fig = t.plot_pr(tmp_path / "pr.png", index="jaccard", lam=0.3)
    assert (tmp_path / "pr.png").stat().st_size > 5000
    ax = fig.axes[0]
    pts = _by_gid(ax, "results")
    assert [p.get_label() for p in pts] == ["A", "B"]
    for p, alg in zip(pts, ["A", "B"]):
        sub = res[res["algorithm"] == alg]
        np.testing.assert_allclose(p.get_offsets(), np.column_stack([sub["rec"], sub["pre"]]))
    (rnd,) = _by_gid(ax, "random")
    assert set(rnd.get_ydata()) == {B / D}
    assert "Jaccard" in ax.get_title() and "0.3" in ax.get_title()
    fig = t.plot_corrected_pr(tmp_path / "cpr.svg")
    pts = _by_gid(fig.axes[0], "results")
    for p, alg in zip(pts, ["A", "B"]):
        sub = res[res["algorithm"] == alg]
        np.testing.assert_allclose(p.get_offsets(), np.column_stack([sub["rec_corrected"], sub["pre_corrected"]]))
    assert 'id="worse-than-random' in (tmp_path / "cpr.svg").read_text()


def test_lambda_conversions_are_exported():
    assert {"beta_from_lambda", "R_from_lambda"} <= set(daskbicl.__all__)
    assert daskbicl.beta_from_lambda(daskbicl.lambda_from_beta(2.0)) == pytest.approx(2.0)
    assert daskbicl.R_from_lambda(daskbicl.lambda_from_R(3.0)) == pytest.approx(3.0)


def test_progress_on_a_distributed_client_goes_to_stderr(client, capsys):
    daskbicl.tradeoff(_truth(), _sweep(1), progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "100% Completed" in err


def test_cli_tradeoff_options(tmp_path):
    r, c = _truth().row_mask.values, _truth().col_mask.values
    other_r, other_c = np.zeros_like(r), np.zeros_like(c)
    other_r[0, 60:100], other_c[0, 20:30] = True, True
    t = daskbicl.save(daskbicl.biclustering(np.vstack([other_r, r]), np.vstack([other_c, c]), bicluster=[3, 5]),
                      tmp_path / "t.zarr")
    s = daskbicl.save(_known_sweep(("precise", "mid", "loose", "tight"), empty=True), tmp_path / "s.zarr")
    base = [sys.executable, "-m", "daskbicl", "tradeoff", t, s, "--name", "alg", "--truth-bicluster", "5",
            "--workers", "1", "--no-progress"]
    proc = subprocess.run(base, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "sweep 'alg' has 1 empty bicluster(s)" in proc.stderr and "--drop-empty" in proc.stderr
    figs = {k: tmp_path / f"{k}.svg" for k in ("plot", "pr", "cpr")}
    proc = subprocess.run(
        base + ["--drop-empty", "--index", "fmeasure", "--index", "jaccard", "--rec-min", "0.4", "--json",
                "--plot", figs["plot"], "--pr-plot", figs["pr"], "--corrected-pr-plot", figs["cpr"]],
        capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert list(out["indices"]) == ["fmeasure", "jaccard"]
    for idx, summary in out["indices"].items():
        want = daskbicl.tradeoff(t, s, names=["alg"], truth_bicluster=5, drop_empty=True, index=idx, rec_min=0.4)
        assert summary["algorithms"]["alg"]["auc"] == pytest.approx(want.optimal["alg"].auc)
        assert summary["algorithms"]["alg"]["excluded"] == ["precise"]
        assert summary["dropped_empty"] == {"alg": ["hollow"]}
        assert summary["constraints"] == {"pre_min": None, "rec_min": 0.4}
    svg = figs["plot"].read_text()
    assert svg.count('id="optimal') == 2  # one panel per index
    assert 'id="results' in figs["pr"].read_text() and 'id="unreachable' in figs["pr"].read_text()
    assert 'id="worse-than-random' in figs["cpr"].read_text()
    proc = subprocess.run(base[:-3] + ["--plot", tmp_path / "x.jpeg"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 2 and "use a .png, .svg or .pdf suffix" in proc.stderr
