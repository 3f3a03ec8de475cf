"""Opening a Zarr group with as few reads as its format allows (what one open of a store costs).

On an object store every read is a request (a round trip); opening a store
used to read each array's metadata three times (Zarr's group, xarray's own
open, each chunk reader's open) and probe for Zarr v2 objects.  Here a store
is opened once:

* :func:`open_group`: Zarr v3 first: one read of the root ``zarr.json``,
  which for a store :func:`daskbicl.save` wrote also holds every array's
  metadata (consolidated, written with the kind, before the completion
  record that publishes the store); without a ``zarr.json``, Zarr v2;
* :func:`with_members`: the members' metadata of a group without
  consolidated metadata read once (a listing, one read per member) and held
  in memory, so nothing reads them again;
* :func:`dataset_of`: the xarray Dataset of that group, with no read;
* :func:`missing_chunks`: the chunks of every array checked against one
  listing of the store (a request per thousand objects), not one per array;
* :func:`damaged_metadata`: which metadata file of a local store is not JSON.

An object store's consolidated metadata is used; a local store's is not:
its arrays' own metadata, cheap to read, are what a reader sees (a variable
whose ``zarr.json`` is lost is named as such by :func:`daskbicl.open`).
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Iterator

import xarray as xr

from ..errors import storage_unavailable

__all__ = ["open_group", "with_members", "dataset_of", "missing_chunks", "damaged_metadata"]


def open_group(text: str, storage_options, *, remote: bool):
    """The Zarr group at ``text`` (``remote``: an fsspec URL), read only.

    Zarr's error when no format's metadata is there or when they are damaged; an error of the system
    (with an errno) or of a storage that does not answer as it was raised, without a second try.
    """
    import zarr

    from .storage import zarr_store

    consolidated = None if remote else False
    store, storage_options = zarr_store(text, storage_options)
    zarr_format = None  # v3 metadata that zarr refuses: its error, as any format reports it
    try:
        return zarr.open_group(store, mode="r", storage_options=storage_options, zarr_format=3,
                               use_consolidated=consolidated)
    except Exception as exc:
        system = isinstance(exc, OSError) and exc.errno is not None
        if isinstance(exc, FileNotFoundError) and not system:  # zarr's "no zarr.json": a v2 group, or none
            zarr_format = 2
        elif system or storage_unavailable(exc):
            raise
    return zarr.open_group(store, mode="r", storage_options=storage_options, zarr_format=zarr_format,
                           use_consolidated=consolidated)


def with_members(group):
    """``group`` with the metadata of its members held in memory: read once here (a listing and one read
    per member) unless its metadata are consolidated, and never again (by xarray, by the completeness
    check, by the chunk readers)."""
    import dataclasses

    import zarr
    from zarr.core.group import ConsolidatedMetadata

    if group.metadata.consolidated_metadata is not None:
        return group
    members = {name: node.metadata for name, node in group.members()}
    metadata = dataclasses.replace(group.metadata, consolidated_metadata=ConsolidatedMetadata(metadata=members))
    return zarr.Group(zarr.AsyncGroup(metadata=metadata, store_path=group.store_path))


def dataset_of(text: str, group, digest: str | None = None) -> xr.Dataset:
    """The lazy xarray Dataset of the opened ``group`` at ``text`` (no further read of metadata).

    ``mask_and_scale=False``: labels are never CF-masked (a ``_FillValue`` of 0
    would otherwise turn label 0 into NaN and the labels into floats).

    xarray names the arrays' tasks by a token of its arguments, the store
    object among them; Dask tokenizes an xarray ``ZarrStore`` by pickling
    it, members cache included, filled in the order Zarr's concurrent reads
    answered: the same store opened twice (by the client and by a worker,
    or twice in one process) could get other names, and a batch read a
    truth shared by several pairs more than once.  The store is tokenized
    by its location, its root metadata (every array's, sorted) and ``digest``
    (the content digest of a store daskbicl wrote, from its completion record) instead.
    """
    store = _store_class()(group, mode="r", use_zarr_fill_value_as_mask=group.metadata.zarr_format == 2)
    store.daskbicl_token = (text, digest, json.dumps(group.metadata.to_dict(), sort_keys=True, default=str))
    return xr.open_dataset(text, engine="zarr", store=store, chunks={}, mask_and_scale=False)


@functools.cache
def _store_class():
    """xarray's ``ZarrStore`` tokenized by what it reads (:func:`dataset_of`), not by its state."""
    from xarray.backends.zarr import ZarrStore

    class TokenizedZarrStore(ZarrStore):
        __slots__ = ("daskbicl_token",)

        def __dask_tokenize__(self):
            return ("daskbicl-zarr-store", *self.daskbicl_token)

    return TokenizedZarrStore


def missing_chunks(group) -> Iterator[tuple[str, int, int]]:
    """``(array name, chunks missing, chunks)`` of each array of ``group`` missing some of its chunks,
    from one listing of the store (Zarr's ``nchunks_initialized`` lists each array on its own)."""
    from zarr.core.sync import sync

    arrays = dict(group.arrays())
    if not arrays:
        return
    store, prefix = group.store_path.store, group.store_path.path

    async def listed() -> set[str]:
        return {key async for key in store.list_prefix(prefix)}

    keys = {key[len(prefix):].lstrip("/") for key in sync(listed())}
    for name, array in arrays.items():
        grid = (range(-(-size // chunk)) for size, chunk in zip(array.shape, array.chunks))
        present = sum(f"{name}/{array.metadata.encode_chunk_key(coords)}" in keys
                      for coords in itertools.product(*grid))
        if array.nchunks - present:
            yield name, array.nchunks - present, array.nchunks


def damaged_metadata(folder: str) -> str | None:
    """The first metadata file under the local ``folder`` that is not valid JSON, if any."""
    import json
    import os

    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
                full = os.path.join(root, name)
                try:
                    with open(full, encoding="utf-8") as fh:
                        json.load(fh)
                except (OSError, ValueError):
                    return os.path.relpath(full, folder)
    return None
