"""``daskbicl.storage.attempts`` is the number of requests a hung or failing S3 request costs, counted at the endpoint.

s3fs repeats a timed-out call 5 times on its own (``S3FileSystem.retries``, twice nested around a whole-object
read) on top of botocore's attempts; the file systems daskbicl opens make one try per botocore attempt.  The
endpoints are loopback sockets in a thread that count the connections they accept (a request that times out
or is cut off closes its connection: each attempt is a new one): one accepts and never answers (hung), one
accepts and closes at once (a failed request; aiohttp sends a GET cut so again, once).  Nothing in boto, botocore or s3fs is patched.
"""

from __future__ import annotations

import json
import pickle
import socket
import threading

import dask
import fsspec
import pytest

import daskbicl
from daskbicl.errors import StorageUnavailableError

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

FAST = {"daskbicl.storage.connect_timeout": "0.2s", "daskbicl.storage.read_timeout": "0.2s",
        "daskbicl.storage.notice_after": "60s"}


class Endpoint:
    """A loopback listener that counts the connections it accepts; ``mode`` "hang" holds each one unanswered,
    "close" closes it at once."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.peers: list[tuple] = []
        self.held: list[socket.socket] = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            if self.mode == "hang":
                self.held.append(conn)
            else:
                conn.close()
            with self.changed:
                self.peers.append(peer)
                self.changed.notify_all()

    def count(self) -> int:
        """The connections accepted so far, every connection made before this call included: a last one is
        made here, and the count is read once the listener has accepted it (connections are accepted in
        the order they were made)."""
        with socket.create_connection(("127.0.0.1", self.port)) as marker:
            mine = marker.getsockname()
            with self.changed:
                assert self.changed.wait_for(lambda: mine in self.peers, timeout=60)
                n = self.peers.index(mine)
        with self.changed:  # forget the marker: the next count starts after it
            del self.peers[: n + 1]
        return n

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=30)
        for conn in self.held:
            conn.close()


@pytest.fixture
def hung():
    endpoint = Endpoint("hang")
    yield endpoint
    endpoint.close()


@pytest.fixture
def closing():
    endpoint = Endpoint("close")
    yield endpoint
    endpoint.close()


def _s3_options(endpoint: Endpoint) -> dict:
    return {"key": "k", "secret": "s",
            "client_kwargs": {"endpoint_url": f"http://127.0.0.1:{endpoint.port}", "region_name": "us-east-1"}}


def _requests_to_open(url: str, endpoint: Endpoint, attempts: int, options: dict | None = None) -> int:
    endpoint.count()  # from here
    with dask.config.set({**FAST, "daskbicl.storage.attempts": attempts}):
        with pytest.raises(StorageUnavailableError, match="retry later"):
            daskbicl.open(url, storage_options=options)
    return endpoint.count()


@pytest.mark.parametrize("attempts", [1, 3])
def test_a_hung_s3_read_is_tried_attempts_times(hung, attempts):
    assert _requests_to_open("s3://nightly/truth.zarr", hung, attempts, _s3_options(hung)) == attempts


@pytest.mark.parametrize("attempts", [1, 3])
def test_an_s3_request_cut_without_an_answer_is_sent_twice_per_attempt(closing, attempts):
    """aiohttp (under aiobotocore) sends a GET again, once, on a connection closed before any answer
    (RFC 9112's retry of an idempotent request): two requests per botocore attempt, no more."""
    assert _requests_to_open("s3://nightly/truth.zarr", closing, attempts, _s3_options(closing)) == 2 * attempts


def test_stores_opened_with_different_attempts_in_one_process_each_keep_their_own(hung):
    """fsspec keeps one file system per set of options: each setting of ``attempts`` gets its own, whatever
    was opened before it in the process."""
    options = _s3_options(hung)
    counts = [_requests_to_open("s3://nightly/truth.zarr", hung, n, options) for n in (3, 1, 2, 1, 3)]
    assert counts == [3, 1, 2, 1, 3]


def test_the_users_own_s3_file_systems_keep_s3fs_retries(hung):
    """A file system the user opens with fsspec on the same options is not the one daskbicl reads with: s3fs's
    own behaviour is untouched, in this process and after a pickle (as a worker receives it)."""
    import s3fs

    from daskbicl.io.storage import filesystem, with_timeouts

    url = "s3://nightly/truth.zarr"
    options = _s3_options(hung)
    ours, path = filesystem(url, options)
    assert path == "nightly/truth.zarr" and ours.retries == 1
    assert pickle.loads(pickle.dumps(ours)).retries == 1
    theirs = fsspec.filesystem("s3", **with_timeouts(url, options))
    assert type(theirs) is s3fs.S3FileSystem and theirs.retries == s3fs.S3FileSystem.retries
    assert theirs is not ours


@pytest.mark.parametrize(("mode", "requests"), [("hang", 1), ("close", 2)])
def test_an_http_read_has_no_retry_loop(mode, requests):
    """HTTP(S) has no retry loop of its own: fsspec's HTTP file system retries nothing, a hung read is one
    request whatever ``attempts`` says; aiohttp's one resend of a GET cut without an answer aside."""
    endpoint = Endpoint(mode)
    try:
        assert _requests_to_open(f"http://127.0.0.1:{endpoint.port}/truth.zarr", endpoint, 3) == requests
    finally:
        endpoint.close()


@pytest.mark.parametrize(("retries", "requests"), [({"total_max_attempts": 2}, 2), ({"max_attempts": 2}, 3)])
def test_the_callers_own_botocore_retries_are_the_attempts(hung, retries, requests):
    """``config_kwargs={"retries": ...}`` given by the caller wins over ``attempts``, in botocore's meaning
    (``max_attempts`` counts the retries after the first request), and is not changed in place."""
    options = {**_s3_options(hung), "config_kwargs": {"retries": {**retries, "mode": "standard"}}}
    given = json.dumps(options)
    assert _requests_to_open("s3://nightly/truth.zarr", hung, 5, options) == requests
    assert json.dumps(options) == given
