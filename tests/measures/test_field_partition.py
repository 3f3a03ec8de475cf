"""The per-axis measures the field reports (docs/measures/field.md) and accurate information measures.

* MI, entropies, NMI, AMI, VI against mpmath (50 digits) on near-trivial,
  balanced and many-cluster tables up to 10^10 elements: relative error
  at most 1e-12.
* NCE ``normalizer="per_axis"`` against a brute-force matching.
* Homogeneity, completeness, V-measure, NCA, PSI, RMI, ECS: brute-force
  oracles written from their definitions here (conditional entropies from
  labels, matchings by trying every permutation, element affinity vectors),
  then equality with their peers (scikit-learn, genieclust, clusim; the
  last two skipped when absent) on random inputs.
* Every door: Python, accessor, CLI, batch manifest.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from collections import Counter

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from sklearn import metrics as skm

import daskbicl
from daskbicl.kernels.coclustering import (
    cocluster_scores,
    element_centric,
    information_terms,
    information_theory,
    matching_accuracy,
    reduced_mi,
)
from daskbicl.kernels.coclustering.contingency import Table

from ..support.manifests import one_pair
from ..support.strategies import coclustering_pair

FIELD = ["homogeneity", "completeness", "v_measure", "nca", "psi", "rmi", "nrmi", "ecs"]
NAMES = [f"{stem}_{axis}" for stem in FIELD for axis in ("rows", "cols")]

mpmath.mp.dps = 50


# --------------------------------------------------------------------------- mpmath oracles


def mp_information(dense):
    """(MI, H(truth), H(pred), VI) of a dense table, in 50-digit arithmetic."""
    rows = [[mpmath.mpf(int(v)) for v in r] for r in dense]
    n = sum(sum(r) for r in rows)
    a = [sum(r) for r in rows]
    b = [sum(c) for c in zip(*rows)]
    mi = mpmath.fsum(c / n * mpmath.log(n * c / (a[i] * b[j]))
                     for i, r in enumerate(rows) for j, c in enumerate(r) if c)
    h = [-mpmath.fsum(x / n * mpmath.log(x / n) for x in s if x) for s in (a, b)]
    vi = mpmath.fsum(c / n * (mpmath.log(a[i] / c) + mpmath.log(b[j] / c))
                     for i, r in enumerate(rows) for j, c in enumerate(r) if c)
    return mi, h[0], h[1], vi


def mp_emi(a_sizes, b_sizes, n):
    """E[MI] under the permutation model, every hypergeometric term in 50 digits."""
    total = mpmath.mpf(0)
    for a in a_sizes:
        for b in b_sizes:
            lo, hi = max(1, a + b - n), min(a, b)
            den = mpmath.binomial(n, a)
            for k in range(lo, hi + 1):
                p = mpmath.binomial(b, k) * mpmath.binomial(n - b, a - k) / den
                total += p * k / n * mpmath.log(mpmath.mpf(n) * k / (a * b))
    return total


def _near_trivial(n, odd=1, same=False):
    """n labels per side, ``odd`` of them in a second cluster; on the same elements or on others."""
    if same:
        return [[n - odd, 0], [0, odd]]
    return [[n - 2 * odd, odd], [odd, 0]]


def _balanced(n, k, eps):
    """k x k, n elements, a diagonal excess of eps per cell (near independence for small eps)."""
    base = n // (k * k)
    return [[base + (eps if i == j else 0) for j in range(k)] for i in range(k)]


def _many(n, k, seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k * k, 0.3))
    return rng.multinomial(n, p).reshape(k, k).tolist()


TABLES = {
    "issue example 10^7": _near_trivial(10**7),
    "near trivial 10^10": _near_trivial(10**10),
    "three odd 10^9": _near_trivial(10**9, odd=3),
    "same odd 10^10": _near_trivial(10**10, same=True),
    "balanced 2x2 10^10": _balanced(10**10, 2, 1),
    "balanced 2x2 10^10 strong": _balanced(10**10, 2, 10**8),
    "balanced 10x10 10^9": _balanced(10**9, 10, 7),
    "many 40x40 10^10": _many(10**10, 40, 1),
    "many 60x60 10^6": _many(10**6, 60, 2),
}


def _rel(got, want):
    want = float(want)
    return abs(got - want) / abs(want) if want else abs(got)


@pytest.mark.parametrize("key", list(TABLES))
def test_information_is_accurate_to_the_last_digits(key):
    dense = TABLES[key]
    t = Table.from_dense(np.asarray(dense, dtype=np.int64))
    mi, h, hp, vi = mp_information(dense)
    assert _rel(information_terms.mutual_info(t), mi) <= 1e-12
    assert _rel(information_terms.entropy(t.truth_sizes()), h) <= 1e-12
    assert _rel(information_terms.entropy(t.pred_sizes()), hp) <= 1e-12
    assert _rel(information_terms.variation_of_information(t), vi) <= 1e-12
    for method, avg in (("arithmetic", (h + hp) / 2), ("geometric", mpmath.sqrt(h * hp)),
                        ("min", min(h, hp)), ("max", max(h, hp))):
        assert _rel(information_theory.nmi(t, method), min(mi / avg, 1)) <= 1e-12, method
    assert _rel(cocluster_scores.enmi(t, t), 2 * min(mi / max(h, hp), 1)) <= 1e-12


def test_the_issue_example_nmi():
    """10^7 labels, one odd label on each side (on different elements): NMI 5.84e-9, not 6.96e-9."""
    t = Table.from_dense(np.asarray(_near_trivial(10**7), dtype=np.int64))
    mi, h, hp, _ = mp_information(_near_trivial(10**7))
    assert f"{float(mi / ((h + hp) / 2)):.3g}" == "5.84e-09"
    assert _rel(daskbicl.nmi_rows(daskbicl.partition(*_labels_of(10**7), ), daskbicl.partition(*_labels_of(10**7, 1))),
                mi / ((h + hp) / 2)) <= 1e-12
    assert _rel(information_theory.nmi(t), mi / ((h + hp) / 2)) <= 1e-12


def _labels_of(n, odd_at=0):
    z = np.zeros(n, dtype=np.int64)
    z[odd_at] = 1
    return z, np.zeros(1, dtype=np.int64)


@pytest.mark.parametrize("dense", [_near_trivial(10**7), _near_trivial(10**10), _near_trivial(10**9, same=True),
                                   _near_trivial(10**6, odd=2)])
def test_ami_on_near_trivial_tables_against_mpmath(dense):
    """E[MI] and AMI keep their relative precision where E[MI] is 1e-13 (the full sum is short here)."""
    t = Table.from_dense(np.asarray(dense, dtype=np.int64))
    mi, h, hp, _ = mp_information(dense)
    emi = mp_emi(t.truth_sizes().tolist(), t.pred_sizes().tolist(), t.n)
    assert _rel(information_theory.expected_mutual_info(t), emi) <= 1e-12
    for method, avg in (("arithmetic", (h + hp) / 2), ("max", max(h, hp))):
        want = (mi - emi) / (avg - emi)
        assert _rel(information_theory.ami(t, method), want) <= 1e-12


@pytest.mark.parametrize("dense", [[[300, 310], [290, 302]], [[40, 3, 1], [2, 50, 4], [0, 5, 60]]])
def test_ami_on_balanced_tables_against_mpmath(dense):
    t = Table.from_dense(np.asarray(dense, dtype=np.int64))
    mi, h, hp, _ = mp_information(dense)
    emi = mp_emi(t.truth_sizes().tolist(), t.pred_sizes().tolist(), t.n)
    assert _rel(information_theory.expected_mutual_info(t), emi) <= 1e-12
    assert _rel(information_theory.ami(t), (mi - emi) / ((h + hp) / 2 - emi)) <= 1e-11  # |AMI| ~ 1e-3: cancellation


def test_exact_cases_stay_exact():
    same = Table.from_labels([0, 0, 1, 2, 2, 2], [7, 7, 3, 5, 5, 5])
    assert information_terms.mutual_info(same) == information_terms.entropy(same.truth_sizes())
    assert information_theory.nmi(same) == 1.0 and information_theory.vi(same, same) == 0.0
    assert information_terms.mutual_info(Table.from_labels([0] * 9, [0, 1, 2] * 3)) == 0.0
    independent = Table.from_dense(np.array([[2, 4], [3, 6]]))
    assert information_terms.mutual_info(independent) == 0.0


# --------------------------------------------------------------------------- NCE per_axis


def _matched_brute(x, y) -> int:
    tx, ty = sorted(set(x)), sorted(set(y))
    counts = Counter(zip(x, y))
    small, large, flip = (tx, ty, False) if len(tx) <= len(ty) else (ty, tx, True)
    return max(sum(counts[(p, s) if flip else (s, p)] for s, p in zip(small, perm))
               for perm in itertools.permutations(large, len(small)))


@given(pair=coclustering_pair(max_rows=9, max_cols=8))
@settings(max_examples=60, deadline=None)
def test_nce_per_axis_is_bikm1s_reading(pair):
    (z, w), (zp, wp) = pair
    factors = []
    for x, y in ((z, zp), (w, wp)):
        k = max(len(set(x.tolist())), len(set(y.tolist())))
        d = 1 - _matched_brute(x.tolist(), y.tolist()) / len(x)
        factors.append(1 - (d * k / (k - 1) if k > 1 else 0.0))
    got = daskbicl.nce((z, w), (zp, wp), normalizer="per_axis")
    assert got == pytest.approx(factors[0] * factors[1], abs=1e-12)
    assert 0.0 <= got <= 1.0


def test_nce_per_axis_differs_from_the_joint_normalisers():
    u = np.ones((3, 3), dtype=np.int64)
    rows, cols = Table.from_dense(u), Table.from_dense(np.array([[5, 0], [0, 5]]))
    assert cocluster_scores.nce(rows, cols, normalizer="per_axis") == 0.0  # one axis as bad as it can be
    assert cocluster_scores.nce(rows, cols) > 0.0
    with pytest.raises(daskbicl.DaskbiclError, match="normalizer must be one of 'corrected', 'printed', 'per_axis'"):
        daskbicl.nce(([0, 1], [0]), ([0, 1], [0]), normalizer="joint")


# --------------------------------------------------------------------------- brute-force oracles


def _entropy(labels) -> float:
    n = len(labels)
    return -math.fsum(c / n * math.log(c / n) for c in Counter(labels).values())


def _conditional(x, y) -> float:
    """H(x | y) from the joint and the marginal entropies of label lists."""
    return _entropy(list(zip(x, y))) - _entropy(y)


def homogeneity_brute(x, y):
    hx, hy = _entropy(x), _entropy(y)
    h = 1.0 if hx == 0 else 1 - _conditional(x, y) / hx
    c = 1.0 if hy == 0 else 1 - _conditional(y, x) / hy
    return h, c


def _injections(x, y):
    """Every one-to-one matching of x's clusters to y's (y padded with empty clusters)."""
    tx, ty = sorted(set(x)), sorted(set(y))
    pad = ty + [None] * max(0, len(tx) - len(ty))
    return tx, ty, itertools.permutations(pad, len(tx))


def nca_brute(x, y) -> float:
    tx, _, perms = _injections(x, y)
    counts, sizes = Counter(zip(x, y)), Counter(x)
    k = len(tx)
    if k == 1:
        return 1.0 if len(set(y)) == 1 else 0.0
    best = max(sum(counts[(s, p)] / sizes[s] for s, p in zip(tx, perm)) for perm in perms) / k
    return (best - 1 / k) / (1 - 1 / k)


def psi_brute(x, y) -> float:
    tx, ty, perms = _injections(x, y)
    if len(tx) == len(ty) == 1:
        return 1.0
    counts, a, b = Counter(zip(x, y)), Counter(x), Counter(y)
    s = max(sum(counts[(u, v)] / max(a[u], b[v]) for u, v in zip(tx, perm) if v is not None) for perm in perms)
    sa, sb = sorted(a.values(), reverse=True), sorted(b.values(), reverse=True)
    e = sum(p * q / (len(x) * max(p, q)) for p, q in zip(sa, sb))
    return 0.0 if s < e else (s - e) / (max(len(tx), len(ty)) - e)


def ecs_brute(x, y, alpha=0.9) -> float:
    """Mean over elements of 1 − ‖p_i − p'_i‖₁/(2α), with explicit affinity vectors."""
    n = len(x)

    def affinity(labels):
        size = Counter(labels)
        return [[(alpha / size[labels[i]] if labels[i] == labels[j] else 0.0) + (1 - alpha) * (i == j)
                 for j in range(n)] for i in range(n)]

    p, q = affinity(list(x)), affinity(list(y))
    return sum(1 - sum(abs(u - v) for u, v in zip(p[i], q[i])) / (2 * alpha) for i in range(n)) / n


def rmi_brute(x, y) -> float:
    """Exact information from factorials (math.lgamma per element count), minus the paper's log Ω."""
    counts, a, b, n = Counter(zip(x, y)), Counter(x), Counter(y), len(x)
    lf = lambda v: math.lgamma(v + 1)  # noqa: E731
    info = lf(n) + sum(map(lf, counts.values())) - sum(map(lf, a.values())) - sum(map(lf, b.values()))
    return (info - reduced_mi.log_omega(np.array(list(a.values())), np.array(list(b.values())))) / n


@given(pair=coclustering_pair(max_rows=9, max_cols=7))
@settings(max_examples=60, deadline=None)
def test_field_measures_by_brute_force(pair):
    (z, w), (zp, wp) = pair
    got = daskbicl.score((z, w), (zp, wp), measures=NAMES)
    for axis, (x, y) in (("rows", (z.tolist(), zp.tolist())), ("cols", (w.tolist(), wp.tolist()))):
        h, c = homogeneity_brute(x, y)
        assert got[f"homogeneity_{axis}"] == pytest.approx(h, abs=1e-12)
        assert got[f"completeness_{axis}"] == pytest.approx(c, abs=1e-12)
        assert got[f"v_measure_{axis}"] == pytest.approx(0.0 if h + c == 0 else 2 * h * c / (h + c), abs=1e-12)
        assert got[f"nca_{axis}"] == pytest.approx(nca_brute(x, y), abs=1e-12)
        assert got[f"psi_{axis}"] == pytest.approx(psi_brute(x, y), abs=1e-12)
        assert got[f"ecs_{axis}"] == pytest.approx(ecs_brute(x, y), abs=1e-12)
        assert got[f"ecs_{axis}"] == pytest.approx(ecs_brute(x, y, alpha=0.5), abs=1e-12)  # α cancels
        assert got[f"rmi_{axis}"] == pytest.approx(rmi_brute(x, y), abs=1e-9)


def test_log_omega_estimates_the_number_of_tables():
    """Enumerated tables with margins (a, b) against the estimate (it is an approximation: within 10 %)."""
    def count(a, b):
        if len(a) == 1:
            return 1
        total = 0
        for first in itertools.product(*(range(min(a[0], bj) + 1) for bj in b)):
            if sum(first) == a[0]:
                total += count(a[1:], [bj - f for bj, f in zip(b, first)])
        return total

    for a, b in (([5, 5], [5, 5]), ([4, 3, 3], [5, 5]), ([6, 4, 2], [4, 4, 4])):
        exact = math.log(count(a, b))
        assert reduced_mi.log_omega(np.array(a), np.array(b)) == pytest.approx(exact, rel=0.1)


def test_ecs_cell_scores_are_the_element_scores():
    x, y = [0, 0, 1, 1, 1], [0, 1, 1, 1, 2]
    t = Table.from_labels(x, y)
    per_cell = dict(zip(zip(t.truth_labels[t.rows].tolist(), t.pred_labels[t.cols].tolist()),
                        element_centric.cell_scores(t).tolist()))
    n, alpha = len(x), 0.9
    for i in range(n):
        l1 = sum(abs((alpha / x.count(x[i]) if x[i] == x[j] else 0) - (alpha / y.count(y[i]) if y[i] == y[j] else 0))
                 for j in range(n))
        assert per_cell[(x[i], y[i])] == pytest.approx(1 - l1 / (2 * alpha), abs=1e-15)


def test_matching_is_the_same_dense_and_sparse():
    rng = np.random.default_rng(4)
    for _ in range(20):
        t = Table.from_labels(rng.integers(0, 9, 300), rng.integers(0, 7, 300))
        assert matching_accuracy.nca(t) == pytest.approx(matching_accuracy.nca(t, dense_limit=0), abs=1e-13)
        assert matching_accuracy.psi(t) == pytest.approx(matching_accuracy.psi(t, dense_limit=0), abs=1e-13)


# --------------------------------------------------------------------------- peers


def _random_pairs(seed, count=40):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, 200))
        x = rng.integers(0, rng.integers(1, 8), n)
        y = np.where(rng.random(n) < rng.random(), x, rng.integers(0, rng.integers(1, 8), n))
        yield x, y


@pytest.mark.parametrize("beta", [1.0, 0.5, 2.0, 1e-3])
def test_homogeneity_completeness_v_measure_equal_scikit_learn(beta):
    for x, y in _random_pairs(1):
        h, c, v = skm.homogeneity_completeness_v_measure(x, y, beta=beta)
        got = daskbicl.score((x, [0]), (y, [0]), measures=["homogeneity_rows", "completeness_rows", "v_measure_rows"],
                             beta=beta)
        assert got["homogeneity_rows"] == pytest.approx(h, abs=1e-12)
        assert got["completeness_rows"] == pytest.approx(c, abs=1e-12)
        assert got["v_measure_rows"] == pytest.approx(v, abs=1e-12)


def test_nca_and_psi_equal_genieclust():
    gc = pytest.importorskip("genieclust.compare_partitions")
    compared = 0
    for x, y in _random_pairs(2, 80):
        # genieclust sizes its table by the largest label, so an unused label value below it would count
        # as an empty cluster (changing PSI's max(K, K')): give it the labels compacted to 0..K-1
        x, y = np.unique(x, return_inverse=True)[1], np.unique(y, return_inverse=True)[1]
        t = Table.from_labels(x, y)
        if 1 in t.shape:  # genieclust refuses a single cluster on either side
            continue
        assert daskbicl.psi_cols(([0], x), ([0], y)) == pytest.approx(gc.pair_sets_index(x, y), abs=1e-12)
        if t.shape[0] == t.shape[1]:  # genieclust's NCA accepts equal cluster counts only
            assert daskbicl.nca_rows((x, [0]), (y, [0])) == pytest.approx(
                gc.normalized_clustering_accuracy(x, y), abs=1e-12)
            compared += 1
    assert compared >= 5


def test_rmi_and_ecs_equal_clusim():
    pytest.importorskip("clusim")
    from clusim import sim
    from clusim.clustering import Clustering

    for x, y in _random_pairs(3, 30):
        c1, c2 = Clustering().from_membership_list(x.tolist()), Clustering().from_membership_list(y.tolist())
        got = daskbicl.score((x, [0]), (y, [0]), measures=["rmi_rows", "nrmi_rows", "ecs_rows"])
        assert got["rmi_rows"] == pytest.approx(sim.rmi(c1, c2, norm_type="none", logbase=np.e), abs=1e-12)
        assert got["ecs_rows"] == pytest.approx(sim.element_sim(c1, c2, alpha=0.9), abs=1e-12)
        if len(set(x.tolist())) > 1 or len(set(y.tolist())) > 1:  # clusim: nan (0/0) when both are trivial
            assert got["nrmi_rows"] == pytest.approx(sim.rmi(c1, c2, norm_type="normalized"), abs=1e-12)


def test_perfect_values_and_degenerate_cases():
    same = ([0, 0, 1, 2, 2], [3, 3, 4])
    relabeled = ([5, 5, 9, 1, 1], [0, 0, 7])
    got = daskbicl.score(same, relabeled, measures=NAMES)
    for name in NAMES:
        if name.startswith("rmi"):
            continue
        assert got[name] == pytest.approx(1.0, abs=1e-15), name
    one = ([0, 0, 0], [0])
    assert daskbicl.score(one, one, measures=["nca_rows", "psi_rows", "nrmi_rows", "ecs_rows", "v_measure_rows"]) == \
        {"nca_rows": 1.0, "psi_rows": 1.0, "nrmi_rows": 1.0, "ecs_rows": 1.0, "v_measure_rows": 1.0}
    assert daskbicl.nca_rows(one, ([0, 1, 2], [0])) == 0.0
    # truth one cluster, pred several: h = 1, c = 0, so V = 0 for every beta (> 0), as scikit-learn
    assert daskbicl.v_measure_rows(([0, 0, 0], [0]), ([0, 1, 2], [0]), beta=0.01) == 0.0
    assert skm.v_measure_score([0, 0, 0], [0, 1, 2], beta=0.01) == 0.0


def test_bad_beta_is_refused_before_work():
    for bad in (-1, 0):  # beta > 0: the F-measure's beta has the same name and constraint
        with pytest.raises(daskbicl.DaskbiclError, match=r"parameter beta must be a number in \(0, inf\)"):
            daskbicl.v_measure_rows(([0, 1], [0]), ([0, 1], [0]), beta=bad)


# --------------------------------------------------------------------------- doors


def test_accessor_and_functions_agree():
    rng = np.random.default_rng(6)
    t = daskbicl.partition(rng.integers(0, 4, 200), rng.integers(0, 3, 30))
    p = daskbicl.partition(rng.integers(0, 5, 200), rng.integers(0, 3, 30))
    got = daskbicl.score(t, p, measures=NAMES)
    for name in NAMES:
        assert getattr(t.bicl, name)(p) == got[name] == getattr(daskbicl, name)(t, p), name


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("field")
    rng = np.random.default_rng(7)
    z, w = rng.integers(0, 5, 3000), rng.integers(0, 4, 500)
    zp = np.where(rng.random(3000) < 0.6, z, rng.integers(0, 6, 3000))
    wp = np.where(rng.random(500) < 0.7, w, rng.integers(0, 4, 500))
    daskbicl.save(daskbicl.partition(z, w), root / "t.zarr", chunk=1000)
    daskbicl.save(daskbicl.partition(zp, wp), root / "p.zarr", chunk=1000)
    return root, daskbicl.score((z, w), (zp, wp), measures=NAMES, beta=0.5)


def test_cli_scores_every_field_measure(stores):
    root, want = stores
    cmd = [sys.executable, "-m", "daskbicl", "score", str(root / "t.zarr"), str(root / "p.zarr"), "--json",
           "--scheduler", "threads", "--param", "beta=0.5"]
    for name in NAMES:
        cmd += ["--measure", name]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=240)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    got = got.get("scores", got)
    for name in NAMES:
        assert got[name] == pytest.approx(want[name], abs=1e-12), name
    bad = subprocess.run(cmd[:-2] + ["--param", "beta=-2"], capture_output=True, text=True, check=False, timeout=240)
    assert bad.returncode == 2 and "beta" in bad.stderr and "Traceback" not in bad.stderr


def test_batch_manifest_scores_every_field_measure(stores, tmp_path, client):
    from daskbicl.batch import ResultsDB, run_batch

    root, want = stores
    manifest = one_pair(tmp_path, list(NAMES), {"beta": 0.5}, truth=str(root / "t.zarr"), pred=str(root / "p.zarr"))
    report = run_batch(manifest, tmp_path / "r.sqlite", client=client)
    assert (report.scored, report.failed) == (1, 0)
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        rows = {r["measure"]: r["value"] for r in db.scores()}
    assert set(rows) == set(NAMES)
    for name in NAMES:
        assert rows[name] == pytest.approx(want[name], abs=1e-12), name


def test_benchmark_runs_quick():
    """benchmarks/field.py --quick: every field measure against its peer, with the load printed."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "field.py"
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "peer / ours" in proc.stdout and "load before" in proc.stdout
    assert "exact 5.841772e-09, textbook sums 6.963934e-09, daskbicl 5.841772e-09" in proc.stdout
    for stem in FIELD:
        assert f"{stem}_rows" in proc.stdout, stem
    assert "omega_rows" in proc.stdout and "clusim omega_index" in proc.stdout
    assert "onmi_rows" in proc.stdout and "cdlib onmi (LFK)" in proc.stdout


# --------------------------------------------------------------------------- random models (Gates & Ahn 2017)


def _set_partitions(items):
    """Every set partition of ``items`` (lists of blocks)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first, *part[i]]] + part[i + 1:]
        yield [[first], *part]


def _size_law(n, k=None):
    """Exact distribution of the sorted cluster sizes of a uniform partition (into k clusters if given)."""
    parts = [p for p in _set_partitions(list(range(n))) if k is None or len(p) == k]
    law = Counter(tuple(sorted(len(b) for b in p)) for p in parts)
    return {key: v / len(parts) for key, v in law.items()}


@pytest.mark.parametrize(("n", "k"), [(7, 3), (6, None), (8, 2)])
def test_random_partition_sizes_follow_the_enumerated_law(n, k):
    from scipy.stats import chisquare

    from daskbicl.kernels.coclustering import random_partitions

    rng = np.random.default_rng(11)
    law = _size_law(n, k)
    urns = random_partitions.urn_distribution(n)
    draws = Counter(
        tuple(sorted((random_partitions.sizes_num(n, k, rng) if k else random_partitions.sizes_all(n, rng, urns))
                     .tolist()))
        for _ in range(20_000))
    assert set(draws) <= set(law)
    keys = sorted(law)
    observed = [draws.get(key, 0) for key in keys]
    assert chisquare(observed, [law[key] * 20_000 for key in keys]).pvalue > 1e-4


@pytest.mark.parametrize(("model", "one_sided"), [("perm", True), ("num", True), ("num", False), ("all", True),
                                                  ("all", False)])
def test_null_model_means_equal_clusims_expected_rand(model, one_sided):
    """The mean Rand index of the draws against clusim's exact expectation for the model."""
    pytest.importorskip("clusim")
    from clusim import sim

    rng = np.random.default_rng(12)
    z, zp = rng.integers(0, 3, 14), rng.integers(0, 4, 14)
    t = Table.from_labels(z, zp)
    r = daskbicl.null((z, [0]), (zp, [0]), measures=["rand_rows"], n=4000, seed=5, model=model,
                      one_sided=one_sided)["rand_rows"]
    # clusim: clustering 1 is the random one, clustering 2 the gold standard
    want = sim.expected_rand_index(14, random_model=model + ("1" if one_sided and model != "perm" else ""),
                                   n_clusters1=t.shape[1], n_clusters2=t.shape[0],
                                   clu_size_seq1=t.pred_sizes().tolist(), clu_size_seq2=t.truth_sizes().tolist())
    assert r.mean == pytest.approx(float(want), abs=4 * r.std / math.sqrt(4000))
    assert (r.model, r.one_sided) == (model, one_sided)


def test_adjusted_form_and_its_interval():
    rng = np.random.default_rng(13)
    z, w = rng.integers(0, 3, 60), rng.integers(0, 2, 10)
    zp = np.where(rng.random(60) < 0.6, z, rng.integers(0, 3, 60))
    r = daskbicl.null((z, w), (zp, w), measures=["rand_rows", "ce", "comi"], n=500, seed=2, model="num")
    rand = r["rand_rows"]
    assert rand.adjusted == pytest.approx((rand.observed - rand.mean) / (1 - rand.mean), rel=1e-12)
    assert rand.adjusted_low < rand.adjusted < rand.adjusted_high
    ce = r["ce"]  # an error: perfect 0, adjusted = 1 − observed / mean
    assert ce.adjusted == pytest.approx(1 - ce.observed / ce.mean, rel=1e-12)
    assert math.isnan(r["comi"].adjusted)  # no fixed perfect value
    # the interval is that of the mean: adjusted from mean ± 1.96 se
    se = rand.std / math.sqrt(500)
    assert rand.adjusted_low == pytest.approx((rand.observed - rand.mean - 1.96 * se) / (1 - rand.mean - 1.96 * se))


def test_null_models_refuse_what_they_cannot_do():
    with pytest.raises(daskbicl.DaskbiclError, match="model must be one of 'perm', 'num', 'all'"):
        daskbicl.null(([0, 1], [0]), ([0, 1], [0]), model="uniform")
    with pytest.raises(daskbicl.DaskbiclError, match="one_sided must be a boolean"):
        daskbicl.null(([0, 1], [0]), ([0, 1], [0]), one_sided="maybe")
    z = np.arange(50) % 45  # 45 clusters of 50 rows: a uniform surjection almost never hits every cluster
    with pytest.raises(daskbicl.DaskbiclError, match="acceptance"):
        daskbicl.null((z, [0]), (z, [0]), measures=["ari_rows"], model="num")


def test_cli_null_with_a_random_model(stores):
    root, _ = stores
    cmd = [sys.executable, "-m", "daskbicl", "score", str(root / "t.zarr"), str(root / "p.zarr"), "--json",
           "--scheduler", "threads", "--measure", "psi_rows", "--measure", "cari", "--null", "49", "--seed", "3",
           "--null-model", "num", "--two-sided"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=240)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["psi_rows"]["model"] == "num" and got["psi_rows"]["one_sided"] is False
    want = daskbicl.null(str(root / "t.zarr"), str(root / "p.zarr"), measures=["psi_rows", "cari"], n=49, seed=3,
                         model="num", one_sided=False)
    assert got["cari"]["mean"] == pytest.approx(want["cari"].mean, abs=1e-12)
    assert got["cari"]["adjusted_low"] <= got["cari"]["adjusted"] <= got["cari"]["adjusted_high"]
