"""How :func:`daskbicl.save` lays data out on disk: label codes, codecs with checksums, chunk sizes.

**Labels** (docs/guide/data-model.md, "Store format").  A label array is
written as the smallest unsigned integer codes that tell its labels apart
(``uint8`` up to 255 distinct labels, ``uint16`` up to 65,535, ...), and the
label of each code, sorted, as a small variable beside it
(``row_label_values``, dimension ``row_label``).  Unassigned entries (NaN,
None, negative integers) get the code after the last label.  Attributes on
the code array say so::

    row_labels.attrs = {"daskbicl_label_values": "row_label_values",
                        "daskbicl_unassigned_code": 7}   # only when some entry is unassigned

So any labels fit (strings, 64-bit ids, floats), a pass reads one or two
bytes per label instead of eight, and :func:`daskbicl.open` gives the labels
back (:mod:`daskbicl.codes`).  Labels with more than :data:`MAX_VALUES`
distinct values are written as they are.

**Codecs.**  Every array ends with a CRC32C checksum of each stored chunk
(Zarr v3's ``crc32c`` codec), so a flipped bit is a read error that names
the store, variable and chunk, never a silently different score.  Labels and
masks are compressed with Blosc (LZ4, bit-shuffled: the high bits of small
codes and of bool masks cost almost nothing), the fastest of the codecs we
measured to read back (BENCHMARKS.md); other arrays with Zstandard.

**Chunks.**  Label arrays: :data:`LABEL_CHUNK` labels per chunk (4 MiB of
``uint8`` codes).  Masks: as many columns as make at most
:data:`MASK_CHUNK_BYTES` per chunk with every bicluster in it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from dask.local import get_sync

from ..codes import code_dtype, coding_of, decoded
from ..errors import InputError

__all__ = [
    "LABEL_CHUNK", "MASK_CHUNK_BYTES", "MAX_VALUES", "VALUES_ATTR", "UNASSIGNED_CODE_ATTR",
    "coded_labels", "decode_labels", "encoding_of", "mask_chunk", "values_name",
]

#: Attribute of a code array naming the variable that holds the label of each code.
VALUES_ATTR = "daskbicl_label_values"
#: Attribute of a code array: the code of unassigned entries (present only when there are some).
UNASSIGNED_CODE_ATTR = "daskbicl_unassigned_code"
#: Label arrays with more distinct labels than this are stored as they are.
MAX_VALUES = 1 << 24
#: Default chunk length of stored label arrays (codes).
LABEL_CHUNK = 1 << 22
#: Stored mask chunks hold at most this many bytes (every bicluster, a range of rows or columns).
MASK_CHUNK_BYTES = 1 << 24


def values_name(var: str) -> str:
    """``row_labels`` -> ``row_label_values``."""
    return var[: -len("s")] + "_values" if var.endswith("s") else var + "_values"


def mask_chunk(n_biclusters: int, chunk: int) -> int:
    """Columns (rows) per stored mask chunk: at most ``chunk``, at most :data:`MASK_CHUNK_BYTES` per chunk."""
    return int(min(chunk, max(1 << 12, MASK_CHUNK_BYTES // max(n_biclusters, 1))))


def encoding_of(var: xr.Variable) -> dict:
    """Zarr v3 codecs for one variable: compression, then a CRC32C checksum of every chunk."""
    from zarr.codecs import BloscCodec, Crc32cCodec, ZstdCodec

    if var.dtype.kind in "bu" and var.dtype.itemsize <= 2:
        compress = BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle", typesize=var.dtype.itemsize)
    else:
        compress = ZstdCodec(level=3)
    return {"compressors": (compress, Crc32cCodec())}


# --------------------------------------------------------------------------- factorising labels


def _object_values(uniques: np.ndarray, name: str) -> np.ndarray:
    """The distinct labels of Python objects as a storable numpy array (strings, ints, floats, bools)."""
    inferred = pd.api.types.infer_dtype(uniques, skipna=True)
    if inferred in ("string", "empty"):
        return uniques.astype(object)
    if inferred == "integer":
        try:
            return uniques.astype(np.int64)
        except OverflowError:
            raise InputError(
                f"cannot store {name}: it holds Python integer labels that do not fit a numpy integer "
                "array (values beyond int64); a store holds integer, float, bool or string labels. "
                "Convert them (e.g. .astype(str)) or score in memory") from None
    if inferred in ("floating", "mixed-integer-float", "integer-na"):
        return uniques.astype(np.float64)
    if inferred == "boolean":
        return uniques.astype(bool)
    first = next((type(v) for v in uniques if isinstance(v, str)), type(uniques[0]))
    bad = next(v for v in uniques if not isinstance(v, first))
    raise InputError(
        f"cannot store {name}: it holds {type(bad).__name__} labels such as {bad!r} among Python "
        "objects; a store holds integer, float, bool or string labels. Convert them (e.g. "
        ".astype(str), or integer codes with pandas.factorize) or score the Dataset in memory"
    )


def _normalised(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels to factorise, unassigned mask)``: negative integers are unassigned, NaN/None/NA too."""
    values = np.asarray(values).reshape(-1)
    kind = values.dtype.kind
    if kind == "i":
        return values, values < 0
    if kind in "ub":
        return values, np.zeros(values.shape, dtype=bool)
    if kind in "UST":
        values = values.astype(object)
    return values, np.asarray(pd.isna(values))


def _distinct(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """The distinct assigned labels of one chunk (any order), and whether it has unassigned entries."""
    values, missing = _normalised(values)
    kept = values[~missing] if missing.any() else values
    return np.asarray(pd.unique(kept)), bool(missing.any())


def _union(*parts):
    """Union of per-chunk distinct labels; None once there are more than :data:`MAX_VALUES`."""
    if any(p is None for p in parts):
        return None
    merged = np.asarray(pd.unique(np.concatenate([p[0] for p in parts])))
    if merged.size > MAX_VALUES:
        return None
    return merged, any(p[1] for p in parts)


def _sorted_values(distinct: np.ndarray, name: str) -> np.ndarray:
    """Distinct labels sorted, as the array stored beside the codes (InputError for labels a store cannot hold)."""
    if distinct.dtype == object:
        distinct = _object_values(distinct, name)  # one type: strings, ints, floats or bools
    return distinct[np.argsort(distinct, kind="stable")]


def _codes_block(block: np.ndarray, values: np.ndarray, unassigned: int, dtype) -> np.ndarray:
    """One chunk's codes: the rank of each label among ``values``; ``unassigned`` for unassigned entries."""
    flat, missing = _normalised(block)
    local, uniques = pd.factorize(flat, use_na_sentinel=True)
    where = pd.Index(values).get_indexer(np.asarray(uniques, dtype=values.dtype if values.dtype != object else object))
    where = np.append(where, unassigned)  # local code -1 (NA) -> the last entry
    codes = where[local]
    codes[missing | (codes < 0)] = unassigned
    return codes.astype(dtype).reshape(np.shape(block))


def coded_labels(var: xr.DataArray, name: str, compute):
    """``(codes, label values, unassigned code or None)`` for one label array, or None to store it as it is.

    ``compute`` computes dask collections (the caller's scheduler): dask
    labels take one pass to find their distinct values, unless they are
    already a decoding of codes (a store opened with :func:`daskbicl.open`,
    :func:`daskbicl.random_partition`), which are written as they are.
    """
    import dask
    import dask.array as da

    data = var.data
    coding = coding_of(data) if isinstance(data, da.Array) else None
    if coding is not None:
        return coding.codes, coding.values, coding.unassigned
    if isinstance(data, da.Array):
        parts = [dask.delayed(_distinct)(block) for block in data.to_delayed(optimize_graph=False).reshape(-1)]
        while len(parts) > 1:
            parts = [dask.delayed(_union)(*parts[i:i + 8]) for i in range(0, len(parts), 8)]
        found = compute(dask.delayed(_union)(parts[0]))
    else:
        found = _union(_distinct(np.asarray(data)))
    if found is None:
        return None
    distinct, has_missing = found
    values = _sorted_values(distinct, name)
    unassigned = values.size if has_missing else None
    dtype = code_dtype(values.size + (1 if has_missing else 0))
    fill = values.size  # any code never used by a label
    if isinstance(data, da.Array):
        table = dask.delayed(values, pure=True) if values.nbytes > 1 << 20 else values
        codes = data.map_blocks(_codes_block, table, fill, dtype, dtype=dtype)
    else:
        codes = _codes_block(np.asarray(data), values, fill, dtype)
    return codes, values, unassigned


def decode_labels(ds: xr.Dataset) -> xr.Dataset:
    """A Dataset read from a store with its coded label arrays decoded (lazily) and the value tables dropped."""
    for var in ("row_labels", "col_labels"):
        if var not in ds or VALUES_ATTR not in ds[var].attrs:
            continue
        attrs = dict(ds[var].attrs)
        vname = attrs.pop(VALUES_ATTR)
        unassigned = attrs.pop(UNASSIGNED_CODE_ATTR, None)
        # A small table, read here in this process: with a Client active, .values would send it
        # through the cluster (and wait on a scheduler that has no workers).
        data = ds[vname].data
        # The synchronous scheduler's function, not the name "sync": dask looks up a Client (importing
        # distributed, 0.5 s of a shell score) whenever a scheduler is given by name.
        values = np.asarray(data.compute(scheduler=get_sync) if hasattr(data, "dask") else data)
        if values.dtype.kind in "UST":
            values = values.astype(object)
        labels = decoded(ds[var].data, values, None if unassigned is None else int(unassigned))
        encoding = ds[var].encoding
        ds = ds.drop_vars(vname).assign({var: (ds[var].dims, labels, attrs)})
        ds[var].encoding = dict(encoding)  # the store's chunks, when read in larger tasks (written again alike)
    return ds
