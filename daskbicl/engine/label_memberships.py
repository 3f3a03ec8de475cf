"""The cover of a co-clustering's axis against a biclustering's masks, counted by label in the one graph.

The cover of a co-clustering's rows is its row clusters, each once (the
``"cover"`` source of :mod:`daskbicl.engine.provider_graph`); against a
biclustering an item's joint membership signature is its label and the
biclusters holding it.  Each chunk counts those signatures with the
chunk's own label numbering (:func:`label_memberships`); parts are merged
over the union of their labels (:func:`merge_label_memberships`); one task
numbers the labels as :func:`daskbicl.engine.blocks.as_biclustering` does
(sorted, the unassigned cluster last) and gives the same
:class:`~daskbicl.kernels.micro.memberships.Memberships` the membership
pass over the cover's masks gives (:func:`numbered_memberships`).  No
label is counted before the graph runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..kernels.micro.memberships import Memberships, merge_memberships, signature_counts
from .blocks import block_labels
from .core import ChunkPass
from .labels import Counts, encode_chunk, merge_labelled, to_table
from .labels import _labels_of as labels_of

__all__ = ["LABEL_MEMBERSHIPS", "LabelMemberships", "label_memberships", "merge_label_memberships",
           "numbered_memberships"]


@dataclass(frozen=True)
class LabelMemberships:
    """Signatures whose labelled side is numbered by ``keys`` (then one last cluster: the unassigned entries).

    ``labels``: the labels and their counts (checked as the distinct-label
    pass checks them); ``side``: which side of ``memberships`` the labels
    are ("truth" or "pred").
    """

    labels: Counts
    keys: np.ndarray
    memberships: Memberships
    side: str


def _renumbered(m: Memberships, side: str, new: np.ndarray, n_labels: int) -> Memberships:
    """``m`` with its labelled side's element i renumbered ``new[i]`` among ``n_labels`` (-1: must be empty)."""
    k = m.n_truth
    labelled = m.el < k if side == "truth" else m.el >= k
    own = m.el - (0 if side == "truth" else k)
    n_t, n_p = (n_labels, m.n_pred) if side == "truth" else (m.n_truth, n_labels)
    el = np.where(labelled, new[np.where(labelled, own, 0)] + (0 if side == "truth" else n_t),
                  m.el + (n_t - k if side == "truth" else 0))
    index = np.concatenate([new, n_labels + np.arange(m.n_pred)]) if side == "truth" else \
        np.concatenate([np.arange(k), n_t + new])
    kept = index >= 0 if side == "truth" else np.concatenate([np.ones(k, bool), new >= 0])
    index = np.where(kept, index, 0)
    gram = np.zeros((n_t + n_p, n_t + n_p), np.int64)
    np.add.at(gram, np.ix_(index[kept], index[kept]), m.gram[np.ix_(kept, kept)])
    return Memberships(n_t, n_p, m.n_items, m.ptr, el.astype(np.int32), m.cnt, gram)


def label_memberships(name: str, side: str, values: np.ndarray, masks: np.ndarray) -> LabelMemberships:
    """The chunk kernel of :data:`LABEL_MEMBERSHIPS`: one chunk of labels and the other side's (L, m) masks."""
    values = np.asarray(values).reshape(-1)
    codes, uniques = encode_chunk(values, name)
    assigned = codes >= 0
    present, inverse = np.unique(codes[assigned], return_inverse=True)
    number = np.full(codes.size, len(present))  # the unassigned entries: the last cluster
    number[assigned] = inverse
    onehot = number[None, :] == np.arange(len(present) + 1)[:, None]
    masks = np.asarray(masks, dtype=bool)
    counted = signature_counts(onehot, masks) if side == "truth" else signature_counts(masks, onehot)
    keys = np.asarray(present if uniques is None else labels_of(present, uniques), dtype=object)
    return LabelMemberships(block_labels(name, values), keys, counted, side)


def merge_label_memberships(*parts: LabelMemberships) -> LabelMemberships:
    """The combine of :data:`LABEL_MEMBERSHIPS`: every part renumbered over the union of labels, then merged."""
    codes, uniques = pd.factorize(np.concatenate([p.keys for p in parts]), use_na_sentinel=False)
    n, out, start = len(uniques), [], 0
    for p in parts:
        new = np.append(codes[start:start + len(p.keys)], n)  # the unassigned cluster stays last
        start += len(p.keys)
        out.append(_renumbered(p.memberships, p.side, new, n + 1))
    return LabelMemberships(merge_labelled(*(p.labels for p in parts)), np.asarray(uniques, dtype=object),
                            merge_memberships(*out), parts[0].side)


#: Per axis: the signatures of a co-clustering's labels against the other side's masks.
LABEL_MEMBERSHIPS = ChunkPass("label-memberships", chunk=label_memberships, combine=merge_label_memberships,
                              axis=-1)


def numbered_memberships(merged: LabelMemberships, name: str, policy: str) -> Memberships:
    """The labels numbered as the cover's masks number them: sorted, the unassigned cluster last when not empty."""
    table = to_table(merged.labels, "cluster" if policy != "error" else "error", (name, name))
    labels = np.asarray(table.truth_labels)
    unassigned = labels < 0 if labels.dtype != object else pd.isna(labels)
    kept = labels[~unassigned]
    new = np.full(len(merged.keys) + 1, -1)
    new[pd.Index(merged.keys).get_indexer(kept)] = np.arange(len(kept))
    n_labels = len(kept)
    if np.asarray(table.truth_sizes())[unassigned].sum():
        new[-1] = n_labels
        n_labels += 1
    return merge_memberships(_renumbered(merged.memberships, merged.side, new, n_labels))
