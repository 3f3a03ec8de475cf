"""recovered, redundancy, ce_sparse and ce_dense (docs/measures/recovery.md): Nicholls & Wallace's scores.

Each against a brute-force oracle written from the definition (cells
enumerated one by one, matchings by trying every one-to-one assignment, exact
fractions), against biclust_comp's own functions ported below (the package
is a Snakemake workflow, not installable), for its invariances, and through
Python, the accessor, a real LocalCluster with Zarr stores, the CLI and a
batch manifest.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl

from ..support.manifests import batch_command, one_pair
from ..support.strategies import biclustering_pair, chunks_for

NAMES = ["recovered", "redundancy", "ce_sparse", "ce_dense"]


# --------------------------------------------------------------------------- brute-force oracle


def _cells(rows: np.ndarray, cols: np.ndarray) -> list[set]:
    """The cell set of every bicluster, cell by cell."""
    return [{(i, j) for i in np.flatnonzero(r).tolist() for j in np.flatnonzero(c).tolist()}
            for r, c in zip(rows, cols)]


def _is_sparse(rows_k, cols_k, share: Fraction) -> bool:
    return Fraction(int(rows_k.sum()), rows_k.size) < share and Fraction(int(cols_k.sum()), cols_k.size) < share


def _best_matching(a: list[set], b: list[set]) -> int:
    """D_max: every one-to-one assignment of the smaller side tried."""
    if len(a) > len(b):
        a, b = b, a
    return max((sum(len(x & b[j]) for x, j in zip(a, perm)) for perm in itertools.permutations(range(len(b)), len(a))),
               default=0)


def ce_brute(truth, pred, cls: str, share=Fraction(2, 5)) -> float:
    t_cells, p_cells = _cells(*truth), _cells(*pred)
    keep = []
    for (rows, cols), cells in ((truth, t_cells), (pred, p_cells)):
        keep.append([c for k, c in enumerate(cells) if c and _is_sparse(rows[k], cols[k], share) == (cls == "sparse")])
    t, p = keep
    if not t:
        return math.nan
    if not p:
        return 0.0
    universe = set().union(*t, *p)
    union = sum(max(sum(x in c for c in t), sum(x in c for c in p)) for x in universe)
    return float(Fraction(_best_matching(t, p), union))


def redundancy_brute(pred, statistic="mean") -> float:
    cells = [c for c in _cells(*pred) if c]
    n = len(cells)
    if n < 2:
        return 0.0
    jac = {(k, l): Fraction(len(cells[k] & cells[l]), len(cells[k] | cells[l]))
           for k in range(n) for l in range(n) if k != l}
    if statistic == "mean":
        return float(sum(jac.values()) / (n * (n - 1)))
    if statistic == "max":
        return float(max(jac.values()))
    return float(sum(max(jac[k, l] for l in range(n) if l != k) for k in range(n)) / n)


def expected(truth, pred, statistic="mean") -> dict:
    return {"recovered": float(sum(1 for c in _cells(*pred) if c)),
            "redundancy": redundancy_brute(pred, statistic),
            "ce_sparse": ce_brute(truth, pred, "sparse"), "ce_dense": ce_brute(truth, pred, "dense")}


def _ds(m):
    return daskbicl.biclustering(np.asarray(m[0], bool), np.asarray(m[1], bool))


def _same(got, want, name):
    if math.isnan(want):
        assert math.isnan(got), name
    else:
        assert got == pytest.approx(want, abs=1e-12, rel=1e-12), name


@given(biclustering_pair(max_rows=8, max_cols=7, max_k=4), st.sampled_from(["mean", "average_max", "max"]))
@settings(max_examples=60)
def test_every_measure_matches_its_brute_force_definition(pair, statistic):
    truth, pred, _ = pair
    got = daskbicl.score(_ds(truth), _ds(pred), measures=NAMES, statistic=statistic)
    for name, want in expected(truth, pred, statistic).items():
        _same(got[name], want, name)


def _random_masks(rng, k, n_rows, n_cols, density=0.3):
    rows = rng.random((k, n_rows)) < rng.uniform(0.05, 0.8, (k, 1))
    cols = rng.random((k, n_cols)) < rng.uniform(0.05, 0.8, (k, 1))
    return rows, cols


def test_overlapping_and_empty_biclusters_match_the_oracle():
    """Heavier overlap, empty biclusters and both classes, beyond what hypothesis draws."""
    rng = np.random.default_rng(7)
    for _ in range(25):
        truth = _random_masks(rng, int(rng.integers(1, 5)), int(rng.integers(2, 14)), int(rng.integers(2, 11)))
        pred = _random_masks(rng, int(rng.integers(1, 5)), truth[0].shape[1], truth[1].shape[1])
        got = daskbicl.score(_ds(truth), _ds(pred), measures=NAMES)
        for name, want in expected(truth, pred).items():
            _same(got[name], want, name)


@pytest.mark.parametrize("share", [Fraction(1, 8), Fraction(3, 4), Fraction(1, 2)])
def test_share_moves_the_split_and_is_compared_exactly(share):
    rng = np.random.default_rng(3)
    for _ in range(10):
        truth = _random_masks(rng, 4, 8, 6)
        pred = _random_masks(rng, 3, 8, 6)
        for cls in ("sparse", "dense"):
            _same(getattr(daskbicl, f"ce_{cls}")(_ds(truth), _ds(pred), share=float(share)),
                  ce_brute(truth, pred, cls, share), cls)
    # exactly 2 of 5 rows is not below 0.4: dense, though 2/5 < 0.4000000000000000222 (the double)
    t = _ds(([[1, 1, 0, 0, 0]], [[1, 0, 0, 0, 0]]))
    assert math.isnan(daskbicl.ce_sparse(t, t)) and daskbicl.ce_dense(t, t) == 1.0
    assert daskbicl.ce_sparse(t, t, share=0.41) == 1.0


# --------------------------------------------------------------------------- biclust_comp, ported


# Ported from biclust_comp, biclust_comp/analysis/accuracy.py at commit
# 1b01d44e8a4ab4f40cf015e60bd39afb8616f89d (github.com/nichollskc/biclust_comp), line for line except:
# scipy's linear_sum_assignment stands for munkres.Munkres (both return an optimal assignment, whose
# total is unique), and the debugging prints of calc_clust_error_sparse_dense are left out.
# X_bin is (rows, K), B_bin is (columns, K): the transposes of daskbicl's row and column masks.


def bc_count_intersection_1D_arrays(array_a, array_b):
    non_zero_a = np.where(array_a == 1)[0]
    non_zero_b = np.where(array_b == 1)[0]
    return len(np.intersect1d(non_zero_a, non_zero_b))


def bc_calc_overlaps(X_bin_a, B_bin_a, X_bin_b, B_bin_b):
    K_a, K_b = X_bin_a.shape[1], X_bin_b.shape[1]
    intersect_matrix = np.zeros((K_a, K_b))
    union_matrix = np.zeros((K_a, K_b))
    for k_a in range(K_a):
        X_a_k, B_a_k = X_bin_a[:, k_a], B_bin_a[:, k_a]
        for k_b in range(K_b):
            X_b_k, B_b_k = X_bin_b[:, k_b], B_bin_b[:, k_b]
            cells_overlapping = bc_count_intersection_1D_arrays(X_a_k, X_b_k) * bc_count_intersection_1D_arrays(
                B_a_k, B_b_k)
            intersect_matrix[k_a, k_b] = cells_overlapping
            size_a = X_a_k.sum() * B_a_k.sum()
            size_b = X_b_k.sum() * B_b_k.sum()
            union_matrix[k_a, k_b] = size_a + size_b - cells_overlapping
    return intersect_matrix, union_matrix


def bc_calculate_union_size_combined(X_bin_a, B_bin_a, X_bin_b, B_bin_b):
    bic_counts_a = np.matmul(X_bin_a, B_bin_a.T)
    bic_counts_b = np.matmul(X_bin_b, B_bin_b.T)
    return np.maximum(bic_counts_a, bic_counts_b).sum()


def bc_calc_clust_error(intersect_matrix, union_size):
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(-1 * intersect_matrix)
    dmax = 0
    for pairing in zip(rows, cols):
        dmax += intersect_matrix[pairing[0], pairing[1]]
    return dmax / union_size


def bc_calc_clust_error_full(X_bin_a, B_bin_a, X_bin_b, B_bin_b):
    intersect_matrix, union_matrix = bc_calc_overlaps(X_bin_a, B_bin_a, X_bin_b, B_bin_b)
    union_size = bc_calculate_union_size_combined(X_bin_a, B_bin_a, X_bin_b, B_bin_b)
    return bc_calc_clust_error(intersect_matrix, union_size)


def bc_identify_sparse_biclusters(X_bin, B_bin):
    max_X_prop = 0.4
    max_B_prop = 0.4
    X_is_sparse = X_bin.mean(axis=0) < max_X_prop
    B_is_sparse = B_bin.mean(axis=0) < max_B_prop
    is_sparse = X_is_sparse * B_is_sparse
    sparse_indices = np.where(is_sparse)[0]
    dense_indices = np.where(is_sparse != True)[0]  # noqa: E712 (as written there)
    return sparse_indices, dense_indices


def bc_calculate_restricted_clust_error(X_bin_a, B_bin_a, X_bin_b, B_bin_b, ind_a, ind_b):
    if len(ind_a) == 0:
        CE = -1
    else:
        if len(ind_b) == 0:
            CE = 0
        else:
            CE = bc_calc_clust_error_full(X_bin_a[:, ind_a], B_bin_a[:, ind_a], X_bin_b[:, ind_b], B_bin_b[:, ind_b])
    return CE


def bc_calc_clust_error_sparse_dense(X_bin_a, B_bin_a, X_bin_b, B_bin_b):
    ind_sparse_a, ind_dense_a = bc_identify_sparse_biclusters(X_bin_a, B_bin_a)
    ind_sparse_b, ind_dense_b = bc_identify_sparse_biclusters(X_bin_b, B_bin_b)
    sparse_CE = bc_calculate_restricted_clust_error(X_bin_a, B_bin_a, X_bin_b, B_bin_b, ind_sparse_a, ind_sparse_b)
    dense_CE = bc_calculate_restricted_clust_error(X_bin_a, B_bin_a, X_bin_b, B_bin_b, ind_dense_a, ind_dense_b)
    return sparse_CE, dense_CE


def bc_redundancy(X_hat, B_hat):
    """construct_error_dict_binary_threshold's three redundancy columns, then
    accuracy_utils.calculate_adjusted_mean_redundancy (the MBR of the paper)."""
    self_intersect, self_union = bc_calc_overlaps(X_hat, B_hat, X_hat, B_hat)
    self_jaccard = self_intersect / self_union
    np.fill_diagonal(self_jaccard, 0)
    K = X_hat.shape[1]
    return {"mean": self_jaccard.mean() * (K - 1) / K, "average_max": self_jaccard.max(axis=0).mean(),
            "max": self_jaccard.max()}


def bc_calc_jaccard_rec_rel(intersect_matrix, union_matrix):
    jaccard_matrix = np.divide(intersect_matrix, union_matrix)
    return {"jaccard_relevance_scores": list(np.max(jaccard_matrix, axis=0)),
            "jaccard_recovery_scores": list(np.max(jaccard_matrix, axis=1))}


def bc_remove_empty_factors(X_raw, B_raw, threshold=0):
    """biclust_comp/utils.py at the same commit: factors with no row or no column are dropped."""
    factors_zero = np.all(abs(X_raw) <= threshold, axis=0) | np.all(abs(B_raw) <= threshold, axis=0)
    return X_raw[:, ~factors_zero], B_raw[:, ~factors_zero]


def biclust_comp_scores(truth, pred) -> dict:
    """What biclust_comp records for a thresholded result (construct_error_dict_binary_threshold)."""
    X_true, B_true = truth[0].T.astype(int), truth[1].T.astype(int)
    X_hat, B_hat = bc_remove_empty_factors(pred[0].T.astype(int), pred[1].T.astype(int))
    sparse, dense = bc_calc_clust_error_sparse_dense(X_true, B_true, X_hat, B_hat)
    rec_rel = bc_calc_jaccard_rec_rel(*bc_calc_overlaps(X_true, B_true, X_hat, B_hat))
    return {"recovered_K": X_hat.shape[1], "sparse": sparse, "dense": dense, **rec_rel,
            "clust_err": bc_calc_clust_error(bc_calc_overlaps(X_true, B_true, X_hat, B_hat)[0],
                                             bc_calculate_union_size_combined(X_true, B_true, X_hat, B_hat)),
            **{f"redundancy_{k}": v for k, v in bc_redundancy(X_hat, B_hat).items()}}


def _simulated(rng, k, n_rows, n_cols):
    """biclust_comp's simulated factors: each a random block of rows x columns, sparse or dense, no empty one."""
    rows = np.zeros((k, n_rows), bool)
    cols = np.zeros((k, n_cols), bool)
    for b in range(k):
        share = rng.choice([0.1, 0.25, 0.6])
        rows[b, rng.choice(n_rows, max(1, int(share * n_rows)), replace=False)] = True
        cols[b, rng.choice(n_cols, max(1, int(rng.choice([0.1, 0.3, 0.7]) * n_cols)), replace=False)] = True
    return rows, cols


def test_equal_to_biclust_comp_on_random_inputs():
    rng = np.random.default_rng(2021)
    for trial in range(40):
        n_rows, n_cols = int(rng.integers(5, 40)), int(rng.integers(5, 60))
        truth = _simulated(rng, int(rng.integers(1, 7)), n_rows, n_cols)
        pred = _simulated(rng, int(rng.integers(2, 8)), n_rows, n_cols)
        if trial % 4 == 0:  # an empty pred factor, which biclust_comp drops before scoring
            pred = (np.vstack([pred[0], np.zeros((1, n_rows), bool)]), np.vstack([pred[1], np.ones((1, n_cols), bool)]))
        peer = biclust_comp_scores(truth, pred)
        got = daskbicl.score(_ds(truth), _ds(pred), measures=[*NAMES, "micro_ce"])
        assert got["recovered"] == peer["recovered_K"]
        for cls in ("sparse", "dense"):
            want = math.nan if peer[cls] == -1 else peer[cls]  # -1: biclust_comp's placeholder for "no such truth"
            _same(got[f"ce_{cls}"], want, cls)
        assert 1 - got["micro_ce"] == pytest.approx(peer["clust_err"], abs=1e-12)  # the class split's baseline
        # biclust_comp's per-bicluster recovery (relevance) scores: best cell Jaccard of each truth (pred)
        # bicluster; their mean is daskbicl's jaccard over truth (over pred)
        for aggregate, column in (("truth", "jaccard_recovery_scores"), ("pred", "jaccard_relevance_scores")):
            mean = daskbicl.jaccard(_ds(truth), _ds(pred), aggregate=aggregate, drop_empty=True)
            assert mean == pytest.approx(float(np.mean(peer[column])), abs=1e-12), aggregate
        k = peer["recovered_K"]
        for statistic in ("mean", "average_max", "max"):
            value = daskbicl.redundancy(_ds(truth), _ds(pred), statistic=statistic)
            # biclust_comp's adjusted mean is off by ((K-1)/K)^2: test_biclust_comp_mean_redundancy_is_scaled_twice
            factor = ((k - 1) / k) ** 2 if statistic == "mean" else 1.0
            assert value * factor == pytest.approx(peer[f"redundancy_{statistic}"], abs=1e-12), statistic


def test_biclust_comp_mean_redundancy_is_scaled_twice():
    """Two identical pred biclusters: every pair of distinct biclusters has Jaccard 1, so the mean is 1.

    biclust_comp's comment (accuracy_utils.calculate_adjusted_mean_redundancy) says so too, and means to
    turn S/K^2 into S/(K^2 - K), but multiplies by (K-1)/K where K/(K-1) is needed: it reports 1/4.
    """
    pred = (np.array([[1, 1, 0]], bool).repeat(2, 0), np.array([[1, 0]], bool).repeat(2, 0))
    cells = _cells(*pred)
    pairs = [(k, l) for k in range(2) for l in range(2) if k != l]  # counted by hand: both pairs share all cells
    assert all(cells[k] == cells[l] for k, l in pairs)
    assert daskbicl.redundancy(_ds(pred), _ds(pred)) == 1.0 == redundancy_brute(pred)
    assert bc_redundancy(pred[0].T.astype(int), pred[1].T.astype(int))["mean"] == 0.25


# --------------------------------------------------------------------------- invariances and conventions


@pytest.mark.parametrize("name", NAMES)
@given(pair=biclustering_pair(max_rows=8, max_cols=6, max_k=3), data=st.data())
@settings(max_examples=20)
def test_relabelling_reordering_transposing_and_chunking(name, pair, data):
    truth, pred, (n_rows, n_cols) = pair
    base = daskbicl.score(_ds(truth), _ds(pred), measures=[name])[name]
    perm_t = list(data.draw(st.permutations(range(len(truth[0])))))
    perm_p = list(data.draw(st.permutations(range(len(pred[0])))))
    perm_r = np.asarray(data.draw(st.permutations(range(n_rows))), int)
    perm_c = np.asarray(data.draw(st.permutations(range(n_cols))), int)

    def moved(m, order):
        return m[0][order][:, perm_r], m[1][order][:, perm_c]

    _same(daskbicl.score(_ds(moved(truth, perm_t)), _ds(moved(pred, perm_p)), measures=[name])[name], base, name)
    # rows and columns swapped (the transposed matrix): the definitions treat both axes alike
    _same(daskbicl.score(_ds(truth[::-1]), _ds(pred[::-1]), measures=[name])[name], base, name)
    chunked = tuple(daskbicl.biclustering(
        da.from_array(m[0], chunks=(-1, data.draw(chunks_for(n_rows)))),
        da.from_array(m[1], chunks=(-1, data.draw(chunks_for(n_cols))))) for m in (truth, pred))
    _same(daskbicl.score(*chunked, measures=[name])[name], base, name)


def test_perfect_match_and_asymmetry():
    rng = np.random.default_rng(5)
    truth = _random_masks(rng, 5, 20, 15)
    got = daskbicl.score(_ds(truth), _ds(truth), measures=NAMES)
    want = expected(truth, truth)
    for cls in ("sparse", "dense"):
        assert got[f"ce_{cls}"] == (1.0 if not math.isnan(want[f"ce_{cls}"]) else got[f"ce_{cls}"])
    assert got["recovered"] == 5.0 and got["redundancy"] == pytest.approx(redundancy_brute(truth), abs=1e-12)
    pred = _random_masks(rng, 2, 20, 15)
    a = daskbicl.score(_ds(truth), _ds(pred), measures=NAMES)
    b = daskbicl.score(_ds(pred), _ds(truth), measures=NAMES)
    assert (a["recovered"], b["recovered"]) == (2.0, 5.0)  # reads pred only


def test_degenerate_inputs():
    truth = _ds(([[1, 1, 0, 0, 0, 0]], [[1, 0, 0, 0, 0]]))  # one sparse bicluster
    dense = _ds(([[1, 1, 1, 1, 1, 0]], [[1, 1, 1, 1, 1]]))
    got = daskbicl.score(truth, dense, measures=NAMES)
    assert got["ce_sparse"] == 0.0  # truth has a sparse bicluster, pred none
    assert math.isnan(got["ce_dense"])  # truth has no dense bicluster: undefined
    assert got["recovered"] == 1.0 and got["redundancy"] == 0.0  # one bicluster: no pair
    empty = daskbicl.biclustering(np.zeros((0, 6), bool), np.zeros((0, 5), bool))
    none = daskbicl.score(truth, empty, measures=NAMES)
    assert none["recovered"] == 0.0 and none["redundancy"] == 0.0
    assert math.isnan(none["ce_sparse"]) and math.isnan(none["ce_dense"])  # biclust_comp leaves them out
    same = _ds(([[1, 1, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0]], [[1, 0, 0, 0, 0], [1, 0, 0, 0, 0]]))
    assert daskbicl.redundancy(same, same) == 1.0
    with pytest.raises(daskbicl.MeasureError, match="share"):
        daskbicl.ce_sparse(truth, truth, share=0)
    with pytest.raises(daskbicl.MeasureError, match="statistic"):
        daskbicl.redundancy(truth, truth, statistic="median")


def test_coclusterings_are_scored_as_their_blocks():
    rng = np.random.default_rng(11)
    z, w = rng.integers(0, 3, 12), rng.integers(0, 4, 9)
    zp, wp = rng.integers(0, 2, 12), rng.integers(0, 3, 9)

    def blocks(zz, ww):
        hs, ls = np.unique(zz), np.unique(ww)
        return (np.array([zz == h for h in hs for _ in ls]), np.array([ww == l for _ in hs for l in ls]))

    got = daskbicl.score((z, w), (zp, wp), measures=NAMES)
    for name, want in expected(blocks(z, w), blocks(zp, wp)).items():
        _same(got[name], want, name)


def test_work_limit_is_a_clear_error():
    import dask

    rng = np.random.default_rng(0)
    masks = (rng.random((12, 300)) < 0.1, rng.random((12, 200)) < 0.1)
    t = _ds(masks)
    with dask.config.set({"daskbicl.max_work": 100}), pytest.raises(daskbicl.TooLargeError, match="max_work"):
        daskbicl.ce_sparse(t, t)
    with dask.config.set({"daskbicl.max_work": 100}):  # recovered and redundancy need no cells
        assert daskbicl.redundancy(t, t) == pytest.approx(redundancy_brute(masks), abs=1e-12)


# --------------------------------------------------------------------------- every door


def _pair(seed=0, n_rows=60, n_cols=40):
    rng = np.random.default_rng(seed)
    return _simulated(rng, 5, n_rows, n_cols), _simulated(rng, 6, n_rows, n_cols)


def test_accessor_and_distributed_equal_the_oracle(client, tmp_path):
    truth, pred = _pair()
    want = expected(truth, pred)
    t = daskbicl.save(_ds(truth), tmp_path / "t.zarr", chunk=16)  # several chunks per axis
    p = daskbicl.save(_ds(pred), tmp_path / "p.zarr", chunk=16)
    got = daskbicl.score(t, p, measures=NAMES)
    for name in NAMES:
        _same(got[name], want[name], name)
    opened = daskbicl.open(t)
    _same(opened.bicl.ce_dense(daskbicl.open(p)), want["ce_dense"], "accessor")


def test_cli_and_batch_manifest(tmp_path):
    from daskbicl.batch import ResultsDB

    truth, pred = _pair(1)
    daskbicl.save(_ds(truth), tmp_path / "t.zarr")
    daskbicl.save(_ds(pred), tmp_path / "p.zarr")
    cmd = [sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"), str(tmp_path / "p.zarr"), "--json",
           "--workers", "0", *sum((["--measure", n] for n in NAMES), []), "--param", "statistic=max"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    want = expected(truth, pred, "max")
    for name in NAMES:
        _same(math.nan if out[name] is None else out[name], want[name], name)
    one_pair(tmp_path, ["ce_sparse", "ce_dense", "redundancy", "recovered"], {"share": 0.3})
    proc = batch_command(tmp_path / "m.toml", tmp_path / "r.sqlite")
    assert proc.returncode == 0, proc.stderr
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        values = {r["measure"]: r["value"] for r in db.scores()}
    for cls in ("sparse", "dense"):
        want_cls = ce_brute(truth, pred, cls, Fraction(3, 10))
        _same(math.nan if values[f"ce_{cls}"] is None else values[f"ce_{cls}"], want_cls, cls)
    assert values["recovered"] == 6.0


def test_benchmark_runs_quick():
    """benchmarks/field_recovery.py --quick cannot rot; it exits 1 when a peer's value differs."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "field_recovery.py"
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ce_sparse" in proc.stdout and "ecs (cells)" in proc.stdout
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if "biclustlib (ported)" in line}
    assert set(rows) == {"liu_wang", "csi"} and all(line.rstrip().endswith("yes") for line in rows.values())
