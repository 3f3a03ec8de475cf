"""Omega index, overlapping NMI and the Liu–Wang match score (docs/measures/overlapping.md).

Each against a brute-force oracle written from its definition (pairs of
items counted one by one; conditional entropies from Python sets), against
its peer library where installed (clusim, cdlib; skipped when absent), for
its invariances, and through every door (Python, accessor, CLI, manifest,
a real LocalCluster, Zarr stores).
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
from daskbicl.kernels.bicluster.omega_index import omega_from_histogram, pair_histogram

from ..support.manifests import batch_command, one_pair
from ..support.strategies import biclustering_pair, chunks_for

COVER = ["omega_rows", "omega_cols", "onmi_rows", "onmi_cols"]
CELLS = ["omega", "csi"]
FIELD = [*COVER, *CELLS, "liu_wang"]


# --------------------------------------------------------------------------- oracles


def _members(mask: np.ndarray) -> list[set[int]]:
    """Per item (column of a (K, n) mask), the set of clusters containing it."""
    return [set(np.flatnonzero(mask[:, i]).tolist()) for i in range(mask.shape[1])]


def omega_brute(t_mask: np.ndarray, p_mask: np.ndarray) -> float:
    """Collins & Dent's omega, pair of items by pair of items, in exact fractions."""
    t, p = _members(t_mask), _members(p_mask)
    n = len(t)
    m = n * (n - 1) // 2
    agree = 0
    count_t: dict[int, int] = {}
    count_p: dict[int, int] = {}
    for i, j in itertools.combinations(range(n), 2):
        a, b = len(t[i] & t[j]), len(p[i] & p[j])
        agree += a == b
        count_t[a] = count_t.get(a, 0) + 1
        count_p[b] = count_p.get(b, 0) + 1
    expected = Fraction(sum(count_t[k] * count_p.get(k, 0) for k in count_t), m * m)
    if expected == 1:
        return 1.0
    return float((Fraction(agree, m) - expected) / (1 - expected))


def _hp(p: float) -> float:
    return 0.0 if p == 0 else -p * math.log2(p)


def _cond(x: set, y: set, items: set) -> float:
    """H(X_k | Y_l), or H(X_k) when the pair is not admitted (LFK 2009, eq. B.12-B.14)."""
    n = len(items)
    p11, p10, p01 = len(x & y) / n, len(x - y) / n, len(y - x) / n
    p00 = len(items - x - y) / n
    h_x = _hp(len(x) / n) + _hp(1 - len(x) / n)
    if _hp(p11) + _hp(p00) <= _hp(p10) + _hp(p01):
        return h_x
    h_y = _hp(len(y) / n) + _hp(1 - len(y) / n)
    return _hp(p11) + _hp(p10) + _hp(p01) + _hp(p00) - h_y


def onmi_brute(t_mask: np.ndarray, p_mask: np.ndarray, variant: str = "lfk") -> float:
    n = t_mask.shape[1]
    items = set(range(n))
    xs = [set(np.flatnonzero(r).tolist()) for r in t_mask]
    ys = [set(np.flatnonzero(r).tolist()) for r in p_mask]
    if sorted(map(sorted, xs)) == sorted(map(sorted, ys)):
        return 1.0

    def h(c):
        return _hp(len(c) / n) + _hp(1 - len(c) / n)

    cx = [min(_cond(x, y, items) for y in ys) for x in xs]
    cy = [min(_cond(y, x, items) for x in xs) for y in ys]
    if variant == "lfk":
        def mean_ratio(conds, clusters):
            return sum(c / h(k) if h(k) > 0 else 1.0 for c, k in zip(conds, clusters)) / len(clusters)
        return 1 - 0.5 * (mean_ratio(cx, xs) + mean_ratio(cy, ys))
    hx, hy = sum(map(h, xs)), sum(map(h, ys))
    if variant == "mgh":
        return 1.0 if max(hx, hy) == 0 else 0.5 * (hx - sum(cx) + hy - sum(cy)) / max(hx, hy)
    return 1 - 0.5 * ((sum(cx) / hx if hx else 1.0) + (sum(cy) / hy if hy else 1.0))


def liu_wang_brute(truth, pred) -> float:
    """biclustlib's evaluation/liu_wang.py (Padilha), rewritten over index arrays."""
    if len(pred[0]) == 0:
        return 0.0
    scores = []
    for pr, pc in zip(*pred):
        best = 0.0
        for tr, tc in zip(*truth):
            rp, cp, rt, ct = (np.flatnonzero(v) for v in (pr, pc, tr, tc))
            num = len(np.intersect1d(rp, rt)) + len(np.intersect1d(cp, ct))
            den = len(np.union1d(rp, rt)) + len(np.union1d(cp, ct))
            best = max(best, num / den)
        scores.append(best)
    return sum(scores) / len(scores)


def _cell_masks(m) -> np.ndarray:
    """(K, I*J) mask: the cells of each bicluster, row-major."""
    return np.array([np.outer(r, c).ravel() for r, c in zip(*m)], bool).reshape(len(m[0]), -1)


def csi_brute(truth, pred) -> float:
    """biclustlib's evaluation/csi.py (Padilha), with dense matrices: soft clusterings of cells
    (each bicluster, plus a singleton per uncovered cell), association, co-association."""
    def association(m):
        cells = _cell_masks(m) if len(m[0]) else np.zeros((0, m[0].shape[1] * m[1].shape[1]), bool)
        single = ~cells.any(axis=0)
        extra = np.zeros((int(single.sum()), cells.shape[1]), bool)
        extra[np.arange(len(extra)), np.flatnonzero(single)] = True
        return np.vstack([cells, extra]).astype(np.int64)

    u, v = association(pred), association(truth)
    ju, jv = u.T @ u, v.T @ v
    up = np.triu_indices(ju.shape[0], k=1)
    agree = np.minimum(ju[up], jv[up]).sum() + np.minimum(u.sum(0) - 1, v.sum(0) - 1).sum()
    disagree = np.abs(ju[up] - jv[up]).sum() + np.abs(u.sum(0) - v.sum(0)).sum()
    return 1.0 if disagree == 0 else float(Fraction(int(agree), int(agree + disagree)))


def expected(truth, pred) -> dict:
    out = {}
    for axis, idx in (("rows", 0), ("cols", 1)):
        if truth[idx].shape[1] >= 2:
            out[f"omega_{axis}"] = omega_brute(truth[idx], pred[idx])
        out[f"onmi_{axis}"] = onmi_brute(truth[idx], pred[idx])
    out["liu_wang"] = liu_wang_brute(truth, pred)
    if truth[0].shape[1] * truth[1].shape[1] >= 2:
        out["omega"] = omega_brute(_cell_masks(truth), _cell_masks(pred))
        out["csi"] = csi_brute(truth, pred)
    return out


def _ds(m):
    return daskbicl.biclustering(m[0], m[1])


# --------------------------------------------------------------------------- against the oracles


@given(biclustering_pair(max_rows=9, max_cols=7, max_k=4))
@settings(max_examples=60)
def test_every_measure_matches_its_brute_force_definition(pair):
    truth, pred, _ = pair
    want = expected(truth, pred)
    got = daskbicl.score(_ds(truth), _ds(pred), measures=list(want))
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name


@given(biclustering_pair(max_rows=9, max_cols=4, max_k=4), st.sampled_from(["lfk", "mgh", "mgh_lfk"]))
@settings(max_examples=40)
def test_onmi_variants_match_the_definition(pair, variant):
    truth, pred, _ = pair
    got = daskbicl.onmi_rows(_ds(truth), _ds(pred), variant=variant)
    assert got == pytest.approx(onmi_brute(truth[0], pred[0], variant), abs=1e-12)
    assert -1e-12 <= got <= 1 + 1e-12


def test_pair_histogram_equals_the_pairs_counted_one_by_one():
    from daskbicl.kernels.micro.memberships import signature_counts

    rng = np.random.default_rng(7)
    for _ in range(30):
        n, k, l_ = int(rng.integers(2, 60)), int(rng.integers(1, 6)), int(rng.integers(0, 6))
        t, p = rng.random((k, n)) < rng.random(), rng.random((l_, n)) < rng.random()
        m = signature_counts(t, p)
        h = pair_histogram(m.ptr, m.el, m.cnt, m.n_items, k, l_)
        brute = np.zeros_like(h)
        for i, j in itertools.combinations(range(n), 2):
            brute[int((t[:, i] & t[:, j]).sum()), int((p[:, i] & p[:, j]).sum())] += 1
        np.testing.assert_array_equal(h, brute)


def test_omega_known_values():
    # two partitions: omega equals the adjusted Rand index (Collins & Dent)
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(3)
    for _ in range(10):
        z, zp = rng.integers(0, 4, 40), rng.integers(0, 3, 40)
        got = daskbicl.omega_rows((z, np.zeros(3, int)), (zp, np.zeros(3, int)))
        assert got == pytest.approx(adjusted_rand_score(z, zp), abs=1e-12)
    # every pair shares one cluster on both sides: 0/0, reported 1
    assert omega_from_histogram(np.array([[0, 0], [0, 6]])) == 1.0


def test_liu_wang_known_value():
    truth = daskbicl.biclustering([[1, 1, 1, 0], [0, 0, 0, 1]], [[1, 0, 0], [0, 1, 1]])
    pred = daskbicl.biclustering([[0, 1, 1, 0]], [[1, 1, 0]])
    # pred vs truth 0: (2 + 1)/(3 + 2); vs truth 1: (0 + 1)/(3 + 3)
    assert daskbicl.liu_wang(truth, pred) == pytest.approx(3 / 5)
    assert daskbicl.liu_wang(pred, truth) == pytest.approx((3 / 5 + 1 / 6) / 2)


# --------------------------------------------------------------------------- peers


def _full_cover(rng, k, n):
    """A random (k, n) cover in which every item is in at least one cluster (what the peers accept)."""
    mask = rng.random((k, n)) < rng.uniform(0.1, 0.6)
    mask[rng.integers(0, k, n), np.arange(n)] = True
    mask[np.arange(k), rng.integers(0, n, k)] = True
    return mask


def test_omega_equals_clusim():
    clusim_sim = pytest.importorskip("clusim.sim")
    from clusim.clustering import Clustering

    rng = np.random.default_rng(11)
    for _ in range(15):
        n = int(rng.integers(3, 40))
        t, p = _full_cover(rng, int(rng.integers(1, 6)), n), _full_cover(rng, int(rng.integers(1, 6)), n)

        def clu(mask):
            return Clustering(elm2clu_dict={i: np.flatnonzero(mask[:, i]).tolist() for i in range(mask.shape[1])})

        want = clusim_sim.omega_index(clu(t), clu(p))
        got = daskbicl.omega_rows(_ds((t, np.ones((len(t), 1), bool))), _ds((p, np.ones((len(p), 1), bool))))
        assert got == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("variant, cdlib_variant", [("lfk", "LFK"), ("mgh", "MGH"), ("mgh_lfk", "MGH_LFK")])
def test_onmi_equals_cdlib(variant, cdlib_variant):
    onmi_module = pytest.importorskip("cdlib.evaluation.internal.onmi")
    rng = np.random.default_rng(5)
    for _ in range(15):
        n = int(rng.integers(3, 40))
        t, p = _full_cover(rng, int(rng.integers(1, 6)), n), _full_cover(rng, int(rng.integers(1, 6)), n)
        if t.all() or p.all():  # every cluster holds every item: cdlib divides 0 by 0 and raises
            continue
        want = onmi_module.onmi([set(np.flatnonzero(r)) for r in t], [set(np.flatnonzero(r)) for r in p],
                                variant=cdlib_variant)
        got = daskbicl.onmi_rows(_ds((t, np.ones((len(t), 1), bool))), _ds((p, np.ones((len(p), 1), bool))),
                                 variant=variant)
        assert got == pytest.approx(want, abs=1e-12)


def _onmi_cases(seed: int, n_cases: int):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.integers(3, 40))
        t, p = _full_cover(rng, int(rng.integers(1, 6)), n), _full_cover(rng, int(rng.integers(1, 6)), n)
        if not (t.all() or p.all()):  # every cluster holds every item: cdlib divides 0 by 0 and raises
            yield t, p


@pytest.mark.parametrize("variant, cdlib_variant", [("lfk", "LFK"), ("mgh", "MGH"), ("mgh_lfk", "MGH_LFK")])
def test_onmi_equals_the_ported_cdlib(variant, cdlib_variant):
    """cdlib's onmi ported into tests/support/ported_cdlib_onmi.py (license and commit there): runs without cdlib."""
    from ..support.ported_cdlib_onmi import onmi

    checked = 0
    for t, p in _onmi_cases(23, 40):
        want = onmi([set(np.flatnonzero(r)) for r in t], [set(np.flatnonzero(r)) for r in p], variant=cdlib_variant)
        got = daskbicl.onmi_rows(_ds((t, np.ones((len(t), 1), bool))), _ds((p, np.ones((len(p), 1), bool))),
                                 variant=variant)
        assert got == pytest.approx(want, abs=1e-12)
        checked += 1
    assert checked >= 20


def test_the_ported_cdlib_onmi_equals_cdlib():
    onmi_module = pytest.importorskip("cdlib.evaluation.internal.onmi")
    from ..support.ported_cdlib_onmi import onmi

    for t, p in _onmi_cases(29, 10):
        covers = [set(np.flatnonzero(r)) for r in t], [set(np.flatnonzero(r)) for r in p]
        for variant in ("LFK", "MGH", "MGH_LFK"):
            assert onmi(*covers, variant=variant) == onmi_module.onmi(*covers, variant=variant)


def test_clusim_onmi_reads_one_minus_p11_where_the_definition_has_p00():
    """docs/measures/overlapping.md: clusim's onmi differs from LFK; the brute-force count shows why."""
    clusim_sim = pytest.importorskip("clusim.sim")
    from clusim.clustering import Clustering

    t = np.array([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1]], bool)
    p = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], bool)

    def clu(mask):
        return Clustering(elm2clu_dict={i: np.flatnonzero(mask[:, i]).tolist() for i in range(mask.shape[1])})

    theirs = clusim_sim.onmi(clu(t), clu(p))
    ours = daskbicl.onmi_rows(_ds((t, np.ones((2, 1), bool))), _ds((p, np.ones((2, 1), bool))))
    assert ours == pytest.approx(onmi_brute(t, p), abs=1e-12)
    assert (round(ours, 4), round(theirs, 4)) == (0.4796, 0.5518)  # quoted in the docs
    # clusim's value is the same formula with 1 - p11 read in place of p00 (sim.py, onmi):
    n, xs, ys = 6, [set(np.flatnonzero(r)) for r in t], [set(np.flatnonzero(r)) for r in p]

    def h(c):
        return _hp(len(c) / n) + _hp(1 - len(c) / n)

    def cond_with_one_minus_p11(x, y):
        p11, p10, p01 = len(x & y) / n, len(x - y) / n, len(y - x) / n
        pure, mixing = _hp(p11) + _hp(1 - p11), _hp(p10) + _hp(p01)
        return pure + mixing - h(y) if pure > mixing else h(x)

    def side(a, b):
        return sum(min(cond_with_one_minus_p11(x, y) for y in b) / h(x) for x in a) / len(a)

    assert theirs == pytest.approx(1 - 0.5 * (side(xs, ys) + side(ys, xs)), abs=1e-12)


# --------------------------------------------------------------------------- invariances


@pytest.mark.parametrize("name", FIELD)
@given(pair=biclustering_pair(max_rows=8, max_cols=6, max_k=3), data=st.data())
@settings(max_examples=20)
def test_relabelling_reordering_and_chunking(name, pair, data):
    truth, pred, (n_rows, n_cols) = pair
    if (name in ("omega_rows", "omega_cols") and min(n_rows, n_cols) < 2) or (name in CELLS and n_rows * n_cols < 2):
        return
    base = daskbicl.score(_ds(truth), _ds(pred), measures=[name])[name]
    perm_t = data.draw(st.permutations(range(len(truth[0]))))
    perm_r = np.asarray(data.draw(st.permutations(range(n_rows))), int)
    perm_c = np.asarray(data.draw(st.permutations(range(n_cols))), int)

    def moved(m, order=None):
        rows, cols = m[0][:, perm_r], m[1][:, perm_c]
        return (rows[list(order)], cols[list(order)]) if order is not None else (rows, cols)

    again = daskbicl.score(_ds(moved(truth, perm_t)), _ds(moved(pred)), measures=[name])[name]
    assert again == pytest.approx(base, abs=1e-12)
    chunked = tuple(daskbicl.biclustering(
        da.from_array(m[0], chunks=(-1, data.draw(chunks_for(n_rows)))),
        da.from_array(m[1], chunks=(-1, data.draw(chunks_for(n_cols))))) for m in (truth, pred))
    assert daskbicl.score(*chunked, measures=[name])[name] == pytest.approx(base, abs=1e-12)


@pytest.mark.parametrize("name", COVER + CELLS)
@given(pair=biclustering_pair(max_rows=8, max_cols=6, max_k=3))
@settings(max_examples=20)
def test_cover_and_cell_measures_are_symmetric(name, pair):
    truth, pred, (n_rows, n_cols) = pair
    if (name in ("omega_rows", "omega_cols") and min(n_rows, n_cols) < 2) or (name in CELLS and n_rows * n_cols < 2):
        return
    a = daskbicl.score(_ds(truth), _ds(pred), measures=[name])[name]
    b = daskbicl.score(_ds(pred), _ds(truth), measures=[name])[name]
    assert a == pytest.approx(b, abs=1e-12)


def test_coclusterings_use_each_row_cluster_once():
    rng = np.random.default_rng(2)
    z, w = rng.integers(0, 3, 30), rng.integers(0, 4, 12)
    zp, wp = rng.integers(0, 4, 30), rng.integers(0, 2, 12)

    def one_hot(labels):
        return np.stack([labels == v for v in np.unique(labels)])

    got = daskbicl.score((z, w), (zp, wp), measures=COVER)
    assert got["omega_rows"] == pytest.approx(omega_brute(one_hot(z), one_hot(zp)), abs=1e-12)
    assert got["omega_cols"] == pytest.approx(omega_brute(one_hot(w), one_hot(wp)), abs=1e-12)
    assert got["onmi_rows"] == pytest.approx(onmi_brute(one_hot(z), one_hot(zp)), abs=1e-12)
    # a co-clustering against a biclustering: the co-clustering side still counts each row cluster once
    mixed = daskbicl.score((z, w), _ds((one_hot(zp), one_hot(wp)[:1].repeat(len(one_hot(zp)), 0))),
                           measures=["omega_rows", "onmi_rows"])
    assert mixed["omega_rows"] == pytest.approx(got["omega_rows"], abs=1e-12)
    assert mixed["onmi_rows"] == pytest.approx(got["onmi_rows"], abs=1e-12)


# --------------------------------------------------------------------------- degenerate inputs


def test_degenerate_inputs():
    one_row = _ds(([[1]], [[1, 1]]))
    assert daskbicl.omega_rows(one_row, one_row) == 1.0  # no pair: the adjusted Rand index's convention
    assert daskbicl.omega_rows(one_row, one_row) == daskbicl.ari_rows(([0], [0, 0]), ([0], [0, 0]))
    assert daskbicl.csi(one_row, one_row) == 1.0
    empty = daskbicl.biclustering(np.zeros((0, 4), bool), np.zeros((0, 3), bool))
    truth = _ds(([[1, 1, 0, 0]], [[1, 1, 0]]))
    no_csi = [n for n in FIELD if n != "csi"]
    assert daskbicl.score(truth, empty, measures=no_csi) == {n: 0.0 for n in no_csi}
    with pytest.raises(daskbicl.MeasureError, match="variant"):
        daskbicl.onmi_rows(truth, truth, variant="max")


def test_work_limit_is_a_clear_error():
    import dask

    rng = np.random.default_rng(0)
    t = _ds((rng.random((30, 400)) < 0.5, np.ones((30, 2), bool)))
    with dask.config.set({"daskbicl.max_work": 1000}), pytest.raises(daskbicl.TooLargeError, match="max_work"):
        daskbicl.omega_rows(t, t)
    assert daskbicl.onmi_rows(t, t) == 1.0  # the NMI needs no pairs


# --------------------------------------------------------------------------- every door


def _random_pair(seed=0, n_rows=60, n_cols=12):  # 720 cells: the cell oracles stay quick
    rng = np.random.default_rng(seed)
    return tuple((rng.random((4, n_rows)) < 0.3, rng.random((4, n_cols)) < 0.4) for _ in range(2))


def test_accessor_and_distributed_equal_the_oracle(client, tmp_path):
    truth, pred = _random_pair()
    want = expected(truth, pred)
    t = daskbicl.save(_ds(truth), tmp_path / "t.zarr", chunk=16)  # several chunks per axis
    p = daskbicl.save(_ds(pred), tmp_path / "p.zarr", chunk=16)
    got = daskbicl.score(t, p, measures=FIELD)
    for name in FIELD:
        assert got[name] == pytest.approx(want[name], abs=1e-12), name
    opened = daskbicl.open(t)
    assert opened.bicl.omega_rows(daskbicl.open(p)) == pytest.approx(want["omega_rows"], abs=1e-12)


def test_cli(tmp_path):
    truth, pred = _random_pair(1)
    t = daskbicl.save(_ds(truth), tmp_path / "t.zarr")
    p = daskbicl.save(_ds(pred), tmp_path / "p.zarr")
    cmd = [sys.executable, "-m", "daskbicl", "score", str(t), str(p), "--json", "--workers", "1",
           *sum((["--measure", n] for n in FIELD), []), "--param", "variant=mgh"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["onmi_rows"] == pytest.approx(onmi_brute(truth[0], pred[0], "mgh"), abs=1e-12)
    assert out["omega_cols"] == pytest.approx(omega_brute(truth[1], pred[1]), abs=1e-12)
    assert out["liu_wang"] == pytest.approx(liu_wang_brute(truth, pred), abs=1e-12)
    bad = subprocess.run(cmd[:-1] + ["variant=nope"], capture_output=True, text=True, timeout=240)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "variant" in bad.stderr


def test_batch_manifest(tmp_path):
    from daskbicl.batch import ResultsDB

    truth, pred = _random_pair(2)
    daskbicl.save(_ds(truth), tmp_path / "t.zarr")
    daskbicl.save(_ds(pred), tmp_path / "p.zarr")
    one_pair(tmp_path, ["omega_rows", "onmi_cols", "liu_wang"], {"variant": "mgh_lfk"})
    proc = batch_command(tmp_path / "m.toml", tmp_path / "r.sqlite")
    assert proc.returncode == 0, proc.stderr
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        values = {r["measure"]: r["value"] for r in db.scores()}
    assert values["omega_rows"] == pytest.approx(omega_brute(truth[0], pred[0]), abs=1e-12)
    assert values["onmi_cols"] == pytest.approx(onmi_brute(truth[1], pred[1], "mgh_lfk"), abs=1e-12)
    assert values["liu_wang"] == pytest.approx(liu_wang_brute(truth, pred), abs=1e-12)


def test_benchmark_runs_quick():
    """benchmarks/field_overlap.py --quick cannot rot; it exits 1 when a peer's value differs."""
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "field_overlap.py"
    proc = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "omega_rows" in proc.stdout and "onmi_rows" in proc.stdout


# --------------------------------------------------------------------------- the cover provider is a record


def _kind_pair(rng, truth_kind: str, pred_kind: str, n_rows: int = 23, n_cols: int = 17):
    def one(kind):
        if kind == "partition":
            return daskbicl.partition(rng.integers(0, 4, n_rows), rng.integers(0, 3, n_cols))
        return daskbicl.biclustering(rng.random((3, n_rows)) < 0.5, rng.random((3, n_cols)) < 0.5)
    return one(truth_kind), one(pred_kind)


def _cover_fields(tables) -> list:
    """Every array and number of a CoverTables, in a fixed order (None where not counted)."""
    out: list = []
    for counts in (tables.rows, tables.cols):
        out += [None] if counts is None else [counts.n_items, counts.truth_sizes, counts.pred_sizes, counts.shared,
                                              counts.pairs]
    cells = tables.cells
    return out + ([None] if cells is None else [cells.n_cells, cells.cells, cells.pairs])


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and np.array_equal(np.asarray(x), np.asarray(y))
                                      and np.asarray(x).dtype == np.asarray(y).dtype) for x, y in zip(a, b))


COVER_OPTIONS = [
    {"counts": frozenset({"rows"}), "pairs": frozenset({"rows"})},
    {"counts": frozenset({"cols"})},
    {"counts": frozenset({"rows", "cols"}), "pairs": frozenset({"cols"}), "cells": True},
    {"counts": frozenset(), "cells": True},
]


@pytest.mark.parametrize("truth_kind, pred_kind", list(itertools.product(("partition", "biclustering"), repeat=2)))
def test_the_cover_record_builds_the_tables_its_engine_built(client, truth_kind, pred_kind):
    """The engine builds the cover provider from its record (reads, finalize, bind): the same tables, in every
    array and dtype, as the cover engine's own builder (tests/support/cover_reference.py), in process and on the
    LocalCluster, chunked, for every kind pair and the options the measures ask for."""
    import dask

    from daskbicl.engine.core import eager
    from daskbicl.engine.provider_graph import provider_graph
    from daskbicl.measures.registry import PROVIDERS

    from ..support.cover_reference import cover_tables

    record = PROVIDERS["cover"]
    assert record.reads is not None
    rng = np.random.default_rng(5)
    for _ in range(3):
        truth, pred = _kind_pair(rng, truth_kind, pred_kind)
        t, p = truth.chunk({"row": 7, "col": 5}), pred.chunk({"row": 7, "col": 5})
        for options in COVER_OPTIONS:
            want = _cover_fields(dask.compute(cover_tables(truth, pred, **options), scheduler="sync")[0])
            with eager():  # in process: every step whose arguments are concrete runs at once
                here = dask.compute(provider_graph(record, truth, pred, options), scheduler="sync")[0]
            there = client.compute(provider_graph(record, t, p, options)).result()
            assert _same(_cover_fields(here), want), options
            assert _same(_cover_fields(there), want), options


def test_the_cover_of_two_coclusterings_reads_their_contingency_tables_only():
    """Two co-clusterings: the covers come from the contingency tables (no membership pass over masks) unless the
    cells are asked for; a biclustering's covers are its mask memberships."""
    from daskbicl.engine.provider_graph import provider_graph
    from daskbicl.measures.registry import PROVIDERS

    rng = np.random.default_rng(2)

    def names(truth_kind, pred_kind, options):
        truth, pred = _kind_pair(rng, truth_kind, pred_kind)
        graph = provider_graph(PROVIDERS["cover"], truth.chunk({"row": 8}), pred.chunk({"row": 8}), options)
        return {str(key).split("-")[0].strip("('") for key in dict(graph.__dask_graph__())}

    rows = {"counts": frozenset({"rows"})}
    both = names("partition", "partition", rows)
    assert "memberships_of_table" in both and "signature_counts" not in both
    # the cells of two co-clusterings: both sides counted by label in the graph (engine/label_memberships.py)
    assert "pair_memberships" in names("partition", "partition", {"counts": frozenset(), "cells": True})
    mixed = names("partition", "biclustering", rows)
    # one co-clustering against a biclustering: counted by label in the graph (engine/label_memberships.py)
    assert "label_memberships" in mixed and "memberships_of_table" not in mixed


@pytest.mark.parametrize("source, axis, message", [("rows", "rows", "unknown source 'rows'"),
                                                   ("cover", "row", "unknown axis 'row'")])
def test_a_read_of_an_unknown_source_or_axis_is_refused(source, axis, message):
    from daskbicl.engine.provider_graph import Read

    with pytest.raises(ValueError, match=message):
        Read(source, axis)


def test_the_cover_record_refuses_an_unknown_axis():
    from daskbicl.measures.registry import PROVIDERS

    with pytest.raises(ValueError, match=r"unknown axis \['cells'\]"):
        PROVIDERS["cover"].reads(counts=frozenset({"cells"}))
