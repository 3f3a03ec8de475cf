"""Exactness and property tests of the micro-object kernels (SPEC §6).

The kernels (membership lists, the family walk, its plan and tasks,
MOCICE-BCubed, CE, RNIA, E4SC) are compared with the brute-force rational
oracles of ``oracles_micro`` on many random small overlapping,
non-covering biclusterings, then the SPEC §6 properties are checked.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from fractions import Fraction
from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from daskbicl.errors import InputError, TooLargeError
from daskbicl.kernels.coclustering.contingency import Table
from daskbicl.kernels.micro.budget import DEFAULT_MAX_WORK
from daskbicl.kernels.micro.cell_records import coverage_from_histogram, coverage_from_moments
from daskbicl.kernels.micro.family_tasks import finish, jaccard_table, run_task, union_tables
from daskbicl.kernels.micro.memberships import Memberships, merge_memberships, signature_counts, subproblem
from daskbicl.kernels.micro.micro_scores import (
    MicroTables,
    coclustering_bcubed,
    coclustering_coverage,
    coclustering_overlap,
    e4sc,
    micro_ce,
    micro_measures,
    mocice_bcubed,
    rnia,
)
from daskbicl.kernels.micro.planner import plan_micro

from ...support import oracles_micro as oracle

# max_examples comes from the hypothesis profile (tests/conftest.py)
SETTINGS = settings(deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------
# helpers and strategies
# --------------------------------------------------------------------------
def tables(tr, tc, pr, pc, **kw) -> MicroTables:
    kw.setdefault("union_budget", 1 << 22)  # small budgets here split the parts, not the normalisers
    return MicroTables(signature_counts(tr, pr), signature_counts(tc, pc), **kw)


def bcubed(tr, tc, pr, pc, *, exact=True, **kw):
    return mocice_bcubed(tables(tr, tc, pr, pc, exact=exact, **kw))


def all_exact(tr, tc, pr, pc):
    """All four measures, exact; None when nothing is covered."""
    if not covers(tr, tc) and not covers(pr, pc):
        return None
    s = micro_measures(signature_counts(tr, pr), signature_counts(tc, pc), exact=True)
    return (*s.bcubed, s.ce, s.rnia, s.e4sc)


def covers(rows, cols) -> bool:
    """Some bicluster of this side has a cell."""
    return bool((rows.any(axis=1) & cols.any(axis=1)).any())


def agree(kernel, oracle_fn):
    """``kernel()`` equals ``oracle_fn()``, or both reject a 0/0 (nothing covered)."""
    try:
        want = oracle_fn()
    except oracle.NothingCovered:
        with pytest.raises(InputError, match="cover no cell"):
            kernel()
        return None
    got = kernel()
    assert tuple(got) == tuple(want) if isinstance(want, tuple) else got == want
    return want


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
@given(problems(), st.sampled_from([(16, 1 << 22), (1, 1 << 22), (3, 4), (2, 1)]),
       st.sampled_from(["family", "classes", None]))
def test_bcubed_equals_oracle_exactly(p, split, method):
    """Exact MOCICE-BCubed equals the pair-by-pair oracle, however the walk is split.

    ``(tasks, budget)``: the parts dealt into 1-16 tasks, and a budget of
    1-4 stored sets that makes the plan (or the running task) split every
    part it can — a part that cannot be split is refused, naming the budget.
    """
    n_tasks, budget = split
    try:
        want = agree(partial(bcubed, *p, n_tasks=n_tasks, budget=budget, method=method),
                     partial(oracle.mocice_bcubed, *p))
    except TooLargeError as err:
        assert method != "classes" and budget < 10 and "daskbicl.micro_budget" in str(err)
        return
    if want is None:
        return
    t = tables(*p, n_tasks=n_tasks, budget=budget, method=method)
    got = mocice_bcubed(t)
    np.testing.assert_allclose(got, [float(x) for x in want], rtol=1e-13, atol=1e-15)
    assert 0 <= t.bcubed_error < 1e-10  # duplicated biclusters cancel: kappa ~ 2**(copies)


@SETTINGS
@given(problems())
def test_ce_rnia_e4sc_equal_oracle(p):
    t = tables(*p)
    for ms in (False, True):
        want = agree(partial(micro_ce, t, exact=True, multiset=ms), partial(oracle.micro_ce, *p, multiset=ms))
        agree(partial(rnia, t, exact=True, multiset=ms), partial(oracle.rnia, *p, multiset=ms))
        if want is not None:
            assert micro_ce(t, multiset=ms) == float(want)  # an exact ratio rounded once
    # the default is the published multiset reading
    agree(partial(micro_ce, t, exact=True), partial(oracle.micro_ce, *p, multiset=True))
    agree(partial(rnia, t, exact=True), partial(oracle.rnia, *p, multiset=True))
    want = agree(partial(e4sc, t, exact=True), partial(oracle.e4sc, *p))
    if want is not None:
        assert e4sc(t) == pytest.approx(float(want), rel=4 * 2**-53, abs=1e-300)


def cell_histogram(tr, tc, pr, pc) -> np.ndarray:
    """h[a, b]: cells in a truth and b pred biclusters, brute force."""
    a = (tr[:, :, None] & tc[:, None, :]).sum(axis=0)
    b = (pr[:, :, None] & pc[:, None, :]).sum(axis=0)
    h = np.zeros((len(tr) + 1, len(pr) + 1), dtype=object)
    np.add.at(h, (a.ravel(), b.ravel()), 1)
    return h


@SETTINGS
@given(problems(max_n=9, max_k=5), st.integers(1, 5))
def test_coverage_equals_brute_force_cells(p, n_tasks):
    """The coverage counts from the family's moments equal the counts of every cell."""
    want = coverage_from_histogram(cell_histogram(*p), len(p[0]), len(p[2]))
    for how in ("family", "pairs", None):
        assert tables(*p, n_tasks=n_tasks, coverage_by=how).coverage == want
    assert tables(*p, budget=1, coverage_by="family").coverage == want
    for method in ("family", "classes"):
        assert tables(*p, n_tasks=n_tasks, method=method).coverage == want


@SETTINGS
@given(problems(max_n=6, max_k=4))
def test_moments_invert_to_the_histogram(p):
    """m[p, q] = sum_x C(a_x, p) C(b_x, q) inverts back to the cell histogram."""
    h = cell_histogram(*p)
    k, l_ = h.shape[0] - 1, h.shape[1] - 1
    m = [[sum(int(h[a, b]) * math.comb(a, i) * math.comb(b, j) for a in range(k + 1) for b in range(l_ + 1))
          for j in range(l_ + 1)] for i in range(k + 1)]
    assert coverage_from_moments(m, k, l_) == coverage_from_histogram(h, k, l_)


def brute_family(tr, tc, pr, pc) -> dict:
    """Every set W of biclusters with N(W) > 0, with N(W) (brute force)."""
    rows, cols = np.vstack([tr, pr]), np.vstack([tc, pc])
    out = {}
    for size in range(len(rows) + 1):
        for w in itertools.combinations(range(len(rows)), size):
            n = int(rows[list(w)].all(axis=0).sum() if w else rows.shape[1]) * \
                int(cols[list(w)].all(axis=0).sum() if w else cols.shape[1])
            if n:
                out[w] = n
    return out


@SETTINGS
@given(problems(max_n=7, max_k=4), st.data())
def test_family_walk_equals_brute_force(p, data):
    """A closure part stores every superset of B with its N; the parts partition F."""
    from daskbicl.kernels.micro.family_walk import Lists, Moments, Start, Walk, enumerate_family

    tr, tc, pr, pc = p
    k, n = len(tr), len(tr) + len(pr)
    fam = brute_family(*p)
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    rnd = np.random.default_rng(0).integers(0, 2**63, max(n, 1), dtype=np.int64).astype(np.uint64)
    required = tuple(sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=2)))) if n else ()
    lists = Lists(*subproblem(rows, required), *subproblem(cols, required))
    lo = np.zeros((k + 1, n - k + 1), np.uint64)
    out = enumerate_family(lists, Start(n, k), Moments(lo, lo.copy()), Walk.storing(10**6, 16, rnd))
    assert not out.full
    n_nodes, elem, parent, end, ncell, dptr, down = (out.n_nodes, out.elem, out.parent, out.end, out.cells,
                                                     out.dptr, out.down)
    got = {}
    for node in range(n_nodes):
        s, j = set(required), node
        while j > 0:
            s.add(int(elem[j]))
            j = parent[j]
        if s:  # the root of B = {} stands for the empty set, counted by the plan (I J cells)
            got[tuple(sorted(s))] = int(ncell[node])
        assert all(parent[x] >= node for x in range(node + 1, end[node]))  # subtree ranges
        members = sorted(s - set(required))
        for a, low in zip(members, down[dptr[node] : dptr[node + 1]]):  # links to W - a
            t, j = set(required), int(low)
            while j > 0:
                t.add(int(elem[j]))
                j = parent[j]
            assert t == s - {a}
    assert got == {w: v for w, v in fam.items() if set(required) <= set(w) and w}
    # the coverage parts of a plan visit every non-empty set of F exactly once
    plan = plan_micro(rows, cols, coverage=True, budget=2, n_tasks=3, coverage_by="family")
    results = [run_task(plan, i, rows, cols) for i in range(len(plan.tasks))]
    total = plan.moments + sum(r.moments for r in results)
    want = np.zeros((k + 1, n - k + 1), dtype=object)
    for w, v in fam.items():
        t = sum(1 for x in w if x < k)
        want[t, len(w) - t] += v
    assert (total == want).all()


def test_tasks_and_budget_do_not_change_the_result():
    """Deal the parts into 1..16 tasks, force splits: the exact result does not move."""
    rng = np.random.default_rng(3)
    tr, tc = rng.random((4, 12)) < 0.6, rng.random((4, 12)) < 0.6
    pr, pc = rng.random((2, 12)) < 0.3, rng.random((2, 12)) < 0.3
    want = bcubed(tr, tc, pr, pc)
    assert want == oracle.mocice_bcubed(tr, tc, pr, pc)
    for n_tasks, budget in ((1, 1 << 22), (16, 1 << 22), (4, 10), (2, 5)):
        assert bcubed(tr, tc, pr, pc, n_tasks=n_tasks, budget=budget, method="family") == want
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    plan = plan_micro(rows, cols, bcubed=True, budget=5, n_tasks=4, method="family")
    jac, tab = jaccard_table(tables(tr, tc, pr, pc).overlap, exact=True), union_tables(rows, cols)
    results = [run_task(plan, i, rows, cols, jac, tab, exact=True) for i in range(len(plan.tasks))]
    assert any(r.nodes > 5 for r in results)  # more sets than the budget: the part was split where it ran
    assert tuple(finish(plan, results, tab, exact=True)[1]) == tuple(want)


def test_more_than_64_biclusters():
    rng = np.random.default_rng(5)
    tr, tc = rng.random((40, 5)) < 0.3, rng.random((40, 5)) < 0.3
    pr, pc = rng.random((30, 5)) < 0.3, rng.random((30, 5)) < 0.3
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    assert tuple(bcubed(tr, tc, pr, pc)) == want
    t = tables(tr, tc, pr, pc, exact=True)
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

    z, w, zp, wp = labels(n_i), labels(n_j), labels(n_i), labels(n_j)
    tr, tc = labels_to_biclusters(z, w)
    pr, pc = labels_to_biclusters(zp, wp)
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    assert tuple(bcubed(tr, tc, pr, pc)) == want
    t = tables(tr, tc, pr, pc)
    assert micro_ce(t, exact=True) == oracle.micro_ce(tr, tc, pr, pc)
    # disjoint covering blocks: set and multiset unions coincide
    assert micro_ce(t, exact=True) == micro_ce(t, exact=True, multiset=False)
    assert rnia(t, exact=True) == 0 == rnia(t, exact=True, multiset=False)
    # the co-clustering path: contingency tables only, no masks, same values
    rows, cols = Table.from_labels(z, zp), Table.from_labels(w, wp)
    assert tuple(coclustering_bcubed(rows, cols, exact=True)) == want
    np.testing.assert_allclose(coclustering_bcubed(rows, cols), to_float(want), rtol=6 * 2**-53)
    ov, cov = coclustering_overlap(rows, cols), coclustering_coverage(rows, cols)
    assert np.array_equal(ov.shared, t.overlap.shared)
    assert np.array_equal(ov.truth_sizes, t.overlap.truth_sizes)
    assert np.array_equal(ov.pred_sizes, t.overlap.pred_sizes)
    assert cov == t.coverage
    assert e4sc(t, exact=True) == oracle.e4sc(tr, tc, pr, pc)


def test_coclustering_path_on_many_blocks():
    """30 x 30 clusters on 20000 x 20000: 900 blocks per side, no mask anywhere.

    Its time is measured in benchmarks/coclustering_blocks.py, not asserted here.
    """
    rng = np.random.default_rng(3)
    z, zp, w, wp = (rng.integers(0, 30, 20_000) for _ in range(4))
    rows, cols = Table.from_labels(z, zp), Table.from_labels(w, wp)
    prf = coclustering_bcubed(rows, cols)
    ov = coclustering_overlap(rows, cols)
    assert ov.shared.shape == (900, 900) and ov.shared.sum() == 20_000**2
    assert 0 < prf.precision < 1 and 0 < prf.recall < 1


# --------------------------------------------------------------------------
# SPEC §6 properties
# --------------------------------------------------------------------------
@SETTINGS
@given(problems())
def test_identical_scores_exactly_one(p):
    tr, tc = p[0], p[1]
    if not covers(tr, tc):
        return  # nothing covered: 0/0 (test_nothing_covered_on_either_side)
    perm = np.random.default_rng(0).permutation(len(tr))
    for exact in (True, False):
        got = bcubed(tr, tc, tr[perm], tc[perm], exact=exact)
        assert tuple(got) == (1, 1, 1)
    t = tables(tr, tc, tr[perm], tc[perm])
    assert (micro_ce(t), rnia(t)) == (0.0, 0.0)  # the default multiset union
    has_empty = not (tr.any(axis=1) & tc.any(axis=1)).all()
    assert (e4sc(t) == 1.0) == (not has_empty)  # an empty bicluster contributes F1 = 0


def test_overlapping_perfect_match_has_zero_ce_by_default():
    """Two truth biclusters sharing half of one: the set union made CE = -0.5."""
    rows, cols = np.array([[1, 1], [0, 1]], bool), np.array([[1], [1]], bool)
    t = tables(rows, cols, rows, cols)
    assert micro_ce(t) == 0.0 and micro_ce(t, exact=True) == 0
    assert rnia(t) == 0.0
    # the opt-in set reading: |U| = 2 cells, D_max = 2 + 1
    assert micro_ce(t, multiset=False, exact=True) == Fraction(-1, 2)
    assert oracle.micro_ce(rows, cols, rows, cols, multiset=False) == Fraction(-1, 2)


def test_multiset_must_be_a_boolean():
    t = tables(*[np.ones((1, 2), bool)] * 4)
    for bad in ("false", "False", 0, None):
        with pytest.raises(InputError, match="multiset must be True or False"):
            micro_ce(t, multiset=bad)
        with pytest.raises(InputError, match="multiset must be True or False"):
            rnia(t, multiset=bad)


@SETTINGS
@given(problems())
def test_ce_is_within_zero_one_by_default(p):
    t = tables(*p)
    if not (covers(p[0], p[1]) or covers(p[2], p[3])):
        return
    assert 0 <= micro_ce(t, exact=True) <= 1
    assert 0 <= rnia(t, exact=True) <= 1


@st.composite
def distinct_problems(draw, max_n=7, max_k=4):
    """Two sides of distinct non-empty cell sets (plus, maybe, an empty bicluster), not equal.

    Drawn directly, so every example is tested (filtering ``problems()``
    returned early on ~88% of them).
    """
    n_i, n_j = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))

    def side():
        sets = draw(st.lists(st.tuples(st.integers(1, 2**n_i - 1), st.integers(1, 2**n_j - 1)),
                             min_size=1, max_size=max_k, unique=True))  # distinct (rows, cols): distinct cells
        rows = np.array([[(r >> i) & 1 for i in range(n_i)] for r, _ in sets], dtype=bool)
        cols = np.array([[(c >> j) & 1 for j in range(n_j)] for _, c in sets], dtype=bool)
        if draw(st.booleans()):  # an empty bicluster (rows, no column) has no cell: it changes nothing
            rows, cols = np.vstack([rows, rows[:1]]), np.vstack([cols, np.zeros((1, n_j), bool)])
        return rows, cols

    (tr, tc), (pr, pc) = side(), side()
    assume(multiset_of_cells(tr, tc) != multiset_of_cells(pr, pc))
    return tr, tc, pr, pc


@SETTINGS
@given(distinct_problems())
def test_different_distinct_biclusters_score_below_one(p):
    tr, tc, pr, pc = p
    a, b = multiset_of_cells(tr, tc), multiset_of_cells(pr, pc)
    assert len(set(a)) == len(a) and len(set(b)) == len(b) and a != b and a and b  # the strategy's promise
    assert bcubed(*p).f1 < 1


def test_duplicate_biclusters_can_score_one():
    """SPEC §6 lists "1 iff pred = truth"; the "only if" fails with repeated biclusters.

    On a 3 x 1 matrix take the 7 non-empty row sets with multiplicities
    truth (1, 2, 2, 2, 1, 1, 1) and pred (2, 1, 1, 1, 2, 2, 2) for
    {012, 01, 02, 12, 0, 1, 2}: every pair of cells lies in equally many
    truth and pred biclusters, all identical, so P = R = 1 although the
    multisets differ (11 vs 10 biclusters).  With distinct biclusters on
    each side the property holds (test above).
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


def test_set_union_ce_is_negative_for_overlaps():
    """``multiset=False`` (U a set): CE < 0 for identical overlapping inputs.

    truth = pred = {A, B} with B inside A: D_max = |A| + |B| > |U| = |A|.
    The default multiset union (Patrikainen & Meila, biclustlib) gives 0.
    """
    rows = np.array([[1, 1, 1], [1, 0, 0]], bool)
    cols = np.array([[1, 1], [1, 0]], bool)
    t = tables(rows, cols, rows, cols)
    assert micro_ce(t, exact=True, multiset=False) == Fraction(-1, 6)
    assert micro_ce(t, exact=True) == 0
    assert oracle.micro_ce(rows, cols, rows, cols, multiset=False) == Fraction(-1, 6)


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
    assert got == want  # MOCICE-BCubed P, R, F1, CE, RNIA, E4SC


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
    if not (tr.any() or pr.any()):
        return  # nothing covered: 0/0
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


def _transpose_if(flag, tr, tc, pr, pc):
    """Swap the roles of rows and columns (splits along rows instead of columns)."""
    return (tc, tr, pc, pr) if flag else (tr, tc, pr, pc)


@st.composite
def mixed_cluster_cases(draw):
    """Overlapping truth with varied column sets and a pred bicluster mixing two classes.

    Truth B0 and B1 share the rows ``e`` (they overlap) and have their own
    columns ``a`` (B0 only) and ``b`` (B1 only); the mixed pred bicluster is
    e x (a | b), the pure pieces e x a and e x b.  No other truth bicluster
    touches the mixed one (then its pieces would not be pure); other pred
    biclusters are arbitrary.  Half the cases are transposed (split rows).
    """
    n_i, n_j, k = draw(st.integers(1, 6)), draw(st.integers(2, 6)), draw(st.integers(2, 4))
    tr, tc = bool_matrix(draw, k, n_i), bool_matrix(draw, k, n_j)
    r0 = draw(st.integers(0, n_i - 1))
    ca, cb = draw(st.lists(st.integers(0, n_j - 1), min_size=2, max_size=2, unique=True))
    tr[:2, r0] = True
    tc[0, ca], tc[1, ca], tc[1, cb], tc[0, cb] = True, False, True, False
    e = tr[0] & tr[1] & bool_matrix(draw, 1, n_i)[0]
    a = tc[0] & ~tc[1] & bool_matrix(draw, 1, n_j)[0]
    b = tc[1] & ~tc[0] & bool_matrix(draw, 1, n_j)[0]
    e[r0], a[ca], b[cb] = True, True, True
    tc[2:, a | b] = False
    n_o = draw(st.integers(0, 2))
    opr, opc = bool_matrix(draw, n_o, n_i), bool_matrix(draw, n_o, n_j)
    mixed = (np.vstack([e, opr]), np.vstack([a | b, opc]))
    pure = (np.vstack([e, e, opr]), np.vstack([a, b, opc]))
    flip = draw(st.booleans())
    return _transpose_if(flip, tr, tc, *mixed), _transpose_if(flip, tr, tc, *pure)


@SETTINGS
@given(mixed_cluster_cases())
def test_splitting_a_mixed_bicluster_scores_higher_with_overlapping_truth(case):
    mixed, pure = case
    assert bcubed(*pure).f1 > bcubed(*mixed).f1


@st.composite
def two_piece_cases(draw):
    """Overlapping truth; two pred pieces e x a and e x b of truth bicluster B0.

    ``a`` and ``b`` are disjoint column sets of B0 (so the pieces have
    different column sets), e rows of B0; other truth biclusters are
    arbitrary (they may overlap B0 and the pieces), other pred biclusters do
    not touch the pieces.  Half the cases are transposed (pieces split rows).
    """
    n_i, n_j, k = draw(st.integers(1, 6)), draw(st.integers(2, 6)), draw(st.integers(1, 4))
    tr, tc = bool_matrix(draw, k, n_i), bool_matrix(draw, k, n_j)
    r0 = draw(st.integers(0, n_i - 1))
    ca, cb = draw(st.lists(st.integers(0, n_j - 1), min_size=2, max_size=2, unique=True))
    tr[0, r0], tc[0, ca], tc[0, cb] = True, True, True
    e = tr[0] & bool_matrix(draw, 1, n_i)[0]
    side = np.array([draw(st.booleans()) for _ in range(n_j)])
    a, b = tc[0] & side, tc[0] & ~side
    e[r0], a[ca], b[cb], a[cb], b[ca] = True, True, True, False, False
    n_o = draw(st.integers(0, 2))
    opr, opc = bool_matrix(draw, n_o, n_i), bool_matrix(draw, n_o, n_j)
    opc[:, a | b] = False
    split = (np.vstack([e, e, opr]), np.vstack([a, b, opc]))
    merged = (np.vstack([e, opr]), np.vstack([a | b, opc]))
    flip = draw(st.booleans())
    return _transpose_if(flip, tr, tc, *split), _transpose_if(flip, tr, tc, *merged)


@SETTINGS
@given(two_piece_cases())
def test_merging_two_pieces_of_one_bicluster_scores_higher_with_overlapping_truth(case):
    split, merged = case
    assert bcubed(*merged).f1 > bcubed(*split).f1


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
    """Every SPEC §6 quantity is 0/0: an error, not a perfect score."""
    e = np.zeros((2, 3), bool)
    k0 = np.zeros((0, 3), bool)
    for tr, tc, pr, pc in ((e, e, e, e), (k0, k0, k0, k0), (e, np.ones((2, 3), bool), k0, k0)):
        t = tables(tr, tc, pr, pc)
        for f in (partial(bcubed, tr, tc, pr, pc), partial(bcubed, tr, tc, pr, pc, exact=False),
                  partial(micro_ce, t), partial(micro_ce, t, multiset=False), partial(rnia, t),
                  partial(e4sc, t)):
            with pytest.raises(InputError, match="truth and pred cover no cell"):
                f()


def test_one_side_empty():
    """Documented conventions: the 0/0 normaliser counts as 0; CE = RNIA = 1; E4SC = 0."""
    full, e = np.ones((1, 3), bool), np.zeros((1, 3), bool)
    assert tuple(bcubed(full, full, e, e)) == (0, 0, 0)
    assert tuple(bcubed(e, e, full, full)) == (0, 0, 0)
    assert tuple(bcubed(full, full, e[:0], e[:0])) == (0, 0, 0)
    for t in (tables(full, full, e, e), tables(e, e, full, full), tables(full, full, e[:0], e[:0])):
        assert (micro_ce(t), rnia(t), e4sc(t)) == (1.0, 1.0, 0.0)


def test_e4sc_averages_over_empty_biclusters():
    """SPEC: macroF1(A→B) is the mean over every a in A; an empty one scores F1 = 0."""
    rows, cols = np.array([[1, 1, 0]], bool), np.array([[1, 1]], bool)
    pr = np.array([[1, 1, 0], [0, 0, 1]], bool)
    pc = np.array([[1, 1], [0, 0]], bool)            # pred bicluster 1 has no column
    t = tables(rows, cols, pr, pc)
    # macroF1(pred→truth) = (1 + 0)/2, macroF1(truth→pred) = 1: hm = 2/3
    assert e4sc(t, exact=True) == Fraction(2, 3) == oracle.e4sc(rows, cols, pr, pc)
    assert e4sc(t) == pytest.approx(2 / 3, rel=4 * 2**-53)
    # empty biclusters on both sides do not make a perfect match perfect
    t2 = tables(pr, pc, pr, pc)
    assert e4sc(t2, exact=True) == Fraction(1, 2) == oracle.e4sc(pr, pc, pr, pc)


# --------------------------------------------------------------------------
# membership lists: chunking, merging, subproblems
# --------------------------------------------------------------------------
def multiset_of_lists(m: Memberships) -> list:
    return sorted((tuple(x), int(c)) for x, c in zip(m.lists(), m.cnt))


@SETTINGS
@given(problems(max_n=12, max_k=5), st.data())
def test_chunked_counts_merge_to_whole(p, data):
    tr, _, pr, _ = p
    whole = signature_counts(tr, pr)
    cuts = data.draw(chunkings(tr.shape[1]))
    parts = [signature_counts(tr[:, a:b], pr[:, a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    for merged in (merge_memberships(*parts), merge_memberships(parts[::-1]),
                   merge_memberships(merge_memberships(*parts[:2]), *parts[2:])):
        assert multiset_of_lists(merged) == multiset_of_lists(whole)
        assert np.array_equal(merged.gram, whole.gram) and merged.n_items == whole.n_items
    assert whole.n_items == tr.shape[1]
    both = np.vstack([tr, pr]).astype(np.int64)
    np.testing.assert_array_equal(whole.gram, both @ both.T)
    # the lists are the items' memberships, counted
    want: dict = {}
    for i in range(tr.shape[1]):
        key = tuple(np.flatnonzero(both[:, i]).tolist())
        if key:
            want[key] = want.get(key, 0) + 1
    assert multiset_of_lists(whole) == sorted(want.items())


@SETTINGS
@given(problems(max_n=10, max_k=4), st.data())
def test_subproblem_is_the_items_containing_b(p, data):
    tr, _, pr, _ = p
    n = len(tr) + len(pr)
    if n == 0:
        return
    m = signature_counts(tr, pr)
    req = tuple(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2))))
    keep = data.draw(st.sampled_from([None, "truth", "pred"]))
    ptr, el, cnt = subproblem(m, req if keep is None else (), keep)
    got: dict = {}
    for a, b, c in zip(ptr[:-1], ptr[1:], cnt):
        got[tuple(el[a:b].tolist())] = got.get(tuple(el[a:b].tolist()), 0) + int(c)
    assert len(got) == len(cnt)  # identical lists merged
    both = np.vstack([tr, pr])
    want: dict = {}
    for i in range(both.shape[1]):
        s = set(np.flatnonzero(both[:, i]).tolist())
        if keep is None and set(req) <= s:
            key = tuple(sorted(s - set(req)))
        elif keep is not None and s:
            key = tuple(sorted(x for x in s if (x < len(tr)) == (keep == "truth")))
            if not key:
                continue
        else:
            continue
        want[key] = want.get(key, 0) + 1
    assert got == want


def test_walk_without_store_reads_nothing_out_of_bounds():
    """Coverage mode (nothing stored) over many sets, run as plain Python so any index is checked.

    The compiled walk does not check bounds: its return read ``dptr[n_nodes]`` of a one-slot array in
    this mode, an out-of-bounds read that crashed the process (segmentation fault) when the address was
    unmapped (benchmarks/micro.py at 10^5 x 10^5, 20 + 20 random biclusters, density 0.2).
    """
    from daskbicl.kernels.micro.family_walk import Lists, Moments, Start, _walk_moments

    rng = np.random.default_rng(5)
    tr, pr = rng.random((4, 300)) < 0.5, rng.random((4, 300)) < 0.5
    tc, pc = rng.random((4, 200)) < 0.5, rng.random((4, 200)) < 0.5
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    lists = Lists(*subproblem(rows, (5,)), *subproblem(cols, (5,)))
    lo = np.zeros((5, 5), np.uint64)
    out = _walk_moments.py_func(lists, Start(8, 4, 0, 1, 0, 5), Moments(lo, lo.copy()), 0, 2**62)
    assert not out.full and out.n_nodes > 2
    assert all(len(a) == 0 for a in out[4:9]) and len(out.down) == 0 and out.dptr.tolist() == [0]


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
        merge_memberships(a, b)
    with pytest.raises(InputError, match="same truth and pred masks"):
        MicroTables(a, b)


def test_too_large_is_reported_after_a_trial_of_at_most_max_work():
    """A bound above max_work: the walks run as a trial of max_work units at most, then refuse."""
    rng = np.random.default_rng(0)
    tr, tc, pr, pc = (rng.random((8, 60)) < 0.6 for _ in range(4))
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    plan = plan_micro(rows, cols, coverage=True, max_work=3e4, coverage_by="family")  # walks ~4.7e5 units
    assert plan.trial and plan.trial_work == 3e4 and plan.lower is not None and plan.lower.coverage <= 3e4
    with pytest.raises(TooLargeError, match="max_work") as info:
        _ = tables(tr, tc, pr, pc, max_work=3e4, coverage_by="family").coverage
    assert "sets of biclusters that share a cell" in str(info.value)
    assert "did not finish in a trial of 3e+04 work units" in str(info.value)


def test_too_large_names_the_config_key_and_the_way_out():
    """score() has no max_work argument: the message names the dask config key."""
    rng = np.random.default_rng(0)
    tr, tc, pr, pc = (rng.random((30, 200)) < 0.8 for _ in range(4))
    t = tables(tr, tc, pr, pc, max_work=1e6)
    with pytest.raises(TooLargeError) as info:
        _ = t.bcubed
    msg = str(info.value)
    assert "dask.config.set({'daskbicl.max_work': " in msg
    assert "leave 'mocice_bcubed' out of measures" in msg
    assert "Raise max_work" not in msg
    # E4SC does not walk the family at all
    assert 0 <= e4sc(t) <= 1


def test_budget_error_names_the_config_key():
    """A part with both sides' biclusters cannot be split: beyond the budget it is refused."""
    rng = np.random.default_rng(1)
    tr, tc = rng.random((3, 40)) < 0.7, rng.random((3, 40)) < 0.7
    with pytest.raises(TooLargeError, match="daskbicl.micro_budget") as info:
        _ = tables(tr, tc, tr, tc, budget=2, method="family").bcubed
    assert "DASK_DASKBICL__MICRO_BUDGET=" in str(info.value)
    assert tables(tr, tc, tr, tc, budget=2).coverage  # coverage stores nothing: no budget


@SETTINGS
@given(problems(max_n=6, max_k=4), st.sampled_from(["family", "classes"]))
def test_float_error_within_the_computed_bound(p, method):
    """Relative error of P and R (float64) below the bound each run computes."""
    if not (covers(p[0], p[1]) or covers(p[2], p[3])):
        return
    want = mocice_bcubed(tables(*p, exact=True, method=method))
    t = tables(*p, n_tasks=3, method=method)
    got, bound = mocice_bcubed(t), t.bcubed_error
    assert 0 <= bound < 1e-10  # 0: a result of exactly 0 or 1 by convention
    for g, w in zip(got[:2], want[:2]):
        assert abs(Fraction(g) - w) <= bound * w, (g, w, bound)
    assert abs(Fraction(got[2]) - want[2]) <= (bound + 2**-52) * want[2]


def test_numba_is_imported_only_by_a_compiled_micro_kernel():
    """A tiny micro measure runs the kernels' plain-Python twins (no numba); forced compiled, numba is loaded."""
    code = ("import sys, daskbicl; assert 'numba' not in sys.modules; "
            "daskbicl.e4sc(daskbicl.biclustering([[1, 0]], [[1]]), daskbicl.biclustering([[1, 1]], [[1]])); "
            "assert 'numba' not in sys.modules; "
            "from daskbicl.kernels.compiled import compiled_only; "
            "a = daskbicl.micro_rnia(daskbicl.biclustering([[1, 0]], [[1]]), daskbicl.biclustering([[1, 1]], [[1]])); "
            "assert 'numba' not in sys.modules\n"
            "with compiled_only():\n"
            "    b = daskbicl.micro_rnia(daskbicl.biclustering([[1, 0]], [[1]]), daskbicl.biclustering([[1, 1]], [[1]]))\n"
            "assert 'numba' in sys.modules and a == b")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------
# scale smoke test
# --------------------------------------------------------------------------
def test_scale_smoke_10k_by_10k_20_plus_20():
    rng = np.random.default_rng(0)
    n = 10_000

    def masks(k):
        return rng.random((k, n)) < rng.uniform(0.05, 0.2, size=(k, 1))

    tr, tc, pr, pc = masks(20), masks(20), masks(20), masks(20)
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    s = micro_measures(rows, cols)
    assert 0 < s.bcubed.precision < 1 and 0 < s.bcubed.recall < 1
    assert 0 < s.ce < 1 and 0 < s.rnia < 1 and 0 < s.e4sc < 1
    cov = MicroTables(rows, cols).coverage
    assert cov.pred + cov.truth == cov.union + cov.intersection
    assert rows.nbytes < 4 * rows.el.nbytes + 8 * 40 * 40 + 10 * n  # lists, not rows x biclusters


def test_ce_assignment_and_block_table_are_bounded(monkeypatch):
    """CE's assignment is O(K L min(K, L)); co-clusterings' block table is dense."""
    import daskbicl.kernels.micro.micro_scores as KM

    rng = np.random.default_rng(2)
    tr, tc, pr, pc = (rng.random((6, 10)) < 0.5 for _ in range(4))
    t = tables(tr, tc, pr, pc)
    with pytest.raises(TooLargeError, match="assignment problem.*daskbicl.max_work"):
        micro_ce(t, max_work=1.0)
    assert micro_ce(t) == micro_ce(t, max_work=1e9)
    z, zp, w, wp = (rng.integers(0, 5, 40) for _ in range(4))
    rows, cols = Table.from_labels(z, zp), Table.from_labels(w, wp)
    monkeypatch.setattr(KM, "COCLUSTER_DENSE_LIMIT", 100)
    with pytest.raises(TooLargeError, match="MOCICE-BCubed and RNIA do not need it"):
        coclustering_overlap(rows, cols)
    assert 0 < coclustering_bcubed(rows, cols).f1 < 1


# --------------------------------------------------------------------------
# the cell-class method (kernels/micro/class_traces.py) and the choice of method
# --------------------------------------------------------------------------
@st.composite
def overlapping_problems(draw, max_n=6, max_k=4):
    """Biclusterings with duplicated, nested, empty and covering-everything biclusters on both sides."""
    n_i, n_j = draw(st.integers(1, max_n)), draw(st.integers(1, max_n))

    def side():
        k = draw(st.integers(1, max_k))
        r, c = bool_matrix(draw, k, n_i), bool_matrix(draw, k, n_j)
        extra_r, extra_c = [], []
        for kind in draw(st.lists(st.sampled_from(["dup", "nested", "empty", "all"]), max_size=4)):
            a = draw(st.integers(0, k - 1))
            if kind == "dup":
                nr, nc = r[a], c[a]
            elif kind == "nested":  # a sub-rectangle of bicluster a
                nr, nc = r[a] & bool_matrix(draw, 1, n_i)[0], c[a] & bool_matrix(draw, 1, n_j)[0]
            elif kind == "empty":
                nr, nc = r[a], np.zeros(n_j, bool)
            else:
                nr, nc = np.ones(n_i, bool), np.ones(n_j, bool)
            extra_r.append(nr)
            extra_c.append(nc)
        return (np.concatenate([r, np.reshape(np.array(extra_r, bool), (-1, n_i))]),
                np.concatenate([c, np.reshape(np.array(extra_c, bool), (-1, n_j))]))

    tr, tc = side()
    pr, pc = side()
    return tr, tc, pr, pc


@SETTINGS
@given(overlapping_problems(), st.integers(1, 4))
def test_class_method_equals_oracle_exactly(p, n_tasks):
    """Exact (Fractions) classes == the SPEC oracle: MOCICE-BCubed and the coverage counts."""
    want = agree(partial(bcubed, *p, method="classes", n_tasks=n_tasks), partial(oracle.mocice_bcubed, *p))
    cov = coverage_from_histogram(cell_histogram(*p), len(p[0]), len(p[2]))
    assert tables(*p, method="classes", n_tasks=n_tasks).coverage == cov
    if want is not None:
        t = tables(*p, method="classes", n_tasks=n_tasks)
        got = mocice_bcubed(t)
        for g, w in zip(got[:2], want[:2]):
            assert abs(Fraction(g) - w) <= t.bcubed_error * w


def test_class_method_large_classes_and_both_inner_sums():
    """Classes of more than 16 distinct biclusters (sorted traces) and both inner sums agree."""
    from daskbicl.kernels.micro.class_traces import (
        class_bcubed,
        class_bcubed_exact,
        covered,
        enumerate_classes,
        merge_identical,
    )
    from daskbicl.kernels.micro.micro_scores import bicluster_overlap

    rng = np.random.default_rng(5)
    n_i, n_j, k = 5, 4, 11
    tr, tc, pr, pc = (rng.random((k, n)) < 0.75 for n in (n_i, n_j, n_i, n_j))
    for m in (tr, tc, pr, pc):
        m[:, 0] = True  # cell (0, 0) is in every bicluster: a class of 22
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    merged = merge_identical(rows, cols)
    table = enumerate_classes(merged)
    assert table is not None and table.sizes.max() > 16  # beyond the dense trace table
    ov = bicluster_overlap(rows, cols)
    pe, re_ = class_bcubed_exact(merged, table, jaccard_table(ov, exact=True))
    up, ut = covered(merged, table)
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    assert (pe / up, re_ / ut) == want[:2]
    for mode in (0, 1, 2, 3):  # the cheapest, pairs of traces, the transform, subsets from bit sets
        p, r, _ = class_bcubed(merged, table, jaccard_table(ov), mode=mode)
        assert p / up == pytest.approx(float(want[0]), rel=1e-13)
        assert r / ut == pytest.approx(float(want[1]), rel=1e-13)


def test_identical_biclusters_are_merged_with_multiplicities():
    """Five copies of a bicluster are one element of multiplicity 5: classes stay small."""
    from daskbicl.kernels.micro.class_traces import enumerate_classes, merge_identical

    rng = np.random.default_rng(7)
    tr, tc = rng.random((3, 30)) < 0.4, rng.random((3, 20)) < 0.4
    pr, pc = np.repeat(tr, 5, axis=0), np.repeat(tc, 5, axis=0)
    pc[-1] = False  # an empty bicluster has no cell: dropped
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    merged = merge_identical(rows, cols)
    assert merged.mult[3:].tolist() == [5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 4, 0, 0, 0, 0]
    assert merged.rep[-1] == -1
    table = enumerate_classes(merged)
    assert table is not None and table.sizes.max() <= 6  # never more than 3 truth + 3 pred
    small = tuple(x[:, :12] for x in (tr, tc, pr, pc))
    assert bcubed(*small, method="classes") == oracle.mocice_bcubed(*small)


def redundant(n_i, n_j, k, copies, density, seed):
    """Truth of k random biclusters; pred returns each `copies` times, 1 % of memberships flipped."""
    rng = np.random.default_rng(seed)
    tr, tc = rng.random((k, n_i)) < density, rng.random((k, n_j)) < density

    def flip(m):
        return np.where(m, rng.random(m.shape) >= 0.01, rng.random(m.shape) < 0.01 * density)

    pr = np.concatenate([flip(tr) for _ in range(copies)])
    pc = np.concatenate([flip(tc) for _ in range(copies)])
    return tr, tc, pr, pc


def test_redundant_5000_by_500_no_longer_runs_minutes():
    """The issue's 5000 x 500, 20 + 100 (5 copies) case ran 241 s, then refused: now an exact answer."""
    tr, tc, pr, pc = redundant(5000, 500, 20, 5, 0.05, seed=0)
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    plan = plan_micro(rows, cols, coverage=True, bcubed=True)
    assert plan.method == "classes" and plan.work < DEFAULT_MAX_WORK / 10  # its closed form: seconds at most
    t = MicroTables(rows, cols)
    p, r, f1 = mocice_bcubed(t)
    assert 0 < p < 1 and 0 < r <= 1 and t.coverage.union > 0
    # the same pair on a few rows and columns agrees with the oracle (copies, perturbed copies)
    small = redundant(7, 6, 3, 3, 0.5, seed=1)
    assert bcubed(*small, method="classes") == oracle.mocice_bcubed(*small)


def test_both_methods_beyond_max_work_refuse_within_the_trial():
    """Classes beyond max_work and a family bound beyond it: the plan walks nothing; the walk's lower bound
    is beyond the trial too, so the plan refuses at once (a trial of these tasks would run out)."""
    import dataclasses

    rng = np.random.default_rng(0)
    tr, tc, pr, pc = (rng.random((40, 3000)) < 0.3 for _ in range(4))
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    with pytest.raises(TooLargeError, match="daskbicl.max_work") as info:
        plan_micro(rows, cols, coverage=True, bcubed=False, max_work=1e6)
    assert "the exact walk needs at least ~" in str(info.value) and "so it is not tried" in str(info.value)
    plan = plan_micro(rows, cols, coverage=True, bcubed=False, max_work=float("inf"), method="family",
                      coverage_by="family")
    plan = dataclasses.replace(plan, max_work=1e6, trial=True)  # the trial the plan did not run
    assert plan.method == "family" and plan.work > 1e6 and plan.row_ranges is None
    with pytest.raises(TooLargeError, match="daskbicl.max_work") as info:
        for i in range(plan.n_tasks):
            run_task(plan, i, rows, cols)
    assert "did not finish in a trial of 1e+06 work units" in str(info.value)
    with pytest.raises(InputError, match="method must be one of"):
        plan_micro(rows, cols, method="walk")


def test_plan_takes_the_classes_or_the_walk():
    """Redundant outputs go to the classes; the family walk stays for sparse, many-signature inputs."""
    tr, tc, pr, pc = redundant(300, 300, 6, 5, 0.3, seed=2)
    plan = plan_micro(signature_counts(tr, pr), signature_counts(tc, pc), bcubed=True)
    assert plan.method == "classes"
    with pytest.raises(TooLargeError, match="daskbicl.micro_budget"):  # 2^copies sets per cell
        _ = MicroTables(signature_counts(tr, pr), signature_counts(tc, pc), method="family", max_work=1e15,
                        budget=1000).bcubed
    # random biclusters over many rows and columns: too many pairs of signatures for the classes
    rng = np.random.default_rng(3)
    tr, tc, pr, pc = (rng.random((20, 30_000)) < 0.1 for _ in range(4))
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    plan = plan_micro(rows, cols, coverage=True, bcubed=True)
    assert plan.method == "family", plan.notes
    assert rows.n_signatures * cols.n_signatures > 1e8


def test_redundant_outputs_on_a_local_cluster_equal_the_exact_classes(client):
    """daskbicl.score on two worker processes (the class method's tasks) == the Fraction result."""
    import daskbicl

    tr, tc, pr, pc = redundant(400, 300, 4, 5, 0.3, seed=4)
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    assert plan_micro(rows, cols, coverage=True, bcubed=True).method == "classes"
    want = MicroTables(rows, cols, exact=True)
    got = daskbicl.score(daskbicl.biclustering(tr, tc), daskbicl.biclustering(pr, pc),
                         measures=["mocice_bcubed", "micro_rnia"])
    for g, w in zip(got["mocice_bcubed"], mocice_bcubed(want)):
        assert abs(Fraction(g) - w) <= 1e-13 * w
    assert got["micro_rnia"] == float(rnia(want, exact=True))


# --------------------------------------------------------------------------- compiled helpers (issue 28)

@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_compiled_argsort_is_numpys_stable_order(dtype):
    """The class kernels sort with a plain-loop merge sort (numba compiles it faster than np.argsort):
    the same order as numpy's stable sort, ties by position, on lengths 0..70 and many ties, run plain and compiled."""
    import numba

    from daskbicl.kernels.micro import class_kernels  # noqa: F401 - registers the loops' helpers with numba
    from daskbicl.kernels.micro.class_loops import _argsort

    compiled_argsort = numba.njit(lambda vals, n: _argsort(vals, n))

    rng = np.random.default_rng(5)
    for n in [*range(0, 20), 31, 32, 33, 64, 70]:
        for high in (2, 5, 1000):
            vals = rng.integers(-high, high, n + 3).astype(dtype)
            want = np.argsort(vals[:n], kind="stable")
            assert _argsort(vals, n).tolist() == want.tolist(), (n, high)
            assert compiled_argsort(vals, n).tolist() == want.tolist(), (n, high)


def test_grow_keeps_every_entry_of_each_dtype():
    """One generic grow for the walk's and the estimate's int32, int64 and uint64 arrays."""
    from daskbicl.kernels.micro.family_walk import _grow

    for dtype in (np.int32, np.int64, np.uint64):
        a = np.arange(5, dtype=dtype) * 3
        g = _grow(a, 7)
        assert g.dtype == dtype and len(g) == 10 and g[:5].tolist() == a.tolist()
        assert len(_grow(a, 23)) == 23


def test_nothing_covered_names_the_formula_not_a_registry_name():
    """Kernels name the published formula; which measures exist is said by the records only."""
    e = np.zeros((2, 3), bool)
    t = tables(e, e, e, e)
    for f, name in ((partial(micro_ce, t), "clustering error (CE)"), (partial(rnia, t), "(RNIA)"),
                    (partial(e4sc, t), "E4SC score"), (partial(bcubed, e, e, e, e), "MOCICE-BCubed")):
        with pytest.raises(InputError, match="truth and pred cover no cell") as err:
            f()
        assert f"{name} is undefined" in str(err.value)
