"""Micro-object measures (MOCICE-BCubed, CE, RNIA, E4SC): daskbicl's family engine against its peers.

* ``targets``   — the issue's targets: 10^5 x 10^5 cells with 20 + 20 random-subset
                  biclusters at density 0.2 (pred a noisy copy, and independent);
                  10^6 x 10^5 with 50 + 50 at density 0.05 read from Zarr stores;
                  interval biclusters (few signatures); time and peak RSS;
* ``growth``    — time and memory against I, the number of biclusters and the
                  density, with the plan's bound of the CPU time next to
                  the CPU time measured (a bound above max_work makes the walk a trial);
* ``cluster``   — 200 + 200 biclusters at density 0.01 over 10^6 x 10^5 on a
                  LocalCluster of two worker processes limited to 1.5 GB each
                  (``--cluster``): restarts and the largest worker memory;
* ``oracle``    — the pair-by-pair rational oracle (tests/support/oracles_micro.py,
                  written from the SPEC) on sizes it can finish;
* ``bcubed``    — the ``bcubed`` package's extended BCubed precision (a pairwise
                  loop over items; a different formula, timed as the cost of the
                  pairwise approach) with cells as items;
* ``biclustlib``— biclustlib's clustering_error and RNIA (dense cell counts);
                  its CE similarity equals 1 - daskbicl's ``micro_ce``;
* ``overlap``   — heavy overlap (every cell in most biclusters): CE, RNIA and
                  E4SC alone (MOCICE-BCubed is refused by the work limit);
* ``cocluster`` — two co-clusterings: all four from the contingency tables.

"pred: copy" is truth with every membership kept with probability 0.9 and
added with probability 0.1 x density (daskbicl's ``perturb_biclustering``
with noise 0.1); "pred: indep" draws pred like truth.  Times are wall
seconds of ``daskbicl.score`` on the default (threads) scheduler; "cpu_s"
is the process's CPU time over all threads, "est_cpu_s" the plan's
bound of the family walk (or the class table's closed form; work units x 10 ns).

* ``issue 24``  — the table of issue 24 (redundant outputs: each bicluster
                  returned several times, slightly perturbed; dense copies) and the
                  grid I x biclusters x density x pred kind: the exact method the
                  plan picks ("classes" or "family"), its bound, time, peak RSS;
                  ``--issue24 [ROWS]`` and ``--grid [I ...]`` run only those.

* ``calibrate``  — the class method's cost estimate (what ``method="auto"``
                  decides by) against its measured CPU time over copy / independent /
                  redundant inputs, densities 0.05-0.8, 5-100 biclusters
                  (``--calibrate``, ``--calibrate --quick``).

* ``kernels``    — the micro kernels' first-use compile time and steady speed
                  (``--kernels [--ref DIR]``): a fresh interpreter with an empty
                  ``NUMBA_CACHE_DIR`` scores a small biclustering (all four
                  measures) and lists every numba compile (wall and CPU seconds),
                  then times the class method and the family walk on warm kernels
                  (best of 3) and prints the values; with ``--ref DIR`` (a copy of
                  another version's tree) the same child runs on it too, in the same
                  run, with the ratios and whether every value is equal bit for bit;
                  ``--walk --ref DIR``: the family walk against
                  DIR's, in one process, interleaved (best of 5), outputs compared.

Run:  python benchmarks/micro.py            (full, about 15 minutes)
      python benchmarks/micro.py --quick    (seconds; what the test runs)
      python benchmarks/micro.py --cluster  (adds the 1.5 GB two-worker case)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

MICRO = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]
CHEAP = ["micro_ce", "micro_rnia", "e4sc"]


def masks(k, n, density, rng):
    return rng.random((k, n)) < density


def noisy(m, density, rng, noise=0.1):
    return np.where(m, rng.random(m.shape) >= noise, rng.random(m.shape) < noise * density)


def pair(n_rows, n_cols, k, density, pred="copy", seed=0):
    """(truth, pred) as ((row_mask, col_mask), (row_mask, col_mask)) numpy arrays."""
    rng = np.random.default_rng(seed)
    tr, tc = masks(k, n_rows, density, rng), masks(k, n_cols, density, rng)
    if pred == "copy":
        return (tr, tc), (noisy(tr, density, rng), noisy(tc, density, rng))
    return (tr, tc), (masks(k, n_rows, density, rng), masks(k, n_cols, density, rng))


def estimate(truth, pred, measures=MICRO):
    """The plan's bound (CPU seconds) of the exact route and its method, or the refusal."""
    from daskbicl.kernels.micro.budget import SECONDS_PER_UNIT
    from daskbicl.kernels.micro.memberships import signature_counts
    from daskbicl.kernels.micro.planner import plan_micro

    rows, cols = signature_counts(truth[0], pred[0]), signature_counts(truth[1], pred[1])
    try:
        plan = plan_micro(rows, cols, coverage=bool({"micro_ce", "micro_rnia"} & set(measures)),
                          bcubed="mocice_bcubed" in measures, max_work=float("inf"))
    except daskbicl.TooLargeError as err:
        return float("nan"), str(err)[:60]
    return plan.work * SECONDS_PER_UNIT, plan.method


def run(truth, pred, measures=MICRO):
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    cpu = time.process_time()
    try:
        m = measure(lambda: daskbicl.score(t, p, measures=measures))
    except daskbicl.TooLargeError as err:
        return None, time.process_time() - cpu, str(err)
    return m, time.process_time() - cpu, None


def row_of(label, truth, pred, measures=MICRO):
    n_rows, n_cols = truth[0].shape[1], truth[1].shape[1]
    est, fam = estimate(truth, pred, measures)
    m, cpu, err = run(truth, pred, measures)
    row = {"case": label, "cells": f"{n_rows:.0e}x{n_cols:.0e}", "K+L": f"{len(truth[0])}+{len(pred[0])}",
           "method": fam, "est_cpu_s": f"{est:.1f}"}
    if m is None:
        row.update({"seconds": "TooLargeError", "cpu_s": f"{cpu:.1f}", "peak_MB": "", "cpu/est": "", "F1": ""})
        return row
    row.update({"seconds": f"{m.seconds:.2f}", "cpu_s": f"{cpu:.1f}", "peak_MB": f"{m.peak_mb:.0f}",
                "cpu/est": f"{cpu / est:.2f}" if est == est and est > 0 else "",
                "F1": f"{m.result['mocice_bcubed'].f1:.4f}" if "mocice_bcubed" in m.result else ""})
    return row


def run_targets(quick: bool):
    if quick:
        return [row_of("dense copy (tiny)", *pair(2000, 2000, 5, 0.2)),
                row_of("interval (tiny)", *intervals(2000, 2000, 5))]
    rows = [row_of("10^5 x 10^5, 20+20, d 0.2, copy", *pair(10**5, 10**5, 20, 0.2, "copy")),
            row_of("10^5 x 10^5, 20+20, d 0.2, indep", *pair(10**5, 10**5, 20, 0.2, "indep")),
            row_of("interval, 10^5 x 10^5, 20+20", *intervals(10**5, 10**5, 20))]
    rows.append(zarr_target(10**6, 10**5, 50, 0.05))
    return rows


def intervals(n_rows, n_cols, k, overlap=0.2):
    """Interval biclusters (contiguous rows and columns), pred shifted by 1 %."""
    def side(n, shift):
        length = n // k
        lo = (np.arange(k) * (n - length * (1 + overlap)) / max(k - 1, 1)).astype(int) + shift
        idx = np.arange(n)
        return (idx[None, :] >= lo[:, None]) & (idx[None, :] < (lo + int(length * (1 + overlap)))[:, None])
    return (side(n_rows, 0), side(n_cols, 0)), (side(n_rows, n_rows // 100), side(n_cols, n_cols // 100))


def zarr_target(n_rows, n_cols, k, density):
    """The issue's second target, read from Zarr stores (generated lazily, written once)."""
    from daskbicl.io.synthetic_biclustering import perturb_biclustering, random_biclustering

    with tempfile.TemporaryDirectory() as tmp:
        truth = random_biclustering(n_rows, n_cols, k, density=density, seed=3, chunk=1 << 18)
        tpath = daskbicl.save(truth, os.path.join(tmp, "t.zarr"))
        ppath = daskbicl.save(perturb_biclustering(truth, 0.1, density=density, seed=4), os.path.join(tmp, "p.zarr"))
        cpu = time.process_time()
        m = measure(lambda: daskbicl.score(tpath, ppath, measures=MICRO))
        cpu = time.process_time() - cpu
    return {"case": f"Zarr, 10^6 x 10^5, {k}+{k}, d {density}, copy", "cells": f"{n_rows:.0e}x{n_cols:.0e}",
            "K+L": f"{k}+{k}", "method": "", "est_cpu_s": "", "seconds": f"{m.seconds:.2f}", "cpu_s": f"{cpu:.1f}",
            "peak_MB": f"{m.peak_mb:.0f}", "cpu/est": "", "F1": f"{m.result['mocice_bcubed'].f1:.4f}"}


def run_growth(quick: bool):
    if quick:
        return [row_of("I 10^3", *pair(1000, 1000, 5, 0.1))]
    out = []
    for n in (10**4, 10**5, 10**6):  # against I (J = 10^4), 20+20 at density 0.1, copy
        out.append(row_of(f"I {n:.0e}", *pair(n, 10**4, 20, 0.1)))
    for k in (5, 10, 20, 50, 100):  # against the number of biclusters, 10^4 x 10^4 at 0.05
        out.append(row_of(f"{k}+{k}", *pair(10**4, 10**4, k, 0.05)))
    out.append(row_of("1000+1000, 2.10^4^2, d 0.003", *pair(2 * 10**4, 2 * 10**4, 1000, 0.003)))
    for d in (0.01, 0.03, 0.1, 0.2, 0.3):  # against density, 10^4 x 10^4, 20+20
        out.append(row_of(f"density {d}", *pair(10**4, 10**4, 20, d)))
    return out


# --------------------------------------------------------------------------
# issue 24: redundant and dense biclusterings, the exact method the plan picks
# --------------------------------------------------------------------------
def flipped(m, density, rng, rate):
    """Each membership dropped with probability ``rate``, as many added on average."""
    return np.where(m, rng.random(m.shape) >= rate, rng.random(m.shape) < rate * density / max(1 - density, 1e-9))


def issue_pair(n_rows, n_cols, k, density, kind, copies=5, seed=0):
    """The issue's shapes: "copy" (3 % flipped + 2 extra), "indep", "redundant" (each returned ``copies`` times)."""
    rng = np.random.default_rng(seed)
    tr, tc = masks(k, n_rows, density, rng), masks(k, n_cols, density, rng)
    if kind == "copy":
        pr = np.concatenate([flipped(tr, density, rng, 0.03), masks(2, n_rows, density, rng)])
        pc = np.concatenate([flipped(tc, density, rng, 0.03), masks(2, n_cols, density, rng)])
    elif kind == "indep":
        pr, pc = masks(k, n_rows, density, rng), masks(k, n_cols, density, rng)
    else:  # slightly perturbed copies: no two identical
        pr = np.concatenate([flipped(tr, density, rng, 0.01) for _ in range(copies)])
        pc = np.concatenate([flipped(tc, density, rng, 0.01) for _ in range(copies)])
    return (tr, tc), (pr, pc)


def chosen(truth, pred, measures):
    """(method, bounded CPU s, planning s) of the plan ("family trial": a bound above max_work), or ("refused", nan, s)."""
    from daskbicl.kernels.micro.budget import SECONDS_PER_UNIT
    from daskbicl.kernels.micro.memberships import signature_counts
    from daskbicl.kernels.micro.planner import plan_micro

    rows, cols = signature_counts(truth[0], pred[0]), signature_counts(truth[1], pred[1])
    start = time.perf_counter()
    try:
        plan = plan_micro(rows, cols, coverage=bool({"micro_ce", "micro_rnia"} & set(measures)),
                          bcubed="mocice_bcubed" in measures)
    except daskbicl.TooLargeError:
        return "refused", float("nan"), time.perf_counter() - start
    method = plan.method + (" trial" if getattr(plan, "trial", False) else "")
    return method, plan.work * SECONDS_PER_UNIT, time.perf_counter() - start


def issue_row(label, truth, pred, measures=("mocice_bcubed",)):
    measures = list(measures)
    method, est, plan_s = chosen(truth, pred, measures)
    load = f"{os.getloadavg()[0]:.1f}"
    row = {"case": label, "K+L": f"{len(truth[0])}+{len(pred[0])}", "method": method,
           "est_cpu_s": f"{est:.1f}", "plan_s": f"{plan_s:.1f}"}
    m, cpu, err = run(truth, pred, measures)
    if m is None:
        row.update({"seconds": "TooLargeError", "cpu_s": f"{cpu:.1f}", "peak_MB": "", "value": "", "load": load})
        return row
    first = m.result[measures[0]]
    value = first.f1 if hasattr(first, "f1") else first
    row.update({"seconds": f"{m.seconds:.2f}", "cpu_s": f"{cpu:.1f}", "peak_MB": f"{m.peak_mb:.0f}",
                "value": f"{value:.4f}", "load": f"{load}/{os.getloadavg()[0]:.1f}"})
    return row


#: The issue's table: (label, I, J, K, density, kind, measures).
ISSUE_TABLE = [
    ("10^3 x 10^3, 10 x 5 redundant, d 0.2", 1000, 1000, 10, 0.2, "redundant", ["mocice_bcubed"]),
    ("10^3 x 10^3, 50+52 copy, d 0.2", 1000, 1000, 50, 0.2, "copy", ["mocice_bcubed"]),
    ("10^3 x 10^3, 100+100 indep, d 0.2", 1000, 1000, 100, 0.2, "indep", ["mocice_bcubed"]),
    ("5000 x 500, 20 x 5 redundant, d 0.05", 5000, 500, 20, 0.05, "redundant", ["mocice_bcubed"]),
    ("10^4 x 10^4, 20+22 copy, d 0.2", 10**4, 10**4, 20, 0.2, "copy", ["mocice_bcubed"]),
    ("3.10^4 x 3.10^4, 100+102 copy, d 0.05", 3 * 10**4, 3 * 10**4, 100, 0.05, "copy", ["mocice_bcubed"]),
    ("10^5 x 10^5, 20+20 indep, d 0.2", 10**5, 10**5, 20, 0.2, "indep", ["mocice_bcubed"]),
    ("10^5 x 10^5, 100+100 indep, d 0.2", 10**5, 10**5, 100, 0.2, "indep", ["micro_ce", "micro_rnia"]),
]


def run_issue(quick: bool, only=None, seed: int = 0):
    if quick:
        return [issue_row("300 x 200, 4 x 5 redundant, d 0.2", *issue_pair(300, 200, 4, 0.2, "redundant")),
                issue_row("500 x 500, 10+12 copy, d 0.2", *issue_pair(500, 500, 10, 0.2, "copy"))]
    return [issue_row(f"{label}, seed {seed}", *issue_pair(i, j, k, d, kind, seed=seed), measures=ms)
            for n, (label, i, j, k, d, kind, ms) in enumerate(ISSUE_TABLE) if only is None or n in only]


def run_grid(quick: bool, sizes=(10**3, 10**4, 10**5)):
    """I = J in ``sizes``, K in {5, 20, 50, 100}, density {0.05, 0.2}, copy / indep / redundant (3-5 copies)."""
    if quick:
        return [issue_row("grid 10^3, 5, d 0.05, redundant x3",
                          *issue_pair(1000, 1000, 5, 0.05, "redundant", copies=3))]
    out = []
    for n in sizes:
        for k in (5, 20, 50, 100):
            for d in (0.05, 0.2):
                for kind, copies in (("copy", 0), ("indep", 0), ("redundant", 3), ("redundant", 5)):
                    if kind == "redundant" and k * copies > 250:
                        continue
                    label = f"{n:.0e}, {k}, d {d}, {kind}{f' x{copies}' if copies else ''}"
                    out.append(issue_row(label, *issue_pair(n, n, k, d, kind, copies=copies or 5)))
                    print(out[-1], flush=True)
    return out


#: The calibration spread: (I = J, K, density, pred kind, copies).
CALIBRATION = [(n, k, d, kind, c) for n, k, d in ((200, 20, 0.8), (300, 10, 0.8), (1000, 20, 0.5), (1000, 5, 0.5),
                                                  (1000, 20, 0.2), (1000, 50, 0.2), (1000, 100, 0.05),
                                                  (3000, 20, 0.05), (10**4, 20, 0.2), (10**4, 50, 0.05))
               for kind, c in (("copy", 0), ("indep", 0), ("redundant", 5))]
CALIBRATION_QUICK = [(200, 20, 0.8, "indep", 0), (1000, 20, 0.2, "copy", 0), (1000, 10, 0.2, "redundant", 3)]


def calibrate_row(n, k, density, kind, copies, sample=1500, score_limit=20.0):
    """The class method's estimate against its measured CPU time (the MOCICE-BCubed sums, one thread).

    The sums are timed on a seeded random sample of ``sample`` classes and
    scaled to all (an unbiased estimate of the total; "sampled" says so);
    the estimate of the same classes is the plan's (class_traces.class_work).
    Where the whole plan (the method it picks: classes or family walk) is
    estimated under ``score_limit`` seconds, ``daskbicl.score`` is run and its
    CPU time printed against that estimate.
    """
    from daskbicl.kernels.micro.budget import SECONDS_PER_UNIT
    from daskbicl.kernels.micro.class_traces import ClassTable, class_bcubed, class_estimate, class_work
    from daskbicl.kernels.micro.memberships import signature_counts

    truth, pred = issue_pair(n, n, k, density, kind, copies=copies or 5)
    rows, cols = signature_counts(truth[0], pred[0]), signature_counts(truth[1], pred[1])
    label = f"{n}^2, {k}, d {density}, {kind}{f' x{copies}' if copies else ''}"
    start = time.process_time()
    ce = class_estimate(rows, cols, False, True)
    plan_s = time.process_time() - start
    method, est_all, plan_wall = chosen(truth, pred, ["mocice_bcubed"])  # the whole plan, default max_work
    row = {"case": label, "K+L": f"{k}+{len(pred[0])}", "plan": f"{method} ({plan_wall:.1f} s)",
           "plan_est_s": f"{est_all:.3g}", "score_cpu_s": "", "class_est_cpu_s": f"{plan_s:.2f}"}
    if method != "refused" and est_all <= score_limit:  # the whole score call: CPU against the plan's estimate
        m, cpu, _ = run(truth, pred, ["mocice_bcubed"])
        row["score_cpu_s"] = f"{cpu:.3g} ({cpu / est_all:.2f}x)" if est_all > 0 else f"{cpu:.3g}"
    if ce.table is None:
        return {**row, "classes": ce.why, "est_s": "", "measured_s": "", "measured/est": "", "load": ""}
    table, merged = ce.table, ce.merged
    jac = np.random.default_rng(0).random((rows.n_pred, rows.n_truth))
    n_cls = len(table)
    idx = np.sort(np.random.default_rng(1).choice(n_cls, min(n_cls, sample), replace=False))
    sub = ClassTable(table.keys[idx], table.counts[idx], table.sizes[idx])
    class_bcubed(merged, sub, jac, 0, 1)  # compiled before timing
    start = time.process_time()
    class_bcubed(merged, sub, jac)
    measured = (time.process_time() - start) * n_cls / len(idx)
    est = float(np.sum(class_work(merged, table))) * SECONDS_PER_UNIT
    return {**row, "classes": f"{n_cls:,} (d<={int(table.sizes.max())})", "est_s": f"{est:.3g}",
            "measured_s": f"{measured:.3g}{' (sampled)' if len(idx) < n_cls else ''}",
            "measured/est": f"{measured / est:.2f}" if est > 0 else "", "load": f"{os.getloadavg()[0]:.1f}"}


def run_calibrate(quick: bool):
    out = []
    for case in CALIBRATION_QUICK if quick else CALIBRATION:
        out.append(calibrate_row(*case))
        print(out[-1], flush=True)
    return out


def run_cluster():
    """200 + 200 at density 0.01 over 10^6 x 10^5 on two 1.5 GB worker processes."""
    import dask
    from distributed import Client, LocalCluster

    truth, pred = pair(10**6, 10**5, 200, 0.01, "copy", seed=9)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="1.5GB", dashboard_address=None) as cl, \
            Client(cl) as client:
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            start = time.perf_counter()
            res = daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=MICRO)
            seconds = time.perf_counter() - start
        peak = client.run(lambda dask_worker: dask_worker.monitor.range_query(start=0)["memory"])
        peaks = {w: max(v) / 2**20 for w, v in peak.items()}
    return [{"case": "200+200, d 0.01, 10^6 x 10^5, 2 x 1.5 GB", "seconds": f"{seconds:.1f}",
             "largest worker MB": f"{max(peaks.values()):.0f}", "F1": f"{res['mocice_bcubed'].f1:.4f}",
             "CE": f"{res['micro_ce']:.4f}"}]


def run_oracle(n, k):
    from tests.support import oracles_micro as OM

    truth, pred = pair(n, n, k, 0.4, "indep", seed=3)
    o = measure(OM.mocice_bcubed, truth[0], truth[1], pred[0], pred[1])
    m = measure(lambda: daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=MICRO))
    exact = tuple(float(x) for x in o.result)
    assert np.allclose(tuple(m.result["mocice_bcubed"]), exact, rtol=1e-12, atol=1e-15)
    return {"matrix": f"{n}x{n}", "cells": n * n, "K+L": f"{k}+{k}", "oracle_s": f"{o.seconds:.2f}",
            "daskbicl_s": f"{m.seconds:.3f}", "ratio": f"{o.seconds / m.seconds:.0f}x", "agree": "yes"}


def run_bcubed(n, k):
    import bcubed

    truth, pred = pair(n, n, k, 0.3, "indep", seed=5)
    cells = [(i, j) for i in range(n) for j in range(n)]

    def label_sets(side):
        r, c = side
        return {x: {b for b in range(k) if r[b, x[0]] and c[b, x[1]]} for x in cells}
    ldict = {x: s for x, s in label_sets(pred).items() if s}
    cdict = {x: label_sets(truth)[x] or {-1} for x in ldict}  # bcubed needs a label per item
    b = measure(bcubed.precision, cdict, ldict)
    m = measure(lambda: daskbicl.score(daskbicl.biclustering(*truth), daskbicl.biclustering(*pred), measures=MICRO))
    return {"items (cells)": len(ldict), "K+L": f"{k}+{k}", "bcubed precision_s": f"{b.seconds:.2f}",
            "daskbicl all four_s": f"{m.seconds:.3f}", "ratio": f"{b.seconds / m.seconds:.0f}x"}


def run_biclustlib(n, k):
    from biclustlib.evaluation.external import clustering_error, relative_non_intersecting_area
    from biclustlib.models import Bicluster, Biclustering

    if not hasattr(np, "int"):  # biclustlib 0.0.13 predates NumPy 1.24, which removed np.int
        np.int = int

    truth, pred = pair(n, n, k, 0.1, "copy", seed=7)

    def model(side):
        return Biclustering([Bicluster(np.flatnonzero(r), np.flatnonzero(c)) for r, c in zip(*side)])
    b = measure(lambda: (clustering_error(model(pred), model(truth), n, n),
                         relative_non_intersecting_area(model(pred), model(truth), n, n)))
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    m = measure(lambda: daskbicl.score(t, p, measures=["micro_ce", "micro_rnia"]))
    assert abs((1 - b.result[0]) - m.result["micro_ce"]) < 1e-9
    assert abs((1 - b.result[1]) - m.result["micro_rnia"]) < 1e-9
    return {"matrix": f"{n}x{n}", "K+L": f"{k}+{k}", "biclustlib_s": f"{b.seconds:.2f}",
            "biclustlib_MB": f"{b.peak_mb:.0f}", "daskbicl_s": f"{m.seconds:.3f}",
            "daskbicl_MB": f"{m.peak_mb:.0f}", "ratio": f"{b.seconds / m.seconds:.0f}x", "CE, RNIA agree": "yes"}


def run_overlap(n, k, density, max_work=None):
    """CE, RNIA, E4SC on heavy overlap; MOCICE-BCubed: does ``method="exact"`` refuse, what does auto give?

    ``max_work`` (dask config ``daskbicl.max_work``) lowers the budget so a tiny case shows the refusal
    and the switch to sampling in seconds.
    """
    import dask

    truth, pred = pair(n, n, k, density, "indep", seed=9)
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred)
    budget = {} if max_work is None else {"daskbicl.max_work": max_work}
    with dask.config.set(budget):
        m = measure(lambda: daskbicl.score(t, p, measures=CHEAP))
        start = time.perf_counter()
        try:
            daskbicl.mocice_bcubed(t, p, method="exact")
            refused = f"no ({time.perf_counter() - start:.1f} s)"
        except daskbicl.TooLargeError:
            refused = f"yes, in {time.perf_counter() - start:.1f} s"
        start = time.perf_counter()
        auto = daskbicl.mocice_bcubed(t, p).f1
        auto_s = time.perf_counter() - start
    s = m.result
    return {"matrix": f"{n}x{n}", "K+L": f"{k}+{k}", "density": density, "max_work": f"{max_work or 'default'}",
            "seconds": f"{m.seconds:.2f}", "peak MB": f"{m.peak_mb:.0f}", "CE": f"{s['micro_ce']:.4f}",
            "RNIA": f"{s['micro_rnia']:.4f}", "E4SC": f"{s['e4sc']:.4f}", "exact refused": refused,
            "auto F1": str(auto), "auto s": f"{auto_s:.2f}"}


def run_cocluster(n, h, check=False):
    """Two random co-clusterings with h x h clusters each (h*h blocks a side)."""
    from daskbicl.engine.blocks import as_biclustering

    rng = np.random.default_rng(11)
    truth = (rng.integers(0, h, n), rng.integers(0, h, n))
    pred = (rng.integers(0, h, n), rng.integers(0, h, n))
    m = measure(lambda: daskbicl.score(truth, pred, measures=MICRO))
    row = {"matrix": f"{n}x{n}", "clusters": f"{h}x{h}", "blocks a side": h * h, "seconds": f"{m.seconds:.2f}",
           "peak MB": f"{m.peak_mb:.0f}", "bcubed F1": f"{m.result['mocice_bcubed'].f1:.4f}",
           "CE": f"{m.result['micro_ce']:.4f}"}
    if check:  # the same numbers through block masks and the family engine
        t, p = (as_biclustering(daskbicl.as_dataset(x)) for x in (truth, pred))
        via_masks = daskbicl.score(t, p, measures=MICRO)
        assert np.allclose(tuple(via_masks["mocice_bcubed"]), tuple(m.result["mocice_bcubed"]), rtol=1e-12)
        assert all(abs(via_masks[k] - m.result[k]) < 1e-12 for k in CHEAP)
        row["agree with masks"] = "yes"
    return row


_KERNELS_CHILD = r"""
import json, sys, time
import numpy as np
t = time.perf_counter()
import daskbicl
from numba.core import event
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import MicroTables
out = {"import": time.perf_counter() - t, "compiles": [], "steady": []}
started, phase = [], ["first score"]
class Compiles(event.Listener):
    def on_start(self, ev):
        started.append((time.perf_counter(), time.process_time()))
    def on_end(self, ev):
        wall, cpu = started.pop()
        if not started:
            f = ev.data["dispatcher"].py_func
            out["compiles"].append([f.__module__.rsplit(".", 1)[-1] + "." + f.__qualname__,
                                    time.perf_counter() - wall, time.process_time() - cpu, phase[0]])
event.register("numba:compile", Compiles())
rng = np.random.default_rng(7)
masks = [(rng.random((4, 300)) < 0.2, rng.random((4, 200)) < 0.2) for _ in range(2)]
t = time.perf_counter()
daskbicl.score(*(daskbicl.biclustering(r, c) for r, c in masks),
               measures=["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"])
out["first score"] = time.perf_counter() - t
quick = sys.argv[1:] == ["--quick"]
phase[0] = "steady cases' first run"
for label, n, k, density, kind, method in (
        ("classes 20+20 0.2 indep", 2000, 20, 0.2, "indep", "classes"),
        ("family 20+20 0.2 indep", 2000, 20, 0.2, "indep", "family"),
        ("classes 10+12 0.5 copy", 1500, 10, 0.5, "copy", "classes"),
        ("family 10+12 0.3 copy", 1500, 10, 0.3, "copy", "family"),
        ("classes 40+40 0.1 indep", 3000, 40, 0.1, "indep", "classes")):
    n = n // 4 if quick else n
    r = np.random.default_rng(n + k)
    tr, tc = r.random((k, n)) < density, r.random((k, n)) < density
    if kind == "copy":
        pr = np.concatenate([tr ^ (r.random(tr.shape) < 0.03), r.random((2, n)) < density])
        pc = np.concatenate([tc ^ (r.random(tc.shape) < 0.03), r.random((2, n)) < density])
    else:
        pr, pc = r.random((k, n)) < density, r.random((k, n)) < density
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    best, values = float("inf"), None
    for rep in range(2 if quick else 4):  # the first run compiles what the small score did not
        t = time.perf_counter()
        got = MicroTables(rows, cols, method=method, max_work=float("inf"))
        values = [repr(x) for x in (*got.bcubed, *got.coverage)]
        best = min(best, time.perf_counter() - t) if rep else best
    out["steady"].append([label, n, best, values])
print(json.dumps(out))
"""


def _kernels_child(tree: str, quick: bool, cache: str) -> dict:
    import json
    import subprocess

    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONWARNINGS="ignore", PYTHONPATH=tree)
    got = subprocess.run([sys.executable, "-c", _KERNELS_CHILD] + (["--quick"] if quick else []),
                         check=True, capture_output=True, text=True, env=env, cwd=tree)
    return json.loads(got.stdout)


def run_kernels(quick: bool, ref: str | None, rounds: int = 1) -> int:
    """First-use compiles and steady speed of the micro kernels (this tree, and ``ref`` in the same run).

    Round 1 starts from empty numba caches (the compile table); later rounds
    reuse each tree's cache, alternate the trees, and keep each case's best
    steady time (interleaved runs: a load change hits both trees alike).
    """
    here = os.path.dirname(HERE)
    trees = [("this", here)] + ([("ref", os.path.abspath(ref))] if ref else [])
    print(f"machine: {machine()}\nversions: {versions()}")
    runs: dict = {}
    with tempfile.TemporaryDirectory() as caches:
        for rnd in range(rounds):
            for name, tree in trees:
                before = os.getloadavg()[0]
                got = _kernels_child(tree, quick, os.path.join(caches, name))
                print(f"round {rnd + 1}, {name} ({tree}): load {before:.1f} -> {os.getloadavg()[0]:.1f}; import "
                      f"{got['import']:.2f} s, first small score {got['first score']:.2f} s")
                if name not in runs:
                    runs[name] = got
                    continue
                for old, new in zip(runs[name]["steady"], got["steady"]):
                    old[2] = min(old[2], new[2])
    names = sorted({(c[3], c[0]) for r in runs.values() for c in r["compiles"]}, reverse=True)
    table = []
    for when, kernel in names:
        row = {"when": when, "kernel": kernel}
        for name in runs:
            hit = [c for c in runs[name]["compiles"] if c[0] == kernel and c[3] == when]
            row[f"{name} wall s"] = f"{hit[0][1]:.2f}" if hit else "-"
            row[f"{name} cpu s"] = f"{hit[0][2]:.2f}" if hit else "-"
        table.append(row)
    totals = []
    for when in ("first score", "steady cases' first run"):
        total = {"when": when, "kernel": "all compiles"}
        for name in runs:
            total[f"{name} wall s"] = f"{sum(c[1] for c in runs[name]['compiles'] if c[3] == when):.2f}"
            total[f"{name} cpu s"] = f"{sum(c[2] for c in runs[name]['compiles'] if c[3] == when):.2f}"
        totals.append(total)
    print("\n== numba compiles (empty cache; wall and process CPU seconds): a first small biclustering score "
          "(all four micro measures), then what the steady cases' first runs still compile")
    print_table(table + totals, list(totals[0]))
    steady = []
    for i, (label, n, sec, values) in enumerate(runs["this"]["steady"]):
        row = {"case (warm kernels, best of 3; --quick: 1)": label, "I=J": n, "this s": f"{sec:.3f}"}
        if "ref" in runs:
            ref_sec, ref_values = runs["ref"]["steady"][i][2:]
            row.update({"ref s": f"{ref_sec:.3f}", "this / ref": f"{sec / ref_sec:.2f}",
                        "values equal": "yes" if values == ref_values else "NO"})
        steady.append(row)
    print("\n== steady speed: MicroTables(method=...).bcubed and .coverage")
    print_table(steady, list(steady[0]))
    print(f"load now: {os.getloadavg()}")
    return 1 if any(r.get("values equal") == "NO" for r in steady) else 0


def _plain_copy(ref: str, folder: str) -> None:
    """``ref``'s family_walk.py as a plain module ``ref_family_walk`` in ``folder``."""
    import re

    for name in ("family_walk",):
        with open(os.path.join(ref, "daskbicl", "kernels", "micro", f"{name}.py"), encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"^from \.\.compiled import announce_compiles$|^announce_compiles\(\).*$", "", text, flags=re.M)
        text = text.replace("from .family_walk import", "from ref_family_walk import")
        text = text.replace("from .budget import", "from daskbicl.kernels.micro.budget import")
        with open(os.path.join(folder, f"ref_{name}.py"), "w", encoding="utf-8") as f:
            f.write(text)


def run_walk(quick: bool, ref: str) -> int:
    """The family walk against ``ref``'s, in one process, interleaved, best of 5."""
    import importlib
    import math

    from daskbicl.kernels.micro import family_walk
    from daskbicl.kernels.micro.memberships import signature_counts, subproblem

    folder = tempfile.mkdtemp()
    _plain_copy(os.path.abspath(ref), folder)
    sys.path.insert(0, folder)
    ref_walk = importlib.import_module("ref_family_walk")
    rng = np.random.default_rng(1)
    n, k = (600, 10) if quick else (1500, 12)
    tr, tc = rng.random((k, n)) < 0.3, rng.random((k, n)) < 0.3
    pr = np.concatenate([tr ^ (rng.random(tr.shape) < 0.03), rng.random((2, n)) < 0.3])
    pc = np.concatenate([tc ^ (rng.random(tc.shape) < 0.03), rng.random((2, n)) < 0.3])
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    ne, kt = rows.n_elem, rows.n_truth
    inputs = (*subproblem(rows, ()), *subproblem(cols, ()))
    rnd = np.random.default_rng(0).integers(0, 2**63, ne, dtype=np.int64).astype(np.uint64)
    binom = np.array([[math.comb(a, b) for b in range(31)] for a in range(31)], np.int64)

    def walk(mod, store):
        lo = np.zeros((kt + 1, ne - kt + 1), np.uint64)
        hi = lo.copy()
        if hasattr(mod, "Walk"):  # NamedTuples in, a Family out (issue 38)
            walk_as = mod.Walk.storing(10**8, 16, rnd) if store else mod.Walk.finishing(64)
            out = mod.enumerate_family(mod.Lists(*inputs), mod.Start(ne, kt), mod.Moments(lo, hi), walk_as)
        else:
            out = mod.enumerate_family(*inputs, ne, kt, 0, 0, 0, -1, store, 10**8, 16, rnd, lo, hi,
                                       0 if store else 64, binom, np.zeros(2, np.int64))
        return [out[1], lo.tolist(), hi.tolist(), *(x.tolist() for x in out[3:])]

    print(f"machine: {machine()}\n{n} x {n} cells, {k} + {k + 2} biclusters at 0.3 (pred a copy)")
    rows_out = []
    for label, fn, mods in (("walk, storing nodes", lambda m: walk(m, True), (ref_walk, family_walk)),
                            ("walk, moments only", lambda m: walk(m, False), (ref_walk, family_walk))):
        same = fn(mods[0]) == fn(mods[1])  # also compiles both
        times: list[list[float]] = [[], []]
        for _ in range(5):
            for i, mod in enumerate(mods):
                start = time.perf_counter()
                fn(mod)
                times[i].append(time.perf_counter() - start)
        rows_out.append({"kernel": label, "ref s": f"{min(times[0]):.4f}", "this s": f"{min(times[1]):.4f}",
                         "this / ref": f"{min(times[1]) / min(times[0]):.2f}", "same outputs": "yes" if same else "NO",
                         "load": f"{os.getloadavg()[0]:.1f}"})
    print_table(rows_out, list(rows_out[0]))
    return 1 if any(r["same outputs"] == "NO" for r in rows_out) else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, nargs="+", default=[0],
                    help="--issue24: the random draws of each row's inputs (default 0; give several to see other draws)")
    ap.add_argument("--cluster", action="store_true", help="add the two 1.5 GB worker processes case")
    ap.add_argument("--issue24", nargs="*", type=int, default=None,
                    help="only the issue-24 table (row numbers, default all) and, with --grid, the grid")
    ap.add_argument("--grid", nargs="*", type=float, default=None, help="the issue-24 grid for these I (default all)")
    ap.add_argument("--calibrate", action="store_true",
                    help="only the class method's estimate against its measured CPU time over a spread of shapes")
    ap.add_argument("--kernels", action="store_true",
                    help="only the micro kernels' first-use compiles and steady speed (fresh numba cache)")
    ap.add_argument("--ref", default=None, help="--kernels: another version's tree, run in the same process")
    ap.add_argument("--walk", action="store_true",
                    help="only the family walk against --ref's, in one process (steady speed)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="--kernels: rounds (the first compiles; later ones reuse the caches, interleaved)")
    args = ap.parse_args(argv)
    if args.kernels:
        return run_kernels(args.quick, args.ref, args.rounds)
    if args.walk:
        return run_walk(args.quick, args.ref)
    if args.calibrate:
        print(f"machine: {machine()}\nversions: {versions()}\nload: {os.getloadavg()}\n")
        rows = run_calibrate(args.quick)
        print("\n== class method: estimated vs measured CPU seconds of the MOCICE-BCubed sums (one thread)")
        print_table(rows, list(rows[0]))
        return 0
    if args.issue24 is not None or args.grid is not None:
        return issue24_main(args)
    print(f"machine: {machine()}\nversions: {versions()}\nload: {os.getloadavg()}\n")
    # compile (or load the cached) numba kernels first: not part of any timing
    start = time.perf_counter()
    daskbicl.score(*(daskbicl.biclustering(*x) for x in pair(60, 60, 3, 0.3)), measures=MICRO)
    print(f"numba kernels ready in {time.perf_counter() - start:.1f} s (first run compiles, then cached)\n")
    issue = run_issue(args.quick) + run_grid(args.quick)
    print("== issue 24: the exact method the plan picks (mocice_bcubed)")
    print_table(issue, list(issue[0]))
    targets = run_targets(args.quick)
    growth = run_growth(args.quick)
    if args.quick:
        oracle = [run_oracle(5, 2)]
        bc = [run_bcubed(10, 3)] if _has("bcubed") else []
        bl = [run_biclustlib(40, 3)] if _has("biclustlib") and _has("munkres") else []
        heavy = [run_overlap(200, 20, 0.8)]  # the default budget: the exact trial refuses, auto samples
        cocl = [run_cocluster(300, 4, check=True)]
    else:
        oracle = [run_oracle(s, 3) for s in (6, 9, 12)]
        bc = [run_bcubed(s, 5) for s in (50, 100)] if _has("bcubed") else []
        bl = [run_biclustlib(s, k) for s, k in ((300, 10), (1000, 20), (3000, 20))] \
            if _has("biclustlib") and _has("munkres") else []
        heavy = [run_overlap(600, 40, 0.8), run_overlap(2000, 40, 0.5)]
        cocl = [run_cocluster(2000, 10, check=True), run_cocluster(20_000, 30), run_cocluster(10**5, 20)]
    print("== all four measures at scale (the issue's targets)")
    print_table(targets, list(targets[0]))
    print("\n== growth: against I (J = 10^4, 20+20, d 0.1), biclusters (10^4^2, d 0.05), density (10^4^2, 20+20)")
    print_table(growth, list(growth[0]))
    if args.cluster:
        print("\n== two worker processes of 1.5 GB")
        cl = run_cluster()
        print_table(cl, list(cl[0]))
    print("\n== pair-by-pair rational oracle (MOCICE-BCubed only) vs daskbicl (all four)")
    print_table(oracle, list(oracle[0]))
    print("\n== heavy overlap: CE, RNIA, E4SC; MOCICE-BCubed exact refused or not, and what auto gives")
    print_table(heavy, list(heavy[0]))
    print("\n== co-clusterings: all four from the contingency tables")
    print_table(cocl, list(cocl[0]))
    for title, rows in (("bcubed package (extended BCubed precision, pairwise)", bc),
                        ("biclustlib clustering_error + RNIA", bl)):
        print(f"\n== {title}")
        if rows:
            print_table(rows, list(rows[0]))
        else:
            print("not installed: pip install bcubed biclustlib munkres (biclustlib with --no-deps)")
    return 0


def issue24_main(args):
    print(f"machine: {machine()}\nversions: {versions()}\nload: {os.getloadavg()}\n")
    start = time.perf_counter()
    daskbicl.score(*(daskbicl.biclustering(*x) for x in pair(60, 60, 3, 0.3)), measures=MICRO)
    print(f"numba kernels ready in {time.perf_counter() - start:.1f} s\n")
    if args.issue24 is not None:
        rows = [r for seed in args.seed for r in run_issue(args.quick, set(args.issue24) or None, seed)]
        print("== issue 24 table (times: daskbicl.score, threads; est: the plan's CPU bound)")
        print_table(rows, list(rows[0]))
    if args.grid is not None:
        rows = run_grid(args.quick, tuple(int(x) for x in args.grid) or (10**3, 10**4, 10**5))
        print("\n== issue 24 grid")
        print_table(rows, list(rows[0]))
    return 0


def _has(module):
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = main()
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    sys.exit(code)
