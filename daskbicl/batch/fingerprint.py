"""Fingerprints of Zarr stores: has this input changed since it was scored?

A fingerprint is 32 hex digits naming what a store holds, not where it is
(a moved, renamed or copied store keeps it, so nothing is rescored).  It is
made, from the cheapest evidence that is sound, in one of three ways:

**From the write record** (a store daskbicl wrote, :mod:`daskbicl.io.publish`):
the record lists every object with its size and SHA-256 and one digest of
them; the fingerprint is derived from that digest (one small read, no chunk
read).  The record is trusted when the store's listing agrees with it:
the same objects (keys), the same sizes, no write in progress, and no
object modified after the record was written (daskbicl writes it last).
An object the listing cannot vouch for -- modified after the record, or
in the same timestamp tick on a local disk, or of unknown size (HTTP) --
is read and its SHA-256 compared with the record's.  A store that does
not match its record (edited by hand, a chunk replaced) is fingerprinted
as a foreign store.  Object stores give modification times to the
second: an object rewritten by another program within the second its
record was written is not told apart (daskbicl never writes after the record).

**From the object listing** (a foreign store on an object store): each
object's key, size and the content tag the listing gives -- S3's ``ETag``,
Google Cloud Storage's ``md5Hash`` -- with no object read.  A single-part
S3 upload's ETag is the MD5 of its bytes: a copy of the store keeps it, a
changed byte changes it.  A multipart upload's ETag (``...-N``) is the MD5
of its parts' MD5s: it changes with any changed byte too, but also with
the part size, so a store copied by a tool that splits its objects
differently is rescored once (never a change missed).  A store encrypted
with SSE-KMS gets new ETags on every upload: a rewrite with identical bytes
is rescored.  An object without a tag (another backend, ``memory://``) is
read and hashed as below.  A foreign store's fingerprint therefore differs
between an object store and a local disk: one moved across is rescored once.

**From the bytes** (a foreign store on a local disk, a NetCDF file): a
BLAKE2b-128 digest over every object under the store's root, in sorted key
order: for each object its key (path relative to the root), its size in
bytes and the BLAKE2b-128 digest of its *stored* bytes.

What it detects, exactly (the bytes; the record and listings say the
same, with the limits above):

* any change of a metadata document: attributes (``daskbicl_kind``, ...),
  shape, dtype, chunk grid, codecs or fill value of any array, and arrays or
  coordinates added or removed;
* any chunk added, removed or renamed, and any changed byte of any chunk
  (collisions have probability 2^-128), so a changed label is always seen,
  even when the compressed size stays the same;
* a store rewritten with identical content (``daskbicl.save(...,
  overwrite=True)`` of the same labels and chunking, a copy, a ``touch``)
  keeps its fingerprint: nothing is rescored.

Symbolic links are followed (as Zarr does when it reads), so an array
folder or chunk linked into the store from elsewhere is fingerprinted by
its content; a link that leads back to a folder above it is not followed.
An object that is not a regular file (a link to ``/dev/zero``, a named
pipe, a socket) is refused with its name: reading it might never end.
An ``http://``/``https://`` store is listed from its server's index pages;
a server that gives none is refused (its chunks could not be listed).

What it costs: a listing of the store, the record, and the objects the
listing cannot vouch for (none on a night when nothing changed; every
object of a foreign local store, with no decoding: a 10^6-label int64
array of 10 clusters is ~0.6 MB on disk).  Objects are hashed in a thread
pool (the hashes release the GIL).  :func:`fingerprint_stores` works in the
calling process; :func:`fingerprint_task` is the same fingerprint computed
in a Dask worker's task, which the batch runner uses, when it has a
cluster at hand, for the stores whose bytes must be read (the bytes are
read where the chunks will be read, while the client does other work).
The listing also gives a local store's :func:`stat_signature` (every
file's key, size, modification time and inode): the re-check of a store
after its pairs are computed uses it (:func:`unchanged_since`), and
fingerprints again (a listing, the record: no chunk read unless the store
changed) only when it does not prove the store unchanged.

The same pass reads the root group's ``daskbicl_kind`` attribute, so a batch
run that has nothing to rescore needs no cluster and opens no dataset.  A
store without that attribute (a plain ``Dataset.to_zarr``) and a NetCDF file
(``Dataset.to_netcdf``) are inputs too: their kind is read from their
variables (``row_labels`` + ``col_labels``, or ``row_mask`` + ``col_mask``)
by opening them lazily, metadata only.  A NetCDF file is fingerprinted as
one object: its name, its size and the digest of its bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat as statmod
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..errors import StoreError, storage_unavailable, store_failure
from ..io.publish import NOT_CONTENT, RECORD_NAME, WRITING_NAME, read_record
from ..io.storage import filesystem
from ..io.store import KIND_ATTR, is_remote

__all__ = ["StoreInfo", "fingerprint", "fingerprint_stores", "fingerprint_task", "stat_signature",
           "unchanged_since", "FINGERPRINT_VERSION"]

#: Part of every digest: changing the scheme changes every fingerprint (so all is rescored once).
FINGERPRINT_VERSION = b"daskbicl-store-fingerprint-1"

_ROOT_METADATA = ("zarr.json", ".zattrs")


@dataclass(frozen=True)
class StoreInfo:
    """What :func:`fingerprint_stores` learnt about one store.

    ``error`` is set (and ``fingerprint`` is None) when the store is missing
    or is not a readable daskbicl store; the message says which.  Without an
    error, ``fingerprint`` is None only when the bytes were not read
    (``fingerprint_stores(..., contents=False)``).
    """

    path: str
    fingerprint: str | None = None
    kind: str | None = None
    objects: int = 0
    nbytes: int = 0
    error: str | None = None
    #: a local store's :func:`stat_signature` taken before its bytes were hashed (None: not local, or not taken)
    stat: tuple[str, int, int] | None = None


def _new():
    return hashlib.blake2b(digest_size=16)


class _Local:
    def __init__(self, root: str):
        self.root = root[len("file://") :] if root.startswith("file://") else root

    def check(self) -> str | None:
        if not os.path.exists(self.root):
            return f"no such file or directory: {self.root}"
        if not os.path.isdir(self.root):
            return (f"{self.root} is a file, but not a NetCDF file, and not a Zarr store (a directory); "
                    "'daskbicl convert' turns .npy, CSV and Parquet label files into a store")
        return None

    def listing(self) -> list[tuple[str, int]]:
        """``[(key, size)]`` of every file under the root, following symbolic links.

        Zarr reads through links, so a linked array folder or chunk is part of
        the store.  A link back to a folder on the way down (a cycle) is not
        followed: its realpath is one of the folders being listed.  The
        listing's ``stat`` signature is kept in ``self.stat``.
        """
        taken = time.time_ns()
        found = self.stats()
        self.stat = _signature(found, taken)
        self.mtimes = {key: mtime for key, _, mtime, _ in found}
        return [(key, size) for key, size, _, _ in found]

    #: the listing gives every object's size
    sizes_known = True

    def settled(self, key: str, record: str) -> bool:
        """``key`` was last modified strictly before the record was written (a later write would show: a
        write in the same timestamp tick as the record's is not excluded, so that object is checked)."""
        return self.mtimes[key] < self.mtimes[record]

    def sha256(self, key: str) -> str:
        with open(os.path.join(self.root, key), "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()

    def stats(self) -> list[tuple[str, int, int, int]]:
        """``[(key, size, mtime_ns, inode)]`` of every file under the root (see :meth:`listing`)."""
        out: list[tuple[str, int, int, int]] = []
        todo = [(self.root, "", frozenset({os.path.realpath(self.root)}))]
        while todo:
            folder, prefix, ancestors = todo.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    key = prefix + entry.name
                    if entry.is_dir():  # follows links
                        real = os.path.realpath(entry.path)
                        if real not in ancestors:
                            todo.append((entry.path, key + "/", ancestors | {real}))
                    else:
                        st = entry.stat()  # a dangling link raises: reported
                        if not statmod.S_ISREG(st.st_mode):  # a device, pipe or socket: reading it may never end
                            raise StoreError(_not_regular(self.root, key, entry.path))
                        out.append((key, st.st_size, st.st_mtime_ns, st.st_ino))
        return out

    def digest(self, key: str) -> bytes:
        h = _new()
        with open(os.path.join(self.root, key), "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
        return h.digest()

    def read(self, key: str) -> bytes | None:
        try:
            with open(os.path.join(self.root, key), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None


#: A file modified this close to (or after) the moment its stat was taken may have changed unseen within
#: the file system's timestamp granularity: such a listing is never trusted (as git does with "racy" files).
RACY_NS = 2_000_000_000


def _signature(found: list[tuple[str, int, int, int]], taken: int) -> tuple[str, int, int]:
    """(digest of the sorted (key, size, mtime_ns, inode) list, newest mtime_ns, time taken in ns)."""
    h = _new()
    for key, size, mtime, inode in sorted(found):
        h.update(f"\0{key}\0{size}\0{mtime}\0{inode}".encode())
    return h.hexdigest(), max((m for _, _, m, _ in found), default=0), taken


def stat_signature(path: str) -> tuple[str, int, int] | None:
    """A local Zarr store's signature from ``stat`` alone (no byte read); None for other stores or on error."""
    if is_remote(path):
        return None
    local = path[len("file://") :] if path.startswith("file://") else path
    if not os.path.isdir(local):
        return None
    try:
        taken = time.time_ns()
        return _signature(_Local(path).stats(), taken)
    except OSError:
        return None


def unchanged_since(before: tuple[str, int, int] | None, path: str) -> bool:
    """True when the store at ``path`` provably holds what it held when ``before`` was taken, by ``stat`` alone.

    Every object has the same key, size, modification time and inode, and
    the newest modification was more than :data:`RACY_NS` before ``before``
    was taken (so no write in the same timestamp tick went unseen).  False
    means "not proven": hash the bytes to know.
    """
    if before is None:
        return False
    digest, newest, taken = before
    if newest >= taken - RACY_NS:
        return False
    now = stat_signature(path)
    return now is not None and now[:2] == (digest, newest)


class _LocalFile:
    """A NetCDF file: one object, whose key is the file's name."""

    def __init__(self, path: str):
        self.root = path[len("file://") :] if path.startswith("file://") else path

    def check(self) -> str | None:
        return None

    def listing(self) -> list[tuple[str, int]]:
        return [(os.path.basename(self.root), os.stat(self.root).st_size)]

    def digest(self, key: str) -> bytes:
        h = _new()
        with open(self.root, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
        return h.digest()

    def read(self, key: str) -> bytes | None:
        return None  # no Zarr metadata: the kind comes from the variables


def _not_regular(root: str, key: str, path: str) -> str:
    """The refusal of a store object that is not a regular file (reading a device such as /dev/zero never ends)."""
    link = f", a link to {os.path.realpath(path)}," if os.path.islink(path) else ""
    return (f"{root}: {key}{link} is not a regular file (a device, pipe or socket): a Zarr store holds files "
            "only; remove it or replace it with the file it stands for")


def _content_tag(info: dict) -> str | None:
    """What an object store's listing says about one object's bytes (None: nothing, its bytes are hashed).

    S3 (and what speaks its API): the ``ETag``; Google Cloud Storage: the
    ``md5Hash``.  See the module's docstring for what each means.
    """
    etag = info.get("ETag")
    if isinstance(etag, str) and etag.strip('"'):
        return "etag:" + etag.strip('"')
    md5 = info.get("md5Hash")
    if isinstance(md5, str) and md5:
        return "md5:" + md5
    return None


class _Remote:
    def __init__(self, url: str, storage_options: dict | None):
        self.url = url
        self.fs, self.root = filesystem(url, storage_options)
        self.root = self.root.rstrip("/")
        protocol = self.fs.protocol
        self.http = bool({"http", "https"} & set(protocol if isinstance(protocol, (tuple, list)) else [protocol]))
        #: ``{key: content tag}`` of the objects whose listing says what they hold (see :func:`_content_tag`)
        self.tags: dict[str, str] = {}
        #: ``{key: modification time (s)}`` where the listing gives it
        self.mtimes: dict[str, float] = {}
        #: ``fs.find(root, detail=True)``, taken by :meth:`check`
        self.found: dict | None = None

    def check(self) -> str | None:
        if self.http:  # a folder's index page is a file too: whether it is a store is said by its root metadata
            return None if self.fs.exists(self.root) else f"no such store: {self.url}"
        self.found = self.fs.find(self.root, detail=True)  # the listing, once: it says whether the store exists
        prefix = self.root + "/"
        if not any(p.startswith(prefix) for p in self.found):
            if self.root in self.found or self.fs.isfile(self.root):
                return f"{self.url} is a file, not a Zarr store"
            return f"no such store: {self.url}"
        return None

    def listing(self) -> list[tuple[str, int]]:
        found = self.found if self.found is not None else self.fs.find(self.root, detail=True)
        prefix = self.root + "/"
        out = []
        for p, info in found.items():
            if not p.startswith(prefix):
                continue
            key = p[len(prefix) :]
            out.append((key, int(info.get("size") or 0)))
            tag = _content_tag(info)
            if tag is not None:
                self.tags[key] = tag
            modified = info.get("LastModified")
            if hasattr(modified, "timestamp"):
                self.mtimes[key] = modified.timestamp()
        if self.http and not any(key.rsplit("/", 1)[-1] in _ROOT_METADATA + (".zgroup",) for key, _ in out):
            raise StoreError(f"{self.url}: the server lists no file under it (no index pages), so its chunks "
                             "cannot be fingerprinted; serve the folder with its index pages, or copy the store")
        return out

    @property
    def sizes_known(self) -> bool:
        """Whether the listing gives every object's size (an HTTP server's index pages do not)."""
        return not self.http

    def settled(self, key: str, record: str) -> bool:
        """``key`` was last modified no later than the record was written.  S3 gives modification times to
        the second: an object rewritten by another program within the second the record was written is not
        told apart (daskbicl itself writes the record last)."""
        return key in self.mtimes and record in self.mtimes and self.mtimes[key] <= self.mtimes[record]

    def sha256(self, key: str) -> str:
        return hashlib.sha256(self.fs.cat_file(f"{self.root}/{key}")).hexdigest()

    def digest(self, key: str) -> bytes:
        h = _new()
        h.update(self.fs.cat_file(f"{self.root}/{key}"))
        return h.digest()

    def read(self, key: str) -> bytes | None:
        try:
            return self.fs.cat_file(f"{self.root}/{key}")
        except FileNotFoundError:
            return None


def _kind(store) -> tuple[str | None, str | None]:
    """(daskbicl kind, error) from the root group's metadata."""
    for name in _ROOT_METADATA:
        raw = store.read(name)
        if raw is None:
            continue
        try:
            doc = json.loads(raw)
        except ValueError as exc:
            return None, f"is not a readable Zarr store (invalid JSON in {name}: {exc})"
        attrs = doc.get("attributes", {}) if name == "zarr.json" else doc
        kind = attrs.get(KIND_ATTR) if isinstance(attrs, dict) else None
        if kind is None:
            return None, _BY_VARIABLES
        return str(kind), None
    if isinstance(store, _LocalFile):
        return None, _BY_VARIABLES
    return None, "is not a Zarr store (no zarr.json or .zattrs at its root)"


#: _kind's answer for a store without the daskbicl_kind attribute: read its variables.
_BY_VARIABLES = "by variables"


def _kind_by_variables(path: str, storage_options: dict | None) -> tuple[str | None, str | None]:
    """(kind, error) of a plain to_zarr store or a NetCDF file, from its variables (metadata only)."""
    from ..errors import DaskbiclError
    from ..io.store import open_store

    try:
        ds = open_store(path, role="store", storage_options=storage_options)
    except DaskbiclError as exc:
        text = str(exc)
        text = text[len("store: "):] if text.startswith("store: ") else text
        return None, text if path in text else f"{path}: {text}"
    return str(ds.attrs[KIND_ATTR]), None


def _store(path: str, storage_options: dict | None):
    if is_remote(path):
        return _Remote(path, storage_options)
    local = path[len("file://") :] if path.startswith("file://") else path
    if os.path.isfile(local):
        from ..io.netcdf import is_netcdf

        if is_netcdf(local):
            return _LocalFile(path)
    return _Local(path)


def fingerprint_stores(
    paths, storage_options: dict | None = None, *, threads: int = 16, contents: bool = True, kinds: bool = True
) -> dict[str, StoreInfo]:
    """Fingerprint every store in ``paths`` (each once), hashing objects in parallel.

    Never raises for a bad store: its :class:`StoreInfo` carries the error.
    ``contents=False`` lists the stores and reads their kinds without
    reading a chunk: a store whose fingerprint needs no chunk read (its
    write record agrees with its listing, or its object store's listing
    says what every object holds) is fingerprinted all the same; the
    others have ``fingerprint`` None (``stat`` is set), and the batch
    runner has their bytes hashed by the cluster's workers
    (:func:`fingerprint_task`).  ``kinds=False`` does not read the stores'
    kinds (a worker hashing a store the client has surveyed).

    The threads only list and hash: a store whose kind is read from its
    variables (a plain ``to_zarr`` store, a NetCDF file) is opened after
    them, in the calling thread, because opening a store changes the
    process's warning filters, which is not safe from several threads.
    """
    paths = list(dict.fromkeys(os.fspath(p) for p in paths))
    stores, listings, errors, kinds_of, records = {}, {}, {}, {}, {}

    def inspect(path):
        try:
            store = _store(path, storage_options)
            problem = store.check()
            if problem:
                return path, None, None, None, None, problem
            kind, problem = _kind(store) if kinds else (None, None)
            if problem and problem != _BY_VARIABLES:
                return path, None, None, None, None, f"{path} {problem}"
            listing = store.listing()
            return path, store, listing, _recorded(store, listing, path, storage_options), kind, problem
        except StoreError as exc:  # an object the store must not hold, a damaged record...: said so
            return path, None, None, None, None, str(exc)
        except Exception as exc:  # a listing that fails: permissions, network, ...
            return path, None, None, None, None, _failure(exc, "list", path)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for path, store, listing, record, kind, problem in pool.map(inspect, paths):
            if problem and problem != _BY_VARIABLES:
                errors[path] = problem
                continue
            stores[path], listings[path], kinds_of[path] = store, sorted(listing), kind
            if record is not None:
                records[path] = record
            if problem == _BY_VARIABLES:
                kinds_of[path] = None
        for path in [p for p in stores if kinds and kinds_of[p] is None]:  # here, not in the threads
            kinds_of[path], problem = _kind_by_variables(path, storage_options)
            if problem:
                errors[path] = problem
        fps = _verified(pool, stores, records, errors, contents)
        # Without ``contents``, a store whose listing says what every object holds is still fingerprinted.
        tagged = {p for p in stores if p not in fps and p not in records
                  and all(key in _tags(stores[p]) for key, _ in listings[p])}
        foreign = {p for p in stores if p not in fps and p not in records} if contents else tagged
        digests = _digests(pool, stores, listings, errors, foreign)

    out = {}
    for path in paths:
        if path in errors:
            out[path] = StoreInfo(path, error=errors[path])
            continue
        total = sum(size for _, size in listings[path])
        fp = fps.get(path)
        if fp is None and path in foreign:
            fp = _combine(listings[path], path, digests, _tags(stores[path]))
        out[path] = StoreInfo(path, fp, kinds_of[path], len(listings[path]), total,
                              stat=getattr(stores[path], "stat", None))
    return out


def _failure(exc: BaseException, doing: str, where: str) -> str:
    """Why listing or reading ``where`` failed: a storage that did not answer is said in the words of
    :class:`~daskbicl.errors.StorageUnavailableError` (the batch records its pairs as not scored, exit status 3)."""
    if storage_unavailable(exc):
        return str(store_failure(exc, doing=doing, store=where))
    return f"cannot {doing} {where}: {type(exc).__name__}: {exc}"


def _recorded(store, listing: list[tuple[str, int]], path: str, storage_options: dict | None):
    """``(fingerprint, {key: sha256})`` from the store's write record: the fingerprint it gives, and the
    objects to check by their bytes before trusting it (those written after the record, or whose sizes the
    listing does not give); None without a record, or when the listing disagrees with it (then the store is
    fingerprinted as any other).  One small read: the record's, only when the listing has one."""
    if isinstance(store, _LocalFile):
        return None
    keys = {key for key, _ in listing}
    if RECORD_NAME not in keys or WRITING_NAME in keys:
        return None
    record = read_record(path, storage_options if is_remote(path) else None)
    if record is None:
        return None
    listed = {key: size for key, size in listing if key not in NOT_CONTENT}
    if set(listed) != set(record.objects):
        return None
    if store.sizes_known and any(size != record.objects[key][0] for key, size in listed.items()):
        return None
    check = {key: record.objects[key][1] for key in listed
             if not (store.sizes_known and store.settled(key, RECORD_NAME))}
    return record_fingerprint(record.digest), check


def record_fingerprint(digest: str) -> str:
    """The fingerprint of a store that holds what its write record says (32 hex digits)."""
    h = _new()
    h.update(FINGERPRINT_VERSION + b"\0record\0" + digest.encode())
    return h.hexdigest()


def _verified(pool, stores: dict, records: dict, errors: dict, contents: bool) -> dict[str, str]:
    """``{path: fingerprint}`` of the stores whose write record is proven: by their listing alone, or (with
    ``contents``) by the bytes of the objects the listing does not vouch for.  A store whose bytes are not
    what its record says is left out and dropped from ``records`` (fingerprinted as any other store)."""
    out = {path: fp for path, (fp, check) in records.items() if not check and path not in errors}
    if not contents:
        return out
    jobs = [(path, key, sha) for path, (_, check) in records.items() if check and path not in errors
            for key, sha in check.items()]

    def hash_one(job):
        path, key, sha = job
        try:
            return path, stores[path].sha256(key) == sha, None
        except Exception as exc:
            return path, False, _failure(exc, "read", f"{path}/{key}")

    differs: set[str] = set()
    for path, same, problem in pool.map(hash_one, jobs):
        if problem:
            errors.setdefault(path, problem)
        elif not same:
            differs.add(path)
    for path, (fp, check) in list(records.items()):
        if path in differs:
            del records[path]
        elif check and path not in errors:
            out[path] = fp
    return out


def _tags(store) -> dict[str, str]:
    """``{key: content tag}`` of the objects whose listing says what they hold (only on object stores)."""
    return getattr(store, "tags", {})


def _digests(pool, stores: dict, listings: dict, errors: dict, which: set) -> dict:
    """``{(path, key): digest}`` of every object of the stores in ``which`` (not in ``errors``) whose listing
    gives no content tag (a read error goes to ``errors``)."""
    jobs = [(path, key) for path in stores if path in which and path not in errors
            for key, _ in listings[path] if key not in _tags(stores[path])]

    def hash_one(job):
        path, key = job
        try:
            return job, stores[path].digest(key), None
        except Exception as exc:
            return job, None, _failure(exc, "read", f"{path}/{key}")

    digests = {}
    for job, digest, problem in pool.map(hash_one, jobs):
        if problem:
            errors.setdefault(job[0], problem)
        digests[job] = digest
    return digests


def _combine(listing: list[tuple[str, int]], path: str, digests: dict, tags: dict[str, str]) -> str:
    h = _new()
    h.update(FINGERPRINT_VERSION)
    for key, size in listing:
        h.update(f"\0{key}\0{size}\0".encode())
        tag = tags.get(key)
        h.update(digests[(path, key)] if tag is None else b"\1" + tag.encode())
    return h.hexdigest()


def fingerprint_task(path: str, storage_options: dict | None = None, threads: int = 8) -> StoreInfo:
    """One store's :class:`StoreInfo` with its fingerprint, computed where this runs (a worker's task).

    The same digest as :func:`fingerprint` in the client: the stores are
    read by the worker that computes it, and its ``stat`` is the listing the
    worker took before hashing.  The kind is not read (the client's survey
    has it).
    """
    return fingerprint_stores([path], storage_options, threads=threads, kinds=False)[os.fspath(path)]


def fingerprint(path, storage_options: dict | None = None) -> str:
    """The content fingerprint of one daskbicl Zarr store (32 hex digits).

    Raises
    ------
    StoreError
        When the store is missing or is not a readable daskbicl store.
    """
    info = fingerprint_stores([path], storage_options)[os.fspath(path)]
    if info.error:
        raise StoreError(info.error)
    return info.fingerprint
