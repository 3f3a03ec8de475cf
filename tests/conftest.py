"""Shared fixtures: a real LocalCluster with worker processes, temp stores."""

from __future__ import annotations

import logging
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def local_cluster():
    """One LocalCluster with 2 worker processes for the whole session."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    yield cluster
    cluster.close()


@pytest.fixture
def client(local_cluster):
    """A Client on the shared cluster, the default scheduler for this test only.

    In-memory inputs go to the cluster too (``daskbicl.in_process_bytes`` 0):
    tests that take this fixture test the distributed path whatever their
    input size.  tests/test_latency.py tests the in-process path with a
    Client active.
    """
    import dask
    from distributed import Client

    with Client(local_cluster) as c, dask.config.set({"daskbicl.in_process_bytes": 0}):
        yield c
