"""Sampled MOCICE-BCubed, CE and RNIA (method "sample" / "auto"): intervals against the brute force, every door.

The brute force is :mod:`tests.support.oracles_micro` (the SPEC text, cell by cell,
in rationals); the exact engine is checked against it elsewhere
(tests/measures/test_micro.py) and serves as the oracle on the cases too
large for it.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import dask
import numpy as np
import pytest

import daskbicl
from daskbicl.batch import ResultsDB, run_batch
from daskbicl.errors import InputError, MeasureError, TooLargeError
from daskbicl.kernels.micro.cell_records import bicluster_overlap
from daskbicl.kernels.micro.coverage_estimates import combine_coverage
from daskbicl.kernels.micro.estimates import Estimate, blocks_needed, combine, f1_estimate, half_width
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.sampling import Sampler

from ...support.manifests import write_manifest
from ...support.oracles_micro import cell_sets
from ...support.oracles_micro import micro_ce as brute_ce
from ...support.oracles_micro import mocice_bcubed as brute_bcubed
from ...support.oracles_micro import rnia as brute_rnia


def _masks(rng, k, l_, n_i, n_j, density, dupes=0):
    """Random truth and pred masks; ``dupes`` extra pred biclusters copy (then perturb) truth ones."""
    tr, tc = rng.random((k, n_i)) < density, rng.random((k, n_j)) < density
    pr, pc = rng.random((l_, n_i)) < density, rng.random((l_, n_j)) < density
    for d in range(min(dupes, l_)):
        pr[d], pc[d] = tr[d % k], tc[d % k]
        pr[d, rng.integers(n_i)] ^= d % 2 == 1  # every other copy slightly perturbed
    return tr, tc, pr, pc


def _ds(masks):
    tr, tc, pr, pc = masks
    return daskbicl.biclustering(tr, tc), daskbicl.biclustering(pr, pc)


def _sampler(masks) -> Sampler:
    tr, tc, pr, pc = masks
    return Sampler.build(signature_counts(tr, pr), signature_counts(tc, pc))


#: Small overlapping cases with a brute-force answer: random, redundant (copies), nested, everything covered.
def _cases():
    rng = np.random.default_rng(20261126)
    out = [_masks(rng, 3, 4, 8, 7, 0.5), _masks(rng, 2, 6, 9, 6, 0.45, dupes=5), _masks(rng, 4, 3, 7, 9, 0.6)]
    tr, tc, pr, pc = _masks(rng, 3, 3, 8, 8, 0.5)
    pr[1], pc[1] = pr[0] & pr[1], pc[0] & pc[1]  # nested in pred 0
    pr[2], pc[2] = np.ones_like(pr[2]), np.ones_like(pc[2])  # covers everything
    out.append((tr, tc, pr, pc))
    return [c for c in out if c[0].any() and c[1].any() and c[2].any() and c[3].any()]


CASES = _cases()


@pytest.fixture(scope="module")
def exact_values():
    return [tuple(float(v) for v in brute_bcubed(*c)) for c in CASES]


def _estimate(sampler, side, seed, blocks=4, n=256):
    return combine([sampler.block(side, j, n, seed) for j in range(blocks)])


def test_interval_covers_the_brute_force_at_the_stated_rate(exact_values):
    """Over many seeds, the stated 95 % interval holds the brute-force value about 95 % of the time."""
    hits = total = 0
    for case, exact in zip(CASES, exact_values):
        s = _sampler(case)
        for seed in range(60):
            p, r = _estimate(s, "precision", seed), _estimate(s, "recall", seed)
            f1, f1_hw = f1_estimate(p, r)
            for m, truth in ((p, exact[0]), (r, exact[1])):
                hits += abs(m.mean - truth) <= half_width(m)
                total += 1
            hits += abs(f1 - exact[2]) <= f1_hw
            total += 1
    rate = hits / total
    assert 0.92 <= rate <= 0.985, (rate, total)


def test_estimates_are_unbiased(exact_values):
    """The mean of many independent estimates is within 4 standard errors of the brute force."""
    for case, exact in zip(CASES, exact_values):
        s = _sampler(case)
        for side, truth in (("precision", exact[0]), ("recall", exact[1])):
            m = combine([s.block(side, j, 1024) for j in range(64)])
            assert abs(m.mean - truth) <= 4 * np.sqrt(m.variance / m.samples) + 1e-12, (side, m, truth)


def test_half_width_shrinks_as_one_over_sqrt_samples():
    s = _sampler(CASES[0])
    small = _estimate(s, "precision", 7, blocks=4, n=1024)
    large = _estimate(s, "precision", 7, blocks=64, n=1024)
    ratio = half_width(large) / half_width(small)
    assert ratio == pytest.approx(0.25, rel=0.1), ratio


def test_blocks_are_seeded_and_independent_of_how_they_are_dealt():
    s = _sampler(CASES[1])
    assert s.block("recall", 5, 512) == s.block("recall", 5, 512)
    assert s.block("recall", 5, 512) != s.block("recall", 6, 512)
    assert s.block("recall", 5, 512, seed=1) != s.block("recall", 5, 512, seed=2)


def test_blocks_needed_reaches_the_tolerance():
    s = _sampler(CASES[0])
    pilot_p, pilot_r = _estimate(s, "precision", 3, 8, 1024), _estimate(s, "recall", 3, 8, 1024)
    need = blocks_needed(pilot_p, pilot_r, 2e-3, 1024)
    p = combine([s.block("precision", j, 1024) for j in range(need)])
    r = combine([s.block("recall", j, 1024) for j in range(need)])
    assert max(half_width(p), half_width(r), f1_estimate(p, r)[1]) <= 2.2e-3


def test_estimate_is_a_labelled_float():
    e = Estimate(0.4312, 0.0008, 1000)
    assert e == 0.4312 and not e.exact and (e.low, e.high) == pytest.approx((0.4304, 0.4320))
    back = pickle.loads(pickle.dumps(e))
    assert isinstance(back, Estimate) and back.half_width == 0.0008 and back.samples == 1000
    assert str(e) == "≈ 0.4312 ± 0.0008"
    assert str(Estimate(0.00331, 0.0000212, 10)) == "≈ 0.003310 ± 0.000021"  # never "± 0.0000"
    assert json.loads(json.dumps(e.as_dict())) == {"value": 0.4312, "exact": False, "half_width": 0.0008,
                                                   "samples": 1000}


# --------------------------------------------------------------------------- through the engine


@pytest.fixture(scope="module")
def medium():
    """A case whose exact value the engine computes in well under a second."""
    rng = np.random.default_rng(5)
    return _ds(_masks(rng, 6, 8, 300, 200, 0.3, dupes=4))


def _fields(prf):
    return tuple(float(v) for v in prf)


def test_sample_holds_the_exact_value_and_says_so(medium):
    t, p = medium
    exact = daskbicl.mocice_bcubed(t, p, method="exact")
    with dask.config.set({"daskbicl.micro_tolerance": 2e-3}):
        est = daskbicl.mocice_bcubed(t, p, method="sample")
    for e, x in zip(est, exact):
        assert isinstance(e, Estimate) and not isinstance(x, Estimate)
        assert e.half_width <= 2.2e-3
        assert abs(float(e) - float(x)) <= e.half_width
    assert est.precision.samples >= 16 * 4096


def test_auto_is_exact_when_the_cost_fits(medium):
    t, p = medium
    auto = daskbicl.mocice_bcubed(t, p)
    assert not any(isinstance(v, Estimate) for v in auto)
    assert _fields(auto) == _fields(daskbicl.mocice_bcubed(t, p, method="exact"))


def test_auto_samples_where_exact_refuses_and_exact_refuses_fast(medium):
    t, p = medium
    exact = daskbicl.mocice_bcubed(t, p, method="exact")
    with dask.config.set({"daskbicl.max_work": 2e3}):
        with pytest.raises(TooLargeError, match="max_work"):
            daskbicl.mocice_bcubed(t, p, method="exact")
        auto = daskbicl.score(t, p, measures=["mocice_bcubed", "e4sc"])
    assert all(isinstance(v, Estimate) for v in auto["mocice_bcubed"])
    assert all(abs(float(e) - float(x)) <= e.half_width for e, x in zip(auto["mocice_bcubed"], exact))
    assert not isinstance(auto["e4sc"], Estimate)


def test_coverage_stays_exact_beside_a_sampled_bcubed(medium):
    """MOCICE-BCubed alone sampled: CE and RNIA asked in the same call keep their exact values."""
    t, p = medium
    both = daskbicl.score(t, p, measures=["mocice_bcubed", "micro_rnia", "micro_ce"], method="sample",
                          multiset=True)
    alone = daskbicl.score(t, p, measures=["micro_rnia", "micro_ce"], method="exact")
    assert isinstance(both["mocice_bcubed"].f1, Estimate)
    for m in ("micro_rnia", "micro_ce"):  # method="sample" reaches CE and RNIA too: sampled, holding the exact value
        assert isinstance(both[m], Estimate) and abs(float(both[m]) - alone[m]) <= both[m].half_width


def test_auto_keeps_coverage_exact_when_only_bcubed_is_too_large(medium):
    """Under a limit that the walk with MOCICE-BCubed exceeds but the coverage walk fits."""
    t, p = medium
    rnia = daskbicl.micro_rnia(t, p)
    with dask.config.set({"daskbicl.max_work": 1e5}):
        with pytest.raises(TooLargeError):
            daskbicl.mocice_bcubed(t, p, method="exact")
        got = daskbicl.score(t, p, measures=["mocice_bcubed", "micro_rnia"])
    assert got["micro_rnia"] == rnia and not isinstance(got["micro_rnia"], Estimate)
    assert isinstance(got["mocice_bcubed"].precision, Estimate)
    with dask.config.set({"daskbicl.max_work": 2e3}):
        with pytest.raises(TooLargeError, match="did not finish in a trial|so it is not tried"):
            daskbicl.score(t, p, measures=["mocice_bcubed", "micro_rnia"], method="exact")
        both = daskbicl.score(t, p, measures=["mocice_bcubed", "micro_rnia"])  # auto: both sampled
    assert isinstance(both["micro_rnia"], Estimate) and isinstance(both["mocice_bcubed"].f1, Estimate)
    assert abs(float(both["micro_rnia"]) - rnia) <= both["micro_rnia"].half_width


def test_conventions_are_exact_not_sampled():
    t, _ = _ds(CASES[0])
    assert _fields(daskbicl.mocice_bcubed(t, t, method="sample")) == (1.0, 1.0, 1.0)
    tr, tc, pr, pc = CASES[0]
    far = daskbicl.biclustering(np.zeros_like(pr), pc)  # pred covers no cell
    got = daskbicl.mocice_bcubed(t, far, method="sample")
    assert _fields(got) == (0.0, 0.0, 0.0) and not any(isinstance(v, Estimate) for v in got)


def test_bad_method_is_refused_before_any_work(medium):
    t, p = medium
    with pytest.raises(MeasureError, match="method must be one of 'auto', 'exact', 'sample'"):
        daskbicl.mocice_bcubed(t, p, method="guess")


def test_same_digits_on_any_chunking_task_count_and_cluster(medium, client):
    """Sampled digits depend on the inputs and the seed only: 2 worker processes, chunks, tasks."""
    tr, tc, pr, pc = (m.values for m in (medium[0].row_mask, medium[0].col_mask,
                                         medium[1].row_mask, medium[1].col_mask))
    with dask.config.set({"daskbicl.micro_tolerance": 4e-3}):
        on_cluster = daskbicl.mocice_bcubed(*_ds((tr, tc, pr, pc)), method="sample")
        with dask.config.set({"daskbicl.chunk": 37, "daskbicl.micro_tasks": 3}):
            chunked = daskbicl.mocice_bcubed(*_ds((tr, tc, pr, pc)), method="sample")
        with dask.config.set(scheduler="sync", **{"daskbicl.micro_tasks": 1}):
            local = daskbicl.mocice_bcubed(*_ds((tr, tc, pr, pc)), method="sample")
        with dask.config.set({"daskbicl.micro_seed": 1}):
            other = daskbicl.mocice_bcubed(*_ds((tr, tc, pr, pc)), method="sample")
    assert isinstance(on_cluster.precision, Estimate)
    for a, b, c in zip(on_cluster, chunked, local):
        assert (float(a), a.half_width, a.samples) == (float(b), b.half_width, b.samples) \
            == (float(c), c.half_width, c.samples)
    assert _fields(other) != _fields(on_cluster)
    assert all(abs(float(a) - float(b)) <= a.half_width + b.half_width for a, b in zip(on_cluster, other))


def test_accessor_takes_the_method(medium):
    t, p = medium
    with dask.config.set(LOOSE):
        via = t.bicl.mocice_bcubed(p, method="sample")
        assert _fields(via) == _fields(daskbicl.mocice_bcubed(t, p, method="sample"))
        assert isinstance(t.bicl.score(p, measures=["mocice_bcubed"], method="sample")["mocice_bcubed"].recall,
                          Estimate)


# --------------------------------------------------------------------------- CLI and batch


@pytest.fixture(scope="module")
def stores(medium, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sampled")
    daskbicl.save(medium[0], folder / "truth.zarr")
    daskbicl.save(medium[1], folder / "pred-0.zarr")
    return folder


#: A looser tolerance keeps the door tests short (fewer samples; the digits are still checked).
LOOSE = {"daskbicl.micro_tolerance": 5e-3}


def _cli(*args):
    env = {**os.environ, "DASK_DASKBICL__MICRO_TOLERANCE": "5e-3"}
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_cli_shows_a_sampled_value_with_its_interval(stores, medium):
    t, p = stores / "truth.zarr", stores / "pred-0.zarr"
    code, out, err = _cli("score", t, p, "--measure", "mocice_bcubed", "--param", "method=sample", "--json")
    assert code == 0, err
    got = json.loads(out)["mocice_bcubed"]
    with dask.config.set(LOOSE):
        expected = daskbicl.mocice_bcubed(medium[0], medium[1], method="sample")
    for field, e in zip(("precision", "recall", "f1"), expected):
        assert got[field] == {"value": float(e), "exact": False, "half_width": e.half_width, "samples": e.samples}
    code, out, err = _cli("score", t, p, "--measure", "mocice_bcubed", "--param", "method=sample")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("mocice_bcubed.f1"))
    assert str(expected.f1) in line
    assert "sampled estimate, 95 % interval" in out
    code, out, err = _cli("score", t, p, "--measure", "mocice_bcubed", "--json")
    assert code == 0 and isinstance(json.loads(out)["mocice_bcubed"]["f1"], float)
    code, out, err = _cli("score", t, p, "--measure", "mocice_bcubed", "--param", "method=maybe")
    assert code == 2 and "method must be one of" in err and "Traceback" not in err


def test_batch_rows_say_a_value_is_sampled(stores, tmp_path):
    manifest = write_manifest(tmp_path / "m.toml", {"sim": stores / "truth.zarr"}, {"runs": stores / "pred-*.zarr"}, [
        {"truth": "sim", "pred": "runs", "measures": ["mocice_bcubed", "e4sc"], "params": {"method": "sample"}},
        {"truth": "sim", "pred": "runs", "measures": ["mocice_bcubed"], "params": {"method": "exact"}},
    ])
    with dask.config.set(LOOSE):
        report = run_batch(manifest, tmp_path / "r.sqlite")
    assert report.failed == 0
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        rows = db.scores()
    sampled = [r for r in rows if r["measure"].startswith("mocice") and '"sample"' in r["params"]]
    exact = [r for r in rows if r["measure"].startswith("mocice") and '"exact"' in r["params"]]
    assert len(sampled) == len(exact) == 3
    assert all(r["exact"] == 0 and r["half_width"] > 0 for r in sampled)
    assert all(r["exact"] == 1 and r["half_width"] is None for r in exact)
    by_field = {r["measure"]: r for r in exact}
    for r in sampled:
        assert abs(r["value"] - by_field[r["measure"]]["value"]) <= r["half_width"]
    assert all(r["exact"] == 1 for r in rows if r["measure"] == "e4sc")


def test_results_file_stores_sampled_values_with_their_half_width(tmp_path):
    from daskbicl.batch.results import Pair

    path = tmp_path / "r.sqlite"
    pair = Pair("/t.zarr", "/p.zarr", "a", "b", "t/t.zarr", "p/p.zarr")
    with ResultsDB(path) as db:
        db.record_pair(pair, [("e4sc", "{}", 0.5, 1), ("mocice_bcubed.f1", "{}", Estimate(0.25, 0.01, 10), 1)])
    with ResultsDB(path, create=False) as db:  # read back as a reader would
        assert sorted((r["value"], r["exact"], r["half_width"]) for r in db.scores()) == [
            (0.25, 0, 0.01), (0.5, 1, None)]


# --------------------------------------------------------------------------- sampled CE and RNIA (coverage counts)


def _coverage(sampler, seed, blocks=4, n=256):
    return combine_coverage(sampler.total, [sampler.coverage_block(j, n, seed) for j in range(blocks)])


def _overlap(masks):
    tr, tc, pr, pc = masks
    return bicluster_overlap(signature_counts(tr, pr), signature_counts(tc, pc))


@pytest.fixture(scope="module")
def exact_counts():
    """Per case: brute-force (RNIA, CE) for multiset True and False, and D_max."""
    out = []
    for c in CASES:
        values = {ms: (float(brute_rnia(*c, multiset=ms)), float(brute_ce(*c, multiset=ms))) for ms in (True, False)}
        out.append(values)
    return out


def test_matching_is_exact_and_the_brute_force_ce_follows(exact_counts):
    """D_max from the exact overlap table: CE from the brute-force |U| and it equals the brute-force CE."""
    from daskbicl.kernels.micro.coverage_estimates import matched_cells

    for case, values in zip(CASES, exact_counts):
        s = _sampler(case)
        d = matched_cells(_coverage(s, 0, 1, 8), _overlap(case), 1e12)
        truth, pred = cell_sets(case[0], case[1]), cell_sets(case[2], case[3])
        u = sum(max(sum(x in b for b in truth), sum(x in b for b in pred)) for x in set().union(*truth, *pred))
        assert (u - d) / u == pytest.approx(values[True][1], abs=1e-15)


def test_coverage_intervals_cover_the_brute_force_at_the_stated_rate(exact_counts):
    """Sampled RNIA and CE (both readings): the stated 95 % interval holds the brute force about 95 % of the time."""
    from daskbicl.kernels.micro.coverage_estimates import sampled_ce, sampled_rnia

    hits = total = 0
    for case, values in zip(CASES, exact_counts):
        s, overlap = _sampler(case), _overlap(case)
        for seed in range(50):
            est = _coverage(s, seed)
            for ms in (True, False):
                for got, truth in ((sampled_rnia(est, multiset=ms), values[ms][0]),
                                   (sampled_ce(est, overlap, multiset=ms, max_work=1e12), values[ms][1])):
                    assert isinstance(got, Estimate) and got.samples == 1024
                    hits += abs(float(got) - truth) <= got.half_width
                    total += 1
    rate = hits / total
    assert 0.92 <= rate <= 0.985, (rate, total)


def test_sampled_counts_are_unbiased():
    """T times the mean term is within 4 standard errors of the brute-force Σ min(c_C, c_G) and |U| as a set."""
    for case in CASES:
        s = _sampler(case)
        est = _coverage(s, 11, blocks=32, n=1024)
        n, (sa, saa, sp, spp, *_rest) = est.samples, est.sums
        truth, pred = cell_sets(case[0], case[1]), cell_sets(case[2], case[3])
        cells = set().union(*truth, *pred)
        inter = sum(min(sum(x in b for b in truth), sum(x in b for b in pred)) for x in cells)
        for mean_sum, sq_sum, exact in ((sa, saa, inter), (sp, spp, len(cells))):
            mean = mean_sum / n
            se = np.sqrt((sq_sum / n - mean**2) / n)
            assert abs(s.total * mean - exact) <= 4 * s.total * se + 1e-9, (exact, s.total * mean)


def test_coverage_half_width_shrinks_as_one_over_sqrt_samples():
    from daskbicl.kernels.micro.coverage_estimates import rnia_estimate

    s = _sampler(CASES[0])
    small = rnia_estimate(_coverage(s, 7, blocks=4, n=1024), multiset=False)
    large = rnia_estimate(_coverage(s, 7, blocks=64, n=1024), multiset=False)
    assert large.half_width / small.half_width == pytest.approx(0.25, rel=0.1)


def test_cells_needed_reaches_the_tolerance():
    from daskbicl.kernels.micro.coverage_estimates import cells_needed, rnia_estimate, sampled_ce

    s = _sampler(CASES[2])
    need = cells_needed(_coverage(s, 3, 16, 1024), 2e-3)
    est = _coverage(s, 4, blocks=-(-need // 1024), n=1024)
    hws = [rnia_estimate(est, multiset=ms).half_width for ms in (True, False)]
    hws += [sampled_ce(est, _overlap(CASES[2]), multiset=ms, max_work=1e12).half_width for ms in (True, False)]
    assert max(hws) <= 2.2e-3, hws


def test_identical_sides_give_rnia_zero_with_a_nonempty_interval():
    """Every drawn cell has c_C = c_G: the variance is 0, the interval falls back to the rule of three."""
    from daskbicl.kernels.micro.coverage_estimates import rnia_estimate

    tr, tc, _, _ = CASES[0]
    s = _sampler((tr, tc, tr, tc))
    got = rnia_estimate(_coverage(s, 1), multiset=True)
    assert float(got) == 0.0 and got.half_width > 0


def test_sampled_ce_and_rnia_through_the_engine_hold_the_exact_values(medium):
    t, p = medium
    names = ["micro_rnia", "micro_ce"]
    for ms in (True, False):
        exact = daskbicl.score(t, p, measures=names, multiset=ms, method="exact")
        with dask.config.set({"daskbicl.micro_tolerance": 2e-3}):
            est = daskbicl.score(t, p, measures=names, multiset=ms, method="sample")
        auto = daskbicl.score(t, p, measures=names, multiset=ms)
        for m in names:
            assert not isinstance(exact[m], Estimate) and auto[m] == exact[m] and not isinstance(auto[m], Estimate)
            assert isinstance(est[m], Estimate) and est[m].half_width <= 2.2e-3, est[m]
            assert abs(float(est[m]) - exact[m]) <= est[m].half_width, (m, ms, est[m], exact[m])


def test_auto_samples_ce_and_rnia_where_exact_refuses(medium):
    t, p = medium
    exact = daskbicl.score(t, p, measures=["micro_rnia", "micro_ce"])
    with dask.config.set({"daskbicl.max_work": 2e4, "daskbicl.micro_tolerance": 4e-3}):
        with pytest.raises(TooLargeError, match="coverage counts"):
            daskbicl.micro_rnia(t, p, method="exact")
        got = daskbicl.score(t, p, measures=["micro_rnia", "micro_ce", "e4sc"])
    for m in ("micro_rnia", "micro_ce"):
        assert isinstance(got[m], Estimate) and abs(float(got[m]) - exact[m]) <= got[m].half_width
    assert not isinstance(got["e4sc"], Estimate)


def test_sampled_counts_of_nothing_covered_are_refused_like_the_exact_ones():
    tr, tc, pr, pc = CASES[0]
    t = daskbicl.biclustering(np.zeros_like(tr), tc)
    p = daskbicl.biclustering(np.zeros_like(pr), pc)
    for name in ("micro_rnia", "micro_ce"):
        with pytest.raises(InputError, match="cover no cell") as sampled:
            getattr(daskbicl, name)(t, p, method="sample")
        with pytest.raises(InputError, match="cover no cell") as exact:
            getattr(daskbicl, name)(t, p, method="exact")
        assert str(sampled.value) == str(exact.value)


def test_sampled_ce_and_rnia_same_digits_on_one_and_two_workers(medium, client):
    """Sampled CE/RNIA digits depend on the inputs and the seed only: 1 and 2 worker processes, chunks, tasks."""
    from distributed import Client, LocalCluster

    tr, tc, pr, pc = (m.values for m in (medium[0].row_mask, medium[0].col_mask,
                                         medium[1].row_mask, medium[1].col_mask))
    names = ["micro_rnia", "micro_ce"]

    def run():
        return daskbicl.score(*_ds((tr, tc, pr, pc)), measures=names, method="sample")

    with dask.config.set({"daskbicl.micro_tolerance": 4e-3}):
        two = run()
        with dask.config.set({"daskbicl.chunk": 37, "daskbicl.micro_tasks": 3}):
            chunked = run()
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as one_worker, \
                Client(one_worker):
            one = run()
        with dask.config.set({"daskbicl.micro_seed": 1}):
            other = run()
    for m in names:
        assert isinstance(two[m], Estimate)
        assert (float(two[m]), two[m].half_width, two[m].samples) == (float(one[m]), one[m].half_width,
                                                                      one[m].samples)
        assert (float(two[m]), two[m].samples) == (float(chunked[m]), chunked[m].samples)
        assert float(other[m]) != float(two[m]) and abs(float(other[m]) - float(two[m])) <= 2 * two[m].half_width


def test_cli_json_and_batch_show_sampled_ce_and_rnia(stores, tmp_path, medium):
    t, p = stores / "truth.zarr", stores / "pred-0.zarr"
    code, out, err = _cli("score", t, p, "--measures", "micro_rnia", "micro_ce", "--param", "method=sample", "--json")
    assert code == 0, err
    with dask.config.set(LOOSE):
        expected = daskbicl.score(*medium, measures=["micro_rnia", "micro_ce"], method="sample")
    for m, e in expected.items():
        assert json.loads(out)[m] == {"value": float(e), "exact": False, "half_width": e.half_width,
                                      "samples": e.samples}
    code, out, err = _cli("score", t, p, "--measure", "micro_rnia", "--param", "method=sample")
    assert code == 0 and str(expected["micro_rnia"]) in out and "sampled estimate" in out, (out, err)
    manifest = write_manifest(tmp_path / "m.toml", {"sim": stores / "truth.zarr"}, {"runs": stores / "pred-*.zarr"}, [
        {"truth": "sim", "pred": "runs", "measures": ["micro_rnia", "micro_ce"], "params": {"method": "sample"}},
    ])
    with dask.config.set(LOOSE):
        report = run_batch(manifest, tmp_path / "r.sqlite")
    assert report.failed == 0
    with ResultsDB(tmp_path / "r.sqlite", create=False) as db:
        rows = {r["measure"]: r for r in db.scores()}
    for m, e in expected.items():
        assert rows[m]["exact"] == 0 and rows[m]["half_width"] == e.half_width and rows[m]["value"] == float(e)
