"""Every co-clustering measure against brute-force oracles and SPEC identities."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, mutual_info_score, normalized_mutual_info_score

import daskbicl
from daskbicl.kernels.coclustering import cocluster_scores as K
from daskbicl.kernels.coclustering.contingency import Table

from ..support import oracles_partition as O
from ..support.strategies import coclustering_pair, labels_pair

PARTITION_MEASURES = [n for n, m in daskbicl.MEASURES.items() if m.family == "partition"]
#: The published ones (scored by default; their oracles are in oracles_partition; the others: test_more_measures).
PUBLISHED = [n for n in PARTITION_MEASURES if daskbicl.MEASURES[n].default]


def _as_lists(pair):
    (z, w), (zp, wp) = pair
    return [int(x) for x in z], [int(x) for x in zp], [int(x) for x in w], [int(x) for x in wp]


@given(coclustering_pair(max_rows=7, max_cols=6))
def test_score_matches_bruteforce_oracles(pair):
    truth, pred = pair
    result = daskbicl.score(truth, pred)
    args = _as_lists(pair)
    assert sorted(result) == sorted(PUBLISHED)
    for name in PUBLISHED:
        assert result[name] == pytest.approx(O.ORACLES[name](*args), abs=1e-12), name


@given(coclustering_pair(max_rows=6, max_cols=5))
@settings(max_examples=25)
def test_ce_cell_enumeration_equals_lomet_identity(pair):
    z, zp, w, wp = _as_lists(pair)
    if max(len(set(z)), len(set(zp)), len(set(w)), len(set(wp))) > 4:
        return  # enumeration of matching pairs stays tiny
    cells = O.ce_cells(z, zp, w, wp)
    lomet = O.ce(z, zp, w, wp)
    assert cells == lomet
    assert daskbicl.ce((np.array(z), np.array(w)), (np.array(zp), np.array(wp))) == float(cells)


@given(labels_pair(max_size=60, max_clusters=6))
def test_ari_and_mi_match_scikit_learn(pair):
    a, b = pair
    table = Table.from_labels(a, b)
    assert K.ari(table) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)
    assert K.mutual_info(table) == pytest.approx(mutual_info_score(a, b), abs=1e-12)
    h_a, h_b = K._entropies(table)
    nmi = K._ratio(K.mutual_info(table), max(h_a, h_b))
    assert nmi == pytest.approx(normalized_mutual_info_score(a, b, average_method="max"), abs=1e-12)


@given(coclustering_pair(max_rows=9, max_cols=8))
def test_cari_equals_sklearn_ari_of_cell_labels(pair):
    (z, w), (zp, wp) = pair
    cell_t = np.add.outer(np.unique(z, return_inverse=True)[1] * 100, np.unique(w, return_inverse=True)[1]).ravel()
    cell_p = np.add.outer(np.unique(zp, return_inverse=True)[1] * 100, np.unique(wp, return_inverse=True)[1]).ravel()
    assert daskbicl.cari((z, w), (zp, wp)) == pytest.approx(adjusted_rand_score(cell_t, cell_p), abs=1e-12)


def test_comi_is_mi_of_cell_table_and_factorizes():
    rng = np.random.default_rng(3)
    z, zp = rng.integers(0, 3, 30), rng.integers(0, 4, 30)
    w, wp = rng.integers(0, 2, 20), rng.integers(0, 3, 20)
    cell = O.comi(list(z), list(zp), list(w), list(wp))
    assert daskbicl.comi((z, w), (zp, wp)) == pytest.approx(cell, rel=1e-12)
    assert cell == pytest.approx(mutual_info_score(z, zp) + mutual_info_score(w, wp), rel=1e-12)


def test_known_values():
    # Worked by hand: rows identical, columns [0,1,1] vs [0,0,1].
    z, w, wp = [0, 0, 1, 1], [0, 1, 1], [0, 0, 1]
    assert daskbicl.cari((z, w), (z, wp)) == pytest.approx(25 / 91, abs=1e-15)
    # d_r = 0, d_c = 1/3 -> CE = 1/3; H = 2, L = 2 -> NCE = 1 - (1/3)/(3/4) = 5/9
    assert daskbicl.ce((z, w), (z, wp)) == pytest.approx(1 / 3)
    assert daskbicl.nce((z, w), (z, wp)) == pytest.approx(5 / 9)


def test_cari_hand_value_by_pair_count():
    # 12 cells; the exact ARI from the pair loop is 25/91.
    z, w, wp = [0, 0, 1, 1], [0, 1, 1], [0, 0, 1]
    assert O.ari_pairs(O.cell_labels(z, w), O.cell_labels(z, wp)) == Fraction(25, 91)


def test_nce_is_zero_on_independent_uniform_clusters_and_the_printed_formula_is_not():
    # The erratum: with the published normaliser a uniform 3 x 3 table gives -0.6.
    z = np.repeat(np.arange(3), 3)
    zp = np.tile(np.arange(3), 3)
    assert daskbicl.nce((z, z), (zp, zp)) == 0.0
    printed = daskbicl.nce((z, z), (zp, zp), normalizer="printed")
    assert printed == pytest.approx(-0.6)
    assert printed == pytest.approx(float(O.nce(list(z), list(zp), list(z), list(zp), "printed")))


@pytest.mark.parametrize("h, l_", [(2, 3), (3, 3), (4, 2), (5, 7), (1, 4)])
def test_nce_of_independent_uniform_clusters_is_zero(h, l_):
    z, zp = np.repeat(np.arange(h), h * 2), np.tile(np.arange(h), h * 2)
    w, wp = np.repeat(np.arange(l_), l_), np.tile(np.arange(l_), l_)
    assert daskbicl.nce((z, w), (zp, wp)) == pytest.approx(0.0, abs=1e-15)


@given(coclustering_pair(max_rows=12, max_cols=10))
def test_nce_in_zero_one_and_both_normalisers_match_their_oracles(pair):
    (z, w), (zp, wp) = pair
    lists = [np.asarray(x).tolist() for x in (z, zp, w, wp)]
    got = daskbicl.nce((z, w), (zp, wp))
    assert 0.0 <= got <= 1.0
    assert got == float(O.nce(*lists))
    printed = daskbicl.nce((z, w), (zp, wp), normalizer="printed")
    assert printed == float(O.nce(*lists, "printed"))
    assert daskbicl.nce((z, w), (z, w)) == 1.0  # relabelings score 1
    values = np.unique(np.concatenate([np.asarray(z), np.asarray(w)]))
    new = dict(zip(values.tolist(), np.random.default_rng(len(values)).permutation(len(values)).tolist()))
    relabel = np.vectorize(new.__getitem__)
    assert daskbicl.nce((z, w), (relabel(z), relabel(w) + 7)) == 1.0


def test_nce_normalizer_is_checked_before_any_work():
    with pytest.raises(daskbicl.MeasureError, match="parameter normalizer must be one of 'corrected', 'printed'"):
        daskbicl.nce(([0, 1], [0]), ([0, 1], [0]), normalizer="paper")


@pytest.mark.parametrize("name", PARTITION_MEASURES)
def test_perfect_match_value(name):
    m = daskbicl.MEASURES[name]
    truth = (np.array([4, 4, 9, 9, 2]), np.array([0, 1, 1, 0]))
    pred = (np.array([1, 1, 0, 0, 7]), np.array([3, 5, 5, 3]))  # relabeled copy
    value = getattr(daskbicl, name)(truth, pred)
    if np.isnan(m.perfect):
        assert value > 0
    else:
        assert value == pytest.approx(m.perfect, abs=1e-12)


@given(coclustering_pair(max_rows=10, max_cols=8))
def test_values_within_declared_bounds(pair):
    result = daskbicl.score(*pair, measures=PARTITION_MEASURES)
    for name in PARTITION_MEASURES:
        lo, hi = daskbicl.MEASURES[name].bounds
        assert lo - 1e-12 <= result[name] <= hi + 1e-12, name


@given(st.integers(1, 4), st.integers(1, 4))
def test_trivial_partitions(h, l_):
    # One cluster on every side: every ARI is 1 by the 0/0 convention, CE is 0.
    z = np.zeros(5, dtype=np.int64)
    w = np.zeros(4, dtype=np.int64)
    s = daskbicl.score((z, w), (z, w))
    assert s["cari"] == s["ari_rows"] == s["ari_cols"] == 1.0
    assert s["ce"] == 0.0 and s["nce"] == 1.0 and s["conmi"] == 1.0 and s["enmi"] == 2.0


@given(coclustering_pair(max_rows=9, max_cols=8))
@settings(max_examples=60)
def test_sparse_matching_equals_permutation_oracle(pair):
    """Forcing the sparse LAPJVsp path (dense limit 0) gives the oracle's CE exactly."""
    import dask

    z, zp, w, wp = _as_lists(pair)
    with dask.config.set({"daskbicl.dense_limit": 0}):
        got = daskbicl.score(*pair, measures=["ce", "nce"])
    assert got["ce"] == float(O.ce(z, zp, w, wp))
    assert got["nce"] == float(O.nce(z, zp, w, wp))


def test_sparse_and_dense_matching_agree_on_random_tables():
    rng = np.random.default_rng(3)
    for _ in range(200):
        h, hp = (int(x) for x in rng.integers(1, 15, 2))
        dense = rng.integers(0, 6, (h, hp)) * (rng.random((h, hp)) < rng.random())
        dense[rng.integers(h), rng.integers(hp)] += 1
        table = Table.from_dense(dense)
        assert K.matched_count(table, dense_limit=0) == K.matched_count(table)


def _optimum(dense) -> int:
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(dense, maximize=True)
    return int(dense[r, c].sum())


def test_sure_cells_lie_in_every_optimal_matching():
    """Each pre-matched cell is in every optimal matching: forbidding it loses weight.

    Small counts (0, 1, 2) make ties the rule, where a weaker (non-strict)
    rule would pre-match two cells of one row.
    """
    rng = np.random.default_rng(7)
    found = 0
    for trial in range(400):
        h, hp = (int(x) for x in rng.integers(1, 9, 2))
        top = 3 if trial % 2 else 12
        dense = rng.integers(0, top, (h, hp)) * (rng.random((h, hp)) < 0.6)
        if trial % 3 == 0:  # a strong diagonal, as a noisy copy has
            k = min(h, hp)
            dense[np.arange(k), rng.permutation(hp)[:k]] += rng.integers(0, 20, k)
        dense[0, 0] += 1
        table = Table.from_dense(dense)
        sure = K.sure_cells(table.rows, table.cols, table.counts, table.shape)
        rows, cols = table.rows[sure], table.cols[sure]
        assert len(set(rows.tolist())) == len(rows) and len(set(cols.tolist())) == len(cols)
        full = _optimum(table.dense())
        for r, c in zip(rows, cols):
            without = table.dense()
            without[r, c] = 0  # a matching that uses a 0 cell is one that leaves r and c unmatched
            assert _optimum(without) < full
        found += len(rows)
    assert found > 200  # the rule does fire


def test_the_sure_cell_rule_is_strict_on_ties():
    # n = 2 equals r + c = 1 + 1: in *some* optimal matching only, not pre-matched.
    table = Table.from_dense([[2, 1], [1, 0]])
    assert not K.sure_cells(table.rows, table.cols, table.counts, table.shape).any()
    # [[2, 2]]: both cells of the row are optimal; neither is sure.
    table = Table.from_dense([[2, 2]])
    assert not K.sure_cells(table.rows, table.cols, table.counts, table.shape).any()
    assert K.matched_count(table) == 2


@pytest.mark.parametrize("agreement", [0.0, 0.5, 0.8, 0.95, 1.0])
def test_sure_cells_and_solver_choice_keep_the_optimum(agreement):
    """Pre-matched cells (every round) and either solver keep the optimum of the plain dense solver."""
    rng = np.random.default_rng(int(agreement * 100))
    for _ in range(100):
        k, n = int(rng.integers(2, 40)), int(rng.integers(5, 400))
        x = rng.integers(0, k, n)
        y = np.where(rng.random(n) < agreement, rng.permutation(k)[x], rng.integers(0, k + 3, n))
        table = Table.from_labels(x, y)
        want = _optimum(table.dense())
        assert K.matched_count(table) == want
        assert K.matched_count(Table.from_labels(x, y), dense_limit=0) == want


@pytest.mark.parametrize("fill", [0.01, 0.5])
def test_large_remainders_take_either_solver_and_keep_the_optimum(fill):
    """300 x 300 tables (above the always-dense size): sparse at 1 % fill, dense at 50 %."""
    rng = np.random.default_rng(int(fill * 100))
    for _ in range(3):
        dense = rng.integers(1, 4, (300, 300)) * (rng.random((300, 300)) < fill)
        dense[np.arange(300), np.arange(300)] += 1  # no empty row or column
        table = Table.from_dense(dense)
        assert K.matched_count(table) == _optimum(dense)


def test_ce_on_many_clusters_needs_no_dense_table():
    """All-distinct labels: a 20,000 x 20,000 table (3.2 GB dense) is matched sparse."""
    n = 20_000
    rng = np.random.default_rng(0)
    perm = rng.permutation(n)
    merged = perm.copy()
    merged[:100] = merged[0]  # 100 singletons merged into one cluster: 99 rows unmatched
    got = daskbicl.score((np.arange(n), [0, 1]), (merged, [5, 6]), measures=["ce", "nce", "cari"])
    assert got["ce"] == 99 / n
    assert daskbicl.score((np.arange(n), [0, 1]), (perm, [5, 6]), measures=["ce"])["ce"] == 0.0


@given(coclustering_pair(max_rows=12, max_cols=10))
@settings(max_examples=60)
def test_normalized_mi_exactly_one_for_relabelings_and_exactly_symmetric(pair):
    (z, w), (zp, wp) = pair
    rng = np.random.default_rng(len(z) * 31 + len(w))
    relabel_rows = rng.permutation(100) + 7
    relabel_cols = rng.permutation(100) * 3
    zi = np.unique(z, return_inverse=True)[1]
    wi = np.unique(w, return_inverse=True)[1]
    same = daskbicl.score((z, w), (relabel_rows[zi], relabel_cols[wi]))
    assert same["conmi"] == 1.0 and same["enmi"] == 2.0
    ab = daskbicl.score((z, w), (zp, wp), measures=["comi", "conmi", "enmi"])
    ba = daskbicl.score((zp, wp), (z, w), measures=["comi", "conmi", "enmi"])
    assert ab == ba


def test_numpy_inputs_are_scattered_not_embedded_in_the_graph(client):
    """On a cluster, in-memory labels go to the workers as data, not inside the
    task graph (which dask warns about above 10 MB and which is slower)."""
    import warnings

    rng = np.random.default_rng(0)
    n = 1_500_000  # 2 x 12 MB of int64 labels per axis
    z, zp = rng.integers(0, 10, n), rng.integers(0, 10, n)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Ll]arge graph.*")
        got = daskbicl.score((z, [0, 1]), (zp, [1, 0]), measures=["ari_rows", "cari"])
    assert got["ari_rows"] == pytest.approx(adjusted_rand_score(z, zp), abs=1e-12)


def test_measures_of_every_family_share_one_counting_pass():
    """Partition, bicluster and micro measures of two co-clusterings all start
    from the row and column tables: the labels are counted once per axis."""
    import dask.array as dsa

    from daskbicl.measures import ScorePlan

    rng = np.random.default_rng(1)
    z = dsa.from_array(rng.integers(0, 4, 1000), chunks=250)  # 4 row chunks
    w = dsa.from_array(rng.integers(0, 3, 300), chunks=100)  # 3 column chunks
    zp = dsa.from_array(rng.integers(0, 4, 1000), chunks=250)
    wp = dsa.from_array(rng.integers(0, 3, 300), chunks=100)
    graphs = ScorePlan.build((z, w), (zp, wp), ["cari", "fmeasure", "micro_rnia", "e4sc"]).graphs()
    assert len(graphs) == 3  # three providers ...
    objs = [o for g in graphs.values() for o in (g if isinstance(g, tuple) else (g,))]
    keys = {k for o in objs for k in o.__dask_graph__().keys()}
    counting = [k for k in keys if str(k).startswith("_count_block")]
    assert len(counting) == 4 + 3  # ... and one counting task per chunk


def test_requests_built_in_one_shared_block_read_each_array_once():
    """What the batch runner does for a pair named by several [[pairs]] tables:
    every request's graphs come from the same mask passes."""
    import dask.array as dsa

    from daskbicl.measures import ScorePlan
    from daskbicl.measures.plan import plan_graphs

    rng = np.random.default_rng(2)

    def lazy_biclustering():
        rm = dsa.from_array(rng.random((3, 400)) < 0.3, chunks=(3, 100))  # 4 row chunks
        cm = dsa.from_array(rng.random((3, 90)) < 0.3, chunks=(3, 30))  # 3 column chunks
        return daskbicl.biclustering(rm, cm)

    truth, pred = lazy_biclustering(), lazy_biclustering()
    plans = [ScorePlan.build(truth, pred, names) for names in (["micro_rnia"], ["mocice_bcubed"], ["fmeasure"])]
    graphs = plan_graphs(plans)
    objs = [o for v in graphs.values() for o in (v if isinstance(v, tuple) else (v,))]
    keys = {k for o in objs for k in o.__dask_graph__().keys()}
    assert len([k for k in keys if str(k).startswith("signature_counts")]) == 4 + 3
    assert len([k for k in keys if str(k).startswith("intersect_counts")]) == 4 + 3
