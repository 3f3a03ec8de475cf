"""Zarr stores: open lazily and validate; save atomically.

A daskbicl store is a Zarr group written by :func:`save`, with the attribute
``daskbicl_kind`` (``"partition"`` or ``"biclustering"``) written after every
array, and then a completion record (:mod:`daskbicl.io.publish`) that lists
every object with its checksum; the root attribute ``daskbicl_record``,
written first, says the record is due, so a store whose writer died midway
is refused as an interrupted write, never mistaken for a valid one.
Locally :func:`save` writes into a hidden sibling and renames it into place
(:mod:`daskbicl.io.replace`); on an object store, which has no rename, the
record publishes the store (:func:`daskbicl.io.publish.write_remote`).  A
reader sees the old store, the complete new one, or no valid store, never a
partial one, and a failed write leaves the old store untouched.

Zarr does not write a chunk equal to its fill value, and 0 (or False) is a
valid label (mask value), so a *deleted* chunk would read back as a chunk of
zeros and score silently wrong.  :func:`save` therefore writes every chunk and
marks the store ``daskbicl_chunks = "complete"``; :func:`open_store` checks
that every chunk of such a store is present.

What :func:`save` writes (label codes and their values, codecs with a
checksum of every chunk, chunk sizes) is described in
:mod:`daskbicl.io.coding`; :func:`open_store` decodes the labels lazily.
Stores written before, and plain ``to_zarr`` stores of any dtype, are read
as they are.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import xarray as xr

from ..errors import InputError, StoreError, one_line, storage_unavailable, store_failure
from ..kernels.coclustering.contingency import UNASSIGNED_ATTR
from ..locations import redact, redact_logs
from ..scheduling import READ_ORDER, active_client, compute, read_inline, task_chunks
from .chunk_files import ChunkFiles
from .coding import (
    LABEL_CHUNK,
    UNASSIGNED_CODE_ATTR,
    VALUES_ATTR,
    coded_labels,
    decode_labels,
    encoding_of,
    mask_chunk,
    values_name,
)
from .groups import damaged_metadata, dataset_of, missing_chunks, open_group, with_members
from .present import present_chunks
from .publish import (
    RECORD_ATTR,
    RECORD_NAME,
    check_published,
    interrupted_write,
    write_record,
    write_remote,
    writing_in_progress,
)
from .replace import check_chunk, check_storable, write_local
from .storage import waiting, with_timeouts, zarr_store
from .validate import as_dataset

__all__ = ["open_store", "save", "is_remote"]

KIND_ATTR = "daskbicl_kind"
#: Set by :func:`save` once every chunk is written; :func:`open_store` then checks them.
CHUNKS_ATTR = "daskbicl_chunks"
#: Variable attribute of a string label array written by :func:`save`: the
#: string that stands for an unassigned entry (None, NaN, pandas NA), which a
#: Zarr string array cannot hold.  :func:`open_store` turns it back into None.
MISSING_ATTR = "daskbicl_missing"
MISSING_MARKER = ""

#: Default chunk length along row/col of generated data (``daskbicl generate``, the synthetic
#: generators): the chunk length of stored labels.
DEFAULT_CHUNK = LABEL_CHUNK


def is_remote(path) -> bool:
    """True for fsspec URLs such as ``s3://bucket/x.zarr`` (not ``file://``)."""
    text = os.fspath(path)
    return "://" in text and not text.startswith("file://")


def _local(path) -> Path:
    text = os.fspath(path)
    return Path(text[len("file://") :] if text.startswith("file://") else text)


def open_store(path, role: str = "input", *, storage_options: dict | None = None) -> xr.Dataset:
    """Open a co-clustering or biclustering store lazily (dask arrays, on-disk chunks).

    The path may be a Zarr store written by :func:`daskbicl.save`, or by
    anything else: a store without daskbicl's ``daskbicl_kind`` attribute
    (a plain ``Dataset.to_zarr``, another tool) is read by its variables,
    ``row_labels`` + ``col_labels`` as a co-clustering and ``row_mask`` +
    ``col_mask`` as a biclustering.  A file (not a folder) is read as NetCDF.

    Chunks are read through a reader whose failures (a damaged or truncated
    chunk, permission denied, the store deleted under the run) are raised as
    :class:`~daskbicl.errors.StoreReadError` naming the store, the variable
    and the chunk, on the local scheduler and on a cluster alike.

    Raises
    ------
    StoreError
        When the path does not exist, is not a readable Zarr group or NetCDF
        file, or holds neither pair of variables (the message names what it
        found); when a store marked as daskbicl's is damaged.

    Examples
    --------
    >>> import tempfile, xarray as xr, daskbicl
    >>> path = tempfile.mkdtemp() + "/plain.zarr"
    >>> _ = xr.Dataset({"row_labels": ("row", [0, 0, 1]), "col_labels": ("col", [1, 2])}).to_zarr(path, consolidated=False)
    >>> daskbicl.open(path).attrs["daskbicl_kind"]    # written by plain xarray: opens all the same
    'partition'
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"{role}: a store is opened from a path or URL (str or os.PathLike), "
                         f"got {type(path).__name__}")
    text = os.fspath(path)
    if isinstance(text, bytes):
        raise InputError(f"{role}: a store path must be text, got bytes {text!r}")
    if not is_remote(text):
        storage_options = None  # fsspec options mean nothing to a local path (zarr refuses them)
        # absolute: the chunks may be read by workers of a cluster started in another folder
        local = _local(text).absolute()
        if not local.exists():
            if local.is_symlink():
                raise StoreError(f"{role}: {text} is a broken symbolic link or a loop of symbolic links")
            raise StoreError(f"{role}: no such file or directory: {text}")
        if local.is_file():  # a NetCDF file (Dataset.to_netcdf): read by its variables
            from .netcdf import open_netcdf

            return as_dataset(open_netcdf(local, role), role)
        if not local.is_dir():
            raise StoreError(f"{role}: {text} is neither a Zarr store (a folder) nor a file")
        text = str(local)
    storage_options = with_timeouts(text, storage_options)
    with waiting(text):
        group, attrs, ds = _open_zarr(text, role, storage_options)
    if KIND_ATTR in attrs and not is_remote(text):
        _check_variables(ds, attrs.get(KIND_ATTR), text, role)
    if attrs.get(CHUNKS_ATTR) == "complete":
        try:
            with waiting(text):
                _check_complete(group, text, role)
        except Exception as exc:
            if isinstance(exc, StoreError) or not (_system_error(exc) or storage_unavailable(exc)):
                raise
            raise store_failure(exc, doing="read", store=text, role=_role(role)) from None
    ds = as_dataset(ds, role)
    ds.attrs.pop(RECORD_ATTR, None)  # a mark of this store's writing, not of its data (a copy has no record)
    complete = attrs.get(CHUNKS_ATTR) == "complete"  # checked above: an absent chunk is damage when read
    return decode_labels(_restore_missing(_checked_reads(ds, group, text, storage_options, role, complete)))


def _open_zarr(text: str, role: str, storage_options) -> tuple:
    """``(group, attrs, dataset)`` of the Zarr store at ``text``; failures as :class:`StoreError` naming it.

    A storage that does not answer (:func:`~daskbicl.errors.storage_unavailable`) is a
    :class:`~daskbicl.errors.StorageUnavailableError` (retry later); locations are shown redacted.
    """
    _quiet_zarr()
    shown = redact(text)
    # Each error is raised outside the ``except`` block: it carries no chained error (zarr's and botocore's
    # errors neither cross process boundaries, tblib cannot rebuild them, nor are their texts redacted).
    error: Exception | None = None
    try:
        group = open_group(text, storage_options, remote=is_remote(text))
        attrs = dict(group.attrs)
    except Exception as exc:  # zarr raises its own error types for missing or bad metadata
        if _system_error(exc) or storage_unavailable(exc):  # permission denied, I/O error, no answer: not the format
            error = store_failure(exc, doing="read", store=text, role=_role(role))
        elif is_remote(text) and writing_in_progress(text, storage_options):
            error = interrupted_write(text, role)
        else:
            error = StoreError(f"{role}: {shown} is not a readable Zarr store ({type(exc).__name__}: {one_line(exc)})")
    if error is not None:
        raise error
    digest = check_published(text, attrs, storage_options, role).digest if RECORD_ATTR in attrs else None
    # A store without the daskbicl_kind attribute (a plain to_zarr, another tool) is read by its
    # variables: as_dataset says what it found when they are neither layout.
    try:
        group = with_members(group)
        ds = dataset_of(text, group, digest)
    except Exception as exc:
        error = _unreadable(exc, text, shown, role, attrs, group)
    if error is not None:
        raise error
    return group, attrs, ds


def _unreadable(exc: Exception, text: str, shown: str, role: str, attrs: dict, group) -> Exception:
    """The error of a Zarr group that opened but whose Dataset does not (``shown``: the location redacted)."""
    if _system_error(exc) or storage_unavailable(exc):
        return store_failure(exc, doing="read", store=text, role=_role(role))
    if KIND_ATTR not in attrs:
        names = sorted(map(str, group.array_keys())) if hasattr(group, "array_keys") else []
        return StoreError(
            f"{role}: {shown} is not a co-clustering or biclustering store: expected xarray variables "
            f"row_labels + col_labels or row_mask + col_mask (Dataset.to_zarr), found arrays {names} "
            f"({type(exc).__name__}: {one_line(exc)})"
        )
    where = damaged_metadata(text) if not is_remote(text) else None
    return StoreError(
        f"{role}: {shown} is marked as a daskbicl store but cannot be read"
        + (f": {where} is damaged" if where else "")
        + f" ({type(exc).__name__}: {one_line(exc)})"
    )


def _system_error(exc: BaseException) -> bool:
    """An error of the operating system (it has an errno), not zarr's verdict on the store's format
    (zarr's GroupNotFoundError is a FileNotFoundError without one)."""
    return isinstance(exc, OSError) and exc.errno is not None


def _role(role: str) -> str | None:
    """How a read error names the side: ``truth``/``pred``, nothing for a store opened on its own."""
    return role if role in ("truth", "pred") else None


#: The filter that keeps Zarr's warnings quiet: ``("ignore", message, category, module, lineno)`` as
#: :func:`warnings.filterwarnings` stores it.
_ZARR_FILTER_MODULE = r"zarr\..*"


def _quiet_zarr() -> None:
    """Zarr's warnings about what it finds in a store (a folder that is not a node, consolidated
    metadata) are not the user's business: a store daskbicl cannot use is one error message.

    One filter ignoring warnings raised in Zarr's modules, added to the
    process's filters once (again only if something removed it), instead of
    ``warnings.catch_warnings`` around each open: that swaps the whole filter
    list and is not safe while other threads open stores or warn.
    """
    for action, _message, category, module, lineno in warnings.filters:
        if (action == "ignore" and category is Warning and lineno == 0 and module is not None
                and module.pattern == _ZARR_FILTER_MODULE):
            return
    warnings.filterwarnings("ignore", module=_ZARR_FILTER_MODULE)


_quiet_zarr()  # at import, before any thread opens a store
redact_logs()  # a worker's logs (a failed read's task and error) name no secret of a location


def _check_variables(ds: xr.Dataset, kind, text: str, role: str) -> None:
    """A daskbicl store has every variable of its kind: name the one whose metadata is gone."""
    layouts = {"partition": ("row_labels", "col_labels"), "biclustering": ("row_mask", "col_mask")}
    wanted = layouts.get(kind, ()) if isinstance(kind, str) else ()  # a bad kind: as_dataset names it
    for var in wanted:
        if var in ds.variables:
            continue
        folder = Path(text) / var
        if folder.is_dir():
            raise StoreError(
                f"{role}: {text}: variable {var} has lost its metadata ({var}/zarr.json or {var}/.zarray "
                "is missing), so its chunks cannot be read; copy or write the store again"
            )
        raise StoreError(f"{role}: {text}: variable {var} is missing (a {kind} store has "
                         f"{' and '.join(wanted)}); copy or write the store again")


def _restore_missing(ds: xr.Dataset) -> xr.Dataset:
    """String labels written with a missing-entry marker (:data:`MISSING_ATTR`) read back with None there."""
    for var in ("row_labels", "col_labels"):
        if var in ds and MISSING_ATTR in ds[var].attrs:
            marker = ds[var].attrs[MISSING_ATTR]
            attrs = {k: v for k, v in ds[var].attrs.items() if k != MISSING_ATTR}
            data = ds[var].data.map_blocks(_marker_to_none, marker, dtype=object, meta=np.empty((0,), object))
            ds = ds.assign({var: (ds[var].dims, data, attrs)})
    return ds


def _marker_to_none(block: np.ndarray, marker: str) -> np.ndarray:
    out = np.asarray(block).astype(object)
    out[out == marker] = None
    return out


def _none_to_marker(block: np.ndarray, name: str) -> np.ndarray:
    """One chunk of object labels as strings with :data:`MISSING_MARKER` for missing entries."""
    import pandas as pd

    block = np.asarray(block, dtype=object)
    missing = pd.isna(block)
    kept = block[~missing]
    bad = next((value for value in kept if not isinstance(value, str)), None)
    if bad is not None:
        raise InputError(
            f"cannot store {name}: it holds {type(bad).__name__} labels such as {bad!r} among "
            "Python objects; a store holds integer, float, bool or string labels. Convert them "
            "(e.g. .astype(str), or integer codes with pandas.factorize) or score the Dataset in memory"
        )
    if (kept == MISSING_MARKER).any():
        raise InputError(
            f"cannot store {name}: it has the empty string as a label, which a store uses for an "
            "unassigned entry (None, NaN); replace it with another label"
        )
    out = block.copy()
    out[missing] = MISSING_MARKER
    return out.astype(_STRINGS)


#: numpy's variable-length string dtype (numpy >= 2), which xarray writes to a
#: Zarr variable-length UTF-8 array without loading dask data to guess a type.
_STRINGS = getattr(np.dtypes, "StringDType", lambda: np.dtype(object))()


def _storable_labels(var: xr.DataArray, name: str) -> xr.DataArray:
    """Labels in a dtype a Zarr v3 store holds with a specification (variable-length strings, not fixed-width)."""
    kind = var.dtype.kind
    if kind == "U":
        return var.astype(_STRINGS)
    if kind != "O":
        return var
    import pandas as pd

    if not hasattr(var.data, "dask"):
        values = np.asarray(var.data)
        inferred = pd.api.types.infer_dtype(values, skipna=True)
        missing = pd.isna(values)
        if inferred == "integer" and not missing.any():
            try:
                return var.copy(data=values.astype(np.int64))
            except OverflowError:
                pass
        if inferred in ("floating", "mixed-integer-float"):
            return var.copy(data=values.astype(np.float64))
        if inferred == "boolean" and not missing.any():
            return var.copy(data=values.astype(bool))
        if inferred in ("integer", "boolean"):
            raise InputError(
                f"cannot store {name}: it holds Python {inferred} labels that do not fit a numpy "
                "integer array (missing entries or values beyond int64); a store holds integer, "
                "float, bool or string labels. Convert them (e.g. .astype(str)) or score in memory"
            )
        out = var.copy(data=_none_to_marker(values, name))
    else:
        out = var.copy(data=var.data.map_blocks(_none_to_marker, name, dtype=_STRINGS))
    out.attrs = {**var.attrs, MISSING_ATTR: MISSING_MARKER}
    return out


#: Whole chunks of local one-byte arrays (label codes, masks) are read from their files
#: (:mod:`~daskbicl.io.chunk_files`: same bytes, checksum and decompressor as Zarr, fewer steps);
#: False: every chunk through Zarr (kept for ``benchmarks/out_of_core.py``).
CHUNK_FILES = True

#: Held while a :class:`_ChunkReader` opens its array: one thread of a process opens it, the others wait.
_OPENING = threading.Lock()


class _ChunkReader:
    """The array-like a store variable is read through: a failed read names the store, variable and chunk.

    ``dask.array.from_array`` calls ``reader[slices]`` once per block, a
    range of stored chunks (:func:`_checked_reads`); any
    error (a codec error from a damaged chunk, a truncated file, permission
    denied, the store deleted under the run) becomes a
    :class:`~daskbicl.errors.StoreReadError` (through
    :func:`~daskbicl.errors.store_failure`) saying where, on the local
    scheduler and on a cluster alike.  The Zarr array the opening found is
    kept (another process opens it once); its chunks are read through
    :func:`~daskbicl.io.present.present_chunks`, so an absent chunk object
    of a ``complete`` store is an error, not zeros.  Tokenized by what it
    reads (location, variable, metadata), not by identity.
    """

    def __init__(self, path: str, var: str, storage_options, shape, dtype, chunks, role: str | None = None,
                 array=None, complete: bool = False):
        self.path, self.var, self.storage_options = path, var, storage_options
        self.shape, self.dtype, self.ndim = tuple(shape), dtype, len(shape)
        self.chunks, self.role, self.complete = chunks, role, complete
        self.zarr_format = None if array is None else array.metadata.zarr_format
        self.metadata = None if array is None else json.dumps(array.metadata.to_dict(), sort_keys=True, default=str)
        self._array = None if array is None else present_chunks(array, complete=complete)
        local = array is not None and not is_remote(path)
        self._files: ChunkFiles | None = ChunkFiles.of(array, f"{path.rstrip('/')}/{var}") if local else None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_array"] = state["_files"] = None  # reopened where it is used
        return state

    def __dask_tokenize__(self):
        return ("daskbicl-chunk-reader", self.path, self.var, self.role, self.complete, self.metadata,
                self.shape, str(self.dtype), self.chunks)

    def _chunk_id(self, key) -> str:
        ids = []
        for sl, sizes in zip(key, self.chunks):
            start = (sl.start or 0) if isinstance(sl, slice) else int(sl)
            edges = 0
            for k, size in enumerate(sizes):
                if start < edges + size:
                    ids.append(k)
                    break
                edges += size
        return ".".join(map(str, ids))

    def _opened(self):
        """The Zarr array, opened on first use in this process (Zarr's warnings kept quiet by the one
        process-wide filter of :func:`_quiet_zarr`; no ``warnings.catch_warnings``, which swaps the
        process's warning filters and is not safe while other threads run)."""
        array = self._array
        if array is None:
            import zarr

            with _OPENING:
                if self._array is None:
                    folder = f"{self.path.rstrip('/')}/{self.var}"
                    _quiet_zarr()
                    store, options = zarr_store(folder, self.storage_options)
                    opened = zarr.open_array(store, mode="r", storage_options=options, zarr_format=self.zarr_format)
                    self._files = None if is_remote(folder) else ChunkFiles.of(opened, folder)
                    self._array = present_chunks(opened, complete=self.complete)
                array = self._array
        return array

    def __getitem__(self, key):
        """The values of ``key``: a block of one stored chunk, or of several (read one by one into the block)."""
        parts = self._stored_parts(key)
        if parts is None:
            return self._read(key)
        self._opened()
        if self._files is None or not CHUNK_FILES:  # through zarr, which fetches the chunks concurrently
            try:
                return np.asarray(self._array[key])
            except Exception:  # noqa: BLE001 - read chunk by chunk below, to name the failing one
                pass
        shape = tuple(len(range(*sl.indices(n))) for sl, n in zip(key, self.shape))
        out = np.empty(shape, dtype=self.dtype)
        for part, where in parts:
            self._read(part, out[where])
        return out

    def _stored_parts(self, key) -> list[tuple[tuple, tuple]] | None:
        """``key`` cut at the stored chunks' edges: ``(part of the array, part of the block)`` each; None when
        ``key`` lies within one stored chunk (or is not a tuple of plain slices)."""
        if not isinstance(key, tuple) or len(key) != self.ndim or \
                not all(isinstance(sl, slice) and sl.step in (None, 1) for sl in key):
            return None
        pieces = []
        for sl, n, sizes in zip(key, self.shape, self.chunks):
            start, stop = sl.indices(n)[:2]
            edges = np.cumsum((0, *sizes))
            inner = [int(e) for e in edges if start < e < stop]
            cuts = [start, *inner, stop]
            pieces.append([(slice(a, b), slice(a - start, b - start)) for a, b in zip(cuts[:-1], cuts[1:])])
        if all(len(p) == 1 for p in pieces):
            return None
        return [(tuple(p[0] for p in combo), tuple(p[1] for p in combo)) for combo in itertools.product(*pieces)]

    def _read(self, key, out: np.ndarray | None = None):
        """One stored chunk's part (into ``out`` when given); a failure names the store, variable and chunk."""
        try:
            with waiting(self.path):
                array = self._opened()
                direct = self._files.read(key, out) if self._files is not None and CHUNK_FILES else None
                got = array[key] if direct is None else direct
        except Exception as exc:
            raise store_failure(exc, doing="read", store=self.path, variable=self.var,
                                chunk=self._chunk_id(key), role=self.role) from None
        if out is None:
            return got
        if got is not out:
            out[...] = got
        return out


def _checked_reads(ds: xr.Dataset, group, path: str, storage_options, role: str = "input",
                   complete: bool = False) -> xr.Dataset:
    """``ds`` with every data variable read through a :class:`_ChunkReader`, in tasks sized to the cluster.

    A read task covers a range of stored chunks along the last axis (rows
    or columns; :func:`~daskbicl.scheduling.task_chunks`: a few tasks per
    worker thread, at most ``daskbicl.task_bytes`` each) for arrays of a
    fixed-size numeric type; other arrays (strings, objects) keep a task
    per stored chunk.  The reads are annotated with their order
    (:func:`~daskbicl.scheduling.read_order`, as :data:`~daskbicl.scheduling.READ_ORDER`,
    which dask can fuse), in every graph that uses them.
    """
    import dask
    import dask.array as da
    from dask.base import tokenize

    out = ds.copy()
    for var in ds.data_vars:
        data = ds[var].data
        if not isinstance(data, da.Array) or var not in group:
            continue
        reader = _ChunkReader(path, var, storage_options, data.shape, data.dtype, data.chunks, _role(role),
                              array=group[var], complete=complete)
        chunks = data.chunks
        if data.ndim and data.dtype.kind in "biuf":
            item = data.dtype.itemsize * int(np.prod(data.shape[:-1], dtype=np.int64))
            chunks = (*data.chunks[:-1], task_chunks(data.chunks[-1], item))
        name = data.name if chunks == data.chunks else f"{data.name}-{tokenize(chunks)}"
        with dask.annotate(priority=READ_ORDER):
            read = da.from_array(reader, chunks=chunks, name=name, asarray=True, fancy=False,
                                 meta=np.empty((0,) * data.ndim, data.dtype))
        if reader.role == "pred":  # counted where it is read (a truth's reads are shared by a batch's pairs)
            read_inline(read, reader)
        out[var] = (ds[var].dims, read, ds[var].attrs)
        if chunks != data.chunks:  # written again (save), a variable keeps the store's chunks, not its tasks'
            out[var].encoding[STORED_CHUNKS] = dict(zip(ds[var].dims, (c[0] for c in data.chunks)))
    return out


#: Encoding entry of a variable read in tasks larger than its store's chunks: the store's chunk per dimension.
STORED_CHUNKS = "daskbicl_stored_chunks"


def _stored_chunks(ds: xr.Dataset) -> xr.Dataset:
    """Variables read from a store in larger tasks (:func:`_checked_reads`) back in the store's chunks."""
    for name, var in ds.data_vars.items():
        stored = var.encoding.get(STORED_CHUNKS)
        if stored and var.chunks is not None:
            ds[name] = var.chunk(stored)
    return ds


def _check_complete(group, text: str, role: str) -> None:
    """Every chunk of every array of a store written by :func:`save` is present."""
    for name, missing, nchunks in missing_chunks(group):
        raise StoreError(
            f"{role}: {redact(text)}: array {name!r} is missing {missing:,} of its {nchunks:,} "
            "chunks (deleted or not copied?); daskbicl.save wrote every chunk, so the store "
            "is incomplete and would read missing chunks as zeros. Copy or write it again."
        )


def _chunked(ds: xr.Dataset, chunk: int) -> xr.Dataset:
    """In-memory variables chunked for storage: ``chunk`` labels, masks by :func:`~daskbicl.io.coding.mask_chunk`."""
    size = mask_chunk(ds.sizes.get("bicluster", 1), chunk) if "bicluster" in ds.dims else chunk
    chunks = {dim: min(size, n) for dim, n in ds.sizes.items() if dim in ("row", "col")}
    out = ds.copy()
    for name, var in ds.data_vars.items():
        if var.chunks is None and any(d in chunks for d in var.dims):
            out[name] = var.chunk({d: chunks[d] for d in var.dims if d in chunks})
    # Coordinates stay in one chunk: they are read whole to match labels.
    for name in out.coords:
        out[name] = out[name].compute() if hasattr(out[name].data, "compute") else out[name]
    return out


def _coded(ds: xr.Dataset) -> xr.Dataset:
    """A co-clustering with each label array as codes + a table of label values (:mod:`~daskbicl.io.coding`)."""
    for var in ("row_labels", "col_labels"):
        coded = coded_labels(ds[var], var, lambda obj: compute(obj)[0])
        if coded is None:  # too many distinct labels to tabulate: stored as they are
            ds = ds.assign({var: _storable_labels(ds[var], var)})
            continue
        codes, values, unassigned = coded
        attrs = {k: v for k, v in ds[var].attrs.items() if k not in (VALUES_ATTR, UNASSIGNED_CODE_ATTR, MISSING_ATTR)}
        attrs[VALUES_ATTR] = values_name(var)
        if unassigned is not None:
            attrs[UNASSIGNED_CODE_ATTR] = int(unassigned)
        if values.dtype == object:
            values = values.astype(_STRINGS)
        ds = ds.assign({var: (ds[var].dims, codes, attrs),
                        values_name(var): ((values_name(var)[: -len("_values")],), values)})
    return ds


def save(
    ds,
    path,
    *,
    overwrite: bool = False,
    chunk: int = LABEL_CHUNK,
    storage_options: dict | None = None,
    progress: bool = False,
) -> str:
    """Write a co-clustering or biclustering to a Zarr store, atomically.

    Parameters
    ----------
    ds : xarray.Dataset or tuple
        Anything :func:`daskbicl.as_dataset` accepts; it is validated first.
    path : str or os.PathLike
        Destination folder or fsspec URL.
    overwrite : bool
        Replace an existing store (default: refuse).
    chunk : int
        Chunk length along ``row``/``col`` for in-memory data (dask-backed
        data keep their chunks).  Masks are chunked so that a chunk holds at
        most 16 MiB.
    progress : bool
        Show a progress bar on stderr while writing.

    Returns
    -------
    str
        The path written.

    Notes
    -----
    Labels are stored as the smallest unsigned integer codes that tell
    them apart plus a table of their values; every chunk carries a CRC32C
    checksum.  See the data model guide ("Store format").
    """

    chunk = check_chunk(chunk)
    _destination(path)
    ds = as_dataset(ds, "dataset to save")
    check_storable(ds)
    kind = ds.attrs[KIND_ATTR]
    ds = _stored_chunks(ds.copy())
    # The kind (and the completeness marker) are written last, by _write_kind.
    # The unassigned policy is a choice made when scoring, not a property of the data.
    ds.attrs = {k: v for k, v in ds.attrs.items() if k not in (KIND_ATTR, CHUNKS_ATTR, UNASSIGNED_ATTR)}
    # Written with the first metadata: a store of daskbicl's without its record is an interrupted write.
    ds.attrs[RECORD_ATTR] = RECORD_NAME
    if kind == "partition":
        ds = _coded(ds)
    ds = _chunked(ds, chunk)
    # Fixed-width unicode has no Zarr v3 spec; variable-length strings do.
    ds = ds.assign_coords(
        {name: ds[name].astype(object) for name in ds.coords if ds[name].dtype.kind in "US"}
    )
    for var in ds.variables.values():
        var.encoding = encoding_of(var)
    text = _destination(path)
    if is_remote(text):
        return write_remote(text, storage_options, lambda target: _write_all(ds, kind, target, storage_options, progress),
                            overwrite)
    return write_local(_local(text), lambda target: _write_all(ds, kind, target, None, progress), overwrite)


def _destination(path) -> str:
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise InputError(f"a store is written to a path or URL (str or os.PathLike), got {type(path).__name__}")
    return os.fspath(path)


def _write_all(ds: xr.Dataset, kind: str, target: str, storage_options, progress: bool) -> None:
    """Every chunk of ``ds`` at ``target``, then the kind attribute, then the completion record
    (:mod:`daskbicl.io.publish`), which makes it a daskbicl store."""
    import fsspec

    # An object-store prefix already holds the write-in-progress sentinel (io/publish.py): Zarr's
    # mode "w-" refuses any object there, mode "a" creates the group and its arrays just the same.
    mode = "a" if is_remote(target) else "w-"
    _run_writes(ds.to_zarr(target, mode=mode, consolidated=False, storage_options=storage_options, compute=False,
                           write_empty_chunks=True), progress)
    _write_kind(target, kind, storage_options)
    fs, root = fsspec.core.url_to_fs(target, **(storage_options or {}))
    write_record(fs, root, target)


def _run_writes(writes, progress: bool) -> None:
    """Compute the chunk writes; on failure, return only once no write is still running.

    dask's local scheduler re-raises the first error while its pool threads
    may still be writing other chunks; running it on a pool of our own that
    is shut down before returning means the caller can remove the folder
    without another thread re-creating part of it.
    """

    if active_client() is not None:
        compute(writes, progress=progress)
        return
    from concurrent.futures import ThreadPoolExecutor

    import dask

    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    try:
        with dask.config.set(scheduler="threads", pool=pool):
            compute(writes, progress=progress)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _write_kind(store, kind: str, storage_options) -> None:
    import zarr

    if kind not in ("partition", "biclustering"):
        raise InputError(f"unknown kind {kind!r}")
    group = zarr.open_group(store, mode="r+", storage_options=storage_options)
    group.attrs.update({CHUNKS_ATTR: "complete", KIND_ATTR: kind})
    # Every array's metadata in the root zarr.json too, with the kind, before the record that publishes the
    # store: an object store's reader opens it with one read (io/groups.py).  Zarr's warning (consolidated
    # metadata are zarr-python's, not the v3 specification's) kept quiet.
    _quiet_zarr()
    zarr.consolidate_metadata(group.store, path=group.path or None, zarr_format=3)
