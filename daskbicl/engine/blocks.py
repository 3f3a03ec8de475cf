"""A co-clustering as a biclustering: one bicluster per non-empty block (docs/guide/data-model.md).

:func:`as_biclustering` reads a co-clustering as block masks: the distinct
row and column labels are found in a small chunked pass (any label type;
unassigned entries under the input's policy, :mod:`daskbicl.engine.labels`)
and the block masks stay lazy.  Scored against a biclustering, a
co-clustering is never read that way: its blocks are counted by label in
the scoring graph (:data:`SUM_BY_LABEL` here for the shared-item tables;
:mod:`daskbicl.engine.label_memberships` for the membership lists), under
every unassigned policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask
import dask.array as da
import numpy as np
import pandas as pd
import xarray as xr

from ..kernels.bicluster.mask_counting import MaskCounts, block_ids, intersect_counts
from ..kernels.coclustering.contingency import DEFAULT_POLICY, UNASSIGNED_ATTR, PairCounts
from ..scheduling import compute
from .core import DEFAULT_CHUNK, ChunkPass, shared_pass
from .labels import Counts, encode_chunk, merge_labelled, to_table
from .labels import _labels_of as labels_of

__all__ = ["SUM_BY_LABEL", "LabelSums", "as_biclustering", "block_mask", "blocks_against_masks", "cover_mask",
           "label_sums", "merge_label_sums"]


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
    blocks = values.to_delayed(optimize_graph=False).reshape(-1) if isinstance(values, da.Array) else [np.asarray(values)]
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


# --------------------------------------------------------------------------- the blocks counted in the one graph


@dataclass(frozen=True)
class LabelSums:
    """One axis of a co-clustering against the other side's (L, n) masks, per distinct label.

    ``labels``: the labels with their counts (pair counts against a
    constant, merged and checked as :func:`_distinct` does); ``keys[i]`` a
    label and ``sums[i]`` the items of that label in each of the L masks;
    ``unassigned``: the same for the unassigned entries; ``mask_sizes``: the
    items of each mask; ``length``: the items.  Under the "singleton"
    policy, ``singles`` the positions of the unassigned entries along the
    axis and ``single_sums[i]`` the masks holding entry i (else empty).
    """

    labels: Counts
    keys: np.ndarray
    sums: np.ndarray
    unassigned: np.ndarray
    mask_sizes: np.ndarray
    length: int
    singles: np.ndarray
    single_sums: np.ndarray


def label_sums(name: str, policy: str, values: np.ndarray, masks: np.ndarray) -> LabelSums:
    """The chunk kernel of :data:`SUM_BY_LABEL`: one chunk of labels and the other side's masks."""
    values = np.asarray(values).reshape(-1)
    masks = np.asarray(masks, dtype=bool)
    codes, uniques = encode_chunk(values, name)
    assigned = codes >= 0
    present, inverse = np.unique(codes[assigned], return_inverse=True)
    # one row per label present (not per block): the mask pass's own exact product
    sums = intersect_counts(inverse[None, :] == np.arange(len(present))[:, None], masks[:, assigned]).shared
    keys = np.asarray(present if uniques is None else labels_of(present, uniques), dtype=object)
    singles = np.flatnonzero(~assigned) if policy == "singleton" else np.zeros(0, np.int64)
    return LabelSums(_block_labels(name, values), keys, sums, masks[:, ~assigned].sum(axis=1, dtype=np.int64),
                     masks.sum(axis=1, dtype=np.int64), int(values.size), singles.astype(np.int64),
                     masks[:, singles].T.astype(np.int64))


def merge_label_sums(*parts: LabelSums) -> LabelSums:
    """The combine of :data:`SUM_BY_LABEL`: the parts' labels merged, their sums added label by label.

    The parts are consecutive pieces of the axis, in order (a tree
    reduction's groups): the singles' positions are shifted by the items
    before them.
    """
    keys = np.concatenate([p.keys for p in parts])
    before = np.cumsum([0] + [p.length for p in parts[:-1]])
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    sums = np.zeros((len(uniques), parts[0].sums.shape[1]), np.int64)
    np.add.at(sums, codes, np.concatenate([p.sums for p in parts]))
    return LabelSums(merge_labelled(*(p.labels for p in parts)), np.asarray(uniques, dtype=object), sums,
                     _total([p.unassigned for p in parts]), _total([p.mask_sizes for p in parts]),
                     sum(p.length for p in parts), np.concatenate([b + p.singles for b, p in zip(before, parts)]),
                     np.concatenate([p.single_sums for p in parts]))


def _total(vectors: list) -> np.ndarray:
    return np.asarray(np.sum(vectors, axis=0, dtype=np.int64))


#: Per distinct label of a co-clustering's axis, the items it shares with each of the other side's masks.
SUM_BY_LABEL = ChunkPass("label-sums", chunk=label_sums, combine=merge_label_sums, axis=-1)


def _expanded(sums: LabelSums, name: str, policy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(per-cluster sums, cluster sizes, shown ids)`` in the order :func:`as_biclustering` numbers clusters."""
    table = to_table(sums.labels, "cluster" if policy != "error" else "error", (name, name))
    labels = np.asarray(table.truth_labels)
    unassigned = labels < 0 if labels.dtype != object else pd.isna(labels)
    sizes = np.asarray(table.truth_sizes(), np.int64)
    kept = labels[~unassigned]
    at = pd.Index(sums.keys).get_indexer(kept)
    rows, shown, counts = sums.sums[at], list(kept), sizes[~unassigned]
    if len(sums.singles):  # the "singleton" policy: a cluster per unassigned entry, in position order
        rows = np.vstack([rows, sums.single_sums])
        shown += [f"unassigned{int(i)}" for i in sums.singles]
        counts = np.append(counts, np.ones(len(sums.singles), counts.dtype))
    elif sizes[unassigned].sum():  # the "cluster" policy: one extra cluster, last
        rows = np.vstack([rows, sums.unassigned[None, :]])
        shown.append("unassigned")
        counts = np.append(counts, sizes[unassigned].sum())
    return rows, counts, np.asarray(shown, dtype=object)


def blocks_against_masks(row_sums: LabelSums, col_sums: LabelSums, names: tuple[str, str], policy: str,
                         labelled: str) -> tuple[MaskCounts, MaskCounts, np.ndarray]:
    """The row and column :class:`MaskCounts` of a co-clustering's blocks against a biclustering, and the block ids.

    ``labelled`` says which side the co-clustering is ("truth" or "pred").
    The same tables :func:`intersect_counts` gives over :func:`as_biclustering`'s
    block masks, from the per-label sums (block (h, l) shares the rows of
    label h and the columns of label l).
    """
    r, r_sizes, h_ids = _expanded(row_sums, names[0], policy)
    c, c_sizes, l_ids = _expanded(col_sums, names[1], policy)
    n_l, n_h = len(l_ids), len(h_ids)
    rows = (np.repeat(r, n_l, axis=0), np.repeat(r_sizes, n_l), row_sums.mask_sizes, row_sums.length)
    cols = (np.tile(c, (n_h, 1)), np.tile(c_sizes, n_h), col_sums.mask_sizes, col_sums.length)

    def counts(shared, sizes, other, length) -> MaskCounts:
        if labelled == "truth":
            return MaskCounts(shared, sizes, other, length)
        return MaskCounts(np.ascontiguousarray(shared.T), other, sizes, length)

    return counts(*rows), counts(*cols), block_ids(h_ids, l_ids)
