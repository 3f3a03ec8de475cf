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


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's standalone S3 server on a free loopback port, one process for the session (tests/support/s3_server.py)."""
    from tests.support.s3_server import start_server, stop_server

    server = start_server(tmp_path_factory.mktemp("moto"))
    yield server
    stop_server(server)


@pytest.fixture
def s3(s3_server):
    """A fresh bucket on the loopback S3 server: ``s3.root`` (``s3://bucket``), ``s3.storage_options``."""
    from types import SimpleNamespace

    bucket = s3_server.make_bucket()
    s3_server.mark()
    return SimpleNamespace(
        root=f"s3://{bucket}", bucket=bucket, storage_options=s3_server.storage_options, server=s3_server
    )


@pytest.fixture
def http_folder(tmp_path):
    """``(folder, url)``: ``tmp_path / "www"`` served read only over HTTP on loopback, in a thread
    (tests/support/http_server.py), the read-only ``https://``-like store of the object-store tests."""
    from tests.support.http_server import serving

    folder = tmp_path / "www"
    folder.mkdir()
    with serving(folder) as url:
        yield folder, url


def pytest_collection_modifyitems(items):
    """Mark the system tests ``system`` (tests/support/system.py says which): ``-m "not system"`` is the fast lane."""
    from tests.support.system import is_system_item

    for item in items:
        if isinstance(item, pytest.Function) and not item.get_closest_marker("system") and is_system_item(item):
            item.add_marker(pytest.mark.system)
