"""A co-clustering as a biclustering: one bicluster per non-empty block (docs/guide/data-model.md).

Used when a co-clustering is scored against a biclustering: the distinct
row and column labels are found in a small chunked pass (any label type;
unassigned entries under the input's policy, :mod:`daskbicl.engine.labels`)
and the block masks stay lazy.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np
import pandas as pd
import xarray as xr

from ..kernels.bicluster.mask_counting import block_ids
from ..kernels.coclustering.contingency import DEFAULT_POLICY, UNASSIGNED_ATTR, PairCounts
from ..scheduling import compute
from .core import DEFAULT_CHUNK, shared_pass
from .labels import _labels_of as labels_of
from .labels import encode_chunk, merge_labelled, to_table

__all__ = ["as_biclustering", "block_mask", "cover_mask"]


def _block_labels(name: str, values: np.ndarray) -> PairCounts:
    """Distinct labels of one chunk with their counts, as pair counts against one constant label.

    Pair counts are what :func:`~daskbicl.engine.labels.merge_labelled` and
    :func:`~daskbicl.engine.labels.to_table` merge and check exactly, for
    any label type; the constant second side makes them label counts.
    """
    codes, uniques = encode_chunk(values, name)
    present, counts = np.unique(codes, return_counts=True)
    labels = present if uniques is None else labels_of(present, uniques)
    return PairCounts(labels, np.zeros(len(present), np.int64), counts.astype(np.int64))


def _distinct(values, name: str, policy: str) -> tuple[np.ndarray, int]:
    """``(assigned labels, number of unassigned entries)``; raises under the "error" policy."""
    blocks = values.to_delayed().reshape(-1) if isinstance(values, da.Array) else [np.asarray(values)]
    parts = [dask.delayed(_block_labels, pure=False)(name, b) for b in blocks]
    merged = compute(dask.delayed(merge_labelled, pure=False)(*parts))[0]
    table = to_table(merged, "cluster" if policy != "error" else "error", (name, name))
    labels = np.asarray(table.truth_labels)
    unassigned = labels < 0 if labels.dtype != object else pd.isna(labels)
    n_unassigned = int(table.truth_sizes()[unassigned].sum())
    return labels[~unassigned], n_unassigned


def _codes(values, labels: np.ndarray, policy: str):
    """Lazy integer block codes: the position of each label; unassigned entries after them."""
    index = pd.Index(labels)

    def block(chunk, block_info=None):
        codes, uniques = encode_chunk(chunk, "labels")
        found = index.get_indexer(codes if uniques is None else labels_of(codes, uniques))
        un = codes < 0
        if un.any():
            if policy == "cluster":
                found[un] = len(labels)
            else:  # singleton: a fresh code per entry (its global position keeps codes distinct)
                start = block_info[0]["array-location"][0][0] if block_info else 0
                found[un] = len(labels) + start + np.flatnonzero(un)
        return found.astype(np.int64)

    arr = values if isinstance(values, da.Array) else da.from_array(np.asarray(values), chunks=DEFAULT_CHUNK)
    return da.map_blocks(block, arr, dtype=np.int64)


def _axis(values, name: str, policy: str):
    labels, n_unassigned = _distinct(values, name, policy)
    codes = _codes(values, labels, policy)
    present = np.arange(len(labels))
    shown = list(labels)
    if n_unassigned and policy == "cluster":
        present = np.append(present, len(labels))
        shown.append("unassigned")
    elif n_unassigned:  # singleton: which codes occur is known only from the data
        extra = np.unique(compute(codes[codes >= len(labels)])[0])
        present = np.concatenate([present, extra])
        shown += [f"unassigned{int(c) - len(labels)}" for c in extra]
    return codes, present, np.asarray(shown, dtype=object)


def as_biclustering(ds: xr.Dataset, role: str = "input") -> xr.Dataset:
    """Return ``ds`` as a biclustering Dataset (masks stay lazy).

    A biclustering is returned unchanged.  For a co-clustering the distinct
    row and column labels are found first (a small pass over the labels);
    block (h, l) becomes the bicluster with ``row_mask = (z == h)`` and
    ``col_mask = (w == l)``; ids are ``"h/l"``.  Unassigned labels follow
    ``attrs["daskbicl_unassigned"]``: an error, one extra row (column)
    cluster ``"unassigned"``, or a cluster per unassigned row (column).
    """
    if ds.attrs.get("daskbicl_kind") == "biclustering":
        return ds
    policy = ds.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY)
    # inside shared_passes: the same label arrays give the same masks, so the providers' passes over them are shared
    return shared_pass(f"blocks-{role}-{policy}", (ds.row_labels.data, ds.col_labels.data),
                       lambda: _blocks(ds, role, policy))


def _blocks(ds: xr.Dataset, role: str, policy: str) -> xr.Dataset:
    z, hs, h_ids = _axis(ds.row_labels.data, f"{role} row_labels", policy)
    w, ls, l_ids = _axis(ds.col_labels.data, f"{role} col_labels", policy)
    row_mask = z[None, :] == np.repeat(hs, len(ls))[:, None]
    col_mask = w[None, :] == np.tile(ls, len(hs))[:, None]
    out = xr.Dataset(
        {"row_mask": (("bicluster", "row"), row_mask), "col_mask": (("bicluster", "col"), col_mask)},
        coords={"bicluster": block_ids(h_ids, l_ids), **{k: v for k, v in ds.coords.items()}},
        attrs={"daskbicl_kind": "biclustering"},
    )
    return out


def block_mask(ds: xr.Dataset, axis: str, role: str):
    """The (biclusters, items) mask of ``ds`` read as a biclustering along ``axis`` ("rows" or "cols")."""
    return as_biclustering(ds, role)["row_mask" if axis == "rows" else "col_mask"].data


def cover_mask(ds: xr.Dataset, axis: str, role: str):
    """The (clusters, items) mask of the cover of ``axis``: each bicluster's set, or each label of ``axis`` once."""
    mask, other = ("row_mask", "col_labels") if axis == "rows" else ("col_mask", "row_labels")
    if ds.attrs["daskbicl_kind"] == "biclustering":
        return ds[mask].data
    # a constant label on the other axis: one bicluster per label of this axis
    flat = ds.assign({other: xr.zeros_like(ds[other])})
    return as_biclustering(flat, role)[mask].data
