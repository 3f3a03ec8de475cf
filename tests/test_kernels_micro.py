"""Exactness and property tests of the micro-object kernels (SPEC §6).

The kernels (signature counting, the cell-class join, MOCICE-BCubed with
both finalize methods, CE, RNIA, E4SC) are compared with the brute-force
rational oracles of ``oracles_micro`` on many random small overlapping,
non-covering biclusterings, then the SPEC §6 properties are checked.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daskbicl.errors import InputError, TooLargeError
from daskbicl.kernels.micro import (
    MicroTables,
    bcubed_block,
    bcubed_finalize,
    bcubed_plan,
    e4sc,
    micro_ce,
    micro_measures,
    mocice_bcubed,
    rnia,
)
from daskbicl.kernels.signatures import (
    SignatureClasses,
    cell_signature_counts,
    merge_signature_counts,
    signature_counts,
)

from . import oracles_micro as oracle

# max_examples comes from the hypothesis profile (tests/conftest.py)
SETTINGS = settings(deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
JOINS = ("subsets", "pairs")
FINALIZES = ("subsets", "pairwise")


# --------------------------------------------------------------------------
# helpers and strategies
# --------------------------------------------------------------------------
def tables(tr, tc, pr, pc, join=None, **kw) -> MicroTables:
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    t = MicroTables(rows, cols, **kw)
    if join is not None:  # force the join method (cached property)
        t.__dict__["_join"] = cell_signature_counts(rows, cols, method=join)
    return t


def bcubed(tr, tc, pr, pc, *, exact=True, join=None, method=None):
    return mocice_bcubed(tables(tr, tc, pr, pc, join), exact=exact, method=method)


def all_exact(tr, tc, pr, pc):
    """All four measures, exact, default methods."""
    s = micro_measures(signature_counts(tr, pr), signature_counts(tc, pc), exact=True)
    return (*s.bcubed, s.ce, s.rnia, s.e4sc)


def bool_matrix(draw, n_rows, n_cols):
    bits = draw(st.lists(st.booleans(), min_size=n_rows * n_cols,
                         max_size=n_rows * n_cols))
    return np.array(bits, dtype=bool).reshape(n_rows, n_cols)


@st.composite
def problems(draw, max_n=7, max_k=4):
    """(truth_rows, truth_cols, pred_rows, pred_cols) of overlapping biclusters.

    Modes: independent random; pred = permuted copy of truth; pred = copy with
    some biclusters perturbed / duplicated / emptied.
    """
    n_i, n_j = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))
    k = draw(st.integers(0, max_k))
    tr, tc = bool_matrix(draw, k, n_i), bool_matrix(draw, k, n_j)
    mode = draw(st.sampled_from(["random", "copy", "perturb"]))
    if mode == "random" or k == 0:
        n_l = draw(st.integers(0, max_k))
        return tr, tc, bool_matrix(draw, n_l, n_i), bool_matrix(draw, n_l, n_j)
    perm = draw(st.permutations(range(k)))
    pr, pc = tr[perm].copy(), tc[perm].copy()
    if mode == "perturb":
        pr[0] = bool_matrix(draw, 1, n_i)[0]
        if draw(st.booleans()):
            pr = np.concatenate([pr, pr[-1:]])  # a duplicate bicluster
            pc = np.concatenate([pc, pc[-1:]])
        if draw(st.booleans()):
            pc[-1] = False  # an empty bicluster
    return tr, tc, pr, pc


@st.composite
def chunkings(draw, n):
    """Cut points of a random chunking of range(n)."""
    cuts = draw(st.lists(st.integers(0, n), max_size=4))
    return sorted({0, n, *cuts})


def to_float(x):
    return tuple(float(v) for v in x)


def multiset_of_cells(rows, cols):
    return sorted(tuple(sorted(s)) for s in oracle.cell_sets(rows, cols) if s)


# --------------------------------------------------------------------------
# kernel == oracle
# --------------------------------------------------------------------------
@SETTINGS
@given(problems())
def test_bcubed_equals_oracle_exactly_for_every_method(p):
    want = oracle.mocice_bcubed(*p)
    for join in JOINS:
        for method in FINALIZES:
            got = bcubed(*p, join=join, method=method)
            assert tuple(got) == want, (join, method)
            flt = bcubed(*p, exact=False, join=join, method=method)
            np.testing.assert_allclose(flt, to_float(want), rtol=1e-12, atol=1e-15)


@SETTINGS
@given(problems())
def test_ce_rnia_e4sc_equal_oracle(p):
    t = tables(*p)
    for ms in (False, True):
        assert micro_ce(t, exact=True, multiset=ms) == oracle.micro_ce(*p, multiset=ms)
        assert rnia(t, exact=True, multiset=ms) == oracle.rnia(*p, multiset=ms)
        assert micro_ce(t, multiset=ms) == float(oracle.micro_ce(*p, multiset=ms))
    want = oracle.e4sc(*p)
    assert e4sc(t, exact=True) == want
    assert e4sc(t) == pytest.approx(float(want), rel=1e-14, abs=1e-15)


def test_more_than_64_biclusters_use_several_words():
    rng = np.random.default_rng(5)
    tr, tc = rng.random((40, 5)) < 0.3, rng.random((40, 5)) < 0.3
    pr, pc = rng.random((30, 5)) < 0.3, rng.random((30, 5)) < 0.3
    assert signature_counts(tr, pr).words.shape[1] == 2
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    for join in JOINS:
        for method in FINALIZES:
            assert tuple(bcubed(tr, tc, pr, pc, join=join, method=method)) == want
    t = tables(tr, tc, pr, pc)
    assert rnia(t, exact=True) == oracle.rnia(tr, tc, pr, pc)
    assert e4sc(t, exact=True) == oracle.e4sc(tr, tc, pr, pc)


def labels_to_biclusters(z, w):
    """Each non-empty block of a co-clustering as one bicluster."""
    blocks = [(h, g) for h in np.unique(z) for g in np.unique(w)]
    return (np.array([z == h for h, _ in blocks]).reshape(len(blocks), len(z)),
            np.array([w == g for _, g in blocks]).reshape(len(blocks), len(w)))


@SETTINGS
@given(st.data())
def test_coclusterings_as_biclusterings(data):
    n_i, n_j = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))

    def labels(n):
        return np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))

    tr, tc = labels_to_biclusters(labels(n_i), labels(n_j))
    pr, pc = labels_to_biclusters(labels(n_i), labels(n_j))
    assert tuple(bcubed(tr, tc, pr, pc)) == oracle.mocice_bcubed(tr, tc, pr, pc)
    t = tables(tr, tc, pr, pc)
    assert micro_ce(t, exact=True) == oracle.micro_ce(tr, tc, pr, pc)
    # disjoint covering blocks: set and multiset unions coincide
    assert micro_ce(t, exact=True) == micro_ce(t, exact=True, multiset=True)
    assert rnia(t, exact=True) == 0 == rnia(t, exact=True, multiset=True)


# --------------------------------------------------------------------------
# SPEC §6 properties
# --------------------------------------------------------------------------
@SETTINGS
@given(problems())
def test_identical_scores_exactly_one(p):
    tr, tc = p[0], p[1]
    perm = np.random.default_rng(0).permutation(len(tr))
    for exact in (True, False):
        got = bcubed(tr, tc, tr[perm], tc[perm], exact=exact)
        assert tuple(got) == (1, 1, 1)
    t = tables(tr, tc, tr[perm], tc[perm])
    assert (micro_ce(t, multiset=True), rnia(t), e4sc(t)) == (0.0, 0.0, 1.0)


@SETTINGS
@given(problems())
def test_different_distinct_biclusters_score_below_one(p):
    tr, tc, pr, pc = p
    a, b = multiset_of_cells(tr, tc), multiset_of_cells(pr, pc)
    if len(set(a)) < len(a) or len(set(b)) < len(b) or a == b:
        return  # only distinct cell sets on each side (see duplicate note)
    assert bcubed(*p).f1 < 1


def test_duplicate_biclusters_can_score_one_spec_note():
    """SPEC note: "1 iff pred = truth" fails with duplicated biclusters.

    On a 3 x 1 matrix take the 7 non-empty row sets with multiplicities
    truth (1, 2, 2, 2, 1, 1, 1) and pred (2, 1, 1, 1, 2, 2, 2) for
    {012, 01, 02, 12, 0, 1, 2}: every pair of cells lies in equally many
    truth and pred biclusters, all identical, so P = R = 1 although the
    multisets differ (11 vs 10 biclusters).
    """
    sets = [(0, 1, 2), (0, 1), (0, 2), (1, 2), (0,), (1,), (2,)]
    mult_t, mult_p = (1, 2, 2, 2, 1, 1, 1), (2, 1, 1, 1, 2, 2, 2)

    def masks(mult):
        rows = [[i in s for i in range(3)] for s, m in zip(sets, mult) for _ in range(m)]
        return np.array(rows, bool), np.ones((len(rows), 1), bool)

    (tr, tc), (pr, pc) = masks(mult_t), masks(mult_p)
    assert multiset_of_cells(tr, tc) != multiset_of_cells(pr, pc)
    assert oracle.mocice_bcubed(tr, tc, pr, pc) == (1, 1, 1)
    assert tuple(bcubed(tr, tc, pr, pc)) == (1, 1, 1)


def test_set_union_ce_is_negative_for_overlaps_spec_note():
    """SPEC note: with U a *set* union, CE < 0 for identical overlapping inputs.

    truth = pred = {A, B} with B inside A: D_max = |A| + |B| > |U| = |A|.
    The multiset union (Patrikainen & Meila, biclustlib) gives 0.
    """
    rows = np.array([[1, 1, 1], [1, 0, 0]], bool)
    cols = np.array([[1, 1], [1, 0]], bool)
    t = tables(rows, cols, rows, cols)
    assert micro_ce(t, exact=True) == Fraction(-1, 6)
    assert micro_ce(t, exact=True, multiset=True) == 0
    assert oracle.micro_ce(rows, cols, rows, cols) == Fraction(-1, 6)


@SETTINGS
@given(problems(max_n=4, max_k=3), st.integers(2, 3))
def test_k_scaling_invariance(p, k):
    tr, tc, pr, pc = p
    scaled = [np.repeat(m, k, axis=1) for m in p]
    assert all_exact(*scaled) == all_exact(tr, tc, pr, pc)


@SETTINGS
@given(problems(max_n=5, max_k=3), st.integers(2, 3))
def test_block_diagonal_copies_invariance(p, k):
    def copies(m):  # k block-diagonal copies: k*n rows, k*K biclusters
        return np.kron(np.eye(k, dtype=bool), m).astype(bool)

    got = all_exact(*[copies(m) for m in p])
    want = all_exact(*p)
    assert got[:3] == want[:3]  # MOCICE-BCubed
    assert got[4:] == want[4:]  # RNIA, E4SC (CE too, below)
    assert got[3] == want[3]


@SETTINGS
@given(problems(), st.integers(1, 3), st.integers(0, 3))
def test_unclustered_rows_and_columns_invariance(p, extra_i, extra_j):
    tr, tc, pr, pc = p

    def pad(m, n):
        return np.concatenate([m, np.zeros((m.shape[0], n), bool)], axis=1)

    assert all_exact(pad(tr, extra_i), pad(tc, extra_j), pad(pr, extra_i),
                     pad(pc, extra_j)) == all_exact(*p)


@SETTINGS
@given(st.data())
def test_shared_column_set_size_does_not_matter(data):
    n_i = data.draw(st.integers(1, 6))
    k, n_l = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    tr, pr = bool_matrix(data.draw, k, n_i), bool_matrix(data.draw, n_l, n_i)
    values = set()
    for x in range(1, 5):
        tc, pc = np.ones((k, x), bool), np.ones((n_l, x), bool)
        values.add(tuple(bcubed(tr, tc, pr, pc)))
    assert len(values) == 1


@st.composite
def row_partitions(draw):
    """Truth: a partition of 8 rows into 2-3 classes (all 3 columns)."""
    z = np.array(draw(st.lists(st.integers(0, 2), min_size=8, max_size=8)))
    return z


def partition_masks(z, n_j=3):
    labels = np.unique(z)
    return np.array([z == h for h in labels]), np.ones((len(labels), n_j), bool)


@SETTINGS
@given(row_partitions(), st.data())
def test_splitting_a_mixed_cluster_scores_higher(z, data):
    classes = np.unique(z)
    if len(classes) < 2:
        return
    tr, tc = partition_masks(z)
    a, b = data.draw(st.permutations(classes.tolist()))[:2]
    mixed = (z == a) | (z == b)
    rest = [z == h for h in classes if h not in (a, b)]
    before = np.array([mixed, *rest])
    after = np.array([z == a, z == b, *rest])
    f_before = bcubed(tr, tc, before, np.ones((len(before), 3), bool)).f1
    f_after = bcubed(tr, tc, after, np.ones((len(after), 3), bool)).f1
    assert f_after > f_before


@SETTINGS
@given(row_partitions(), st.data())
def test_merging_two_pieces_of_one_class_scores_higher(z, data):
    tr, tc = partition_masks(z)
    big = [h for h in np.unique(z) if (z == h).sum() >= 2]
    if not big:
        return
    h = data.draw(st.sampled_from(big))
    members = np.flatnonzero(z == h)
    cut = data.draw(st.integers(1, len(members) - 1))
    p1, p2 = np.zeros(8, bool), np.zeros(8, bool)
    p1[members[:cut]], p2[members[cut:]] = True, True
    rest = [z == g for g in np.unique(z) if g != h]
    split = np.array([p1, p2, *rest])
    merged = np.array([p1 | p2, *rest])
    f_split = bcubed(tr, tc, split, np.ones((len(split), 3), bool)).f1
    f_merged = bcubed(tr, tc, merged, np.ones((len(merged), 3), bool)).f1
    assert f_merged > f_split


def test_meta_evaluation_worked_example():
    z = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    tr, tc = partition_masks(z)
    ones = np.ones((3, 3), bool)
    mixed = np.array([[1, 1, 0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 0, 0, 0, 0],
                      [0, 0, 0, 0, 0, 0, 1, 1]], bool)
    pure = np.array([[1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0],
                     [0, 0, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 1]], bool)
    assert bcubed(tr, tc, pure, np.ones((4, 3), bool)).f1 > bcubed(tr, tc, mixed, ones).f1


# --------------------------------------------------------------------------
# degenerate cases
# --------------------------------------------------------------------------
def test_nothing_covered_on_either_side():
    e = np.zeros((2, 3), bool)
    assert tuple(bcubed(e, e, e, e)) == (1, 1, 1)
    t = tables(e, e, e, e)
    assert (micro_ce(t), rnia(t), e4sc(t)) == (0.0, 0.0, 1.0)
    k0 = np.zeros((0, 3), bool)
    assert tuple(bcubed(k0, k0, k0, k0, exact=False)) == (1.0, 1.0, 1.0)


def test_one_side_empty():
    full, e = np.ones((1, 3), bool), np.zeros((1, 3), bool)
    assert tuple(bcubed(full, full, e, e)) == (0, 0, 0)
    assert tuple(bcubed(e, e, full, full)) == (0, 0, 0)
    t = tables(full, full, e, e)
    assert (micro_ce(t), rnia(t), e4sc(t)) == (1.0, 1.0, 0.0)


# --------------------------------------------------------------------------
# signatures: chunking, merging, joins
# --------------------------------------------------------------------------
def same_classes(a: SignatureClasses, b: SignatureClasses) -> bool:
    return (a.n_truth, a.n_pred) == (b.n_truth, b.n_pred) and \
        np.array_equal(a.words, b.words) and np.array_equal(a.count, b.count)


@SETTINGS
@given(problems(max_n=12, max_k=5), st.data())
def test_chunked_counts_merge_to_whole(p, data):
    tr, _, pr, _ = p
    whole = signature_counts(tr, pr)
    cuts = data.draw(chunkings(tr.shape[1]))
    parts = [signature_counts(tr[:, a:b], pr[:, a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    assert same_classes(merge_signature_counts(*parts), whole)
    assert same_classes(merge_signature_counts(parts[::-1]), whole)  # list, reversed
    if len(parts) >= 3:  # tree shape does not matter
        left = merge_signature_counts(merge_signature_counts(parts[0], parts[1]), *parts[2:])
        assert same_classes(left, whole)
    assert whole.total == tr.shape[1]
    np.testing.assert_array_equal(whole.count @ whole.truth, tr.sum(1))
    np.testing.assert_array_equal(whole.count @ whole.pred, pr.sum(1))


@SETTINGS
@given(problems(max_n=8, max_k=5))
def test_join_methods_equal_brute_force_cells(p):
    tr, tc, pr, pc = p
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    truth_cells = tr[:, :, None] & tc[:, None, :]
    pred_cells = pr[:, :, None] & pc[:, None, :]
    n_cells = tr.shape[1] * tc.shape[1]
    want = SignatureClasses.from_bits(truth_cells.reshape(len(tr), n_cells).T,
                                      pred_cells.reshape(len(pr), n_cells).T)
    for join in JOINS:
        got, lattice = cell_signature_counts(rows, cols, method=join)
        assert same_classes(got, want), join
        assert (lattice is not None) == (join == "subsets")


@SETTINGS
@given(problems(), st.integers(1, 5))
def test_blocks_sum_to_whole(p, n_blocks):
    t = tables(*p)
    for exact in (True, False):
        plan = bcubed_plan(t, exact=exact)
        whole = bcubed_finalize(plan, [bcubed_block(plan, 0, plan.n_classes)])
        bounds = plan.block_bounds(n_blocks)
        assert bounds == [] or (bounds[0][0] == 0 and bounds[-1][1] == plan.n_classes)
        parts = [bcubed_block(plan, a, b) for a, b in bounds]
        got = bcubed_finalize(plan, parts)
        if exact:
            assert got == whole
        else:
            np.testing.assert_allclose(got, whole, rtol=1e-14)


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------
def test_input_errors():
    with pytest.raises(InputError, match="2-D bool"):
        signature_counts(np.ones((2, 3), int), np.ones((1, 3), bool))
    with pytest.raises(InputError, match="covers 3 rows/columns"):
        signature_counts(np.ones((2, 3), bool), np.ones((1, 4), bool))
    a = signature_counts(np.ones((2, 3), bool), np.ones((1, 3), bool))
    b = signature_counts(np.ones((1, 3), bool), np.ones((1, 3), bool))
    with pytest.raises(InputError, match="every chunk must see all biclusters"):
        merge_signature_counts(a, b)
    with pytest.raises(InputError, match="same truth and pred masks"):
        MicroTables(a, b)


def test_too_large_is_reported():
    rng = np.random.default_rng(0)
    tr, tc, pr, pc = (rng.random((8, 60)) < 0.6 for _ in range(4))
    t = tables(tr, tc, pr, pc, max_work=1000)
    with pytest.raises(TooLargeError, match="max_work"):
        _ = t.cells


# --------------------------------------------------------------------------
# scale smoke test (fast)
# --------------------------------------------------------------------------
def test_scale_smoke_10k_by_10k_20_plus_20():
    rng = np.random.default_rng(0)
    n = 10_000

    def masks(k):
        return rng.random((k, n)) < rng.uniform(0.05, 0.2, size=(k, 1))

    tr, tc, pr, pc = masks(20), masks(20), masks(20), masks(20)
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    start = time.perf_counter()
    s = micro_measures(rows, cols)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0
    assert 0 < s.bcubed.precision < 1 and 0 < s.bcubed.recall < 1
    assert 0 < s.ce < 1 and 0 < s.rnia < 1 and 0 < s.e4sc < 1
    t = MicroTables(rows, cols)
    assert t.cells.total == n * n
    assert t.coverage.pred + t.coverage.truth == t.coverage.union + t.coverage.intersection
