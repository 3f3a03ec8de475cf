"""Publication of a store: the completion record that makes a written store daskbicl's.

Every store :func:`daskbicl.save` writes ends with a small JSON object,
:data:`RECORD_NAME` (``.daskbicl-written.json``) at the store's root, written
*last*.  It is both

* the **completion mark**: the store's root attributes say a record is due
  (:data:`RECORD_ATTR`, written with the first metadata), so a store of
  daskbicl's without its record is an interrupted write, which
  :func:`daskbicl.open` refuses and the next write to that location removes;
* the **write-time fingerprint**: every object of the store (relative key)
  with its size and the SHA-256 of its bytes, plus one combined
  :attr:`WriteRecord.digest` of them that does not depend on where the
  store is (a copied or moved store keeps it).  A reader that trusts the
  record learns what the store holds from one small read, without reading
  a chunk.

On an object store (no rename), a write in progress is also marked by a
sentinel object, :data:`WRITING_NAME`, put before anything else and deleted
after the record (:mod:`daskbicl.io.replace`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass, field

from ..errors import DaskbiclError, StoreError, StoreReadError, StoreWriteError, one_line, store_failure
from ..locations import redact
from .replace import KIND_ATTR, _failure

__all__ = [
    "RECORD_NAME",
    "RECORD_ATTR",
    "WRITING_NAME",
    "FORMAT",
    "WriteRecord",
    "read_record",
    "make_record",
    "write_record",
    "combined_digest",
    "write_remote",
    "store_exists",
]

#: The completion record, at the root of every store daskbicl writes.
RECORD_NAME = ".daskbicl-written.json"
#: Root attribute of a store written with a record: its value is :data:`RECORD_NAME`.
RECORD_ATTR = "daskbicl_record"
#: Sentinel object of a write in progress on an object store.
WRITING_NAME = ".daskbicl-writing"
#: Version of the record's layout.
FORMAT = 1
#: Objects that are not part of the store's contents (never listed in a record).
NOT_CONTENT = (RECORD_NAME, WRITING_NAME)
#: Bytes read at once while hashing the objects of a remote store.
_BATCH_BYTES = 64 * 2**20


@dataclass(frozen=True)
class WriteRecord:
    """What a store held when daskbicl finished writing it.

    Attributes
    ----------
    format : int
        Version of the record's layout (:data:`FORMAT`).
    digest : str
        SHA-256 (hex) of the sorted ``key, size, sha256`` lines of every
        object: the store's contents, independent of its location.
    objects : dict
        ``{relative key: (size in bytes, sha256 hex)}`` of every object of
        the store except the record itself.
    """

    format: int
    digest: str
    objects: dict[str, tuple[int, str]] = field(default_factory=dict)

    def to_json(self) -> bytes:
        doc = {"format": self.format, "digest": self.digest,
               "objects": {k: [size, sha] for k, (size, sha) in sorted(self.objects.items())}}
        return json.dumps(doc, indent=0, sort_keys=True).encode("utf-8")


def combined_digest(objects: dict[str, tuple[int, str]]) -> str:
    """One SHA-256 of ``{key: (size, sha256)}``, in key order (location-independent).

    Examples
    --------
    >>> combined_digest({"a": (1, "x"), "b": (2, "y")}) == combined_digest({"b": (2, "y"), "a": (1, "x")})
    True
    """
    h = hashlib.sha256(f"daskbicl-store-v{FORMAT}\n".encode())
    for key in sorted(objects):
        size, sha = objects[key]
        h.update(f"{key}\t{size}\t{sha}\n".encode())
    return h.hexdigest()


def _fs(path, storage_options):
    from .storage import filesystem

    text = os.fspath(path)
    if text.startswith("file://") or "://" not in text:
        storage_options = None  # fsspec options mean nothing to a local path
    fs, root = filesystem(text, storage_options)
    return fs, root.rstrip("/")


def _parse(raw: bytes, where: str) -> WriteRecord:
    try:
        doc = json.loads(raw)
        fmt = doc["format"]
        if not isinstance(fmt, int) or fmt > FORMAT:
            raise ValueError(f"unknown record format {fmt!r} (this daskbicl reads up to {FORMAT})")
        objects = {str(k): (int(v[0]), str(v[1])) for k, v in doc["objects"].items()}
        digest = str(doc["digest"])
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise StoreReadError(
            f"{where}: the completion record {RECORD_NAME} is damaged ({type(exc).__name__}: {one_line(exc)}); "
            "write the store again"
        ) from None
    return WriteRecord(format=fmt, digest=digest, objects=objects)


def read_record(path, storage_options: dict | None = None) -> WriteRecord | None:
    """The completion record of the store at ``path``; None when it has none.

    One small read.  A store written by :func:`daskbicl.save` has one; a
    store written by anything else (a plain ``Dataset.to_zarr``) or by a
    daskbicl before records existed has none.  A store whose root attributes
    say a record is due but has none is an interrupted write:
    :func:`daskbicl.open` refuses it; this function returns None for it.

    Raises
    ------
    StoreReadError
        When the record exists but is damaged, or cannot be read.

    Examples
    --------
    >>> import tempfile, daskbicl
    >>> path = daskbicl.save(([0, 0, 1], [1, 2]), tempfile.mkdtemp() + "/t.zarr")
    >>> record = read_record(path)
    >>> record.format, len(record.digest), "zarr.json" in record.objects
    (1, 64, True)
    """
    fs, root = _fs(path, storage_options)
    where = os.fspath(path)
    try:
        raw = fs.cat_file(f"{root}/{RECORD_NAME}")
    except FileNotFoundError:
        return None
    except Exception as exc:
        raise store_failure(exc, doing="read", store=where) from None
    return _parse(raw, where)


def _relative(root: str, full: str) -> str:
    return full[len(root):].lstrip("/")


def _hash_local(fs, paths: list[str]) -> dict[str, str]:
    out = {}
    for full in paths:
        with open(full, "rb") as fh:
            out[full] = hashlib.file_digest(fh, "sha256").hexdigest()
    return out


def _hash_remote(fs, sizes: dict[str, int]) -> dict[str, str]:
    """SHA-256 of every object, read back in concurrent batches of at most :data:`_BATCH_BYTES`."""
    out: dict[str, str] = {}
    batch: list[str] = []
    total = 0
    for full, size in sorted(sizes.items()):
        batch.append(full)
        total += size
        if total >= _BATCH_BYTES:
            out.update(_hash_batch(fs, batch))
            batch, total = [], 0
    if batch:
        out.update(_hash_batch(fs, batch))
    return out


def _hash_batch(fs, batch: list[str]) -> dict[str, str]:
    contents = fs.cat(batch, on_error="raise") if len(batch) > 1 else {batch[0]: fs.cat_file(batch[0])}
    return {full: hashlib.sha256(contents[full]).hexdigest() for full in batch}


def make_record(fs, root: str) -> WriteRecord:
    """The record of what the store at ``root`` (on ``fs``) holds now: listed, each object read back and hashed."""
    root = root.rstrip("/")
    listing = fs.find(root, detail=True)
    sizes = {full: int(info["size"]) for full, info in listing.items()
             if _relative(root, full) not in NOT_CONTENT and info.get("type", "file") == "file"}
    local = "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))
    hashes = _hash_local(fs, list(sizes)) if local else _hash_remote(fs, sizes)
    objects = {_relative(root, full): (size, hashes[full]) for full, size in sizes.items()}
    return WriteRecord(format=FORMAT, digest=combined_digest(objects), objects=objects)


def write_record(fs, root: str, store: str) -> WriteRecord:
    """Hash the store at ``root`` and write its record (the last object a write puts there)."""
    try:
        record = make_record(fs, root)
        fs.pipe_file(f"{root.rstrip('/')}/{RECORD_NAME}", record.to_json())
    except Exception as exc:
        if isinstance(exc, (StoreWriteError,)):
            raise
        raise store_failure(exc, doing="write", store=store) from None
    return record


# --------------------------------------------------------------------------- publication on an object store

#: Objects of a store's root whose absence makes the prefix no Zarr group (deleted first on unpublishing).
ROOT_METADATA = ("zarr.json", ".zgroup", ".zattrs", ".zmetadata")
_STAGED = re.compile(r"^\.(?P<name>.+)\.(tmp|old)-[0-9a-f]{12}$")


def _url(fs, path: str) -> str:
    return fs.unstrip_protocol(path)


def _root_attrs(fs, root: str) -> dict | None:
    """The attributes of the Zarr group at ``root`` (None when it has no group metadata)."""
    for name in ("zarr.json", ".zattrs"):
        try:
            doc = json.loads(fs.cat_file(f"{root}/{name}"))
        except FileNotFoundError:
            continue
        except ValueError:
            return {}
        attrs = doc.get("attributes", {}) if name == "zarr.json" else doc
        return attrs if isinstance(attrs, dict) else {}
    return None


def state_of(fs, root: str) -> tuple[str, list[str]]:
    """What is at ``root`` on an object store, and its objects.

    ``"absent"`` (no object), ``"file"``, ``"store"`` (a published daskbicl
    store, or one written before records), ``"unpublished"`` (what an
    interrupted daskbicl write left: its sentinel, or its metadata without
    the record), ``"foreign"`` (anything else: another tool's data).
    """
    objects = [p for p in fs.find(root) if p.rstrip("/") != root]
    if not objects:
        return ("file" if fs.isfile(root) else "absent"), []
    names = {_relative(root, p) for p in objects}
    if RECORD_NAME in names:
        return "store", objects
    attrs = _root_attrs(fs, root) if names & set(ROOT_METADATA) else None
    if WRITING_NAME in names or (attrs is not None and RECORD_ATTR in attrs):
        return "unpublished", objects
    if attrs is not None and KIND_ATTR in attrs:
        return "store", objects
    return "foreign", objects


def store_exists(url: str, storage_options: dict | None = None) -> bool:
    """True when a store (published, or another tool's data) is at ``url``; what an interrupted
    daskbicl write left there does not count (the next write removes it)."""
    from .storage import filesystem

    try:
        fs, root = filesystem(url, storage_options)
        return state_of(fs, root.rstrip("/"))[0] not in ("absent", "unpublished")
    except Exception as exc:
        raise store_failure(exc, doing="read", store=url) from None


def _delete(fs, paths: list[str]) -> None:
    if paths:
        fs.rm(sorted(paths))


def clear(fs, root: str, objects: list[str] | None = None) -> None:
    """Remove every object under ``root``, unpublishing first: the record, then the root metadata,
    then the rest, the write-in-progress sentinel last.  Between any two steps the prefix is
    refused by :func:`daskbicl.open` (an interrupted write) and the next write removes it."""
    objects = fs.find(root) if objects is None else objects
    by_name = {_relative(root, p): p for p in objects}
    first = [by_name[n] for n in (RECORD_NAME,) if n in by_name]
    meta = [by_name[n] for n in ROOT_METADATA if n in by_name]
    last = [by_name[n] for n in (WRITING_NAME,) if n in by_name]
    rest = [p for p in objects if p not in first + meta + last]
    for group in (first, meta, rest, last):
        _delete(fs, group)


def remove_leftovers(fs, root: str) -> None:
    """Remove the staging prefixes (``.NAME.tmp-XXXXXXXXXXXX``) that interrupted writes of ``root`` left."""
    parent, _, name = root.rpartition("/")
    try:
        siblings = fs.ls(parent, detail=False) if parent else []
    except FileNotFoundError:
        return
    for sibling in siblings:
        match = _STAGED.match(sibling.rstrip("/").rpartition("/")[2])
        if match and match.group("name") == name:
            clear(fs, sibling.rstrip("/"))


def _check_not_inside(fs, root: str, url: str) -> None:
    """Refuse a destination inside another Zarr store (a folder above holding Zarr metadata)."""
    parts = root.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        parent = "/".join(parts[:depth])
        if not parent.strip("/"):
            break
        try:
            names = {p.rstrip("/").rpartition("/")[2] for p in fs.ls(parent, detail=False)}
        except (FileNotFoundError, NotADirectoryError):
            continue
        if names & {"zarr.json", ".zgroup", ".zarray"}:
            raise StoreError(f"cannot write {url} inside the Zarr store {_url(fs, parent)}; choose a URL outside it")


def _check_destination(fs, root: str, url: str, overwrite: bool) -> tuple[str, list[str]]:
    _check_not_inside(fs, root, url)
    state, objects = state_of(fs, root)
    if state == "file":
        raise StoreError(f"{url} exists and is a file, not a daskbicl store; refusing to replace it")
    if state == "foreign":
        raise StoreError(
            f"{url} exists and is not a daskbicl store; "
            + ("overwrite=True only replaces a daskbicl store (or an empty prefix). " if overwrite else "")
            + "Choose another URL or remove it yourself."
        )
    if state == "store" and not overwrite:
        raise StoreError(f"{url} already exists; pass overwrite=True (CLI: --overwrite) to replace it")
    return state, objects


def write_remote(url: str, storage_options: dict | None, write, overwrite: bool) -> str:
    """Write a store at an fsspec URL with no rename: publication by the completion record.

    * Nothing at ``url``, or what an interrupted daskbicl write left there
      (removed first, with or without ``overwrite``): a sentinel object,
      the store's objects directly under ``url``, the root metadata with
      the kind, the record, then the sentinel removed.
    * A store to replace (``overwrite=True``): the new store is written
      whole under a hidden sibling prefix (``.NAME.tmp-XXXXXXXXXXXX``) while
      the old one stays readable; then the old one is unpublished (record,
      then root metadata) and deleted, the new objects copied into place
      on the server (chunks, then root metadata, then the record), and the
      sibling deleted.

    A failure removes what this write put in place; a reader never opens a
    mix of two stores or a part of one (:func:`daskbicl.open` refuses a
    prefix without its record as an interrupted write).
    """
    import fsspec

    fs, root = fsspec.core.url_to_fs(url, **(storage_options or {}))
    root = root.rstrip("/")
    try:
        state, objects = _check_destination(fs, root, url, overwrite)
        remove_leftovers(fs, root)
    except DaskbiclError:
        raise
    except Exception as exc:
        raise store_failure(exc, doing="write", store=url) from None
    if state == "store":
        return _replace_remote(fs, root, url, write, objects)
    try:
        fs.pipe_file(f"{root}/{WRITING_NAME}", b"")
        if state == "unpublished":
            clear(fs, root, [p for p in objects if _relative(root, p) != WRITING_NAME])
        write(_url(fs, root))
        fs.rm_file(f"{root}/{WRITING_NAME}")
    except BaseException as exc:
        _quietly(clear, fs, root)
        raise _failure(exc, url, root) from None
    return url


def _quietly(func, *args) -> None:
    try:
        func(*args)
    except Exception:  # the failure to report is the first one
        pass


def _replace_remote(fs, root: str, url: str, write, old: list[str]) -> str:
    parent, _, name = root.rpartition("/")
    stage = f"{parent}/.{name}.tmp-{uuid.uuid4().hex[:12]}"
    try:
        fs.pipe_file(f"{stage}/{WRITING_NAME}", b"")
        write(_url(fs, stage))
    except BaseException as exc:
        _quietly(clear, fs, stage)
        raise _failure(exc, url, stage) from None
    try:
        fs.pipe_file(f"{root}/{WRITING_NAME}", b"")
        clear(fs, root, [p for p in old if _relative(root, p) != WRITING_NAME])
        staged = {_relative(stage, p): p for p in fs.find(stage)}
        staged.pop(WRITING_NAME, None)
        order = ([k for k in staged if k != RECORD_NAME and k not in ROOT_METADATA],
                 [k for k in ROOT_METADATA if k in staged], [RECORD_NAME])
        for keys in order:  # chunks and array metadata, then the root metadata, then the record
            if keys:
                fs.copy([staged[k] for k in keys], [f"{root}/{k}" for k in keys])
        fs.rm_file(f"{root}/{WRITING_NAME}")
    except BaseException as exc:
        _quietly(clear, fs, root)
        raise _failure(exc, url, root) from None
    finally:
        _quietly(clear, fs, stage)
    return url


# --------------------------------------------------------------------------- what open checks


def interrupted_write(text: str, role: str) -> StoreReadError:
    """The error for a store daskbicl began writing and never published (a write killed or failed midway)."""
    error = StoreReadError(
        f"{role}: {redact(text)} is an interrupted write: daskbicl began writing this store but never completed "
        f"it (its completion record {RECORD_NAME} is missing), so it holds no valid store. Write it "
        "again: the next daskbicl write to this location removes what is left, with or without overwrite"
    )
    error.store = redact(text)
    return error


def writing_in_progress(text: str, storage_options) -> bool:
    """True when an object-store prefix holds daskbicl's write-in-progress sentinel."""
    from .storage import filesystem

    try:
        fs, root = filesystem(text, storage_options)
        return bool(fs.exists(f"{root.rstrip('/')}/{WRITING_NAME}"))
    except Exception:  # the error to report is the one opening the store
        return False


def check_published(text: str, attrs: dict, storage_options, role: str) -> WriteRecord:
    """A store whose attributes say daskbicl wrote it with a record: the record is there (one small read),
    returned (its digest fingerprints the store's content).

    ``storage_options``: the fsspec options of a URL, None for a local path.
    """
    record = read_record(text, storage_options)
    if record is None or KIND_ATTR not in attrs:
        raise interrupted_write(text, role)
    return record
