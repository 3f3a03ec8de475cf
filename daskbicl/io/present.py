"""Chunks read as the store holds them: an absent chunk object is an error, not the fill value.

Zarr reads a chunk whose object (file, S3 object) is absent as the array's
fill value: the way Zarr stores a chunk of nothing but fill values, and the
way a store deleted or damaged after it was opened would score from zeros.
A store's chunk readers (:class:`daskbicl.io.store._ChunkReader`) keep the
array the opening found (an object store asks no request to open it again),
so its metadata are never read again to notice that the store is gone.

:func:`present_chunks` gives the readers the same array over a store
wrapper (``PresentChunks``) that looks at each chunk read:

* a store daskbicl wrote with every chunk (``daskbicl_chunks: complete``,
  checked by one listing when it was opened): an absent chunk object is
  damage (the store deleted, or a chunk removed, while it is read), raised
  as :class:`FileNotFoundError` naming the chunk's key; the reader makes it
  a :class:`~daskbicl.errors.StoreReadError` naming the store, the variable
  and the chunk;
* any other store (a plain ``Dataset.to_zarr``, which by default writes no
  chunk of fill values): an absent chunk is the fill value as long as the
  array's metadata object is still there (one request, only for an absent
  chunk); when that is gone too, the store was deleted: the same error.

A chunk that is there costs what it cost: the one ``GET`` of its object.
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Iterable

__all__ = ["present_chunks"]


@functools.cache
def _wrapper():
    """The store class (Zarr imported on first use, not with daskbicl)."""
    from zarr.storage import WrapperStore

    class PresentChunks(WrapperStore):
        """A Zarr store that raises :class:`FileNotFoundError` for a chunk it does not hold (see the module).

        ``complete``: every chunk was present when the store was opened, so an absent one is damage;
        otherwise an absent chunk is the fill value while ``metadata`` (the array's metadata key) exists.
        """

        def __init__(self, store, *, complete: bool, metadata: str) -> None:
            super().__init__(store)
            self.complete, self.metadata = complete, metadata

        def _with_store(self, store):
            return type(self)(store, complete=self.complete, metadata=self.metadata)

        async def _absent(self, key: str) -> None:
            """None when ``key`` may be absent (the fill value); else the error of a chunk that is gone."""
            if not self.complete and await self._store.exists(self.metadata):
                return
            why = ("absent, though every chunk was there when the store was opened" if self.complete
                   else "absent, and so is the array's metadata: the store was deleted or moved")
            raise FileNotFoundError(errno.ENOENT, f"chunk object {why}", key)

        async def get(self, key: str, prototype, byte_range=None):
            got = await self._store.get(key, prototype, byte_range)
            if got is None:
                await self._absent(key)
            return got

        async def get_partial_values(self, prototype, key_ranges: Iterable[tuple[str, object]]):
            key_ranges = list(key_ranges)
            got = await self._store.get_partial_values(prototype, key_ranges)
            for (key, _range), value in zip(key_ranges, got):
                if value is None:
                    await self._absent(key)
            return got

    return PresentChunks


def present_chunks(array, *, complete: bool):
    """``array`` (a ``zarr.Array``, metadata in memory) reading its chunks through ``PresentChunks``;
    no read is made here."""
    import zarr
    from zarr.core.array import AsyncArray
    from zarr.storage import StorePath

    inner = array._async_array
    path = inner.store_path.path
    name = "zarr.json" if inner.metadata.zarr_format == 3 else ".zarray"
    metadata = f"{path}/{name}" if path else name
    store = _wrapper()(inner.store_path.store, complete=complete, metadata=metadata)
    return zarr.Array(AsyncArray(metadata=inner.metadata, store_path=StorePath(store, path), config=inner.config))
