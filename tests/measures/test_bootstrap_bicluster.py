"""Bootstrap intervals of the bicluster measures: ``score(biclusters..., ci=0.95)``.

The oracle: a replicate is a draw of row and column indices with
replacement; the measure computed on the explicitly resampled data (with
``drop_empty=True``: a bicluster no drawn row or column is in is left out)
must equal the statistic the bootstrap computes from the counted patterns.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import daskbicl
from daskbicl.engine.blocks import as_biclustering
from daskbicl.kernels.bicluster.pattern_resampling import (
    aggregate_replicates,
    overlap_replicates,
    replicate_tables,
)
from daskbicl.kernels.coclustering.resampling import Bootstrapped
from daskbicl.measures import REGISTRY, ScorePlan, run_tables
from daskbicl.measures.bootstrap import (
    bicluster_replicate,
    bicluster_replicate_values,
    bootstrappable,
    resampling_plan,
)

#: Every measure finalized from the bicluster overlap tables.
BICLUSTER = [name for name, m in REGISTRY.items() if m.provider == "bicluster"]
#: The precision–recall aggregates (computed for a batch of replicates at once).
AGGREGATES = [name for name in BICLUSTER if name.split("_")[0] in ("goodness", "fmeasure", "dice", "jaccard")]


def _biclustering(rng, k, n_rows, n_cols, p=0.35):
    return daskbicl.biclustering(rng.random((k, n_rows)) < p, rng.random((k, n_cols)) < p)


def _partition(rng, n_rows, n_cols, h=3, l=2):
    return daskbicl.partition(rng.integers(0, h, n_rows), rng.integers(0, l, n_cols))


def _inputs(kinds: str, seed: int, n_rows=14, n_cols=11):
    rng = np.random.default_rng(seed)
    make = {"b": lambda: _biclustering(rng, int(rng.integers(2, 5)), n_rows, n_cols),
            "p": lambda: _partition(rng, n_rows, n_cols)}
    return make[kinds[0]](), make[kinds[1]]()


def _counted(truth, pred, measures):
    plan = resampling_plan(ScorePlan.build(truth, pred, measures))
    tables = run_tables([plan])[0]
    observed = plan.tables_of(tables, "bicluster")
    return plan, observed, plan.tables_of(tables, "patterns")


def _masks(ds, role):
    b = as_biclustering(ds, role)
    return np.asarray(b.row_mask.values, bool), np.asarray(b.col_mask.values, bool)


def _pattern_of_each_item(patterns, truth_mask, pred_mask):
    """Index of each item's pattern (the last one: in no bicluster), found by comparing incidence vectors."""
    t, p = patterns.truth.toarray().astype(bool), patterns.pred.toarray().astype(bool)
    out = []
    for i in range(truth_mask.shape[1]):
        hit = np.flatnonzero((t == truth_mask[:, i]).all(axis=1) & (p == pred_mask[:, i]).all(axis=1))
        hit = hit[hit < t.shape[0] - 1] if truth_mask[:, i].any() or pred_mask[:, i].any() else [t.shape[0] - 1]
        assert len(hit) == 1, i
        out.append(int(hit[0]))
    return np.array(out)


def _resampled(ds, rows, cols):
    if ds.attrs["daskbicl_kind"] == "partition":
        return daskbicl.partition(ds.row_labels.values[rows], ds.col_labels.values[cols])
    return daskbicl.biclustering(ds.row_mask.values[:, rows], ds.col_mask.values[:, cols],
                                 bicluster=ds["bicluster"].values if "bicluster" in ds.coords else None)


def test_every_bicluster_table_measure_is_bootstrappable():
    assert set(AGGREGATES) < set(BICLUSTER)
    assert all(bootstrappable(REGISTRY[name]) for name in BICLUSTER)
    assert not bootstrappable(REGISTRY["e4sc"]) and not bootstrappable(REGISTRY["omega_rows"])


@pytest.mark.parametrize("kinds", ["bb", "pp", "pb", "bp"])
def test_the_observed_patterns_give_the_observed_tables(kinds):
    """Drawing every pattern as often as it was counted reproduces the overlap tables the pass counts."""
    for seed in range(3):
        truth, pred = _inputs(kinds, seed)
        _, observed, (rows, cols) = _counted(truth, pred, ["dice"])
        again = replicate_tables(rows, cols, rows.counts, cols.counts, (observed.truth_ids, observed.pred_ids),
                                 (kinds[0] == "p", kinds[1] == "p"))
        for a, b in ((again.rows, observed.rows), (again.cols, observed.cols)):
            np.testing.assert_array_equal(a.shared, b.shared)
            np.testing.assert_array_equal(a.truth_sizes, b.truth_sizes)
            np.testing.assert_array_equal(a.pred_sizes, b.pred_sizes)
            assert a.length == b.length
        assert again.truth_ids.tolist() == observed.truth_ids.tolist()
        assert again.pred_ids.tolist() == observed.pred_ids.tolist()


@pytest.mark.parametrize("kinds", ["bb", "pp", "pb", "bp"])
@pytest.mark.parametrize("seed", range(3))
def test_a_replicate_is_the_measure_of_the_explicitly_resampled_data(kinds, seed):
    """Brute force: the same row and column indices, resampled data scored vs. the statistic from the patterns."""
    truth, pred = _inputs(kinds, seed)
    plan, observed, (rows, cols) = _counted(truth, pred, BICLUSTER)
    (tr, tc), (pr, pc) = _masks(plan.truth, "truth"), _masks(plan.pred, "pred")
    row_pattern, col_pattern = _pattern_of_each_item(rows, tr, pr), _pattern_of_each_item(cols, tc, pc)
    rng = np.random.default_rng(100 + seed)
    checked = 0
    for _ in range(6):
        ri, ci = rng.integers(0, tr.shape[1], tr.shape[1]), rng.integers(0, tc.shape[1], tc.shape[1])
        dr = np.bincount(row_pattern[ri], minlength=rows.counts.size)
        dc = np.bincount(col_pattern[ci], minlength=cols.counts.size)
        got = bicluster_replicate(plan, rows, cols, dr, dc, (observed.truth_ids, observed.pred_ids))
        fast = aggregate_replicates(overlap_replicates(rows, dr[None]), overlap_replicates(cols, dc[None]),
                                    tr.shape[1] * tc.shape[1], AGGREGATES)
        again = _resampled(truth, ri, ci), _resampled(pred, ri, ci)
        for name in BICLUSTER:
            try:
                dropping = {"drop_empty": True} if "drop_empty" in REGISTRY[name].params else {}
                want = daskbicl.score(*again, measures=[name], **dropping)[name]
            except daskbicl.InputError as e:  # a side with no bicluster left: undefined on this replicate
                assert "no non-empty bicluster" in str(e)
                assert math.isnan(got[name]) and (name not in fast or math.isnan(fast[name][0])), name
                continue
            assert got[name] == pytest.approx(want, rel=1e-12, abs=1e-12), name
            if name in fast:
                assert fast[name][0] == pytest.approx(want, rel=1e-9, abs=1e-12), name
            checked += 1
    assert checked >= 3 * len(BICLUSTER)


@pytest.mark.parametrize("params", [{}, {"R": 3.0, "beta": 0.5}, {"clip": True, "aggregate": "pred"},
                                    {"aggregate": "both", "beta": 2.0}])
@pytest.mark.parametrize("kinds", ["bb", "pp"])
def test_the_batch_formulas_equal_each_measures_own_finalize(params, kinds):
    truth, pred = _inputs(kinds, 7, n_rows=40, n_cols=30)
    plan, observed, (rows, cols) = _counted(truth, pred, AGGREGATES)
    plan = ScorePlan.build(truth, pred, AGGREGATES, **params)
    plan = resampling_plan(plan)
    ids = (observed.truth_ids, observed.pred_ids)
    fast = bicluster_replicate_values(plan, rows, cols, ids, replicates=90, seed=3)
    slow = bicluster_replicate_values(plan, rows, cols, ids, replicates=90, seed=3, vectorised=False)
    for name in AGGREGATES:
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("kinds", ["bb", "pp", "pb"])
def test_score_gives_seeded_labelled_intervals(kinds):
    truth, pred = _inputs(kinds, 21, n_rows=60, n_cols=40)
    measures = ["dice", "fmeasure_corrected", "jaccard_space", "goodness", "consensus", "prelic_recovery"]
    a = daskbicl.score(truth, pred, measures=measures, ci=0.9, replicates=120)
    b = daskbicl.score(truth, pred, measures=measures, ci=0.9, replicates=120)
    c = daskbicl.score(truth, pred, measures=measures, ci=0.9, replicates=120, seed=4)
    plain = daskbicl.score(truth, pred, measures=measures)
    for name in measures:
        value = a[name]
        assert isinstance(value, Bootstrapped) and value.method == "bootstrap-bc" and value.level == 0.9
        assert float(value) == plain[name] and value.samples == 120
        assert value.low <= value.high and (value.low, value.high) == (b[name].low, b[name].high)
    assert any((a[k].low, a[k].high) != (c[k].low, c[k].high) for k in measures)


def test_biclusters_and_coclusters_together_lazily_and_from_tables():
    import dask

    rng = np.random.default_rng(5)
    truth, pred = _partition(rng, 80, 50), _partition(rng, 80, 50, h=4)
    direct = daskbicl.score(truth, pred, measures=["cari", "dice", "jaccard_corrected"], ci=0.95, replicates=80)
    lazy = dask.compute(daskbicl.score(truth, pred, measures=["cari", "dice", "jaccard_corrected"], ci=0.95,
                                       replicates=80, compute=False))[0]
    counted = daskbicl.score(daskbicl.contingency(truth, pred), measures=["cari", "dice", "jaccard_corrected"],
                             ci=0.95, replicates=80)
    cari_alone = daskbicl.score(truth, pred, measures="cari", ci=0.95, replicates=80)["cari"]
    for name, value in direct.items():
        assert isinstance(value, Bootstrapped)
        assert (value.low, value.high) == (lazy[name].low, lazy[name].high) == (counted[name].low, counted[name].high)
    assert (direct["cari"].low, direct["cari"].high) == (cari_alone.low, cari_alone.high)  # its own draws


def test_a_replicate_leaving_no_bicluster_is_undefined_and_counted():
    truth = daskbicl.biclustering([[1, 0, 0, 0, 0, 0]], [[1, 0, 0, 0, 0]])  # one row, one column
    pred = daskbicl.biclustering([[1, 1, 0, 0, 0, 0]], [[1, 1, 0, 0, 0]])
    out = daskbicl.score(truth, pred, measures=["dice"], ci=0.9, replicates=200)["dice"]
    assert 0.3 < out.undefined < 0.9  # (5/6)^6 x ... of the replicates lose the truth bicluster's row or column
    assert out.low <= float(out) <= out.high


def test_the_same_digits_on_a_cluster(client, tmp_path):
    rng = np.random.default_rng(8)
    truth, pred = _biclustering(rng, 5, 400, 120, 0.2), _biclustering(rng, 6, 400, 120, 0.2)
    daskbicl.save(truth, tmp_path / "t.zarr", chunk=64)
    daskbicl.save(pred, tmp_path / "p.zarr", chunk=64)
    measures = ["dice", "jaccard_corrected", "consensus"]
    there = daskbicl.score(str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"), measures=measures, ci=0.95,
                           replicates=60)
    here = daskbicl.score(truth, pred, measures=measures, ci=0.95, replicates=60)
    assert {k: (float(v), v.low, v.high) for k, v in there.items()} == \
        {k: (float(v), v.low, v.high) for k, v in here.items()}


# --------------------------------------------------------------------------- every door, the same interval

_DOOR_MEASURES = ["cari", "dice", "jaccard_corrected"]


def _door_pair(folder):
    rng = np.random.default_rng(31)
    truth = _partition(rng, 60, 40, h=4, l=3)
    pred = daskbicl.partition(np.where(rng.random(60) < 0.3, rng.integers(0, 4, 60), truth.row_labels.values),
                              np.where(rng.random(40) < 0.3, rng.integers(0, 3, 40), truth.col_labels.values))
    daskbicl.save(truth, folder / "truth.zarr")
    daskbicl.save(pred, folder / "pred-1.zarr")
    return truth, pred


def _manifest(ci: str, measures: list | None = None) -> str:
    """A batch manifest scoring truth.zarr against pred-*.zarr with ``ci = <ci>`` on its line 9."""
    lines = ["", "[truth]", 'sim = "truth.zarr"', "[pred]", 'runs = "pred-*.zarr"', "[[pairs]]", 'truth = "sim"',
             'pred = "runs"', f"ci = {ci}"]
    return "\n".join(lines + ([f"measures = {json.dumps(measures)}"] if measures else [])) + "\n"


def _through_door(door, folder, truth, pred, client) -> dict:
    """measure -> (value, half-width) of a 0.9 interval, 999 replicates, seed 0, through one door."""
    import subprocess
    import sys

    if door == "python":
        out = daskbicl.score(str(folder / "truth.zarr"), str(folder / "pred-1.zarr"), measures=_DOOR_MEASURES, ci=0.9)
    elif door == "accessor":
        out = truth.bicl.score(pred, measures=_DOOR_MEASURES, ci=0.9)
    elif door == "cli":
        proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(folder / "truth.zarr"),
                               str(folder / "pred-1.zarr"), "--ci", "0.9", "--json", "--measures", *_DOOR_MEASURES],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        return {k: (v["value"], max(v["value"] - v["low"], v["high"] - v["value"])) for k, v in got.items()}
    else:
        from daskbicl.batch import ResultsDB, run_batch

        (folder / "m.toml").write_text(_manifest("0.9", _DOOR_MEASURES))
        run_batch(folder / "m.toml", folder / "r.sqlite", client=client)
        with ResultsDB(folder / "r.sqlite", create=False) as db:
            rows = db.scores()
        assert all(r["exact"] == 1 and json.loads(r["params"])["ci"] == 0.9 for r in rows)
        return {r["measure"]: (r["value"], r["half_width"]) for r in rows}
    return {k: (float(v), v.half_width) for k, v in out.items()}


@pytest.mark.parametrize("door", ["python", "accessor", "cli", "manifest"])
def test_every_door_gives_the_same_interval(door, tmp_path, client):
    truth, pred = _door_pair(tmp_path)
    want = daskbicl.score(truth, pred, measures=_DOOR_MEASURES, ci=0.9)
    got = _through_door(door, tmp_path, truth, pred, client)
    assert sorted(got) == sorted(_DOOR_MEASURES)
    for name in _DOOR_MEASURES:
        assert isinstance(want[name], Bootstrapped) and want[name].half_width > 0
        assert got[name] == pytest.approx((float(want[name]), want[name].half_width), rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize("value, word", [("1.5", "ci"), ("true", "ci"), ('"x"', "ci")])
def test_a_bad_manifest_ci_is_refused_with_its_line(value, word, tmp_path):
    from daskbicl.batch.manifest import ManifestError, parse_manifest

    with pytest.raises(ManifestError, match=rf"line 9.*{word}"):
        parse_manifest(_manifest(value), base_dir=str(tmp_path))


def test_the_speed_script_runs_quick():
    """benchmarks/bootstrap_speed.py --quick: the script cannot rot; one row per case, times are numbers."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "bootstrap_speed.py"), "--quick"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(root)))
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if "clusters" in line or "biclusters" in line]
    assert len(rows) == 3 and "12 precision-recall" in rows[-1]
    assert all(float(line.split()[-1]) >= 0 and float(line.split()[-2]) >= 0 for line in rows)
