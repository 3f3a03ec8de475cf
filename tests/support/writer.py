"""Writes in a process of their own, for the tests that SIGKILL a write midway (tests/io/test_object_store_writes.py).

The processes are forked from :mod:`multiprocessing`'s forkserver with this module (so daskbicl, numpy, zarr
and s3fs) imported once: a write starts in milliseconds, not after a fresh interpreter's seconds of imports,
each kill.  Each is still a real process with its own storage client, ended by a real SIGKILL.
"""

from __future__ import annotations

import multiprocessing

import numpy as np

import daskbicl


def dataset(seed: int):
    """A seeded co-clustering of 800 x 120 (many small chunks at ``chunk=100``)."""
    rng = np.random.default_rng(seed)
    return daskbicl.partition(rng.integers(0, 9, 800), rng.integers(0, 4, 120))


def save(dest: str, seed: int, overwrite: bool, options: dict | None) -> None:
    """``daskbicl.save`` of :func:`dataset` ``(seed)`` to ``dest`` (run in the forked process)."""
    daskbicl.save(dataset(seed), dest, overwrite=overwrite, chunk=100, storage_options=options)


def start(dest: str, seed: int, overwrite: bool, options: dict | None):
    """:func:`save` started in a process forked from the preloaded forkserver: the started ``Process``."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    proc = ctx.Process(target=save, args=(dest, seed, overwrite, options), daemon=True)
    proc.start()
    return proc
