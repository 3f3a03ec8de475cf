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
from dataclasses import dataclass, field

from ..errors import StoreReadError, StoreWriteError, one_line, store_failure

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
    import fsspec

    text = os.fspath(path)
    if text.startswith("file://") or "://" not in text:
        storage_options = None  # fsspec options mean nothing to a local path
    fs, root = fsspec.core.url_to_fs(text, **(storage_options or {}))
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
