"""How daskbicl talks to object stores and HTTP(S): fsspec options with time-outs, and a notice while waiting.

Every door that reads or lists a URL (:func:`~daskbicl.io.store.open_store`,
the batch manifest's globs, fingerprints) passes its ``storage_options``
through :func:`with_timeouts`, so an endpoint that does not accept or does
not answer stops the call after the dask config keys
``daskbicl.storage.connect_timeout`` / ``read_timeout`` (and
``attempts`` for S3) instead of fsspec's and botocore's defaults (minutes of
silence).  :func:`filesystem` opens the file system: for S3 one whose
requests are tried ``attempts`` times in all (botocore's attempts; s3fs's
own retry loop, 5 tries nested twice around a read, is off: :mod:`daskbicl.io.s3`).  The caller's own options win: a ``config_kwargs`` or
``client_kwargs`` given by the user is kept, only what it leaves out is
added.  For S3, whole objects are read with one request each (no size
request before; ``max_concurrency`` 1 unless given).  :func:`waiting` prints one line on stderr, naming the location
(redacted), when a call has waited ``daskbicl.storage.notice_after``.
"""

from __future__ import annotations

import contextlib
import copy
import sys
import threading

from .. import config
from ..locations import redact

__all__ = ["with_timeouts", "filesystem", "zarr_store", "waiting", "protocol_of"]

_S3 = ("s3", "s3a")
_HTTP = ("http", "https")


def protocol_of(url: str) -> str:
    """The URL's scheme in lower case (``""`` for a local path); of a chained URL, the outermost.

    >>> protocol_of("S3://bucket/t.zarr"), protocol_of("runs/t.zarr"), protocol_of("simplecache::s3://b/t")
    ('s3', '', 'simplecache')
    """
    text = str(url)
    if "://" not in text:
        return ""
    return text.split("://", 1)[0].split("::", 1)[0].lower()


def with_timeouts(url: str, storage_options: dict | None) -> dict | None:
    """``storage_options`` for ``url`` with daskbicl's storage time-outs added (S3 and HTTP(S) URLs).

    Examples
    --------
    >>> opts = with_timeouts("s3://b/t.zarr", {"anon": True})
    >>> opts["anon"], sorted(opts["config_kwargs"])
    (True, ['connect_timeout', 'read_timeout', 'retries'])
    >>> with_timeouts("s3://b/t.zarr", {"config_kwargs": {"read_timeout": 5}})["config_kwargs"]["read_timeout"]
    5
    >>> with_timeouts("runs/t.zarr", None) is None
    True
    """
    protocol = protocol_of(url)
    if protocol not in _S3 + _HTTP:
        return storage_options
    options = dict(storage_options or {})
    connect, read = config.storage_seconds("connect_timeout"), config.storage_seconds("read_timeout")
    if protocol in _S3:
        # a copy all through: botocore rewrites the ``retries`` table it is given (max_attempts -> total_max_attempts)
        given = copy.deepcopy(dict(options.get("config_kwargs") or {}))
        given.setdefault("connect_timeout", connect)
        given.setdefault("read_timeout", read)
        # botocore's retries: time-outs, cut connections and throttling, with back-off.  ``total_max_attempts``
        # counts the first request (botocore's ``max_attempts`` counts only the retries after it); s3fs's own
        # loop is off (:func:`filesystem`), so these are all the requests made.
        given.setdefault("retries", {"total_max_attempts": int(config.get("storage")["attempts"]), "mode": "standard"})
        options["config_kwargs"] = given
        # s3fs asks an object's size (a HEAD request) before every whole-object read when it may split the
        # read into concurrent ranged reads (max_concurrency > 1, for objects above its block size, 50 MiB):
        # a store's objects (chunks of at most 16 MiB, metadata) are smaller, so one GET each suffices.
        options.setdefault("max_concurrency", 1)
        return options
    import aiohttp

    client = dict(options.get("client_kwargs") or {})
    client.setdefault("timeout", aiohttp.ClientTimeout(total=None, connect=connect, sock_connect=connect,
                                                       sock_read=read))
    options["client_kwargs"] = client
    return options


def filesystem(url: str, storage_options: dict | None, *, asynchronous: bool = False) -> tuple:
    """``(fs, path)`` of ``url`` for reading, with :func:`with_timeouts`' options (fsspec's ``url_to_fs``).

    An S3 URL gets :class:`~daskbicl.io.s3.OneTryS3FileSystem`: a request that hangs or fails is tried
    ``daskbicl.storage.attempts`` times in all (botocore's attempts; s3fs's own retry loop is off), not
    5 or 25 times that; other protocols get fsspec's own file system, as before.

    >>> fs, path = filesystem("s3://b/t.zarr", {"anon": True})
    >>> type(fs).__name__, fs.retries, path
    ('OneTryS3FileSystem', 1, 'b/t.zarr')
    """
    options = with_timeouts(url, storage_options) or {}
    if protocol_of(url) in _S3:
        from .s3 import OneTryS3FileSystem as cls

        kwargs = {**cls._get_kwargs_from_urls(url), **options, "asynchronous": asynchronous}
        return cls(**kwargs), cls._strip_protocol(url)
    import fsspec

    return fsspec.core.url_to_fs(url, **options)


def zarr_store(url: str, storage_options: dict | None, *, read_only: bool = True) -> tuple:
    """``(store, storage_options)`` for zarr to open ``url`` with: an S3 URL as a store on
    :func:`filesystem`'s file system (no options left), any other location as given."""
    if protocol_of(url) not in _S3:
        return url, storage_options
    from zarr.storage import FsspecStore

    fs, path = filesystem(url, storage_options, asynchronous=True)
    return FsspecStore(fs, path=path, read_only=read_only), None


@contextlib.contextmanager
def waiting(location: str, doing: str = "reading"):
    """Around a call to the storage: one line on stderr if it has not returned after ``notice_after``.

    The line names the location (secrets redacted), the time-outs and (S3)
    the attempts that end each request's wait; nothing is printed for local paths.
    """
    if protocol_of(location) in ("", "file"):
        yield
        return
    after = config.storage_seconds("notice_after")
    tries = ""
    if protocol_of(location) in _S3:  # HTTP(S) makes one attempt
        n = int(config.get("storage")["attempts"])
        tries = f", {n} attempt{'s' * (n != 1)} per request"
    text = (f"daskbicl: still {doing} {redact(location)} after {after:g} s: the storage is slow or not answering "
            f"(time-outs: connect {config.storage_seconds('connect_timeout'):g} s, read "
            f"{config.storage_seconds('read_timeout'):g} s{tries}; daskbicl.storage in the dask config)")
    timer = threading.Timer(after, _notice, (text,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _notice(text: str) -> None:
    try:
        print(text, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed
        pass
