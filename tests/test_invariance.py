"""Invariance suite driven by the registry (after sklearn's test_common.py).

Every registered measure is checked for label permutation, chunking,
coordinate reordering and numpy vs dask vs distributed; the symmetric ones
for symmetry.  A final test makes sure the lists below cover the registry.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl

from .strategies import biclustering_pair, chunks_for, coclustering_pair

PARTITION = sorted(n for n, m in daskbicl.MEASURES.items() if m.family == "partition")
SYMMETRIC = sorted(n for n, m in daskbicl.MEASURES.items() if m.symmetric)
NOT_SYMMETRIC = sorted(n for n, m in daskbicl.MEASURES.items() if not m.symmetric)


def test_lists_cover_the_registry():
    assert set(SYMMETRIC) | set(NOT_SYMMETRIC) == set(daskbicl.MEASURES)
    assert set(PARTITION) <= set(daskbicl.MEASURES)
    for name, m in daskbicl.MEASURES.items():
        assert callable(getattr(daskbicl, name)), name
        assert hasattr(daskbicl.partition([0], [0]).bicl, name), name
        assert m.bounds[0] <= m.bounds[1]


def _close(a: dict, b: dict, names):
    for n in names:
        assert a[n] == pytest.approx(b[n], abs=1e-12, rel=1e-12), n


@given(coclustering_pair())
def test_symmetry(pair):
    truth, pred = pair
    names = [n for n in SYMMETRIC if n in PARTITION]
    _close(daskbicl.score(truth, pred), daskbicl.score(pred, truth), names)


@given(coclustering_pair(), st.data())
def test_label_permutation(pair, data):
    """Any injective relabeling of any side (including to huge labels) changes nothing."""
    truth, pred = pair
    def relabel(x):
        values = np.unique(x)
        new = data.draw(st.lists(st.integers(0, 2**63 - 1), min_size=len(values), max_size=len(values), unique=True))
        return np.asarray(new, dtype=np.int64)[np.searchsorted(values, x)]
    pred2 = (relabel(pred[0]), relabel(pred[1]))
    truth2 = (relabel(truth[0]), relabel(truth[1]))
    _close(daskbicl.score(truth, pred), daskbicl.score(truth2, pred2), PARTITION)


@given(coclustering_pair(max_rows=30, max_cols=20), st.data())
def test_chunking(pair, data):
    truth, pred = pair
    def chunked(labels_tuple):
        return tuple(da.from_array(x, chunks=(data.draw(chunks_for(len(x))),)) for x in labels_tuple)
    expected = daskbicl.score(truth, pred)
    # truth and pred chunked differently: the engine must align the blocks
    _close(expected, daskbicl.score(chunked(truth), chunked(pred)), PARTITION)


@given(coclustering_pair(max_rows=15, max_cols=12), st.randoms())
def test_coordinate_reordering(pair, rnd):
    """The same gene in another position is the same row."""
    (z, w), (zp, wp) = pair
    rows = [f"g{i}" for i in range(len(z))]
    cols = [f"s{j}" for j in range(len(w))]
    truth = daskbicl.partition(z, w, row=rows, col=cols)
    pr = list(range(len(z)))
    pc = list(range(len(w)))
    rnd.shuffle(pr)
    rnd.shuffle(pc)
    pred = daskbicl.partition(zp[pr], wp[pc], row=[rows[i] for i in pr], col=[cols[j] for j in pc])
    expected = daskbicl.score((z, w), (zp, wp))
    _close(expected, daskbicl.score(truth, pred), PARTITION)
    _close(expected, truth.bicl.score(pred), PARTITION)


def test_numpy_dask_distributed_agree(client):
    rng = np.random.default_rng(11)
    z, zp = rng.integers(0, 7, 5000), rng.integers(0, 5, 5000)
    w, wp = rng.integers(0, 4, 3000) * 2**40, rng.integers(0, 6, 3000)
    from distributed import get_task_stream

    dz = tuple(da.from_array(x, chunks=700) for x in (z, w))
    dp = tuple(da.from_array(x, chunks=1100) for x in (zp, wp))
    with get_task_stream(client) as stream:
        on_cluster = daskbicl.score((z, w), (zp, wp))
        on_cluster_dask = daskbicl.score(dz, dp)
    # the work really ran on the cluster's worker processes
    workers = {t["worker"] for t in stream.data}
    assert len(stream.data) > 10 and workers <= set(client.scheduler_info()["workers"])
    with dask.config.set(scheduler="threads"):
        local = daskbicl.score((z, w), (zp, wp))
    with dask.config.set(scheduler="sync"):
        local_dask = daskbicl.score(dz, dp)
    _close(local, on_cluster, PARTITION)
    _close(local, local_dask, PARTITION)
    _close(local, on_cluster_dask, PARTITION)


# --------------------------------------------------------------------------- every family

NON_PARTITION = sorted(n for n, m in daskbicl.MEASURES.items() if m.family != "partition")


def _flat(value):
    return tuple(value) if hasattr(value, "_asdict") else (value,)


@given(biclustering_pair(max_rows=7, max_cols=6, max_k=3))
def test_symmetry_on_biclusterings(pair):
    truth, pred, _ = pair
    t = daskbicl.biclustering(*truth)
    p = daskbicl.biclustering(*pred)
    names = [n for n in SYMMETRIC if n in NON_PARTITION]
    assert names, "the registry declares symmetric bicluster/micro measures"
    a, b = daskbicl.score(t, p, measures=names), daskbicl.score(p, t, measures=names)
    for n in names:
        assert _flat(a[n]) == pytest.approx(_flat(b[n]), abs=1e-12), n


@given(biclustering_pair(max_rows=7, max_cols=6, max_k=3))
def test_perfect_match_value_on_biclusterings(pair):
    truth, _, (n_rows, n_cols) = pair
    t = daskbicl.biclustering(*truth)
    result = daskbicl.score(t, t, measures=NON_PARTITION)
    # SPEC §4: a corrected value is 0 by definition when |B| = |D|, so a
    # perfect match scores the share of truth biclusters smaller than the matrix.
    whole = (truth[0].sum(axis=1) == n_rows) & (truth[1].sum(axis=1) == n_cols)
    for n in NON_PARTITION:
        expected = daskbicl.MEASURES[n].perfect
        if n.endswith(("_corrected", "_space")):
            expected = float(np.mean(~whole))
        assert all(v == pytest.approx(expected, abs=1e-12) for v in _flat(result[n])), n


def test_micro_ce_opt_in_set_union_is_negative_for_overlapping_perfect_match():
    t = daskbicl.biclustering([[1, 1, 0], [0, 1, 1]], [[1, 1], [1, 1]])  # overlap on row 1
    assert daskbicl.micro_ce(t, t) == 0.0  # the default multiset union (Patrikainen & Meila)
    # multiset=False: |U| = 6 cells, D_max = 4 + 4 = 8: (6 - 8) / 6
    assert daskbicl.micro_ce(t, t, multiset=False) == pytest.approx(-1 / 3)


@given(biclustering_pair(max_rows=7, max_cols=6, max_k=3))
def test_values_within_registry_bounds_on_biclusterings(pair):
    truth, pred, _ = pair
    result = daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=NON_PARTITION)
    for n in NON_PARTITION:
        lo, hi = daskbicl.MEASURES[n].bounds
        assert all(lo - 1e-12 <= v <= hi + 1e-12 for v in _flat(result[n])), n


@given(coclustering_pair(max_rows=10, max_cols=8, huge=False), st.data())
@settings(max_examples=25)
def test_every_measure_is_chunking_invariant_on_coclusterings(pair, data):
    truth, pred = pair
    names = list(daskbicl.MEASURES)
    expected = daskbicl.score(truth, pred, measures=names)

    def chunked(labels_tuple):
        return tuple(da.from_array(x, chunks=(data.draw(chunks_for(len(x))),)) for x in labels_tuple)

    got = daskbicl.score(chunked(truth), chunked(pred), measures=names)
    for n in names:
        assert _flat(got[n]) == pytest.approx(_flat(expected[n]), abs=1e-12), n
