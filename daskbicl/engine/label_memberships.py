"""Membership lists of a co-clustering's blocks against a biclustering, counted by label in the one graph.

Read as a biclustering, a co-clustering's block (h, l) holds the rows of
label h and the columns of label l, so a row's joint membership signature
(:mod:`daskbicl.kernels.micro.memberships`) is fixed by its label and the
other side's biclusters holding it.  Each chunk counts those signatures
with the chunk's own label numbering (:func:`label_memberships`, the
label as one element); parts are merged over the union of their labels
(:func:`merge_label_memberships`); one task numbers the labels as
:func:`daskbicl.engine.blocks.as_biclustering` does (sorted, the
unassigned cluster last when it is not empty) and expands each label into
its blocks (:func:`memberships_of_blocks`; for a cover, each label once:
:func:`cover_memberships`).  The result is the
:class:`~daskbicl.kernels.micro.memberships.Memberships` the membership
pass over the block masks gives, array for array: the same lists in the
same order (the order in which each signature first occurs along the
axis), counts and Gram table.  No label is counted before the graph runs.

Under the "singleton" policy each unassigned entry is a label of its own,
kept with its position along the axis (positions are shifted by the items
of the parts before when parts merge, so the clusters come out in position
order, named ``unassigned<position>`` as the block masks name them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..kernels.bicluster.mask_counting import block_ids
from ..kernels.coclustering.contingency import PairCounts
from ..kernels.micro.memberships import Memberships, merge_memberships, signature_counts
from .core import ChunkPass
from .labels import Counts, encode_chunk, merge_labelled, to_table
from .labels import _labels_of as labels_of

__all__ = ["LABEL_MEMBERSHIPS", "PAIR_MEMBERSHIPS", "LabelMemberships", "Labelled", "PairMemberships",
           "cover_memberships", "label_memberships", "memberships_of_blocks", "memberships_of_pair_blocks",
           "merge_label_memberships", "merge_pair_memberships", "pair_memberships"]


@dataclass(frozen=True)
class LabelMemberships:
    """Signatures of one axis whose truth elements are labels: ``keys`` then one last (the unassigned entries).

    ``labels``: the labels with their counts (pair counts against a
    constant, merged and checked as the distinct-label pass does);
    ``memberships``: the signatures, the labels as truth elements
    ``0..len(keys)`` (``len(keys)``: the unassigned entries) and, under
    the "singleton" policy, one more element per unassigned entry
    (``singles``: their positions along the axis; the unassigned element
    is then empty), then the other side's biclusters as pred elements.
    """

    labels: Counts
    keys: np.ndarray
    memberships: Memberships
    singles: np.ndarray


@dataclass(frozen=True)
class Labelled:
    """One side's labels (as :class:`LabelMemberships` holds them): counts, distinct keys, singles' positions."""

    labels: Counts
    keys: np.ndarray
    singles: np.ndarray


def _one_hot(name: str, policy: str, values) -> tuple[Labelled, np.ndarray]:
    """One chunk's labels and their (keys + 1 + singles, items) one-hot: the keys, the unassigned, the singles."""
    values = np.asarray(values).reshape(-1)
    codes, uniques = encode_chunk(values, name)
    present, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
    assigned = present >= 0
    # the labels' counts as the distinct-label pass has them (unassigned code included), from the one np.unique
    labels = PairCounts(present if uniques is None else labels_of(present, uniques), np.zeros(len(present), np.int64),
                        counts.astype(np.int64))
    kept = present[assigned]
    number = np.where(assigned, np.cumsum(assigned) - 1, len(kept))[inverse.reshape(-1)]
    singles = np.flatnonzero(number == len(kept)) if policy == "singleton" else np.zeros(0, np.int64)
    number[singles] = len(kept) + 1 + np.arange(len(singles))  # a cluster each, in their order
    onehot = number[None, :] == np.arange(len(kept) + 1 + len(singles))[:, None]
    keys = np.asarray(kept if uniques is None else labels_of(kept, uniques), dtype=object)
    return Labelled(labels, keys, singles.astype(np.int64)), onehot


def label_memberships(name: str, policy: str, values: np.ndarray, masks: np.ndarray) -> LabelMemberships:
    """The chunk kernel of :data:`LABEL_MEMBERSHIPS`: one chunk of labels and the other side's (L, m) masks."""
    side, onehot = _one_hot(name, policy, values)
    return LabelMemberships(side.labels, side.keys, signature_counts(onehot, np.asarray(masks, dtype=bool)),
                            side.singles)


def _renumbered(m: Memberships, new: np.ndarray, n_labels: int) -> Memberships:
    """``m`` with label (truth element) i renumbered ``new[i]`` among ``n_labels`` (-1: must be empty)."""
    k = m.n_truth
    labelled = m.el < k
    el = np.where(labelled, new[np.where(labelled, m.el, 0)], m.el - k + n_labels)
    index = np.concatenate([new, n_labels + np.arange(m.n_pred)])
    kept = index >= 0
    gram = np.zeros((n_labels + m.n_pred,) * 2, np.int64)
    np.add.at(gram, np.ix_(index[kept], index[kept]), m.gram[np.ix_(kept, kept)])
    return Memberships(n_labels, m.n_pred, m.n_items, m.ptr, el.astype(np.int32), m.cnt, gram)


def merge_label_memberships(*parts: LabelMemberships) -> LabelMemberships:
    """The combine of :data:`LABEL_MEMBERSHIPS`: every part renumbered over the union of labels, then merged.

    The parts are consecutive pieces of the axis, in order (a tree
    reduction's groups): the singles' positions are shifted by the items
    before them and keep their order.
    """
    codes, uniques = pd.factorize(np.concatenate([p.keys for p in parts]), use_na_sentinel=False)
    n, out, start = len(uniques), [], 0
    n_singles = sum(len(p.singles) for p in parts)
    singles, before, items = [], 0, 0
    for p in parts:
        own = n + 1 + before + np.arange(len(p.singles))
        new = np.concatenate([codes[start:start + len(p.keys)], [n], own])  # the unassigned cluster, then singles
        start += len(p.keys)
        out.append(_renumbered(p.memberships, new, n + 1 + n_singles))
        singles.append(items + p.singles)
        before += len(p.singles)
        items += p.memberships.n_items
    return LabelMemberships(merge_labelled(*(p.labels for p in parts)), np.asarray(uniques, dtype=object),
                            merge_memberships(*out), np.concatenate(singles).astype(np.int64))


#: Per axis: the signatures of a co-clustering's labels against the other side's masks.
LABEL_MEMBERSHIPS = ChunkPass("label-memberships", chunk=label_memberships, combine=merge_label_memberships,
                              axis=-1)


def _numbered(merged: LabelMemberships, name: str, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """``(cluster of each merged label, shown ids)``: sorted labels, then "unassigned" when not empty, or one
    cluster per unassigned entry in position order ("singleton"; -1: no cluster)."""
    table = to_table(merged.labels, "cluster" if policy != "error" else "error", (name, name))
    labels = np.asarray(table.truth_labels)
    unassigned = labels < 0 if labels.dtype != object else pd.isna(labels)
    kept = labels[~unassigned]
    new = np.full(len(merged.keys) + 1 + len(merged.singles), -1)
    new[pd.Index(merged.keys).get_indexer(kept)] = np.arange(len(kept))
    shown = list(kept)
    if len(merged.singles):
        new[len(merged.keys) + 1:] = len(kept) + np.arange(len(merged.singles))
        shown += [f"unassigned{int(i)}" for i in merged.singles]
    elif np.asarray(table.truth_sizes())[unassigned].sum():
        new[len(merged.keys)] = len(kept)
        shown.append("unassigned")
    return new, np.asarray(shown, dtype=object)


def _expanded(m: Memberships, blocks: np.ndarray, side: str) -> Memberships:
    """Label-level signatures (labels 0..H-1 as truth elements) with each label h replaced by the blocks
    ``blocks[h]``, the co-clustering on ``side``; identical lists merged, in the order they first occur."""
    n_h, per = blocks.shape
    n_co, n_other = n_h * per, m.n_pred
    owner = np.repeat(np.arange(len(m.cnt)), np.diff(m.ptr))
    is_label = m.el < m.n_truth
    co_at, other_at = (0, n_co) if side == "truth" else (n_other, 0)  # where each side's elements start
    # every element of the new lists with its list: a label's blocks, and the other side's biclusters as they were
    owners = np.concatenate([np.repeat(owner[is_label], per), owner[~is_label]])
    values = np.concatenate([co_at + blocks[m.el[is_label]].reshape(-1), other_at + m.el[~is_label] - m.n_truth])
    order = np.lexsort((values, owners))  # each list ascending, lists in their order
    ptr = np.concatenate([[0], np.cumsum(np.bincount(owners, minlength=len(m.cnt)))]).astype(np.int64)
    label_of = np.empty(n_co, np.int64)  # the gram of two blocks is that of their labels
    label_of[blocks.reshape(-1)] = np.repeat(np.arange(n_h), per)
    source = np.empty(n_co + n_other, np.int64)
    source[co_at:co_at + n_co] = label_of
    source[other_at:other_at + n_other] = m.n_truth + np.arange(n_other)
    n_truth, n_pred = (n_co, n_other) if side == "truth" else (n_other, n_co)
    return merge_memberships(Memberships(n_truth, n_pred, m.n_items, ptr, values[order].astype(np.int32), m.cnt,
                                         m.gram[np.ix_(source, source)]))


def memberships_of_blocks(rows: LabelMemberships, cols: LabelMemberships, names: tuple[str, str], policy: str,
                          side: str) -> tuple[Memberships, Memberships, np.ndarray]:
    """The row and column :class:`Memberships` of a co-clustering's blocks against a biclustering, and the ids.

    ``side`` says which side the co-clustering is ("truth" or "pred").
    Block (h, l) is numbered h * (column clusters) + l, as
    :func:`~daskbicl.engine.blocks.as_biclustering` numbers its biclusters.
    """
    h_new, h_ids = _numbered(rows, names[0], policy)
    l_new, l_ids = _numbered(cols, names[1], policy)
    n_h, n_l = len(h_ids), len(l_ids)
    row_blocks = np.arange(n_h * n_l).reshape(n_h, n_l)  # row cluster h: blocks h * n_l .. h * n_l + n_l - 1
    col_blocks = row_blocks.T  # column cluster l: blocks l, n_l + l, ...
    out_rows = _expanded(_renumbered(rows.memberships, h_new, n_h), row_blocks, side)
    out_cols = _expanded(_renumbered(cols.memberships, l_new, n_l), np.ascontiguousarray(col_blocks), side)
    return out_rows, out_cols, block_ids(h_ids, l_ids)


def cover_memberships(merged: LabelMemberships, name: str, policy: str, side: str) -> Memberships:
    """The cover signatures of one co-clustering axis against a biclustering: each label one cluster."""
    new, shown = _numbered(merged, name, policy)
    return _expanded(_renumbered(merged.memberships, new, len(shown)), np.arange(len(shown))[:, None], side)


# --------------------------------------------------------------------------- two co-clusterings: both sides by label


@dataclass(frozen=True)
class PairMemberships:
    """Signatures of one axis of two co-clusterings: truth labels as truth elements, pred labels as pred elements."""

    truth: Labelled
    pred: Labelled
    memberships: Memberships


def pair_memberships(names: tuple[str, str], policies: tuple[str, str], truth_values, pred_values) -> PairMemberships:
    """The chunk kernel of :data:`PAIR_MEMBERSHIPS`: one chunk of both co-clusterings' labels along an axis."""
    t, t_hot = _one_hot(names[0], policies[0], truth_values)
    p, p_hot = _one_hot(names[1], policies[1], pred_values)
    return PairMemberships(t, p, signature_counts(t_hot, p_hot))


def _merged_sides(sides: list[Labelled], lengths: list[int]) -> tuple[Labelled, list[np.ndarray], int]:
    """The union of the parts' labels, each part's renumbering (keys, the unassigned, the singles) and the total."""
    codes, uniques = pd.factorize(np.concatenate([s.keys for s in sides]), use_na_sentinel=False)
    n, n_singles = len(uniques), sum(len(s.singles) for s in sides)
    news, singles, start, before, items = [], [], 0, 0, 0
    for s, length in zip(sides, lengths):
        news.append(np.concatenate([codes[start:start + len(s.keys)], [n], n + 1 + before + np.arange(len(s.singles))]))
        singles.append(items + s.singles)
        start, before, items = start + len(s.keys), before + len(s.singles), items + length
    merged = Labelled(merge_labelled(*(s.labels for s in sides)), np.asarray(uniques, dtype=object),
                      np.concatenate(singles).astype(np.int64))
    return merged, news, n + 1 + n_singles


def _renumbered_both(m: Memberships, new_t: np.ndarray, n_t: int, new_p: np.ndarray, n_p: int) -> Memberships:
    """``m`` with truth element i renumbered ``new_t[i]`` of ``n_t`` and pred element j ``new_p[j]`` of ``n_p``."""
    k = m.n_truth
    is_t = m.el < k
    el = np.where(is_t, new_t[np.where(is_t, m.el, 0)], n_t + new_p[np.where(is_t, 0, m.el - k)])
    index = np.concatenate([new_t, np.where(new_p >= 0, n_t + new_p, -1)])
    kept = index >= 0
    gram = np.zeros((n_t + n_p,) * 2, np.int64)
    np.add.at(gram, np.ix_(index[kept], index[kept]), m.gram[np.ix_(kept, kept)])
    return Memberships(n_t, n_p, m.n_items, m.ptr, el.astype(np.int32), m.cnt, gram)


def merge_pair_memberships(*parts: PairMemberships) -> PairMemberships:
    """The combine of :data:`PAIR_MEMBERSHIPS`: both sides renumbered over the union of their labels, then merged."""
    lengths = [p.memberships.n_items for p in parts]
    t, t_new, n_t = _merged_sides([p.truth for p in parts], lengths)
    q, p_new, n_p = _merged_sides([p.pred for p in parts], lengths)
    return PairMemberships(t, q, merge_memberships(*(_renumbered_both(p.memberships, a, n_t, b, n_p)
                                                      for p, a, b in zip(parts, t_new, p_new))))


#: Per axis: the signatures of two co-clusterings' labels (their blocks' memberships before expansion).
PAIR_MEMBERSHIPS = ChunkPass("pair-memberships", chunk=pair_memberships, combine=merge_pair_memberships, axis=-1)


def _owners(blocks: np.ndarray) -> np.ndarray:
    """The label of each block, for blocks ``blocks[h]`` of label h."""
    out = np.empty(blocks.size, np.int64)
    out[blocks.reshape(-1)] = np.repeat(np.arange(blocks.shape[0]), blocks.shape[1])
    return out


def _expanded_both(m: Memberships, blocks_t: np.ndarray, blocks_p: np.ndarray) -> Memberships:
    """Label-level signatures of two co-clusterings with truth label h replaced by ``blocks_t[h]`` and pred label j
    by ``blocks_p[j]``; identical lists merged, in the order they first occur."""
    n_ct = blocks_t.size
    owner = np.repeat(np.arange(len(m.cnt)), np.diff(m.ptr))
    is_t = m.el < m.n_truth
    owners = np.concatenate([np.repeat(owner[is_t], blocks_t.shape[1]), np.repeat(owner[~is_t], blocks_p.shape[1])])
    values = np.concatenate([blocks_t[m.el[is_t]].reshape(-1), n_ct + blocks_p[m.el[~is_t] - m.n_truth].reshape(-1)])
    order = np.lexsort((values, owners))
    ptr = np.concatenate([[0], np.cumsum(np.bincount(owners, minlength=len(m.cnt)))]).astype(np.int64)
    source = np.concatenate([_owners(blocks_t), m.n_truth + _owners(blocks_p)])
    return merge_memberships(Memberships(n_ct, blocks_p.size, m.n_items, ptr, values[order].astype(np.int32), m.cnt,
                                         m.gram[np.ix_(source, source)]))


def memberships_of_pair_blocks(rows: PairMemberships, cols: PairMemberships, policies: tuple[str, str]):
    """The row and column :class:`Memberships` of two co-clusterings' blocks (each side numbered as
    :func:`~daskbicl.engine.blocks.as_biclustering` numbers its biclusters)."""
    blocks, news = {}, {}
    for i, side in enumerate(("truth", "pred")):
        h_new, h_ids = _numbered(getattr(rows, side), f"{side} row_labels", policies[i])
        l_new, l_ids = _numbered(getattr(cols, side), f"{side} col_labels", policies[i])
        grid = np.arange(len(h_ids) * len(l_ids)).reshape(len(h_ids), len(l_ids))
        blocks[side] = (grid, np.ascontiguousarray(grid.T))
        news[side] = ((h_new, len(h_ids)), (l_new, len(l_ids)))
    out = []
    for axis, table in enumerate((rows, cols)):
        m = _renumbered_both(table.memberships, *news["truth"][axis], *news["pred"][axis])
        out.append(_expanded_both(m, blocks["truth"][axis], blocks["pred"][axis]))
    return out[0], out[1]
