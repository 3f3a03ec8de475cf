"""Micro-object measures end to end: signature pass + registry + score,
against the exact pair-by-pair oracle, on numpy, dask and a real cluster."""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl
from daskbicl.engine.blocks import as_biclustering

from ..support import oracles_micro as OM
from ..support.strategies import biclustering_pair, chunks_for, coclustering_pair

MICRO = [n for n, m in daskbicl.MEASURES.items() if m.family == "micro"]


def _ds(m):
    return daskbicl.biclustering(m[0], m[1])


def _expected(truth, pred):
    args = (truth[0], truth[1], pred[0], pred[1])
    p, r, f = OM.mocice_bcubed(*args)
    return {
        "mocice_bcubed": (float(p), float(r), float(f)),
        "micro_ce": float(OM.micro_ce(*args)),
        "micro_rnia": float(OM.rnia(*args)),
        "e4sc": float(OM.e4sc(*args)),
    }


def _check(got, expected):
    for k, v in expected.items():
        if isinstance(v, tuple):
            assert tuple(got[k]) == pytest.approx(v, abs=1e-12), k
        else:
            assert got[k] == pytest.approx(v, abs=1e-12), k


@given(biclustering_pair(max_rows=6, max_cols=5, max_k=3))
@settings(max_examples=40)
def test_score_matches_exact_oracle(pair):
    truth, pred, _ = pair
    _check(daskbicl.score(_ds(truth), _ds(pred), measures=MICRO), _expected(truth, pred))


@given(biclustering_pair(max_rows=16, max_cols=12, max_k=4), st.data())
@settings(max_examples=30)
def test_chunking(pair, data):
    truth, pred, (n_rows, n_cols) = pair
    expected = daskbicl.score(_ds(truth), _ds(pred), measures=MICRO)

    def chunked(m):
        return (
            da.from_array(m[0], chunks=(-1, data.draw(chunks_for(n_rows)))),
            da.from_array(m[1], chunks=(-1, data.draw(chunks_for(n_cols)))),
        )

    got = daskbicl.score(_ds(chunked(truth)), _ds(chunked(pred)), measures=MICRO)
    _check(got, {k: tuple(v) if isinstance(v, tuple) else v for k, v in expected.items()})


@given(coclustering_pair(max_rows=6, max_cols=5, huge=False))
@settings(max_examples=25)
def test_coclusterings_as_blocks(pair):
    truth, pred = pair
    t = as_biclustering(daskbicl.as_dataset(truth))
    p = as_biclustering(daskbicl.as_dataset(pred))
    expected = _expected((t.row_mask.values, t.col_mask.values), (p.row_mask.values, p.col_mask.values))
    _check(daskbicl.score(truth, pred, measures=MICRO), expected)


def test_default_selection_for_biclusterings_includes_micro():
    t = _ds(([[1, 1, 0]], [[1, 0]]))
    s = daskbicl.score(t, t)
    assert set(MICRO) <= set(s)
    assert s["mocice_bcubed"].f1 == 1.0 and s["micro_ce"] == 0.0 and s["e4sc"] == 1.0


def test_distributed_blocks_equal_local(client):
    rng = np.random.default_rng(2)
    truth = (rng.random((5, 2000)) < 0.3, rng.random((5, 300)) < 0.3)
    pred = (rng.random((6, 2000)) < 0.3, rng.random((6, 300)) < 0.3)
    t = _ds((da.from_array(truth[0], chunks=(-1, 300)), da.from_array(truth[1], chunks=(-1, 70))))
    on_cluster = daskbicl.score(t, _ds(pred), measures=MICRO)
    with dask.config.set(scheduler="sync", **{"daskbicl.micro_tasks": 1}):
        local = daskbicl.score(_ds(truth), _ds(pred), measures=MICRO)
    _check(on_cluster, {k: tuple(v) if hasattr(v, "_asdict") else v for k, v in local.items()})


def test_both_workers_walk_part_of_the_family(client):
    """The family walk is split into tasks that run on both worker processes of the cluster.

    Read from distributed's own task stream (which worker ran which task
    key), not mocked; the result equals the single-process one.
    """
    from distributed import get_task_stream

    rng = np.random.default_rng(8)
    truth = (rng.random((12, 3000)) < 0.2, rng.random((12, 3000)) < 0.2)
    pred = tuple(m & (rng.random(m.shape) < 0.9) for m in truth)
    with get_task_stream(client) as ts:
        on_cluster = daskbicl.score(_ds(truth), _ds(pred), measures=MICRO)
    walkers = {}
    for rec in ts.data:
        name = str(rec["key"][0] if isinstance(rec["key"], tuple) else rec["key"]).split("-", 1)[0]
        walkers.setdefault(name, set()).add(rec["worker"])
    assert len(walkers.get("_task", ())) == 2, walkers
    assert len(client.scheduler_info()["workers"]) == 2
    with dask.config.set(scheduler="sync"):
        local = daskbicl.score(_ds(truth), _ds(pred), measures=MICRO)
    _check(on_cluster, {k: tuple(v) if hasattr(v, "_asdict") else v for k, v in local.items()})


def test_cli_json_record_fields(tmp_path):
    import json
    import subprocess
    import sys

    t = daskbicl.save(_ds(([[1, 1, 0, 0]], [[1, 1]])), tmp_path / "t.zarr")
    p = daskbicl.save(_ds(([[0, 1, 1, 1]], [[1, 1]])), tmp_path / "p.zarr")
    proc = subprocess.run(
        [sys.executable, "-m", "daskbicl", "score", t, p, "--json", "--measure", "mocice_bcubed",
         "--measure", "jaccard", "--workers", "1"],
        capture_output=True, text=True, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # B = 4 cells, X = 6 cells, 2 shared: J(B, X) = 2/8; only the 2x2 shared
    # pairs score, each 1/4: precision = 4·(1/4)/36, recall = 4·(1/4)/16.
    assert out["mocice_bcubed"] == pytest.approx({"precision": 1 / 36, "recall": 1 / 16, "f1": 1 / 26})
    assert out["jaccard"] == pytest.approx(1 / 4)


# --------------------------------------------------------------------------- only the work asked for

def _heavy(n=600, k=40, density=0.8, seed=0):
    """The reviewers' case: heavy overlap, 360000 cell classes (MOCICE-BCubed infeasible)."""
    rng = np.random.default_rng(seed)
    return tuple(_ds((rng.random((k, n)) < density, rng.random((k, n)) < density)) for _ in range(2))


def _task_names(graph) -> set[str]:
    return {str(key[0] if isinstance(key, tuple) else key).split("-", 1)[0] for key in graph.__dask_graph__()}


@pytest.mark.parametrize(
    "name, built, not_built",
    [
        ("e4sc", {"bicluster_overlap"}, {"_plan", "_task", "_finish", "_union_tables", "jaccard_table"}),
        ("micro_rnia", {"_plan_auto", "_task", "_finish", "sampler_for"},
         {"bicluster_overlap", "_union_tables", "jaccard_table"}),  # CE and RNIA sample where exact is too dear
        ("micro_ce", {"bicluster_overlap", "_plan_auto", "_task", "_finish"}, {"_union_tables", "jaccard_table"}),
        ("mocice_bcubed", {"_plan_auto", "_task", "_finish", "_union_tables", "jaccard_table", "sampler_for"}, set()),
    ],
)
def test_each_measure_builds_only_what_it_reads(name, built, not_built):
    from daskbicl.measures import ScorePlan

    t = _ds(([[1, 1, 0]], [[1, 0]]))
    graphs = ScorePlan.build(t, t, [name]).graphs()
    (graph,) = graphs.values()
    names = _task_names(graph)
    assert built <= names and not (not_built & names), names


def test_heavy_overlap_does_not_take_down_the_other_measures():
    """Every cell in most biclusters: CE and RNIA count pairs of signatures, MOCICE-BCubed is refused at the
    plan (its walk's lower bound is beyond the trial, its bound far beyond the limit)."""
    from daskbicl.kernels.micro.memberships import signature_counts
    from daskbicl.kernels.micro.micro_scores import MicroTables, e4sc, micro_ce, rnia

    truth, pred = _heavy()
    # omega and csi on cells count pairs of cell classes: refused by the work limit here too (test_field_bicluster.py)
    others = [n for n in daskbicl.MEASURES
              if daskbicl.MEASURES[n].family != "partition" and n not in ("mocice_bcubed", "omega", "csi")]
    got = daskbicl.score(truth, pred, measures=others)
    assert set(got) == set(others)  # the 12 bicluster measures too
    t = MicroTables(signature_counts(truth.row_mask.values, pred.row_mask.values),
                    signature_counts(truth.col_mask.values, pred.col_mask.values))
    assert got["micro_rnia"] == rnia(t) and got["micro_ce"] == micro_ce(t) and got["e4sc"] == e4sc(t)
    assert 0 <= got["micro_ce"] <= 1
    with pytest.raises(daskbicl.TooLargeError) as info:
        daskbicl.mocice_bcubed(truth, pred, method="exact")
    assert "dask.config.set({'daskbicl.max_work'" in str(info.value)
    assert "MOCICE-BCubed's exact walk needs at least ~" in str(info.value)
    assert "more than its 4e+08 of a trial could spend, so it is not tried" in str(info.value)


def test_max_work_is_a_dask_config_key():
    t = _ds(([[1, 1, 0, 1], [0, 1, 1, 1]], [[1, 1, 0], [0, 1, 1]]))
    p = _ds(([[1, 0, 1, 1], [1, 1, 1, 0]], [[1, 0, 1], [1, 1, 1]]))
    expected = daskbicl.mocice_bcubed(t, p)
    with dask.config.set({"daskbicl.max_work": 1.0}):
        with pytest.raises(daskbicl.TooLargeError, match="max_work=1 "):
            daskbicl.mocice_bcubed(t, p, method="exact")
    with dask.config.set({"daskbicl.max_work": 1e12}):
        assert daskbicl.mocice_bcubed(t, p) == expected
    with dask.config.set({"daskbicl.max_work": "lots"}):
        with pytest.raises(daskbicl.InputError, match="daskbicl.max_work"):
            daskbicl.micro_rnia(t, p)


def test_the_client_gets_only_the_parts_asked_for():
    import pickle

    from daskbicl.measures import ScorePlan

    truth, pred = _heavy(n=300, k=30)
    for names, present in ((["e4sc"], {"overlap"}), (["micro_rnia"], {"coverage"}),
                           (["micro_ce", "e4sc"], {"overlap", "coverage"})):
        graphs = ScorePlan.build(truth, pred, names).graphs()
        (result,) = dask.compute(*graphs.values())
        assert {f for f, v in result._asdict().items() if v is not None} == present
        assert len(pickle.dumps(result)) < 50_000  # K x L tables and a few counts, no cell classes


def test_requests_with_different_measures_never_share_an_incomplete_graph():
    """A batch pair scored by two manifest entries: one graph per distinct set of parts."""
    from daskbicl.measures import ScorePlan

    t = _ds(([[1, 1, 0]], [[1, 0]]))
    p = _ds(([[1, 0, 0]], [[1, 1]]))
    merged, plans = {}, []
    for names in (["micro_rnia"], ["mocice_bcubed", "e4sc"]):
        plan = ScorePlan.build(t, p, names)
        for key, graph in plan.graphs().items():
            merged.setdefault(key, graph)  # one graph per distinct provider key
        plans.append(plan)
    assert len(merged) == 2
    tables = dict(zip(merged, dask.compute(*merged.values())))
    for plan in plans:
        got = plan.finalize(tables)
        want = daskbicl.score(t, p, measures=[m.name for m in plan.measures])
        assert got == want


# --------------------------------------------------------------------------- CE/RNIA union, booleans

def test_micro_ce_default_is_the_published_multiset_union():
    t = _ds(([[1, 1], [0, 1]], [[1], [1]]))  # the second bicluster is half of the first
    assert daskbicl.micro_ce(t, t) == 0.0 and daskbicl.micro_rnia(t, t) == 0.0
    assert daskbicl.micro_ce(t, t, multiset=False) == -0.5
    s = daskbicl.score(t, t)
    assert s["micro_ce"] == 0.0


@pytest.mark.parametrize("value, as_set", [(False, True), (True, False), ("false", True), ("False", True),
                                           ("0", True), (0, True), (0.0, True), ("true", False), (1, False)])
def test_multiset_parses_as_a_boolean(value, as_set):
    t = _ds(([[1, 1], [0, 1]], [[1], [1]]))
    assert daskbicl.micro_ce(t, t, multiset=value) == (-0.5 if as_set else 0.0)


@pytest.mark.parametrize("value", ["maybe", 2, 0.5, None])
def test_multiset_rejects_non_booleans(value):
    t = _ds(([[1, 1], [0, 1]], [[1], [1]]))
    with pytest.raises(daskbicl.MeasureError, match="multiset must be a boolean"):
        daskbicl.micro_ce(t, t, multiset=value)


def test_cli_multiset_words_select_the_union(tmp_path):
    """``--param multiset=false`` (a word, not only 0/1) reaches the measure."""
    import json
    import subprocess
    import sys

    masks = ([[1, 1, 1, 0], [0, 1, 1, 1]], [[1, 1, 1], [1, 1, 1]])  # overlapping biclusters
    t = daskbicl.save(_ds(masks), tmp_path / "t.zarr")
    p = daskbicl.save(_ds(([[1, 1, 0, 0], [0, 1, 1, 1]], [[1, 1, 1], [0, 1, 1]])), tmp_path / "p.zarr")
    for word, multiset in (("false", False), ("true", True), ("no", False)):
        proc = subprocess.run(
            [sys.executable, "-m", "daskbicl", "score", t, p, "--measure", "micro_ce", "--json",
             "--workers", "1", "--param", f"multiset={word}"], capture_output=True, text=True, timeout=180,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["micro_ce"] == daskbicl.micro_ce(t, p, multiset=multiset)
    assert daskbicl.micro_ce(t, p, multiset=False) != daskbicl.micro_ce(t, p, multiset=True)


def test_generated_docs_state_the_conventions():
    ce, rn, e4, bc = (getattr(daskbicl, n).__doc__ for n in ("micro_ce", "micro_rnia", "e4sc", "mocice_bcubed"))
    assert "multiset : bool, default True" in ce and "In [0.0, 1.0]" in ce
    assert "multiset : bool, default True" in rn
    for doc in (ce, rn, e4, bc):
        assert "InputError" in doc and "cover" in doc
    assert "reported as 0" in bc and "contributes F1 = 0" in e4
    assert "daskbicl.micro_budget" in bc and "daskbicl.max_work" in bc


# --------------------------------------------------------------------------- degenerate inputs

def test_nothing_covered_is_an_input_error():
    empty = _ds(([[0, 0]], [[1, 1]]))  # a bicluster with no row
    for name in MICRO:
        with pytest.raises(daskbicl.InputError, match="truth and pred cover no cell"):
            daskbicl.score(empty, empty, measures=[name])


def test_e4sc_counts_an_empty_bicluster():
    t = _ds(([[1, 1, 0]], [[1, 1]]))
    p = _ds(([[1, 1, 0], [0, 0, 1]], [[1, 1], [0, 0]]))
    assert daskbicl.e4sc(t, p) == pytest.approx(2 / 3, rel=1e-15)


# --------------------------------------------------------------------------- co-clusterings

def test_coclusterings_skip_masks(monkeypatch):
    import daskbicl.engine.micro_pass as ES

    rng = np.random.default_rng(4)
    truth = (rng.integers(0, 6, 300), rng.integers(0, 5, 200))
    pred = (rng.integers(0, 4, 300), rng.integers(0, 7, 200))
    t = as_biclustering(daskbicl.as_dataset(truth))
    p = as_biclustering(daskbicl.as_dataset(pred))
    via_masks = daskbicl.score(t, p, measures=MICRO)

    def no_masks(ds):
        raise AssertionError("two co-clusterings must not be expanded into block masks")

    monkeypatch.setattr(ES, "as_biclustering", no_masks)
    direct = daskbicl.score(truth, pred, measures=MICRO)
    _check(direct, {k: tuple(v) if hasattr(v, "_asdict") else v for k, v in via_masks.items()})
    chunked = tuple(da.from_array(x, chunks=37) for x in truth)
    _check(daskbicl.score(chunked, pred, measures=MICRO), {k: tuple(v) if hasattr(v, "_asdict") else v
                                                           for k, v in via_masks.items()})


def test_many_coclusters_are_cheap():
    """40 x 40 clusters (1600 blocks a side) ran out of memory as block masks."""

    rng = np.random.default_rng(5)
    truth = (rng.integers(0, 40, 20_000), rng.integers(0, 40, 20_000))
    pred = (rng.integers(0, 40, 20_000), rng.integers(0, 40, 20_000))
    s = daskbicl.score(truth, pred, measures=["mocice_bcubed", "micro_rnia", "e4sc"])
    assert s["micro_rnia"] == 0.0 and 0 < s["mocice_bcubed"].f1 < 1 and 0 < s["e4sc"] < 1


def test_cli_follows_the_max_work_advice(tmp_path):
    """The TooLargeError names an environment variable the CLI honours."""
    import os
    import subprocess
    import sys

    t = daskbicl.save(_ds(([[1, 1, 0, 1], [0, 1, 1, 1]], [[1, 1, 0], [0, 1, 1]])), tmp_path / "t.zarr")
    p = daskbicl.save(_ds(([[1, 0, 1, 1], [1, 1, 1, 0]], [[1, 0, 1], [1, 1, 1]])), tmp_path / "p.zarr")
    cmd = [sys.executable, "-m", "daskbicl", "score", t, p, "--json", "--measure", "mocice_bcubed", "--workers", "1",
           "--param", "method=exact"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "DASK_DASKBICL__MAX_WORK": "1"})
    assert proc.returncode == 2 and "DASK_DASKBICL__MAX_WORK=" in proc.stderr, proc.stderr


# --------------------------------------------------------------------------- first compile notice


def test_numba_cache_is_found_where_numba_writes_it(tmp_path, monkeypatch):
    from daskbicl.kernels import compiled

    monkeypatch.setattr(compiled, "_cache_folders", lambda: [tmp_path / "missing", tmp_path])
    assert not compiled.cached()
    (tmp_path / "deep" / "path").mkdir(parents=True)
    (tmp_path / "deep" / "path" / "family_walk.enumerate_family-140.py311.nbi").write_bytes(b"")
    assert compiled.cached()
    monkeypatch.undo()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba-here"))
    assert tmp_path / "numba-here" in compiled._cache_folders()
