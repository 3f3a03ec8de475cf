"""Whole chunks of a local store's one-byte arrays read straight from their files.

A store written by :func:`daskbicl.save` keeps label codes (``uint8``) and
bicluster masks (``bool``) as Zarr v3 arrays compressed by Blosc, each chunk
followed by its CRC32C checksum (:mod:`daskbicl.io.coding`).  Zarr reads a
chunk through its asynchronous codec pipeline: an event loop, a thread hop
per codec and buffer copies, about as long again as the decompression
itself for a chunk of 2**22 codes.  :class:`ChunkFiles` reads the same
file, checks the same checksum (``google_crc32c``, the library Zarr uses)
and decompresses with the same library (``numcodecs.Blosc``) into a fresh
array: the same bytes, so the same values, in fewer steps.

It is used only where it knows the layout exactly: a local Zarr v3 array
of a one-byte type whose codecs are ``bytes``, ``blosc``, ``crc32c`` and
whose chunk files are named by the default key encoding, and a request for
one whole chunk (a read task covering several asks for each in turn,
:class:`daskbicl.io.store._ChunkReader`).  Anything else, and any failure (a missing file, which
Zarr reads as the fill value; a bad checksum; a damaged chunk), returns
None, and the caller reads through Zarr, which gives its own result or
error: the fast way never changes what a read returns or how it fails.
"""

from __future__ import annotations

import os
import threading

import numpy as np

__all__ = ["ChunkFiles"]


class ChunkFiles:
    """Reads whole chunks of one local Zarr array from their files; :meth:`of` says whether it can."""

    def __init__(self, folder: str, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: np.dtype,
                 separator: str):
        self.folder, self.shape, self.chunks, self.dtype = folder, shape, chunks, dtype
        self.separator = separator
        from numcodecs import Blosc

        self._blosc = Blosc()

    @classmethod
    def of(cls, array, folder: str) -> ChunkFiles | None:
        """A reader for ``array`` (a ``zarr.Array`` opened from the local ``folder``), or None."""
        try:
            from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec
            from zarr.core.chunk_key_encodings import DefaultChunkKeyEncoding

            meta = array.metadata
            if getattr(meta, "zarr_format", None) != 3 or np.dtype(array.dtype).itemsize != 1:
                return None
            if [type(codec) for codec in meta.codecs] != [BytesCodec, BloscCodec, Crc32cCodec]:
                return None
            encoding = meta.chunk_key_encoding
            if type(encoding) is not DefaultChunkKeyEncoding or encoding.separator not in ("/", "."):
                return None
            chunks = tuple(int(c) for c in array.chunks)
            return cls(folder, tuple(int(n) for n in array.shape), chunks, np.dtype(array.dtype),
                       encoding.separator)
        except Exception:  # a zarr without these classes, metadata of another shape: read through zarr
            return None

    def _chunk(self, key) -> tuple[tuple[int, ...], tuple[slice, ...]] | None:
        """The chunk index a request of slices covers exactly, and the part of the stored chunk it is."""
        if not isinstance(key, tuple) or len(key) != len(self.shape):
            return None
        index, parts = [], []
        for sl, n, c in zip(key, self.shape, self.chunks):
            if not isinstance(sl, slice) or sl.step not in (None, 1):
                return None
            start, stop = (0 if sl.start is None else sl.start), (n if sl.stop is None else sl.stop)
            if start % c or start >= n or stop != min(start + c, n):
                return None
            index.append(start // c)
            parts.append(slice(0, stop - start))
        return tuple(index), tuple(parts)

    def read(self, key, out: np.ndarray | None = None) -> np.ndarray | None:
        """The values of ``key`` (one whole chunk), or None: then read it through Zarr.

        ``out``, when given, is where the caller puts them (a part of a
        larger block): a C-contiguous ``out`` of the chunk's shape is
        decompressed into directly, without a copy.
        """
        found = self._chunk(key)
        if found is None:
            return None
        index, parts = found
        whole = all(p.stop == c for p, c in zip(parts, self.chunks))
        if out is None or not whole or out.shape != self.chunks or not out.flags.c_contiguous:
            out = np.empty(self.chunks, dtype=self.dtype)
        name = self.separator.join(["c", *map(str, index)])
        try:
            data = _read_file(os.path.join(self.folder, *name.split("/")))
            if data is None or data.size < 4:
                return None
            import google_crc32c

            if np.uint32(google_crc32c.value(data[:-4])).tobytes() != bytes(data[-4:]):
                return None  # zarr raises its own error naming the mismatch
            self._blosc.decode(data[:-4], out=out)
        except Exception:  # missing, unreadable, damaged: zarr says what (or reads the fill value)
            return None
        return out if whole else out[parts]


_BUFFERS = threading.local()


def _read_file(path: str) -> np.ndarray | None:
    """The bytes of a chunk file in this thread's reused buffer (valid until the thread's next read).

    A fresh buffer per chunk would be a fresh memory mapping on a Dask
    worker (its nanny sets ``MALLOC_TRIM_THRESHOLD_``, so freed blocks go
    back to the system): every page of it faulted in again, which measured
    more than the decompression.  None when the file changed size while read.
    """
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        buffer = getattr(_BUFFERS, "buffer", None)
        if buffer is None or buffer.size < size + 1:
            buffer = _BUFFERS.buffer = np.empty(max(size + 1, 1 << 16), np.uint8)
        got = fh.readinto(memoryview(buffer)[: size + 1])
    return buffer[:got] if got == size else None
