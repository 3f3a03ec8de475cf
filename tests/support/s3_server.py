"""A real S3 endpoint for the tests: moto's standalone server on loopback, in its own process.

s3fs talks to it over HTTP exactly as it talks to AWS (nothing in boto, botocore or
s3fs is patched).  The server's access log (one line per request, werkzeug's format)
goes to a file, so tests and benchmarks count the requests the *server* saw:
``server.requests()`` lists ``(method, path)`` of every request since ``server.mark()``.

Use the ``s3`` fixture (tests/conftest.py): a fresh bucket per test, its URL root
and the ``storage_options`` that reach the server.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

KEY = "testing-key"
SECRET = "testing-secret"
#: A Zarr v3 chunk object's key (``.../c/0``, ``.../c/1/0``), query string aside.
CHUNK_KEY = re.compile(r"/c(/\d+)+$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_LINE = re.compile(r'"(GET|PUT|POST|HEAD|DELETE) (\S+) HTTP/[0-9.]+" (\d{3})')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class S3Server:
    """A running moto server: its endpoint and its request log."""

    endpoint: str
    log: Path
    process: subprocess.Popen
    _mark: int = field(default=0)

    @property
    def storage_options(self) -> dict:
        return {
            "key": KEY,
            "secret": SECRET,
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
            # no listing cache: every test sees what the server holds now.  fsspec's instance cache stays on,
            # as it is for users: a new file system per call (skip_instance_cache) builds a new botocore client
            # each time, which cost the S3 tests ~40 % of their CPU and is not how daskbicl is used
            "use_listings_cache": False,
        }

    def mark(self) -> None:
        """Forget the requests seen so far (``requests()`` counts from here)."""
        self._mark = self.log.stat().st_size if self.log.exists() else 0

    def requests(self) -> list[tuple[str, str, int]]:
        """``(method, path, status)`` of every request the server answered since ``mark()``."""
        with open(self.log, "rb") as f:
            f.seek(self._mark)
            text = f.read().decode("utf-8", "replace")
        text = _COLOUR.sub("", text)  # werkzeug >= 3.1.9 colours 4xx/5xx lines even into a file
        return [(m.group(1), m.group(2), int(m.group(3))) for m in _LINE.finditer(text)]

    def make_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a PUT to the server, as any S3 client does) and return its name."""
        name = name or f"b{uuid.uuid4().hex[:12]}"
        host, port = self.endpoint.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            conn.request("PUT", f"/{name}", headers={"Content-Length": "0"})
            response = conn.getresponse()
            response.read()
            if response.status not in (200, 409):
                raise RuntimeError(f"moto refused bucket {name!r}: HTTP {response.status}")
        finally:
            conn.close()
        return name


def _ready(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/moto-api/")
        conn.getresponse().read()
        return True
    except OSError:
        return False
    finally:
        conn.close()


def start_server(folder: Path, timeout: float = 60.0) -> S3Server:
    """Start ``python -m moto.server`` on a free loopback port; wait until it answers."""
    port = free_port()
    log = folder / f"moto-{port}.log"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_DEFAULT_REGION="us-east-1")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )
    deadline = time.monotonic() + timeout
    while not _ready(port):  # polling the server's own answer, not a fixed sleep
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}: {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"moto server did not answer within {timeout} s")
        time.sleep(0.05)
    return S3Server(endpoint=f"http://127.0.0.1:{port}", log=log, process=process)


def stop_server(server: S3Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def put_store(s3, local: Path, name: str) -> str:
    """Upload the local store ``local`` as ``s3.root/name`` (an s3fs recursive put), its write record (when it
    has one) put again last, as daskbicl's own writes put it; its URL.  ``s3``: the ``s3`` fixture."""
    import fsspec

    from daskbicl.io.publish import RECORD_NAME

    fs = fsspec.filesystem("s3", **s3.storage_options)
    fs.put(str(local), f"{s3.bucket}/{name}", recursive=True)
    if (local / RECORD_NAME).exists():
        fs.pipe_file(f"{s3.bucket}/{name}/{RECORD_NAME}", (local / RECORD_NAME).read_bytes())
    return f"{s3.root}/{name}"


def storage_options_toml(options: dict, *, endpoint: str | None = None) -> str:
    """The ``[storage_options]`` tables of a batch manifest for the fsspec ``options`` (a nested dict as a
    ``[storage_options.NAME]`` table), as a user writes them; ``endpoint`` replaces the client's
    ``endpoint_url`` (a :class:`Proxy`'s, say)."""
    import json

    if endpoint is not None:
        options = {**options, "client_kwargs": {**options.get("client_kwargs", {}), "endpoint_url": endpoint}}
    flat = [f"{key} = {json.dumps(value)}" for key, value in options.items() if not isinstance(value, dict)]
    lines = ["[storage_options]", *flat]
    for key, table in options.items():
        if isinstance(table, dict):
            lines += ["", f"[storage_options.{key}]", *(f"{k} = {json.dumps(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def s3_manifest(path: Path, s3, truth: dict, pred: dict, pairs: list[dict], *, results: str | Path | None = None,
                endpoint: str | None = None) -> Path:
    """Write at ``path`` a batch manifest (:func:`tests.support.manifests.manifest_text`) whose stores are
    read with the loopback server's storage options (:func:`storage_options_toml`); the path."""
    from .manifests import manifest_text

    text = manifest_text(truth, pred, pairs, results=None if results is None else str(results))
    path.write_text(text + "\n" + storage_options_toml(s3.storage_options, endpoint=endpoint))
    return path


def chunk_gets(requests) -> collections.Counter:
    """``{object path: GETs}`` of the chunk objects among ``requests`` (:meth:`S3Server.requests`)."""
    out: collections.Counter = collections.Counter()
    for method, path, _status in requests:
        key = path.split("?", 1)[0]
        if method == "GET" and CHUNK_KEY.search(key):
            out[key] += 1
    return out


class Proxy:
    """A loopback TCP proxy in front of an endpoint (the moto server), in threads: ``proxy.endpoint``.

    ``proxy.hang()`` makes it a hung endpoint: it still accepts connections, and never answers (nor reads)
    them, as a load balancer in front of a dead backend does; ``proxy.answer()`` forwards again.  Each
    connection accepted is forwarded byte for byte to the endpoint, in both directions, so the server's
    access log still counts every request.
    """

    def __init__(self, endpoint: str):
        import threading

        host, port = endpoint.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.hung = threading.Event()
        self.stopped = threading.Event()
        self.held: list[socket.socket] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def hang(self) -> None:
        self.hung.set()

    def answer(self) -> None:
        self.hung.clear()
        with self.lock:  # what was held while hung is dropped (its clients have given up)
            for conn in self.held:
                conn.close()
            self.held.clear()

    def close(self) -> None:
        self.stopped.set()
        # shutdown() wakes the accept() blocked in the thread (close() alone does not, on Linux: the join
        # waited its whole time-out); accept() then fails and the loop ends
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=30)
        self.answer()

    def _accept(self) -> None:
        import threading

        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                if self.hung.is_set():
                    self.held.append(conn)  # accepted, never read, never answered
                    continue
            try:
                upstream = socket.create_connection(self.target, timeout=30)
            except OSError:
                conn.close()
                continue
            upstream.settimeout(None)
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until either side closes; then close both."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
