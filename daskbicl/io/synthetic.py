"""Synthetic co-clusterings for demos, tests and benchmarks.

Generated chunk by chunk with dask's random generator, so a 10^9-label
co-clustering is written to Zarr without ever being held in memory, and the
same seed (and chunking) always gives the same labels.

The labels are made as codes (:mod:`daskbicl.codes`): ``uint8`` for up to
255 clusters, decoded lazily for whoever looks at them, written to a store
as they are and counted as they are.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import xarray as xr

from ..codes import code_dtype, coding_of, decoded
from ..errors import InputError
from .store import DEFAULT_CHUNK, STORED_CHUNKS

__all__ = ["random_partition", "perturb"]


def _check(n: int, what: str, minimum: int = 1) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise InputError(f"{what} must be an integer >= {minimum}, got {n!r}")
    return int(n)


def random_partition(
    n_rows: int,
    n_cols: int,
    row_clusters: int,
    col_clusters: int,
    *,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
) -> xr.Dataset:
    """A co-clustering with uniformly random labels ``0..clusters-1`` (dask-backed).

    Examples
    --------
    >>> ds = random_partition(1000, 50, 4, 3, seed=1)
    >>> ds.sizes["row"], ds.sizes["col"], int(ds.row_labels.max()) < 4
    (1000, 50, True)
    """
    n_rows = _check(n_rows, "n_rows")
    n_cols = _check(n_cols, "n_cols")
    row_clusters = _check(row_clusters, "row_clusters")
    col_clusters = _check(col_clusters, "col_clusters")
    rng = da.random.default_rng(seed)
    z = rng.integers(0, row_clusters, size=n_rows, chunks=min(chunk, n_rows), dtype=np.int64)
    w = rng.integers(0, col_clusters, size=n_cols, chunks=min(chunk, n_cols), dtype=np.int64)
    return xr.Dataset(
        {"row_labels": ("row", _labels(z, row_clusters)), "col_labels": ("col", _labels(w, col_clusters))},
        attrs={"daskbicl_kind": "partition"},
    )


def _labels(drawn, k: int, values=None):
    """Labels ``0 .. k-1`` drawn as int64 (the same stream as always), kept as codes."""
    values = np.arange(k, dtype=np.int64) if values is None else values
    return decoded(drawn.astype(code_dtype(k)), values)


def perturb(ds: xr.Dataset, rate: float, *, seed: int = 1, relabel: bool = True) -> xr.Dataset:
    """Copy of ``ds`` where each label is redrawn uniformly with probability ``rate``.

    With ``relabel=True`` the cluster ids are also permuted and spread out
    (label ``k`` becomes ``perm[k] * 1_000_003 + 7``) so the copy exercises
    label compaction; this changes no measure.  The draws follow the
    chunks of ``ds`` as stored (not the read tasks of an opened store, which
    depend on the cluster), so a seed gives the same copy on any cluster.
    Labels kept as codes
    (:func:`random_partition`, a store written by :func:`daskbicl.save`)
    stay codes, so the spread labels are stored and counted compactly.
    """
    if not 0.0 <= float(rate) <= 1.0:
        raise InputError(f"perturbation rate must be in [0, 1], got {rate!r}")
    rng = da.random.default_rng(seed)
    out = {}
    for offset, var in enumerate(("row_labels", "col_labels")):
        labels = ds[var].data
        if not isinstance(labels, da.Array):
            labels = da.from_array(np.asarray(labels), chunks=DEFAULT_CHUNK)
        coding = coding_of(labels)
        if coding is not None and coding.identity:  # labels 0..k-1 kept as codes: perturb the codes
            labels, k = coding.codes, coding.values.size
        else:
            coding, k = None, int(labels.max().compute()) + 1
        stored = ds[var].encoding.get(STORED_CHUNKS)
        if stored:  # drawn per stored chunk, not per read task: the same labels whatever the cluster's size
            labels = labels.rechunk(stored[ds[var].dims[0]])
        flip = rng.random(size=labels.shape, chunks=labels.chunks) < rate
        redrawn = rng.integers(0, k, size=labels.shape, chunks=labels.chunks, dtype=np.int64)
        new = da.where(flip, redrawn.astype(labels.dtype), labels)
        perm = np.random.default_rng(seed + offset).permutation(k).astype(np.int64) if relabel else None
        if coding is not None:
            # label perm[b]·1,000,003 + 7 is code perm[b] of the sorted values k·1,000,003 + 7
            codes = new if perm is None else new.map_blocks(lambda b, p=perm.astype(new.dtype): p[b], dtype=new.dtype)
            values = np.arange(k, dtype=np.int64)
            new = _labels(codes, k, values if perm is None else values * 1_000_003 + 7)
        elif perm is not None:
            new = new.map_blocks(lambda b, p=perm: p[b] * 1_000_003 + 7, dtype=np.int64)
        out[var] = (ds[var].dims, new)
    return xr.Dataset(out, coords=ds.coords, attrs={"daskbicl_kind": "partition"})
