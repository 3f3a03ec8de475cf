"""Shared helpers for the benchmark scripts: timing, peak memory, machine, tables."""

from __future__ import annotations

import gc
import os
import platform
import threading
import time
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
