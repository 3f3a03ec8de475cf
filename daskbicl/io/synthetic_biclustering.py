"""Synthetic overlapping biclusterings, generated chunk by chunk (``daskbicl generate --kind biclustering``).

* ``layout="random"``: each bicluster takes each row with probability
  ``density`` and each column with probability ``density``, independently —
  arbitrary overlapping subsets, the shape real biclustering algorithms
  return (almost every row has its own membership signature);
* ``layout="blocks"``: bicluster k takes a contiguous interval of
  ``density·I`` rows and ``density·J`` columns, the intervals spread evenly,
  each extended by ``overlap`` of its length into the next one.

:func:`perturb_biclustering` makes a noisy copy: every membership is kept
with probability ``1 − noise`` and every non-membership becomes one with
probability ``noise · density`` (so bicluster sizes stay about the same).

Masks are dask arrays generated per chunk from a seed derived from
``(seed, block)``, so any size fits in memory and the same arguments always
give the same data.  A chunk spans every bicluster and at most ``chunk``
rows (columns), fewer when that would exceed 16 MiB
(:func:`daskbicl.io.coding.mask_chunk`).
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import xarray as xr

from ..errors import InputError
from .coding import mask_chunk
from .store import DEFAULT_CHUNK

__all__ = ["perturb_biclustering", "random_biclustering"]

LAYOUTS = ("random", "blocks")


def _check(rows: int, cols: int, biclusters: int, density: float, overlap: float, layout: str) -> None:
    for name, value in (("rows", rows), ("cols", cols), ("biclusters", biclusters)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}")
    if not 0.0 < density <= 1.0:
        raise InputError(f"density is the share of rows and of columns in a bicluster: it must be in (0, 1], got {density:g}")
    if not 0.0 <= overlap <= 1.0:
        raise InputError(f"overlap must be in [0, 1], got {overlap:g}")
    if layout not in LAYOUTS:
        raise InputError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


def _random_block(block_info=None, *, seed: int, salt: int, density: float, k: int):
    loc = block_info[None]["array-location"][1]
    start, stop = loc
    rng = np.random.default_rng([seed, salt, start])
    return rng.random((k, stop - start)) < density


def _interval_block(block_info=None, *, n: int, k: int, density: float, overlap: float):
    start, stop = block_info[None]["array-location"][1]
    idx = np.arange(start, stop)
    length = max(1, int(round(density * n)))
    extra = int(round(overlap * length))
    step = (n - length) / max(k - 1, 1) if k > 1 else 0.0
    lo = np.floor(np.arange(k) * step).astype(np.int64)[:, None]
    hi = np.minimum(lo + length + extra, n)
    return (idx[None, :] >= lo) & (idx[None, :] < hi)


def _mask(n: int, k: int, chunk: int, *, layout: str, seed: int, salt: int, density: float, overlap: float):
    chunks = ((k,), da.core.normalize_chunks((mask_chunk(k, chunk),), (n,))[0])
    if layout == "random":
        fn, kw = _random_block, dict(seed=seed, salt=salt, density=density, k=k)
    else:
        fn, kw = _interval_block, dict(n=n, k=k, density=density, overlap=overlap)
    return da.map_blocks(fn, chunks=chunks, dtype=bool, meta=np.empty((0, 0), dtype=bool), **kw)


def random_biclustering(rows: int, cols: int, biclusters: int = 5, *, density: float = 0.1,
                        layout: str = "random", overlap: float = 0.0, seed: int = 0,
                        chunk: int = DEFAULT_CHUNK) -> xr.Dataset:
    """A lazy synthetic biclustering (see the module docstring for the layouts).

    Examples
    --------
    >>> ds = random_biclustering(1000, 200, 4, density=0.2, seed=1)
    >>> dict(ds.sizes), ds.row_mask.dtype.name
    ({'bicluster': 4, 'row': 1000, 'col': 200}, 'bool')
    >>> 0.15 < float(ds.row_mask.mean()) < 0.25
    True
    """
    _check(rows, cols, biclusters, density, overlap, layout)
    opts = dict(layout=layout, seed=int(seed), density=float(density), overlap=float(overlap))
    return xr.Dataset(
        {
            "row_mask": (("bicluster", "row"), _mask(rows, biclusters, chunk, salt=1, **opts)),
            "col_mask": (("bicluster", "col"), _mask(cols, biclusters, chunk, salt=2, **opts)),
        },
        attrs={"daskbicl_kind": "biclustering"},
    )


def _perturb_block(mask, block_info=None, *, seed: int, salt: int, keep: float, add: float):
    start = block_info[0]["array-location"][1][0]
    rng = np.random.default_rng([seed, salt, start])
    u = rng.random(mask.shape)
    return np.where(mask, u < keep, u < add)


def perturb_biclustering(truth: xr.Dataset, noise: float, *, density: float = 0.1, seed: int = 1) -> xr.Dataset:
    """A noisy copy of ``truth``: memberships kept with probability ``1 − noise``, added with ``noise·density``.

    Examples
    --------
    >>> t = random_biclustering(2000, 300, 3, density=0.2, seed=0)
    >>> p = perturb_biclustering(t, 0.1, density=0.2, seed=5)
    >>> agree = float((t.row_mask == p.row_mask).mean())
    >>> 0.95 < agree < 1.0
    True
    """
    if not 0.0 <= noise <= 1.0:
        raise InputError(f"noise must be in [0, 1], got {noise:g}")
    out = {}
    for salt, var in enumerate(("row_mask", "col_mask"), start=11):
        data = truth[var].data
        if not isinstance(data, da.Array):
            data = da.from_array(np.asarray(data), chunks=(-1, DEFAULT_CHUNK))
        out[var] = (truth[var].dims, data.map_blocks(
            _perturb_block, dtype=bool, seed=int(seed), salt=salt, keep=1.0 - noise, add=noise * density))
    return xr.Dataset(out, coords=truth.coords, attrs={"daskbicl_kind": "biclustering"})
