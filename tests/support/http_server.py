"""A folder served read-only over HTTP on loopback (``http.server`` in a thread): the read-only ``https://``-like
store of the object-store tests (fsspec's HTTP filesystem reads it as it reads any web server).

One helper for every test module that needs it (tests/io/test_object_store_doors.py,
tests/io/test_object_store_week.py, tests/batch/test_object_store.py): ``with serving(folder) as url: ...``.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["serving"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no access log on stderr
        pass


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """Serve ``folder`` (index pages on, read only) on a free loopback port; yields its URL
    (``http://127.0.0.1:PORT``); the server is shut down and its thread joined on exit."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
