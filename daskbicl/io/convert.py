"""A co-clustering as a biclustering: one bicluster per non-empty block (docs/guide/data-model.md)."""

from __future__ import annotations

import dask.array as da
import numpy as np
import xarray as xr

from ..kernels.masks import block_ids
from .store import DEFAULT_CHUNK

__all__ = ["as_biclustering"]


def _labels(values) -> np.ndarray:
    if isinstance(values, da.Array):
        return np.unique(da.unique(values).compute())
    return np.unique(np.asarray(values))


def as_biclustering(ds: xr.Dataset) -> xr.Dataset:
    """Return ``ds`` as a biclustering Dataset (masks stay lazy).

    A biclustering is returned unchanged.  For a co-clustering the distinct
    row and column labels are found first (a small pass over the labels);
    block (h, l) becomes the bicluster with ``row_mask = (z == h)`` and
    ``col_mask = (w == l)``; ids are ``"h/l"``.
    """
    if ds.attrs.get("daskbicl_kind") == "biclustering":
        return ds
    z, w = ds.row_labels.data, ds.col_labels.data
    hs, ls = _labels(z), _labels(w)
    z = z if isinstance(z, da.Array) else da.from_array(np.asarray(z), chunks=DEFAULT_CHUNK)
    w = w if isinstance(w, da.Array) else da.from_array(np.asarray(w), chunks=DEFAULT_CHUNK)
    row_mask = z[None, :] == np.repeat(hs, len(ls))[:, None]
    col_mask = w[None, :] == np.tile(ls, len(hs))[:, None]
    out = xr.Dataset(
        {"row_mask": (("bicluster", "row"), row_mask), "col_mask": (("bicluster", "col"), col_mask)},
        coords={"bicluster": block_ids(hs, ls), **{k: v for k, v in ds.coords.items()}},
        attrs={"daskbicl_kind": "biclustering"},
    )
    return out
