"""Where :func:`daskbicl.save` writes: checks before writing, a temporary sibling, the swap into place.

Guarantees (docs/guide/failures.md), on a local path (object stores:
:mod:`daskbicl.io.publish`):

* everything that can be checked before writing is checked first: the
  ``chunk`` argument, attributes that a Zarr store cannot hold, coordinates
  of mixed types, an existing destination (refused without
  ``overwrite=True``; with it, only a daskbicl store or an empty folder is
  replaced, never another tool's data), a destination inside another Zarr
  store; missing parent folders are created;
* the store is written into a hidden sibling (``.NAME.tmp-XXXX``, marked
  alive by the lock file ``.NAME.tmp-XXXX.lock`` its writer holds) and moved
  into place only once every chunk, the ``daskbicl_kind`` attribute and the
  completion record are written, so a failed or interrupted write (disk
  full, file size limit, permission denied, Ctrl-C, SIGTERM) leaves the
  destination as it was: absent, or the old store, untouched; what a killed
  write leaves beside it is removed by the next write to that location;
* a failure becomes one :class:`~daskbicl.errors.StoreWriteError` naming the
  store, and the variable and chunk when the failure is in one of them.

Replacing a store swaps the two folders in one step where Linux's
``renameat2(RENAME_EXCHANGE)`` is available, so a reader sees the old store
or the new one; elsewhere it takes two renames (for an instant, none).
"""

from __future__ import annotations

import errno
import json
import numbers
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

import numpy as np

from ..errors import DaskbiclError, InputError, StoreError, one_line, store_failure
from ..scheduling import active_client

__all__ = ["check_chunk", "check_storable", "write_local", "remove_leftovers"]

KIND_ATTR = "daskbicl_kind"
_METADATA = ("zarr.json", ".zgroup", ".zarray", ".zattrs")


# --------------------------------------------------------------------------- checks before writing


def check_chunk(chunk) -> int:
    """``chunk`` is a positive integer (not a bool, a float or a string)."""
    if isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral):
        raise InputError(f"chunk must be a positive integer (labels per chunk), got {chunk!r}")
    if chunk < 1:
        raise InputError(f"chunk must be a positive integer (labels per chunk), got {chunk}")
    return int(chunk)


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def check_storable(ds) -> None:
    """Attributes and coordinates a Zarr store can hold, checked before anything is written."""
    import pandas as pd

    for owner, attrs in [("the Dataset", ds.attrs)] + [(f"variable {k!r}", v.attrs) for k, v in ds.variables.items()]:
        for key, value in attrs.items():
            if not isinstance(key, str):
                raise InputError(f"cannot store {owner}: attribute name {key!r} is not a string")
            try:
                json.dumps(value, default=_jsonable, allow_nan=True)
            except (TypeError, ValueError) as exc:
                raise InputError(
                    f"cannot store attribute {key!r} of {owner}: {type(value).__name__} values cannot be "
                    f"written to a Zarr store ({one_line(exc)}); use numbers, strings, booleans or lists of them"
                ) from None
    for name in ds.coords:
        values = ds[name].values if ds[name].dtype == object else None
        if values is None:
            continue
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        if inferred.startswith("mixed") or inferred in ("unknown-array", "complex"):
            kinds = sorted({type(v).__name__ for v in values[:1000]})
            raise InputError(
                f"cannot store the {name!r} coordinates: they mix value types ({', '.join(kinds)}), which a "
                "Zarr array cannot hold; convert them to one type (e.g. .astype(str))"
            )


def _store_above(path: Path) -> Path | None:
    """The nearest folder above ``path`` that is a Zarr node, if any."""
    for folder in path.parents:
        if any((folder / name).is_file() for name in _METADATA):
            return folder
    return None


def _check_replaceable(final: Path) -> None:
    """``overwrite=True`` replaces a daskbicl store or an empty folder, nothing else."""
    if not final.is_dir():
        raise StoreError(f"{final} exists and is a file, not a daskbicl store; refusing to replace it")
    if not any(final.iterdir()):
        return
    import zarr

    try:
        is_store = KIND_ATTR in zarr.open_group(str(final), mode="r").attrs
    except Exception:
        is_store = False
    if not is_store:
        raise StoreError(
            f"{final} exists and is not a daskbicl store; overwrite=True only replaces a daskbicl "
            "store (or an empty folder). Choose another path or remove it yourself."
        )


def _check_local(final: Path, overwrite: bool) -> None:
    if final.exists() and not overwrite:
        raise StoreError(f"{final} already exists; pass overwrite=True (CLI: --overwrite) to replace it")
    if final.exists():
        _check_replaceable(final)
    elif final.is_symlink():
        raise StoreError(f"cannot write {final}: it is a broken symbolic link")
    above = _store_above(final.absolute())
    if above is not None:
        raise StoreError(f"cannot write {final} inside the Zarr store {above}; choose a path outside it")
    for folder in [final.parent, *final.parent.parents]:
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"cannot write {final}: {folder} is a file, not a folder")
    if not final.parent.exists():
        try:  # missing parent folders are created, as Dataset.to_zarr does
            final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot write {final}: cannot create folder {final.parent} "
                             f"({exc.strerror or one_line(exc)})") from None


# --------------------------------------------------------------------------- writing, then swapping into place


def _place(exc: BaseException, tmp: str) -> dict:
    """``variable``/``chunk`` of the file a write failed on (from the OSError's file name)."""
    name = getattr(exc, "filename", None)
    if not isinstance(name, str):
        return {}
    inside = name.replace(os.sep, "/").split(f"{os.path.basename(tmp)}/", 1)
    if len(inside) != 2:
        return {}
    parts = inside[1].split("/")
    if len(parts) >= 3 and parts[1] == "c":
        chunk = ".".join(p.split(".")[0] for p in parts[2:] if p)
        return {"variable": parts[0], "chunk": chunk.lstrip(".") or None}
    if len(parts) >= 2:
        return {"variable": parts[0]}
    return {}


def _failure(exc: BaseException, store: str, tmp: str) -> BaseException:
    """A failure of the file system (an OSError: disk full, permission, ...) as a StoreWriteError.

    Anything else passes through unchanged: a DaskbiclError already says
    what is wrong, and an error raised by the user's own dask graph while it
    was computed for writing is theirs.
    """
    if isinstance(exc, DaskbiclError) or not isinstance(exc, OSError):
        return exc
    return store_failure(exc, doing="write", store=store, **_place(exc, tmp))


def remove_when_quiet(folder: Path, settle: float | None = None, timeout: float | None = None) -> None:
    """Remove ``folder``, making sure no straggling writer re-creates it.

    Writers can outlive the failure that stops a save: Zarr runs its I/O in a
    thread of its own (an interrupted call goes on there), and on a
    distributed cluster a chunk write already running on a worker cannot be
    cancelled.  So the folder is removed again until it stays absent for
    ``settle`` seconds (0.2 s locally, 0.5 s on a cluster), for at most
    ``timeout`` seconds (5 s locally, 30 s on a cluster).
    """
    remote = active_client() is not None
    settle = settle if settle is not None else (0.5 if remote else 0.2)
    deadline = time.monotonic() + (timeout if timeout is not None else (30.0 if remote else 5.0))
    shutil.rmtree(folder, ignore_errors=True)
    while time.monotonic() < deadline:
        time.sleep(settle)
        if not folder.exists():
            return
        shutil.rmtree(folder, ignore_errors=True)


#: Linux's renameat2 flag that swaps two paths in one step (no instant without a store).
_RENAME_EXCHANGE = 2
_STAGED_LOCAL = re.compile(r"^\.(?P<name>.+)\.(tmp|old)-[0-9a-f]{12}(?P<lock>\.lock)?$")


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where it is not available."""
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    done = renameat2(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), _RENAME_EXCHANGE)
    if done == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # the file system cannot: two renames instead
        return False
    raise OSError(err, os.strerror(err), str(b))


def _lock(path: Path):
    """An open file holding an exclusive lock while this process writes (released when it dies)."""
    handle = open(path, "wb")
    try:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except ImportError:  # no fcntl (Windows): the lock file alone marks the write
        pass
    return handle


def _abandoned(lock: Path) -> bool:
    """True when no living process holds ``lock`` (its writer died)."""
    try:
        import fcntl
    except ImportError:
        return True
    try:
        with open(lock, "rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False
            return True
    except FileNotFoundError:
        return True


def remove_leftovers(final: Path) -> None:
    """Remove what interrupted writes of ``final`` left beside it (``.NAME.tmp-XXXX`` folders, their locks).

    A folder whose writer still runs (its lock is held) is left alone.
    """
    try:
        siblings = list(final.parent.iterdir())
    except OSError:
        return
    for path in siblings:
        match = _STAGED_LOCAL.match(path.name)
        if not match or match.group("name") != final.name:
            continue
        if match.group("lock"):
            if _abandoned(path):
                shutil.rmtree(path.with_name(path.name[: -len(".lock")]), ignore_errors=True)
                path.unlink(missing_ok=True)
        elif not path.with_name(path.name + ".lock").exists():
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)


def _swap_in(tmp: Path, final: Path) -> None:
    """Put the complete store ``tmp`` at ``final``, the old store (if any) removed."""
    if not final.exists():
        os.replace(tmp, final)
        return
    if _exchange(tmp, final):  # the old store is now at tmp
        shutil.rmtree(tmp, ignore_errors=True)
        return
    old = final.parent / f".{final.name}.old-{uuid.uuid4().hex[:12]}"
    os.replace(final, old)
    try:
        os.replace(tmp, final)
    except BaseException:
        os.replace(old, final)  # put the old store back
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_local(final: Path, write, overwrite: bool) -> str:
    """Check ``final``, ``write(tmp)`` into a hidden sibling, and swap it into place.

    ``write`` writes a complete store (``daskbicl_kind``, then the completion
    record, last) at the path it is given.  While it runs, a lock file
    ``.NAME.tmp-XXXX.lock`` held by this process marks the sibling as alive;
    what a killed write leaves is removed by the next write to ``final``.
    """
    _check_local(final, overwrite)
    remove_leftovers(final)
    tmp = final.parent / f".{final.name}.tmp-{uuid.uuid4().hex[:12]}"
    lock_path = tmp.with_name(tmp.name + ".lock")
    lock = None
    try:  # the lock file is removed whenever this returns or raises (SIGTERM as soon as it exists included)
        try:
            lock = _lock(lock_path)
        except OSError as exc:
            raise _failure(exc, str(final), str(tmp)) from None
        try:
            write(str(tmp))
            _swap_in(tmp, final)
        except BaseException as exc:
            remove_when_quiet(tmp)
            raise _failure(exc, str(final), str(tmp)) from None
    finally:
        if lock is not None:
            lock.close()
        lock_path.unlink(missing_ok=True)
    return str(final)
