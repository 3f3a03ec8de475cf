"""Invariance suite (after scikit-learn's ``tests/test_common.py``).

The lists below are written by hand, not derived from the registry they
check: a measure whose record says "symmetric" but is not (or the reverse)
fails here.  Every invariance is parametrized per measure, so one failure
does not hide the next (a parametrized test, or an assertion that names
every measure that disagrees): label permutation, chunking, coordinate reordering,
numpy vs dask vs distributed; symmetry for the symmetric ones and a
counterexample for each of the others.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl

from .support.strategies import biclustering_pair, chunks_for, coclustering_pair

#: Co-clustering measures (SPEC §3), then the ones scored on request (docs/measures/more.md).
PARTITION = [
    "cari", "ari_rows", "ari_cols", "ce", "nce", "comi", "conmi", "enmi",
    "ami_rows", "ami_cols", "nmi_rows", "nmi_cols", "vi", "accuracy", "accuracy_rows", "accuracy_cols",
    "rand", "rand_rows", "rand_cols", "fowlkes_mallows", "fowlkes_mallows_rows", "fowlkes_mallows_cols",
    "pair_precision", "pair_recall", "pair_f1", "pair_jaccard",
    # the per-axis measures the field reports (docs/measures/field.md)
    "homogeneity_rows", "homogeneity_cols", "completeness_rows", "completeness_cols",
    "v_measure_rows", "v_measure_cols", "nca_rows", "nca_cols", "psi_rows", "psi_cols",
    "rmi_rows", "rmi_cols", "nrmi_rows", "nrmi_cols", "ecs_rows", "ecs_cols",
    "ecs",  # on the cells (docs/measures/field.md)
]
#: Bicluster precision-recall measures (SPEC §4).
BICLUSTER = [
    "goodness", "goodness_corrected", "goodness_space",
    "fmeasure", "fmeasure_corrected", "fmeasure_space",
    "dice", "dice_corrected", "dice_space",
    "jaccard", "jaccard_corrected", "jaccard_space",
    "consensus", "prelic_relevance", "prelic_recovery",
]
#: Micro-object measures (SPEC §6).
MICRO = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]
#: Cover and match measures of the field (docs/measures/overlapping.md; invariances in tests/measures/test_field_bicluster.py).
FIELD_OVERLAP = ["omega_rows", "omega_cols", "onmi_rows", "onmi_cols", "omega", "csi", "liu_wang"]
#: Nicholls & Wallace's scores (docs/measures/recovery.md; invariances in tests/measures/test_field_recovery.py).
FIELD_RECOVERY = ["recovered", "redundancy", "ce_sparse", "ce_dense"]

SYMMETRIC = [
    "cari", "ari_rows", "ari_cols", "ce", "nce", "comi", "conmi", "enmi",
    "ami_rows", "ami_cols", "nmi_rows", "nmi_cols", "vi", "accuracy", "accuracy_rows", "accuracy_cols",
    "rand", "rand_rows", "rand_cols", "fowlkes_mallows", "fowlkes_mallows_rows", "fowlkes_mallows_cols",
    "pair_f1", "pair_jaccard", "consensus",
    "v_measure_rows", "v_measure_cols", "psi_rows", "psi_cols", "rmi_rows", "rmi_cols", "nrmi_rows", "nrmi_cols", "ecs_rows", "ecs_cols",
    "micro_ce", "micro_rnia", "e4sc", "ecs",
    "omega_rows", "omega_cols", "onmi_rows", "onmi_cols", "omega", "csi",
]
#: Not symmetric: each has a counterexample in test_non_symmetry.
NOT_SYMMETRIC = [*(b for b in BICLUSTER if b != "consensus"), "mocice_bcubed", "pair_precision", "pair_recall",
                 "homogeneity_rows", "homogeneity_cols", "completeness_rows", "completeness_cols",
                 "nca_rows", "nca_cols",
                 "liu_wang",
                 *FIELD_RECOVERY]

NON_PARTITION = BICLUSTER + MICRO


def test_lists_cover_the_registry():
    assert sorted(PARTITION + BICLUSTER + MICRO + FIELD_OVERLAP + FIELD_RECOVERY) == sorted(daskbicl.MEASURES)
    assert sorted(SYMMETRIC + NOT_SYMMETRIC) == sorted(daskbicl.MEASURES)
    for name in PARTITION:
        assert daskbicl.MEASURES[name].family == "partition", name


@pytest.mark.parametrize("name", sorted(daskbicl.MEASURES))
def test_registry_record_is_consistent(name):
    m = daskbicl.MEASURES[name]
    assert m.symmetric == (name in SYMMETRIC), f"{name}: the record's symmetric flag disagrees with the list"
    assert callable(getattr(daskbicl, name)), name
    assert hasattr(daskbicl.partition([0], [0]).bicl, name), name
    assert m.bounds[0] <= m.bounds[1]
    assert m.summary and m.doc, name
    for pname, param in m.params.items():
        assert param.doc, (name, pname)
        assert pname in getattr(daskbicl, name).__doc__, (name, pname)


# Biclusterings on which every non-symmetric measure differs when truth and
# pred are swapped: pred has a spurious bicluster that truth lacks.
_ASYM_T = daskbicl.biclustering([[1, 1, 0, 0, 0, 0]], [[1, 1, 0, 0, 0]])
_ASYM_P = daskbicl.biclustering([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0]], [[1, 1, 0, 0, 0], [0, 0, 1, 1, 1]])
# For Nicholls & Wallace's scores, which read pred alone or split both sides into sparse and dense: pred has
# two overlapping sparse biclusters, truth one dense bicluster (ce_dense 0 one way, undefined the other).
_ASYM_SPARSE_P = daskbicl.biclustering([[1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0]], [[1, 0, 0, 0, 0], [1, 0, 0, 0, 0]])


# Co-clusterings for the partition measures: pred splits truth's first row cluster.
_ASYM_Z = (([0, 0, 0, 0, 0, 1, 1], [0, 0, 1]), ([0, 0, 1, 1, 1, 2, 2], [0, 0, 1]))
#: The same split on the columns, for the per-column measures.
_ASYM_W = (([0, 0, 1], [0, 0, 0, 0, 0, 1, 1]), ([0, 0, 1], [0, 0, 1, 1, 1, 2, 2]))


@pytest.mark.parametrize("name", NOT_SYMMETRIC)
def test_non_symmetry(name):
    t, p = (_ASYM_W if name.endswith("_cols") else _ASYM_Z) if daskbicl.MEASURES[name].family == "partition" \
        else (_ASYM_T, _ASYM_SPARSE_P) if name in FIELD_RECOVERY else (_ASYM_T, _ASYM_P)
    a = daskbicl.score(t, p, measures=[name])[name]
    b = daskbicl.score(p, t, measures=[name])[name]
    assert _flat(a) != pytest.approx(_flat(b), abs=1e-9), name


def _close(a: dict, b: dict, names):
    for n in names:
        assert a[n] == pytest.approx(b[n], abs=1e-12, rel=1e-12), n


#: The co-clustering measures that are symmetric: scored together, compared measure by measure.
PARTITION_SYMMETRIC = [n for n in SYMMETRIC if n in PARTITION]


def _disagree(a: dict, b: dict, names) -> list[str]:
    """The measures of ``names`` whose two values differ (every one is named, so one does not hide the next)."""
    return [n for n in names if a[n] != pytest.approx(b[n], abs=1e-12, rel=1e-12)]


# The four invariances below score every co-clustering measure in one call per side and name each measure that
# disagrees: one score call carries all of them (a call's fixed cost is most of a small score's), so each
# measure sees more examples (60) than it did parametrized alone (20) at a tenth of the time.


@given(pair=coclustering_pair())
@settings(max_examples=60)
def test_symmetry(pair):
    truth, pred = pair
    names = PARTITION_SYMMETRIC
    assert not _disagree(daskbicl.score(truth, pred, measures=names), daskbicl.score(pred, truth, measures=names),
                         names)


@given(pair=coclustering_pair(), data=st.data())
@settings(max_examples=60)
def test_label_permutation(pair, data):
    """Any injective relabeling of any side (including to huge labels) changes nothing."""
    truth, pred = pair
    def relabel(x):
        values = np.unique(x)
        new = data.draw(st.lists(st.integers(0, 2**63 - 1), min_size=len(values), max_size=len(values), unique=True))
        return np.asarray(new, dtype=np.int64)[np.searchsorted(values, x)]
    pred2 = (relabel(pred[0]), relabel(pred[1]))
    truth2 = (relabel(truth[0]), relabel(truth[1]))
    assert not _disagree(daskbicl.score(truth, pred, measures=PARTITION),
                         daskbicl.score(truth2, pred2, measures=PARTITION), PARTITION)


@given(pair=coclustering_pair(max_rows=30, max_cols=20), data=st.data())
@settings(max_examples=60)
def test_chunking(pair, data):
    truth, pred = pair
    def chunked(labels_tuple):
        return tuple(da.from_array(x, chunks=(data.draw(chunks_for(len(x))),)) for x in labels_tuple)
    expected = daskbicl.score(truth, pred, measures=PARTITION)
    # truth and pred chunked differently: the engine must align the blocks
    assert not _disagree(expected, daskbicl.score(chunked(truth), chunked(pred), measures=PARTITION), PARTITION)


def _reordered(pair, rnd):
    """``pair`` as Datasets with named coordinates, pred's rows and columns shuffled by ``rnd``."""
    (z, w), (zp, wp) = pair
    rows = [f"g{i}" for i in range(len(z))]
    cols = [f"s{j}" for j in range(len(w))]
    truth = daskbicl.partition(z, w, row=rows, col=cols)
    pr = list(range(len(z)))
    pc = list(range(len(w)))
    rnd.shuffle(pr)
    rnd.shuffle(pc)
    return truth, daskbicl.partition(zp[pr], wp[pc], row=[rows[i] for i in pr], col=[cols[j] for j in pc])


@given(pair=coclustering_pair(max_rows=15, max_cols=12), rnd=st.randoms())
@settings(max_examples=60)
def test_coordinate_reordering(pair, rnd):
    """The same gene in another position is the same row."""
    truth, pred = _reordered(pair, rnd)
    expected = daskbicl.score(pair[0], pair[1], measures=PARTITION)
    assert not _disagree(expected, daskbicl.score(truth, pred, measures=PARTITION), PARTITION)
    assert not _disagree(expected, truth.bicl.score(pred, measures=PARTITION), PARTITION)  # the accessor


def test_coordinate_reordering_through_each_measures_accessor():
    """``truth.bicl.<measure>(pred)`` aligns reordered coordinates too, for every co-clustering measure."""
    import random

    rng = np.random.default_rng(3)
    pair = ((rng.integers(0, 3, 15), rng.integers(0, 4, 12)), (rng.integers(0, 4, 15), rng.integers(0, 3, 12)))
    truth, pred = _reordered(pair, random.Random(3))
    expected = daskbicl.score(pair[0], pair[1], measures=PARTITION)
    assert not _disagree(expected, {name: getattr(truth.bicl, name)(pred) for name in PARTITION}, PARTITION)


def test_numpy_dask_distributed_agree(client):
    rng = np.random.default_rng(11)
    z, zp = rng.integers(0, 7, 5000), rng.integers(0, 5, 5000)
    w, wp = rng.integers(0, 4, 3000) * 2**40, rng.integers(0, 6, 3000)
    from distributed import get_task_stream

    dz = tuple(da.from_array(x, chunks=700) for x in (z, w))
    dp = tuple(da.from_array(x, chunks=1100) for x in (zp, wp))
    with get_task_stream(client) as stream:
        on_cluster = daskbicl.score((z, w), (zp, wp), measures=PARTITION)
        on_cluster_dask = daskbicl.score(dz, dp, measures=PARTITION)
    # the work really ran on the cluster's worker processes
    workers = {t["worker"] for t in stream.data}
    assert len(stream.data) > 10 and workers <= set(client.scheduler_info()["workers"])
    with dask.config.set(scheduler="threads"):
        local = daskbicl.score((z, w), (zp, wp), measures=PARTITION)
    with dask.config.set(scheduler="sync"):
        local_dask = daskbicl.score(dz, dp, measures=PARTITION)
    _close(local, on_cluster, PARTITION)
    _close(local, local_dask, PARTITION)
    _close(local, on_cluster_dask, PARTITION)


# --------------------------------------------------------------------------- every family


def _flat(value):
    return tuple(value) if hasattr(value, "_asdict") else (value,)


@pytest.mark.parametrize("name", [n for n in SYMMETRIC if n in NON_PARTITION])
@given(pair=biclustering_pair(max_rows=7, max_cols=6, max_k=3))
@settings(max_examples=25)
def test_symmetry_on_biclusterings(name, pair):
    truth, pred, _ = pair
    t = daskbicl.biclustering(*truth)
    p = daskbicl.biclustering(*pred)
    a, b = daskbicl.score(t, p, measures=[name]), daskbicl.score(p, t, measures=[name])
    assert _flat(a[name]) == pytest.approx(_flat(b[name]), abs=1e-12), name


@pytest.mark.parametrize("name", NON_PARTITION)
@given(pair=biclustering_pair(max_rows=7, max_cols=6, max_k=3))
@settings(max_examples=25)
def test_perfect_match_value_on_biclusterings(name, pair):
    truth, _, (n_rows, n_cols) = pair
    t = daskbicl.biclustering(*truth)
    result = daskbicl.score(t, t, measures=[name])
    # SPEC §4: a corrected value is 0 by definition when |B| = |D|, so a
    # perfect match scores the share of truth biclusters smaller than the matrix.
    whole = (truth[0].sum(axis=1) == n_rows) & (truth[1].sum(axis=1) == n_cols)
    expected = daskbicl.MEASURES[name].perfect
    if name.endswith(("_corrected", "_space")):
        expected = float(np.mean(~whole))
    assert all(v == pytest.approx(expected, abs=1e-12) for v in _flat(result[name])), name


def test_micro_ce_opt_in_set_union_is_negative_for_overlapping_perfect_match():
    t = daskbicl.biclustering([[1, 1, 0], [0, 1, 1]], [[1, 1], [1, 1]])  # overlap on row 1
    assert daskbicl.micro_ce(t, t) == 0.0  # the default multiset union (Patrikainen & Meila)
    # multiset=False: |U| = 6 cells, D_max = 4 + 4 = 8: (6 - 8) / 6
    assert daskbicl.micro_ce(t, t, multiset=False) == pytest.approx(-1 / 3)


@pytest.mark.parametrize("name", NON_PARTITION)
@given(pair=biclustering_pair(max_rows=7, max_cols=6, max_k=3))
@settings(max_examples=25)
def test_values_within_registry_bounds_on_biclusterings(name, pair):
    truth, pred, _ = pair
    result = daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=[name])
    lo, hi = daskbicl.MEASURES[name].bounds
    assert all(lo - 1e-12 <= v <= hi + 1e-12 for v in _flat(result[name])), name


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
        assert _flat(got[n]) == pytest.approx(_flat(expected[n]), abs=1e-12, nan_ok=True), n  # nan: undefined (ce_sparse)
