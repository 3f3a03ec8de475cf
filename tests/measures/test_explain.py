"""``daskbicl.explain``: every table it returns against a brute-force count, through every door."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

import daskbicl
from daskbicl.measures.explain_report import cluster_tables, to_csv, to_json, to_markdown

# --------------------------------------------------------------------------- oracles


def _brute_axis(truth, pred, share):
    """Counts, best matching total, takes, split and merge counts of one axis, from the label lists."""
    t_labels, p_labels = sorted(set(truth)), sorted(set(pred))
    count = Counter(zip(truth, pred))
    table = np.array([[count[(a, b)] for b in p_labels] for a in t_labels])
    size = table.sum(axis=1)
    k = max(len(t_labels), len(p_labels))
    padded = np.zeros((k, k), dtype=np.int64)
    padded[: table.shape[0], : table.shape[1]] = table
    best = max(sum(padded[i, s[i]] for i in range(k)) for s in itertools.permutations(range(k)))
    takes = table > share * size[:, None]
    return {"labels": (t_labels, p_labels), "table": table, "best": best, "takes": takes,
            "split": takes.sum(axis=1), "merges": takes.sum(axis=0)}


def _check_axis(ds, a, truth, pred, share=0.1):
    brute = _brute_axis(list(truth), list(pred), share)
    assert ds[f"{a}_truth"].values.tolist() == brute["labels"][0]
    assert ds[f"{a}_pred"].values.tolist() == brute["labels"][1]
    np.testing.assert_array_equal(ds[f"{a}_count"].values, brute["table"])
    np.testing.assert_array_equal(ds[f"{a}_truth_size"].values, brute["table"].sum(axis=1))
    np.testing.assert_array_equal(ds[f"{a}_pred_size"].values, brute["table"].sum(axis=0))
    np.testing.assert_array_equal(ds[f"{a}_takes"].values, brute["takes"])
    np.testing.assert_array_equal(ds[f"{a}_split_into"].values, brute["split"])
    np.testing.assert_array_equal(ds[f"{a}_merges"].values, brute["merges"])
    # the matching: one-to-one, on the table's own cells, as good as the best permutation
    matched = ds[f"{a}_matched"].values
    match = ds[f"{a}_match"].values[matched].tolist()
    assert len(set(match)) == len(match)
    t_pos = {v: i for i, v in enumerate(brute["labels"][0])}
    p_pos = {v: i for i, v in enumerate(brute["labels"][1])}
    rows = [t_pos[v] for v in ds[f"{a}_truth"].values[matched].tolist()]
    cols = [p_pos[v] for v in match]
    np.testing.assert_array_equal(ds[f"{a}_shared"].values[matched], brute["table"][rows, cols])
    assert int(ds[f"{a}_shared"].sum()) == brute["best"]
    assert (ds[f"{a}_shared"].values[~matched] == 0).all()
    size = brute["table"].sum(axis=1)
    np.testing.assert_allclose(ds[f"{a}_recall"].values, ds[f"{a}_shared"].values / size)
    np.testing.assert_allclose(ds[f"{a}_precision"].values[matched],
                               brute["table"][rows, cols] / brute["table"].sum(axis=0)[cols])
    assert np.isnan(ds[f"{a}_precision"].values[~matched]).all()
    # the pred side says the same matching
    for t, p in zip(ds[f"{a}_truth"].values[matched].tolist(), match):
        assert ds[f"{a}_pred_match"].sel({f"{a}_pred": p}).item() == t
    assert int(ds[f"{a}_items"]) == len(truth)


def _random_pair(rng, n_rows, n_cols, strings=False):
    rows = [rng.integers(0, 4, n_rows), rng.integers(0, 4, n_rows)]
    cols = [rng.integers(0, 3, n_cols), rng.integers(0, 5, n_cols)]
    if strings:
        rows[1] = np.array([f"p{v}" for v in rows[1]], dtype=object)
    return (rows[0], cols[0]), (rows[1], cols[1])


# --------------------------------------------------------------------------- co-clusterings


@pytest.mark.parametrize("seed", range(12))
def test_coclustering_tables_equal_a_brute_force_count(seed):
    rng = np.random.default_rng(seed)
    truth, pred = _random_pair(rng, int(rng.integers(1, 30)), int(rng.integers(1, 12)), strings=seed % 3 == 0)
    share = [0.1, 0.3, 0.5][seed % 3]
    ds = daskbicl.explain(truth, pred, share=share)
    _check_axis(ds, "row", truth[0], pred[0], share)
    _check_axis(ds, "col", truth[1], pred[1], share)
    assert ds.attrs["share"] == share


@pytest.mark.parametrize("seed", range(8))
def test_misplaced_shares_sum_to_the_ce_gap(seed):
    rng = np.random.default_rng(100 + seed)
    truth, pred = _random_pair(rng, int(rng.integers(2, 40)), int(rng.integers(2, 15)))
    ds = daskbicl.explain(truth, pred, measures=["ce", "accuracy_rows", "accuracy_cols"])
    d_r, d_c = float(ds.row_misplaced.sum()), float(ds.col_misplaced.sum())
    assert d_r == pytest.approx(1 - float(ds.score.sel(measure="accuracy_rows")), abs=1e-12)
    assert d_c == pytest.approx(1 - float(ds.score.sel(measure="accuracy_cols")), abs=1e-12)
    assert d_r + d_c - d_r * d_c == pytest.approx(float(ds.score.sel(measure="ce")), abs=1e-12)


def test_the_scores_are_those_of_score():
    rng = np.random.default_rng(7)
    truth, pred = _random_pair(rng, 50, 20)
    ds = daskbicl.explain(truth, pred)
    expected = daskbicl.score(truth, pred)
    assert ds.measure.values.tolist() == list(expected)
    assert ds.score.values.tolist() == [float(v) for v in expected.values()]


def test_split_and_merge_of_the_worked_example():
    truth = ([0] * 6 + [1] * 3 + [2] * 3, [0, 0, 1, 1])
    pred = ([5] * 3 + [6] * 3 + [7] * 6, [0, 0, 1, 1])
    ds = daskbicl.explain(truth, pred)
    assert ds.row_split_into.sel(row_truth=0).item() == 2
    assert ds.row_merges.sel(row_pred=7).item() == 2
    assert ds.row_takes.sel(row_pred=7).values.tolist() == [False, True, True]
    assert ds.col_recall.values.tolist() == [1.0, 1.0]


def test_label_permutation_moves_the_explanation_with_the_labels():
    rng = np.random.default_rng(3)
    truth, pred = _random_pair(rng, 40, 15)
    ds = daskbicl.explain(truth, pred, measures="cari")
    rename = {0: 9, 1: 2, 2: 0, 3: 5}
    renamed = (np.array([rename[v] for v in pred[0]]), pred[1])
    other = daskbicl.explain(truth, renamed, measures="cari")
    back = {v: k for k, v in rename.items()}
    for name in ("row_count", "row_takes"):
        moved = other[name].assign_coords(row_pred=[back[v] for v in other.row_pred.values.tolist()])
        np.testing.assert_array_equal(moved.sortby("row_pred").values, ds[name].values)
    assert other.row_split_into.values.tolist() == ds.row_split_into.values.tolist()
    assert int(other.row_shared.sum()) == int(ds.row_shared.sum())
    assert other.score.values.tolist() == ds.score.values.tolist()


def test_coverage_counts_the_unassigned_items_under_every_policy():
    truth = ([0, 0, 1, 1, -1, -1, 2], [0, 1])
    pred = ([3, 3, 4, 4, 4, -1, 3], [0, 1])
    for policy in ("cluster", "singleton"):
        ds = daskbicl.explain(truth, pred, unassigned=policy, measures="cari")
        assert int(ds.row_unassigned_truth) == 2 and int(ds.row_unassigned_pred) == 1, policy
        assert int(ds.col_unassigned_truth) == 0 and ds.attrs["unassigned"] == policy
        assert not ds.row_takes.sel(row_pred=-1).any()  # the unassigned items merge nothing
    with pytest.raises(daskbicl.LabelError, match="unassigned"):
        daskbicl.explain(truth, pred)


def test_explain_from_counted_tables_reads_nothing_again():
    rng = np.random.default_rng(11)
    truth, pred = _random_pair(rng, 30, 10)
    direct = daskbicl.explain(truth, pred, measures=["cari", "nce"])
    counted = daskbicl.explain(daskbicl.contingency(truth, pred), measures=["cari", "nce"])
    assert direct.drop_attrs().identical(counted.drop_attrs())


def test_lazy_explain_is_one_graph():
    import dask

    rng = np.random.default_rng(12)
    truth, pred = _random_pair(rng, 30, 10)
    lazy = daskbicl.explain(truth, pred, measures="cari", compute=False)
    assert dask.is_dask_collection(lazy)
    assert dask.compute(lazy)[0].identical(daskbicl.explain(truth, pred, measures="cari"))


def test_the_accessor_is_the_function():
    rng = np.random.default_rng(13)
    truth, pred = _random_pair(rng, 30, 10)
    t, p = daskbicl.partition(*truth), daskbicl.partition(*pred)
    assert t.bicl.explain(p, share=0.3).identical(daskbicl.explain(t, p, share=0.3))


@pytest.mark.parametrize("value", [0, 1, -0.5, "many"])
def test_a_bad_share_is_refused_before_any_work(value):
    with pytest.raises(daskbicl.MeasureError, match="share"):
        daskbicl.explain("/nonexistent/truth.zarr", "/nonexistent/pred.zarr", share=value)


def test_on_a_cluster_from_stores(client, tmp_path):
    rng = np.random.default_rng(21)
    truth, pred = _random_pair(rng, 500, 60)
    daskbicl.save(daskbicl.partition(*truth), tmp_path / "t.zarr", chunk=64)
    daskbicl.save(daskbicl.partition(*pred), tmp_path / "p.zarr", chunk=64)
    ds = daskbicl.explain(str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"))
    _check_axis(ds, "row", truth[0], pred[0])
    _check_axis(ds, "col", truth[1], pred[1])
    assert ds.score.values.tolist() == list(daskbicl.score(truth, pred).values())


# --------------------------------------------------------------------------- biclusterings


def _masks(rng, k, n_rows, n_cols):
    rows = rng.random((k, n_rows)) < 0.4
    cols = rng.random((k, n_cols)) < 0.5
    rows[:, 0] = cols[:, 0] = True  # no empty bicluster
    return rows, cols


@pytest.mark.parametrize("seed", range(8))
def test_bicluster_tables_equal_a_brute_force_count(seed):
    rng = np.random.default_rng(200 + seed)
    n_rows, n_cols = int(rng.integers(2, 12)), int(rng.integers(2, 9))
    tr, tc = _masks(rng, int(rng.integers(1, 4)), n_rows, n_cols)
    pr, pc = _masks(rng, int(rng.integers(1, 5)), n_rows, n_cols)
    threshold = [0.5, 0.2, 1.0][seed % 3]
    ds = daskbicl.explain(daskbicl.biclustering(tr, tc), daskbicl.biclustering(pr, pc), measures="jaccard",
                          threshold=threshold)
    cells = lambda r, c: {(i, j) for i in np.flatnonzero(r) for j in np.flatnonzero(c)}  # noqa: E731
    truth = [cells(r, c) for r, c in zip(tr, tc)]
    pred = [cells(r, c) for r, c in zip(pr, pc)]
    shared = np.array([[len(b & x) for x in pred] for b in truth])
    jac = np.array([[len(b & x) / len(b | x) for x in pred] for b in truth])
    np.testing.assert_array_equal(ds.shared_cells.values, shared)
    np.testing.assert_allclose(ds.jaccard.values, jac)
    np.testing.assert_allclose(ds.precision.values, shared / np.array([len(x) for x in pred])[None, :])
    np.testing.assert_allclose(ds.recall.values, shared / np.array([len(b) for b in truth])[:, None])
    np.testing.assert_allclose(ds.truth_best_jaccard.values, jac.max(axis=1))
    np.testing.assert_allclose(ds.pred_best_jaccard.values, jac.max(axis=0))
    assert ds.recovered.values.tolist() == (jac.max(axis=1) >= threshold).tolist()
    assert ds.spurious.values.tolist() == (jac.max(axis=0) < threshold).tolist()
    best = ds.truth_best.values
    np.testing.assert_allclose(jac[np.arange(len(truth)), best], jac.max(axis=1))
    assert float(ds.score.sel(measure="jaccard")) == pytest.approx(jac.max(axis=1).mean())


def test_an_empty_pred_is_explained_as_an_error():
    truth = daskbicl.biclustering([[1, 1, 0]], [[1, 0]])
    pred = daskbicl.biclustering(np.zeros((0, 3), bool), np.zeros((0, 2), bool))
    with pytest.raises(daskbicl.InputError, match="no biclusters"):
        daskbicl.explain(truth, pred, measures="jaccard")


# --------------------------------------------------------------------------- reports and the command line


def test_reports_hold_the_tables():
    truth = ([0] * 6 + [1] * 3 + [2] * 3, [0, 0, 1, 1])
    pred = ([5] * 3 + [6] * 3 + [7] * 6, [0, 0, 1, 1])
    ds = daskbicl.explain(truth, pred, measures=["cari", "nce"])
    text = to_markdown(ds)
    assert "| cari |" in text and "* truth 0 (size 6) → 5 (3), 6 (3)" in text
    assert "* pred 7 (size 6) ← 1 (3), 2 (3)" in text
    data = json.loads(to_json(ds))
    assert data["scores"]["cari"] == pytest.approx(float(ds.score.sel(measure="cari")))
    assert [r["truth"] for r in data["tables"]["row_truth"]] == [0, 1, 2]
    lines = to_csv(ds).splitlines()
    assert lines[0].startswith("table,truth,size,match") and "row_truth,0,6,5,3," in lines[1]
    assert set(cluster_tables(ds)) == {"row_truth", "row_pred", "col_truth", "col_pred"}


def _run(*args):
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          timeout=180)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_command_line_prints_the_same_tables(tmp_path):
    rng = np.random.default_rng(31)
    truth, pred = _random_pair(rng, 60, 12)
    daskbicl.save(daskbicl.partition(*truth), tmp_path / "t.zarr")
    daskbicl.save(daskbicl.partition(*pred), tmp_path / "p.zarr")
    code, out, err = _run("explain", tmp_path / "t.zarr", tmp_path / "p.zarr", "--format", "json", "--share", "0.3",
                          "--plot", tmp_path / "m.png")
    assert code == 0, err
    expected = json.loads(to_json(daskbicl.explain(truth, pred, share=0.3)))
    assert json.loads(out) == expected
    assert (tmp_path / "m.png").stat().st_size > 0
    code, out, err = _run("explain", tmp_path / "t.zarr", tmp_path / "p.zarr")
    assert code == 0 and out.startswith("# daskbicl explain") and "## Rows: 60 items" in out
    code, out, err = _run("explain", tmp_path / "t.zarr", tmp_path / "p.zarr", "--share", "2")
    assert code == 2 and "share" in err and "Traceback" not in err and out == ""


def test_the_benchmark_runs_quick():
    """benchmarks/explain.py --quick: explain beside score and the bootstrap's cost (the script cannot rot)."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "explain.py"), "--quick"], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(root)))
    assert proc.returncode == 0, proc.stderr
    assert "explain / score" in proc.stdout and "per replicate (ce, nce)" in proc.stdout


@pytest.mark.parametrize("kind", ["partition", "biclustering"])
def test_explain_runs_the_passes_of_score_and_nothing_more(kind, tmp_path):
    """The explanation reads the tables score counts: its graph is score's graph plus one assembling task."""
    rng = np.random.default_rng(41)
    if kind == "partition":
        truth, pred = (daskbicl.partition(*side) for side in _random_pair(rng, 300, 40))
        measures = ["cari", "nce"]
    else:
        truth, pred = (daskbicl.biclustering(*_masks(rng, 3, 300, 40)) for _ in range(2))
        measures = ["jaccard", "fmeasure"]
    for name, ds in (("t", truth), ("p", pred)):
        daskbicl.save(ds, tmp_path / f"{name}.zarr", chunk=64)
    t, p = str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr")
    scored = daskbicl.score(t, p, measures=measures, compute=False)
    explained = daskbicl.explain(t, p, measures=measures, compute=False)
    assert len(dict(explained.__dask_graph__())) == len(dict(scored.__dask_graph__()))
    assert explained.compute().score.values.tolist() == list(scored.compute().values())


def test_the_command_line_explains_biclusterings(tmp_path):
    rng = np.random.default_rng(51)
    truth, pred = daskbicl.biclustering(*_masks(rng, 3, 30, 12)), daskbicl.biclustering(*_masks(rng, 4, 30, 12))
    daskbicl.save(truth, tmp_path / "t.zarr")
    daskbicl.save(pred, tmp_path / "p.zarr")
    code, out, err = _run("explain", tmp_path / "t.zarr", tmp_path / "p.zarr", "--measure", "jaccard", "--format", "csv",
                          "--threshold", "0.3", "--plot", tmp_path / "b.png")
    assert code == 0, err
    expected = to_csv(daskbicl.explain(truth, pred, measures="jaccard", threshold=0.3))
    assert out == expected and out.startswith("table,truth,cells,best_pred,jaccard,recovered")
    assert (tmp_path / "b.png").stat().st_size > 0
