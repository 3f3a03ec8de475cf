"""Shared helpers for the benchmark scripts: timing, peak memory, machine, load, tables, and measuring
another source tree (``--base``) in the same run."""

from __future__ import annotations

import gc
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil


@dataclass
class Measurement:
    seconds: float
    peak_mb: float  # peak RSS above the RSS before the call, sampled every 2 ms
    result: object = None


class _PeakSampler(threading.Thread):
    def __init__(self, interval=0.002):
        super().__init__(daemon=True)
        self.proc = psutil.Process()
        self.interval = interval
        self.peak = self.proc.memory_info().rss
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(self.interval)

    def stop(self):
        self._halt.set()
        self.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)


def measure(func, *args, repeat: int = 1, **kwargs) -> Measurement:
    """Best wall time over ``repeat`` runs, and the largest peak RSS increase."""
    best, peak, result = float("inf"), 0.0, None
    for _ in range(repeat):
        gc.collect()
        base = psutil.Process().memory_info().rss
        sampler = _PeakSampler()
        sampler.start()
        start = time.perf_counter()
        result = func(*args, **kwargs)
        elapsed = time.perf_counter() - start
        sampler.stop()
        best = min(best, elapsed)
        peak = max(peak, (sampler.peak - base) / 2**20)
    return Measurement(best, peak, result)


def machine() -> str:
    mem = psutil.virtual_memory().total / 2**30
    cpu = platform.processor() or platform.machine()
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB RAM, Python {platform.python_version()}, {platform.system()}"


def header(note: str = "numbers under load are indicative only") -> str:
    """A benchmark's first line: ``# <machine>; load <1-minute load average> (<note>)``."""
    return f"# {machine()}; load {os.getloadavg()[0]:.1f} ({note})"


def noisy_labels(rng, n: int, k: int, noise: float):
    """``(truth, pred)``: ``n`` labels in ``k`` clusters, and the same with a share ``noise`` redrawn at random."""
    import numpy as np

    truth = rng.integers(0, k, n)
    return truth, np.where(rng.random(n) < noise, rng.integers(0, k, n), truth)


def versions() -> str:
    import dask
    import numpy
    import sklearn
    import xarray
    import zarr

    return (
        f"numpy {numpy.__version__}, dask {dask.__version__}, xarray {xarray.__version__}, "
        f"zarr {zarr.__version__}, scikit-learn {sklearn.__version__}"
    )


def print_table(rows: list[dict], columns: list[str]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(f"{c:>{widths[c]}}" for c in columns))
    print("  ".join("-" * widths[c] for c in columns))
    for r in rows:
        print("  ".join(f"{str(r.get(c, '')):>{widths[c]}}" for c in columns))


def load() -> str:
    """The machine's load as ``uptime`` prints it (printed before and after a run: a loaded machine's times
    are indicative only)."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def run_in_tree(tree: str, script: str, argv: list[str]) -> dict:
    """Run ``script --child ARGV`` with the daskbicl of source tree ``tree`` first on the path; the JSON the
    child prints last, as a dict (the child's stderr tail in the error if it failed)."""
    env = dict(os.environ, PYTHONPATH=tree, PYTHONWARNINGS="ignore")
    command = [sys.executable, os.path.abspath(script), "--child", *argv]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree, timeout=3600)
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def alternating(trees: dict[str, str], repeat: int, run: Callable[[str], dict]) -> dict[str, list[dict]]:
    """``run(tree)`` ``repeat`` times per tree, the trees' order reversed every other round (so that neither
    tree always runs first on a warming machine): the results per tree name."""
    results: dict[str, list[dict]] = {name: [] for name in trees}
    for r in range(repeat):
        for name in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
            results[name].append(run(trees[name]))
    return results
