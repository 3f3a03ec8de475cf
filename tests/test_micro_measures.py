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
from daskbicl.io.convert import as_biclustering

from . import oracles_micro as OM
from .strategies import biclustering_pair, chunks_for, coclustering_pair

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
    with dask.config.set(scheduler="sync", **{"daskbicl.bcubed_blocks": 1}):
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
