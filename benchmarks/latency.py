"""Fixed costs: import, the shell, small inputs, a Client, many clusters (issue 13).

Every row is measured in this run against the reference named next to it:

1. ``python -c "import daskbicl"`` against ``python -c "import xarray,
   dask.array"`` (fresh interpreters, best of N, interleaved).
2. ``daskbicl score`` on two stores (fresh process, wall time) against
   ``python -c "import daskbicl"``: the default scheduler (threads, in this
   process) and ``--scheduler local`` (a LocalCluster started and stopped),
   at growing sizes, to show where a local cluster would start to pay.
3. ``daskbicl.score`` (all 8 co-clustering measures) on in-memory labels
   against scikit-learn on the same labels: ``adjusted_rand_score`` on the
   rows alone, and ARI + NMI on rows and on columns (4 calls).
4. The same small inputs with a ``distributed.Client`` active (LocalCluster,
   2 worker processes) against no Client.
5. In-process scoring against the task graph on the threaded scheduler, by
   input size: where ``daskbicl.in_process_bytes`` (64 MiB) comes from.
6. The finalize at many clusters, from counted tables: all 8 measures, CE's
   matching and the mutual information, against the previous methods (one
   plain solver call per table; MI as an fsum over per-cell terms).

Labels: ``truth`` uniform over k clusters; ``pred`` a copy with a share of
its labels redrawn uniformly ("redrawn" column; 1.0 = independent).

7. First use (issue 28): a fresh interpreter with an empty ``NUMBA_CACHE_DIR``
   imports daskbicl, scores two small biclusterings (every measure) and two
   small string-label co-clusterings -- small enough that the kernels run as
   plain Python (daskbicl.kernels.micro.class_loops) and nothing compiles -- then
   the same in a second interpreter on the filled cache, and after ``daskbicl
   warm`` on an empty cache, against the import and the steady state of the
   same process (best of 5 later calls), and the compiled kernels' steady
   state (``compiled_only``, loaded or compiled first).  Then a first score
   of two larger biclusterings (16 + 16 biclusters over 3000 x 2000), where
   the compiled kernels are chosen, on an empty and a filled cache; and the
   numba compiles of the small first scores (none expected).
8. The README's first command (``--only install``, not in the default run):
   a new virtual environment that sees this interpreter's packages, ``pip
   install --no-deps -e .`` of this checkout, then ``daskbicl demo`` with an
   empty ``NUMBA_CACHE_DIR``, each step timed, against a fresh import there.

The 5·10^7-label bincount-floor rows of issue 13 are counting (issue 15):
``benchmarks/partition.py``.

Run:  python benchmarks/latency.py            (the issue's sizes, a few minutes)
      python benchmarks/latency.py --quick    (seconds; the test suite runs this; no section 7)
      python benchmarks/latency.py --only first-use   (section 7: two rounds, each compiling twice; minutes)
      python benchmarks/latency.py --only first-use --quick   (section 7, one round)
      python benchmarks/latency.py --only install   (section 8: the README's install-and-demo line, timed)
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import machine, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def best_walls(cmds: dict[str, list[str]], repeat: int) -> dict[str, float]:
    """Best wall time of each command, the commands interleaved so that they share the machine's load."""
    best = dict.fromkeys(cmds, math.inf)
    for _ in range(repeat):
        for name, cmd in cmds.items():
            best[name] = min(best[name], wall(cmd))
    return best


def per_call(func, *args, budget: float = 1.0, **kwargs) -> float:
    """Median seconds per call over as many calls as fit in ``budget`` seconds (at least 3)."""
    func(*args, **kwargs)
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 2000):
        t = time.perf_counter()
        func(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def best_of(func, *args, repeat: int = 2) -> float:
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        func(*args)
        best = min(best, time.perf_counter() - t)
    return best


def labels(n: int, k: int, redrawn: float, rng) -> tuple[np.ndarray, np.ndarray]:
    z = rng.integers(0, k, n)
    return z, np.where(rng.random(n) < redrawn, rng.integers(0, k, n), z)


def sklearn_ari_nmi(z, zp, w, wp):
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    return (adjusted_rand_score(z, zp), adjusted_rand_score(w, wp),
            normalized_mutual_info_score(z, zp), normalized_mutual_info_score(w, wp))


# --------------------------------------------------------------------------- 1. import


def imports(repeat: int) -> float:
    py = sys.executable
    best = best_walls({"ours": [py, "-c", "import daskbicl"], "ref": [py, "-c", "import xarray, dask.array"]}, repeat)
    print_table([{"what": "import daskbicl", "s": f"{best['ours']:.3f}", "reference": "import xarray, dask.array",
                  "reference s": f"{best['ref']:.3f}", "ratio": f"{best['ours'] / best['ref']:.2f}"}],
                ["what", "s", "reference", "reference s", "ratio"])
    return best["ours"]


# --------------------------------------------------------------------------- 2. the shell


def shell(sizes, repeat: int) -> None:
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n_rows, n_cols in sizes:
            out = os.path.join(tmp, f"s{n_rows}")
            subprocess.run([py, "-m", "daskbicl", "generate", out, "--rows", str(n_rows), "--cols", str(n_cols),
                            "--no-progress"], check=True, capture_output=True)
            score = [py, "-m", "daskbicl", "score", f"{out}/truth.zarr", f"{out}/pred.zarr", "--no-progress"]
            cmds = {"import": [py, "-c", "import daskbicl"], "default": score,
                    "local": [*score, "--scheduler", "local"]}
            if n_rows * n_cols > 10**11:  # the largest stores: once each
                cmds.pop("import")
            best = best_walls(cmds, 1 if n_rows >= 10**8 else repeat)
            for sched in ("default", "local"):
                row = {"stores (rows x cols)": f"{n_rows:,} x {n_cols:,}", "scheduler": sched,
                       "wall s": f"{best[sched]:.2f}"}
                if "import" in best:
                    row["import daskbicl s"] = f"{best['import']:.2f}"
                    row["/ import"] = f"{best[sched] / best['import']:.2f}"
                row["local / default"] = f"{best['local'] / best['default']:.2f}" if sched == "local" else ""
                rows.append(row)
    print_table(rows, ["stores (rows x cols)", "scheduler", "wall s", "import daskbicl s", "/ import",
                       "local / default"])


# --------------------------------------------------------------------------- 3. in memory


def in_memory(cases) -> None:
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    rows = []
    for n, m, k, redrawn in cases:
        (z, zp), (w, wp) = labels(n, k, redrawn, rng), labels(m, min(k, m), redrawn, rng)
        big = n >= 10**7
        if big:  # seconds per call: best of 2 (sklearn ARI+NMI on 10^7 labels is not run: ~4x the ARI)
            ours = best_of(daskbicl.score, (z, w), (zp, wp))
            ari = best_of(adjusted_rand_score, z, zp)
            four = math.nan
        else:
            ours = per_call(daskbicl.score, (z, w), (zp, wp))
            ari = per_call(adjusted_rand_score, z, zp)
            four = per_call(sklearn_ari_nmi, z, zp, w, wp)
        rows.append({"rows x cols": f"{n:,} x {m:,}", "clusters": k, "redrawn": redrawn,
                     "daskbicl 8 ms": f"{1e3 * ours:.2f}", "sklearn ARI rows ms": f"{1e3 * ari:.2f}",
                     "/ ARI": f"{ours / ari:.2f}", "sklearn ARI+NMI x2 ms": f"{1e3 * four:.2f}",
                     "/ ARI+NMI x2": f"{ours / four:.2f}"})
        del z, zp, w, wp
    print_table(rows, ["rows x cols", "clusters", "redrawn", "daskbicl 8 ms", "sklearn ARI rows ms", "/ ARI",
                       "sklearn ARI+NMI x2 ms", "/ ARI+NMI x2"])


# --------------------------------------------------------------------------- 4. a Client


def with_client(cases, rounds: int) -> None:
    """Per case, the best over ``rounds`` of (no Client, then a Client on the same idle LocalCluster)."""
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(1)
    data = [(labels(n, 5, 0.5, rng), labels(m, 5, 0.5, rng)) for n, m in cases]
    alone = [math.inf] * len(cases)
    client = [math.inf] * len(cases)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        for _ in range(rounds):  # alternated, so that both see the same machine (and the cluster's processes)
            for i, ((z, zp), (w, wp)) in enumerate(data):
                alone[i] = min(alone[i], per_call(daskbicl.score, (z, w), (zp, wp), budget=0.5))
            with Client(cluster) as c:
                c.wait_for_workers(2)
                for i, ((z, zp), (w, wp)) in enumerate(data):
                    client[i] = min(client[i], per_call(daskbicl.score, (z, w), (zp, wp), budget=0.5))
    print_table([{"rows x cols": f"{n:,} x {m:,}", "no client ms": f"{1e3 * a:.2f}", "client ms": f"{1e3 * c:.2f}",
                  "client / no client": f"{c / a:.2f}"} for (n, m), a, c in zip(cases, alone, client)],
                ["rows x cols", "no client ms", "client ms", "client / no client"])


# --------------------------------------------------------------------------- 5. in process or a graph


def in_process_crossover(sizes, ks) -> None:
    import dask

    rng = np.random.default_rng(3)
    rows = []
    for k in ks:
        for n in sizes:
            (z, zp), (w, wp) = labels(n, k, 0.5, rng), labels(n, k, 0.5, rng)
            with dask.config.set({"daskbicl.in_process_bytes": 1 << 62}):
                eager = per_call(daskbicl.score, (z, w), (zp, wp), budget=0.5)
            with dask.config.set({"daskbicl.in_process_bytes": 0, "scheduler": "threads"}):
                graph = per_call(daskbicl.score, (z, w), (zp, wp), budget=0.5)
            rows.append({"labels per axis": f"{n:,}", "clusters": k, "input MiB": f"{4 * z.nbytes / 2**20:.1f}",
                         "in process ms": f"{1e3 * eager:.2f}", "graph, threads ms": f"{1e3 * graph:.2f}",
                         "in process / graph": f"{eager / graph:.2f}"})
    print_table(rows, ["labels per axis", "clusters", "input MiB", "in process ms", "graph, threads ms",
                       "in process / graph"])


# --------------------------------------------------------------------------- 6. the finalize


def _fresh(table):
    """The same table without its memo (every measure recomputed)."""
    from daskbicl.kernels.coclustering.contingency import Table

    return Table(table.rows, table.cols, table.counts, table.truth_labels, table.pred_labels)


def _plain_matching(table) -> int:
    """The previous method: one solver call on the whole table (dense up to 2^22 cells)."""
    from daskbicl.kernels.coclustering.cocluster_scores import DENSE_MATCH_LIMIT, _sparse_matched_count

    h, hp = table.shape
    if h * hp <= DENSE_MATCH_LIMIT:
        from scipy.optimize import linear_sum_assignment

        dense = table.dense(limit=DENSE_MATCH_LIMIT)
        r, c = linear_sum_assignment(dense, maximize=True)
        return int(dense[r, c].sum())
    return _sparse_matched_count(table.rows, table.cols, table.counts, table.shape)


def _fsum_mi(table) -> float:
    """The previous method: MI as a correctly rounded sum of one term per non-zero cell."""
    n = float(table.n)
    a = table.truth_sizes().astype(np.float64)[table.rows]
    b = table.pred_sizes().astype(np.float64)[table.cols]
    c = table.counts.astype(np.float64)
    return max(math.fsum(((c / n) * ((np.log(n / a) + np.log(n / b)) - np.log(n / c))).tolist()), 0.0)


def finalize(cases, plain_limit: int) -> None:
    """Row tables of ``cases``; the plain solver (one call, seconds at 10^5 clusters) up to ``plain_limit`` clusters."""
    from daskbicl.kernels.coclustering.cocluster_scores import matched_count, mutual_info
    from daskbicl.measures import Contingency

    rng = np.random.default_rng(4)
    rows = []
    for n, k, redrawn in cases:
        (z, zp), (w, wp) = labels(n, k, redrawn, rng), labels(n, k, redrawn, rng)
        tables = daskbicl.contingency((z, w), (zp, wp))
        del z, zp, w, wp
        r, c = tables.row_table, tables.col_table

        def all8(r=r, c=c, dense_cells=tables.dense_cells):
            return daskbicl.score(Contingency(_fresh(r), _fresh(c), dense_cells))

        t8 = best_of(all8)
        tm = best_of(lambda r=r: matched_count(_fresh(r)))
        tmi = best_of(lambda r=r: mutual_info(_fresh(r)))
        told_mi = best_of(_fsum_mi, _fresh(r))
        told_m = math.nan
        if k <= plain_limit:
            start = time.perf_counter()
            plain = _plain_matching(r)
            told_m = time.perf_counter() - start
            assert plain == matched_count(r)
        assert abs(_fsum_mi(r) - mutual_info(r)) <= 1e-12 * max(1.0, mutual_info(r))
        rows.append({"labels per axis": f"{n:,}", "clusters": f"{k:,}", "redrawn": redrawn,
                     "non-zero cells": f"{r.counts.size:,}", "all 8 ms": f"{1e3 * t8:.1f}",
                     "matching ms": f"{1e3 * tm:.1f}", "plain solver ms": f"{1e3 * told_m:.1f}",
                     "MI ms": f"{1e3 * tmi:.2f}", "per-cell fsum MI ms": f"{1e3 * told_mi:.2f}"})
    print_table(rows, ["labels per axis", "clusters", "redrawn", "non-zero cells", "all 8 ms", "matching ms",
                       "plain solver ms", "MI ms", "per-cell fsum MI ms"])


_FIRST_USE = """
import json, sys, time
t = time.perf_counter()
import numpy as np
import daskbicl
out = {"import": time.perf_counter() - t, "compiles": []}
compiles = []
rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
ints = [(rng.integers(0, 5, 3000), rng.integers(0, 4, 2000)) for _ in range(2)]
masks = [(rng.random((4, 300)) < 0.2, rng.random((4, 200)) < 0.2) for _ in range(2)]
pair = [daskbicl.biclustering(r, c) for r, c in masks]
names = [np.array([f"cell-{i}" for i in rng.integers(0, 9, 6000)]) for _ in range(2)]
strings = [(n, n[:3000].copy()) for n in names]
big = [daskbicl.biclustering(rng.random((16, 3000)) < 0.2, rng.random((16, 2000)) < 0.2) for _ in range(2)]
def numba_loaded():
    return sorted(m for m in sys.modules if m == "numba" or m.startswith("daskbicl.kernels.micro"))
def timed(key, *args):
    t = time.perf_counter(); daskbicl.score(*args); out[key] = time.perf_counter() - t
if sys.argv[1] == "--compiles":  # a separate process: these change what the first scores pay
    timed("integers", *ints)
    t = time.perf_counter(); daskbicl.score(*pair, measures=["jaccard", "fmeasure", "prelic_recovery"])
    out["bicl, no micro"] = time.perf_counter() - t
    out["numba or micro loaded before a micro measure"] = numba_loaded()
    from numba.core import event  # the numba compiles of the scores below, with their seconds
    started = []
    class Compiles(event.Listener):
        def on_start(self, ev):
            started.append(time.perf_counter())
        def on_end(self, ev):
            begun = started.pop()
            if not started:
                f = ev.data["dispatcher"].py_func
                compiles.append([f.__module__ + "." + f.__qualname__, time.perf_counter() - begun])
    event.register("numba:compile", Compiles())
if sys.argv[1] == "--large":  # the first score at a size where the compiled kernels are chosen
    timed("biclustering", *big)
    timed("biclustering again", *big)
    out["numba"] = "numba" in sys.modules
    print(json.dumps(out))
    sys.exit()
for name, args in (("biclustering", pair), ("strings", strings)):
    timed(name, *args)
    timed(name + " again", *args)
    for _ in range(5):  # the steady state of this process (plain loops for small work)
        t = time.perf_counter(); daskbicl.score(*args)
        out[name + " steady"] = min(out.get(name + " steady", 1e9), time.perf_counter() - t)
out["numba"] = "numba" in sys.modules
out["compiles"] = list(compiles)  # those of the scores above (not the forced compiled ones below)
from daskbicl.kernels.compiled import compiled_only
with compiled_only():  # the compiled kernels' steady state (loaded or compiled first, not timed)
    daskbicl.score(*pair)
    for _ in range(3):
        t = time.perf_counter(); daskbicl.score(*pair)
        out["compiled steady"] = min(out.get("compiled steady", 1e9), time.perf_counter() - t)
print(json.dumps(out))
"""


def _child(code: list[str], cache: str) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONWARNINGS="ignore")
    start = time.perf_counter()
    out = subprocess.run(code, check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, out.stdout


_COLUMNS = ["numba cache", "import s", "1st bicl s", "2nd bicl s", "steady bicl s", "compiled steady bicl s",
            "1st - steady bicl s", "1st strings s", "steady strings s", "numba imported", "1st scores / import",
            "load"]


def _first_use_row(case: str, got: dict) -> dict:
    values = [case, f"{got['import']:.2f}", f"{got['biclustering']:.3f}", f"{got['biclustering again']:.3f}",
              f"{got['biclustering steady']:.3f}", f"{got['compiled steady']:.3f}",
              f"{got['biclustering'] - got['biclustering steady']:.3f}",
              f"{got['strings']:.3f}", f"{got['strings steady']:.3f}", str(got["numba"]),
              f"{(got['biclustering'] + got['strings']) / got['import']:.1f}x", load()]
    return dict(zip(_COLUMNS, values))


_LARGE = ["numba cache", "import s", "1st bicl s", "2nd bicl s", "1st / import", "numba imported", "load"]


def _large_row(case: str, got: dict) -> dict:
    return dict(zip(_LARGE, [case, f"{got['import']:.2f}", f"{got['biclustering']:.2f}",
                             f"{got['biclustering again']:.3f}", f"{got['biclustering'] / got['import']:.1f}x",
                             str(got["numba"]), load()]))


def first_use(rounds: int, seed: int = 7) -> None:
    """Section 7: first biclustering and string-label scores on an empty numba cache, a filled one, after warm;
    then a first score large enough for the compiled kernels, and what compiles."""
    import json

    py = [sys.executable, "-c", _FIRST_USE]
    for r in range(rounds):  # a table per round, printed as soon as it is measured (a round takes minutes)
        rows, large = [], []
        with tempfile.TemporaryDirectory() as fresh, tempfile.TemporaryDirectory() as warmed, \
                tempfile.TemporaryDirectory() as other:
            rows.append(_first_use_row("empty cache", json.loads(_child([*py, "--small", str(seed + r)], fresh)[1])))
            rows.append(_first_use_row("filled cache", json.loads(_child([*py, "--small", str(seed + r)],
                                                                         fresh)[1])))
            seconds = _child([sys.executable, "-m", "daskbicl", "warm"], warmed)[0]
            got = json.loads(_child([*py, "--small", str(seed + r)], warmed)[1])
            rows.append(_first_use_row(f"after `daskbicl warm` ({seconds:.1f} s)", got))
            large.append(_large_row("empty cache", json.loads(_child([*py, "--large", str(seed + r)], other)[1])))
            large.append(_large_row("filled cache", json.loads(_child([*py, "--large", str(seed + r)], other)[1])))
        with tempfile.TemporaryDirectory() as another:  # what compiles, and what loads before a micro measure
            empty = json.loads(_child([*py, "--compiles", str(seed + r)], another)[1])
        print_table(rows, _COLUMNS)
        print("\nfirst score of two larger biclusterings (16 + 16 biclusters over 3000 x 2000: the compiled "
              "kernels are chosen), fresh interpreters:")
        print_table(large, _LARGE)
        print(f"\nbefore any micro-object measure (empty cache; integer co-clustering {empty['integers']:.2f} s, "
              f"biclustering without micro measures {empty['bicl, no micro']:.2f} s), numba and micro kernels "
              f"loaded: {empty['numba or micro loaded before a micro measure'] or 'none'}")
        print("compiles of the first small biclustering and string scores on another empty cache (numba events; "
              "that process is not timed above):")
        print_table([{"kernel": name, "compile s": f"{sec:.2f}"} for name, sec in empty["compiles"]] or
                    [{"kernel": "(none)", "compile s": ""}], ["kernel", "compile s"])
        sys.stdout.flush()


def _see_these_packages(py: str) -> None:
    """The environment of ``py`` sees this interpreter's packages: a ``.pth`` adds its site directories.

    ``system_site_packages`` would not do: from inside a virtual environment it
    shows the base interpreter's packages, not the environment's (where a user's
    dependencies are).  ``site.addsitedir`` also runs their ``.pth`` files; it runs
    after the new environment's own, so its editable install of this checkout wins.
    """
    import site

    dirs = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    dirs = [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]
    own = subprocess.run([py, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                         text=True, check=True).stdout.strip()
    with open(os.path.join(own, "zz_daskbicl_parent_site.pth"), "w", encoding="utf-8") as pth:
        pth.write(f"import site; list(map(site.addsitedir, {dirs!r}))\n")


def install_and_demo() -> None:
    """The README's first command on a machine that never ran daskbicl, and a fresh import to compare with.

    A new virtual environment that sees this interpreter's packages (the
    dependencies: downloading them is the network's time, not daskbicl's),
    ``pip install --no-deps -e`` of this checkout into it, then ``daskbicl
    demo`` from it with an empty ``NUMBA_CACHE_DIR``; each step timed.
    """
    import shutil
    import venv

    root = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory(prefix="daskbicl-install-") as tmp:
        env_dir, cache = os.path.join(tmp, "venv"), os.path.join(tmp, "numba-cache")
        start = time.perf_counter()
        venv.EnvBuilder(with_pip=False).create(env_dir)
        made = time.perf_counter() - start
        py = os.path.join(env_dir, "bin", "python")
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": ""}
        pip = [sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "-e", root]
        start = time.perf_counter()
        subprocess.run(pip, check=True, capture_output=True, env=env, cwd=tmp)
        installed = time.perf_counter() - start
        _see_these_packages(py)  # after pip: its isolated build must not see this interpreter's setuptools
        script = os.path.join(env_dir, "bin", "daskbicl")
        start = time.perf_counter()
        # the demo keeps its stores in a new folder of the temporary directory: this one, removed below
        demo = subprocess.run([script, "demo"], capture_output=True, text=True, env={**env, "TMPDIR": tmp}, cwd=tmp)
        demoed = time.perf_counter() - start
        if demo.returncode:
            raise SystemExit(f"daskbicl demo failed:\n{demo.stderr}")
        imported = min(wall([py, "-c", "import daskbicl"]) for _ in range(3))
        compiled_now = os.path.isdir(cache) and any(name.endswith(".nbi") for _, _, names in os.walk(cache)
                                                    for name in names)
        shutil.rmtree(cache, ignore_errors=True)
    print_table([{"step": "create a virtual environment (sees the installed dependencies)", "s": f"{made:.2f}"},
                 {"step": "pip install --no-deps -e . (daskbicl itself)", "s": f"{installed:.2f}"},
                 {"step": "daskbicl demo (empty numba cache; local cluster, 2e6 x 2e5, generate + score)",
                  "s": f"{demoed:.2f}"},
                 {"step": "python -c 'import daskbicl' in that environment (best of 3)", "s": f"{imported:.2f}"},
                 {"step": "numba compiled during the demo", "s": "yes" if compiled_now else "no"}], ["step", "s"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: seconds (the test suite runs this)")
    ap.add_argument("--only", nargs="+",
                    choices=["import", "shell", "memory", "client", "process", "finalize", "first-use",
                             "install"],
                    help="run these sections only")
    ap.add_argument("--seed", type=int, default=7, help="first-use inputs' seed (round r uses seed + r)")
    args = ap.parse_args(argv)
    quick = args.quick
    run = set(args.only or ["import", "shell", "memory", "client", "process", "finalize"]
              + ([] if quick else ["first-use"]))
    print(f"# {machine()}\n# {versions()}\n# {load()} at start")
    if "import" in run:
        print("\n## 1. import (fresh interpreters, best of N)")
        imports(2 if quick else 7)
    if "shell" in run:
        print("\n## 2. daskbicl score on two stores (fresh process, wall; default = threads in this process)")
        shell([(1000, 100)] if quick else [(1000, 100), (10**6, 10**4), (10**7, 10**4), (10**8, 10**4)],
              1 if quick else 5)
    if "memory" in run:
        print("\n## 3. in-memory labels: all 8 co-clustering measures against scikit-learn (median per call)")
        in_memory([(100, 50, 5, 0.5), (10**4, 100, 5, 0.5)] if quick else
                  [(100, 50, 5, 0.5), (10**4, 10**4, 5, 0.5), (10**4, 10**4, 1000, 0.5),
                   (10**4, 10**4, 1000, 1.0), (10**6, 10**6, 5, 0.5), (10**6, 10**6, 1000, 0.5),
                   (10**6, 10**6, 1000, 1.0), (10**7, 10**7, 10**5, 0.1), (10**7, 10**7, 10**5, 0.5)])
    if "client" in run:
        print("\n## 4. the same with a distributed Client active (LocalCluster, 2 worker processes)")
        with_client([(100, 50), (10**4, 100)] if quick else [(100, 50), (10**4, 100), (10**6, 10**3)],
                    1 if quick else 3)
    if "process" in run:
        print("\n## 5. in process (no graph) against a task graph on the threaded scheduler")
        in_process_crossover([10**4, 10**5] if quick else [10**4, 10**5, 10**6, 2 * 10**6, 4 * 10**6, 10**7],
                             [5] if quick else [5, 1000])
    if "finalize" in run:
        print("\n## 6. the finalize from counted tables (row table shown; best of 2)")
        finalize([(10**4, 1000, 0.5)] if quick else
                 [(10**4, 1000, 0.5), (10**6, 1000, 0.5), (10**6, 1000, 1.0), (10**6, 10**4, 0.5),
                  (10**7, 10**5, 0.1), (10**7, 10**5, 0.5)], plain_limit=10**5)
    if "first-use" in run:
        print("\n## 7. first use: fresh interpreters, an empty NUMBA_CACHE_DIR, the filled cache, after warm")
        first_use(1 if quick else 2, args.seed)
    if "install" in run:
        print("\n## 8. the README's first command: install daskbicl into a new environment, then daskbicl demo")
        install_and_demo()
    print(f"\n# {load()} at the end")


if __name__ == "__main__":
    main()
