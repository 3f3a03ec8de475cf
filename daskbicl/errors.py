"""Exceptions raised by daskbicl.

Every problem a user can cause (bad labels, mismatched inputs, a path that is
not a daskbicl store, an unknown measure, ...) is reported as a subclass of
:class:`DaskbiclError` with a message that says what is wrong and what to do.
The CLI prints that message on stderr and exits with status 2; a failure of
the cluster itself (:class:`InfrastructureError`) exits with status 3, so a
workflow scheduler can retry it.
"""

from __future__ import annotations

import errno
import re

from .locations import redact, redact_text

__all__ = [
    "DaskbiclError",
    "InputError",
    "LabelError",
    "AlignmentError",
    "StoreError",
    "StoreReadError",
    "StoreWriteError",
    "MeasureError",
    "TooLargeError",
    "InfrastructureError",
    "SchedulerError",
    "NoWorkersError",
    "WorkerKilledError",
    "StorageUnavailableError",
    "storage_unavailable",
    "store_failure",
    "one_line",
]


class DaskbiclError(Exception):
    """Base class of every error daskbicl raises on purpose."""

    def __reduce__(self):
        # Rebuilt from the class, its message and its attributes (store,
        # variable, chunk, ...): errors raised on a worker travel back
        # pickled, and the default reduction of a subclass of a built-in such
        # as MemoryError fails once tblib's pickling support is installed (as
        # distributed does).
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("__")}
        return (type(self), self.args, state or None)

    def shell_message(self) -> str:
        """The message as the CLI prints it: one line (Python keywords become options in subclasses)."""
        return one_line(str(self))


class InputError(DaskbiclError, ValueError):
    """An input has the wrong type, dtype, shape, dimension or variable name."""


class LabelError(InputError):
    """A label value is not allowed (unassigned under the default policy, unhashable, too large)."""

    def shell_message(self) -> str:
        # 'pass unassigned="cluster"' reads '--unassigned cluster' on the command line
        return re.sub(r'unassigned="(\w+)"', r"--unassigned \1", one_line(str(self)))


class AlignmentError(InputError):
    """Truth and pred do not describe the same rows or columns."""


class StoreError(DaskbiclError, OSError):
    """A path does not exist or is not a valid daskbicl Zarr store."""


class StoreReadError(StoreError):
    """Reading a store failed: a damaged, truncated or missing chunk, permission denied, a store deleted mid-run.

    ``store``, ``variable`` and ``chunk`` say where (``chunk`` is the chunk's
    grid index, ``"1"`` or ``"0.3"``; None when the failure is not in one chunk).
    """

    store: str | None = None
    variable: str | None = None
    chunk: str | None = None


class StoreWriteError(StoreError):
    """Writing a store (or a figure, an export) failed: no space left, a file size limit, permission denied, read-only.

    Nothing half-written is left behind: :func:`daskbicl.save` removes its
    temporary folder, and an existing store it was replacing is untouched.
    """

    store: str | None = None
    variable: str | None = None
    chunk: str | None = None


class MeasureError(DaskbiclError, ValueError):
    """An unknown measure name or an invalid measure parameter."""


class TooLargeError(DaskbiclError, MemoryError):
    """A finalize step would need a table larger than the configured limit."""


class InfrastructureError(DaskbiclError, RuntimeError):
    """The cluster failed, not the inputs: a scheduler unreachable or lost, a worker that keeps dying.

    Retrying later, or with more worker memory, can succeed; the CLI exits
    with status 3 for it (2 is for user errors).
    """


class SchedulerError(InfrastructureError):
    """The Dask scheduler cannot be reached, or the connection to it was lost during the run."""


class NoWorkersError(InfrastructureError):
    """The scheduler has had no worker that runs tasks for longer than ``daskbicl.worker_timeout``: no
    worker at all, or every worker paused over its memory (``distributed.worker.memory.pause``) with no
    task running."""


class WorkerKilledError(InfrastructureError):
    """Workers died each time they ran one task (killed for memory, or from outside).

    ``step`` names the computation step (the task's function), ``task`` the
    task key; ``memory_limit`` and ``rss`` (bytes) are set when the nanny
    restarted the worker for memory: the step needs more than the workers have.
    """

    task: str | None = None
    step: str | None = None
    memory_limit: int | None = None
    rss: int | None = None


class StorageUnavailableError(InfrastructureError, StoreReadError):
    """The storage did not answer: an endpoint unreachable (refused, no route), hung past the time-outs
    (``daskbicl.storage.connect_timeout`` / ``read_timeout``) or throttling (HTTP 429, 503, ``SlowDown``).

    Nothing is wrong with the store or the request: run again later (the CLI
    exits with status 3).  Bad credentials or a missing bucket are the
    user's to fix: a :class:`StoreError` (status 2).
    """


# --------------------------------------------------------------------------- the one translation of I/O failures


def one_line(text: object) -> str:
    """``text`` on one line: newlines and runs of spaces become single spaces; secrets in URLs redacted
    (:func:`daskbicl.locations.redact_text`), as in every message daskbicl prints."""
    return " ".join(redact_text(text).split())


#: Exception classes (by name, anywhere in an error's chain) that mean the storage did not answer: botocore's,
#: aiohttp's and the standard library's connection and time-out errors.
_UNAVAILABLE = frozenset({
    "ConnectTimeoutError", "ReadTimeoutError", "EndpointConnectionError", "ConnectionClosedError",
    "ClientConnectorError", "ServerTimeoutError", "ServerDisconnectedError", "ConnectionTimeoutError",
    "SocketTimeoutError", "TimeoutError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "ConnectionAbortedError", "timeout",
})
#: Words of an error (S3 error codes, HTTP statuses) that mean the storage is throttling or down for now.
_THROTTLED = ("slowdown", "slow down", "throttl", "requestlimitexceeded", "too many requests", "serviceunavailable",
              "service unavailable")
_ERRNO_UNAVAILABLE = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ETIMEDOUT, errno.EHOSTUNREACH,
                      errno.ENETUNREACH, errno.ECONNABORTED, errno.EHOSTDOWN, errno.ENETDOWN}


def _chain(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def storage_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` (or an error it comes from) says the storage did not answer or is throttling."""
    for e in _chain(exc):
        if isinstance(e, StorageUnavailableError):
            return True
        if isinstance(e, DaskbiclError):
            continue
        if any(cls.__name__ in _UNAVAILABLE for cls in type(e).__mro__):
            return True
        if getattr(e, "errno", None) in _ERRNO_UNAVAILABLE or getattr(e, "status", None) in (429, 503):
            return True
        code = ""
        response = getattr(e, "response", None)
        if isinstance(response, dict):  # botocore's ClientError
            code = str(response.get("Error", {}).get("Code", ""))
        lowered = f"{code} {e}".lower()
        if any(word in lowered for word in _THROTTLED) or code in ("503", "429"):
            return True
    return False


def _unavailable(exc: BaseException, doing: str, who: str, place: str = "") -> StorageUnavailableError:
    from . import config

    timeouts = (f"time-outs: connect {config.storage_seconds('connect_timeout'):g} s, "
                f"read {config.storage_seconds('read_timeout'):g} s")
    error = StorageUnavailableError(
        f"cannot {doing} {who}{place}: the storage did not answer (unreachable, hung past the {timeouts}, or "
        f"throttling); retry later ({type(exc).__name__}: {one_line(exc) or repr(exc)})"
    )
    return error


#: errno -> what it means for a store (read or written).
_ERRNO = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file size limit: ulimit -f, or the file system's)",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "a file is missing (deleted or moved while in use?)",
    errno.ELOOP: "a loop of symbolic links",
    errno.EIO: "input/output error (a failing disk or network file system)",
    errno.ENOTDIR: "a path component is a file, not a folder",
    errno.EISDIR: "a folder where a file was expected",
    errno.ENAMETOOLONG: "the path is too long",
    errno.EMFILE: "too many open files (ulimit -n)",
}

#: Words in a codec's error message that mean the stored bytes are damaged.
_DAMAGE = ("decompress", "checksum", "crc", "corrupt", "codec", "invalid input data", "destination buffer",
           "unexpected end", "truncated", "frame", "not a valid", "malformed")


def _cause(exc: BaseException, doing: str = "read") -> str:
    """What ``exc`` means for a store, in words, followed by the original error."""
    detail = one_line(str(exc)) or repr(exc)
    original = f"{type(exc).__name__}: {detail}"
    code = getattr(exc, "errno", None)
    if doing == "write" and code == errno.ENOENT:
        return f"its folder does not exist or was removed while writing ({original})"
    if isinstance(exc, OSError) and code in _ERRNO:
        return f"{_ERRNO[code]} ({original})"
    if isinstance(exc, PermissionError):
        return f"permission denied ({original})"
    if isinstance(exc, FileNotFoundError):
        return f"{_ERRNO[errno.ENOENT]} ({original})"
    lowered = detail.lower()
    if "checksum" in lowered:  # zarr's crc32c codec: the message carries the raw checksum bytes
        return ("the chunk is damaged, corrupt or truncated (its bytes do not match the CRC32C checksum stored "
                f"with it): copy or write the store again ({type(exc).__name__}: checksum mismatch)")
    if "reshape" in lowered or "buffer size" in lowered or "does not match" in lowered:
        return f"the chunk does not match the array's metadata (dtype, shape or chunks edited?) ({original})"
    if any(word in lowered for word in _DAMAGE):
        return f"the chunk is damaged, corrupt or truncated: copy or write the store again ({original})"
    return original


def store_failure(exc: BaseException, *, doing: str, store: str, variable: str | None = None,
                  chunk: str | None = None, role: str | None = None) -> DaskbiclError:
    """The :class:`DaskbiclError` to raise for ``exc``, a failure reading or writing a store.

    The one place where I/O failures (codec errors, truncated or missing
    chunks, permission denied, ``ENOSPC``/``EFBIG``, a store deleted under
    the run) become errors naming the store, the variable and the chunk.
    ``doing`` is ``"read"`` or ``"write"``; a :class:`DaskbiclError` passes
    through unchanged.

    Examples
    --------
    >>> import errno
    >>> e = store_failure(OSError(errno.ENOSPC, "No space left on device"), doing="write",
    ...                   store="out/t.zarr", variable="row_labels", chunk="3")
    >>> type(e).__name__, str(e)
    ('StoreWriteError', 'cannot write out/t.zarr (variable row_labels chunk 3): no space left on the device (OSError: [Errno 28] No space left on device)')
    >>> str(store_failure(RuntimeError("Zstd decompression error: invalid input data"), doing="read",
    ...                   store="t.zarr", variable="row_labels", chunk="1", role="pred"))
    'cannot read pred t.zarr (variable row_labels chunk 1): the chunk is damaged, corrupt or truncated: copy or write the store again (RuntimeError: Zstd decompression error: invalid input data)'
    """
    if isinstance(exc, DaskbiclError):
        return exc
    store = redact(store)
    where = [f"variable {variable}"] if variable else []
    if chunk is not None:
        where.append(f"chunk {chunk}")
    place = f" ({' '.join(where)})" if where else ""
    who = f"{role} {store}" if role else store
    if storage_unavailable(exc):
        error: StoreReadError | StoreWriteError = _unavailable(exc, doing, who, place)
    else:
        cls = StoreWriteError if doing == "write" else StoreReadError
        error = cls(f"cannot {doing} {who}{place}: {_cause(exc, doing)}")
    error.store, error.variable, error.chunk = store, variable, chunk
    return error
