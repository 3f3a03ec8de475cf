"""daskbicl.scheduling: read tasks sized to the cluster's threads and to its workers' memory."""

import logging

import dask
import numpy as np
import pytest

import daskbicl
from daskbicl import scheduling

MiB = 1 << 20


@pytest.mark.parametrize("memory", [None, 10 * 64 * MiB, 700 * 10**6, 32 * MiB])
def test_a_read_task_covers_at_most_its_share_of_a_threads_memory(memory):
    """Whole stored chunks per task, at most ``task_bytes`` and a 64th of a thread's memory each, one chunk at least."""
    stored = (4,) * 200  # 4 positions of 1 MiB each per stored chunk
    blocks = scheduling.task_chunks(stored, MiB, threads=1, memory=memory)
    cap = 64 * MiB if memory is None else min(64 * MiB, memory // scheduling.TASK_MEMORY_SHARE)
    assert sum(blocks) == sum(stored) and all(b % 4 == 0 for b in blocks[:-1])
    assert max(blocks) * MiB <= max(cap, 4 * MiB)
    group = max(1, cap // (4 * MiB))
    assert blocks[0] == 4 * min(group, 200 // 4)  # as many chunks as fit, at least tasks_per_thread tasks


def test_the_cluster_gives_each_read_task_a_share_of_its_smallest_threads_memory(tmp_path):
    """On a cluster of 512 MiB workers with 4 threads (128 MiB a thread) a task reads 2 MiB of one array: 2
    stored chunks of 1 MiB, where the setting alone (64 MiB) would let it read 6 (one task per thread)."""
    from distributed import Client, LocalCluster

    daskbicl.save((np.zeros(24 * MiB, np.int64), np.zeros(10, np.int64)), tmp_path / "z.zarr", chunk=MiB)
    with dask.config.set({"num_workers": 4, "daskbicl.tasks_per_thread": 1}):
        alone = daskbicl.open(tmp_path / "z.zarr").row_labels.data.chunks[0]
        with LocalCluster(n_workers=1, threads_per_worker=4, memory_limit="512MiB", processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster):
            assert scheduling.thread_memory() == 128 * MiB
            sized = daskbicl.open(tmp_path / "z.zarr").row_labels.data.chunks[0]
    assert alone == (6 * MiB,) * 4  # the stored codes are one byte each: a stored chunk is 1 MiB
    assert sized == (2 * MiB,) * 12
    assert scheduling.thread_memory() is None  # no cluster: the setting alone


def _tasks_run(dask_scheduler=None) -> int:
    """Every task the scheduler has known since it started (all states, forgotten ones included)."""
    return sum(sum(prefix.state_counts.values()) for prefix in dask_scheduler.task_prefixes.values())


def test_the_command_line_sizes_read_tasks_for_the_cluster_it_scores_on(tmp_path):
    """``daskbicl score --scheduler`` checks its inputs before it connects, then opens them again for the
    cluster: on 128 MiB threads its graph is the one of 2 MiB tasks (set explicitly), not of tasks sized for
    this machine's CPUs with no memory known (12 MiB on two CPUs: fewer, larger reads)."""
    import os
    import subprocess
    import sys

    from distributed import Client, LocalCluster

    rng = np.random.default_rng(3)
    for name in ("t", "p"):
        daskbicl.save((rng.integers(0, 5, 24 * MiB).astype(np.uint8), rng.integers(0, 3, 10)), tmp_path / f"{name}.zarr",
                      chunk=MiB)
    runs = []
    with LocalCluster(n_workers=1, threads_per_worker=4, memory_limit="512MiB", processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        for setting in ({}, {"DASK_DASKBICL__TASK_BYTES": str(2 * MiB)}, {"DASK_DASKBICL__TASK_BYTES": "1"}):
            before = client.run_on_scheduler(_tasks_run)
            done = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.zarr"),
                                   str(tmp_path / "p.zarr"), "--measure", "ari_rows", "--scheduler",
                                   cluster.scheduler_address, "--json"],
                                  capture_output=True, text=True, timeout=600,
                                  env={**os.environ, "DASK_DASKBICL__TASKS_PER_THREAD": "1", **setting})
            assert done.returncode == 0, done.stderr
            runs.append(client.run_on_scheduler(_tasks_run) - before)
    sized, explicit, per_chunk = runs
    assert sized == explicit  # the memory share of this cluster's threads: 2 MiB
    assert per_chunk > sized  # a task per stored chunk is more tasks: the count tells the sizes apart
