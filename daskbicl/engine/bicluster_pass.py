"""The biclustering counting pass: shared rows and shared columns (K x L).

One chunked pass over the row masks and one over the column masks; each
chunk gives a small fixed-shape (K, L) int64 table
(:func:`daskbicl.kernels.bicluster.mask_counting.intersect_counts`) and the tables are summed
in a tree.  The ``bicluster`` provider's record declares this pass as its
per-axis tables (:mod:`daskbicl.engine.provider_graph` builds it); two
co-clusterings need no mask pass: their bicluster tables are derived from
the contingency tables (:func:`~daskbicl.kernels.bicluster.mask_counting.tables_from_partitions`).
"""

from __future__ import annotations

from ..kernels.bicluster.mask_counting import intersect_counts, merge_mask_counts
from .core import ChunkPass, counting_pass, shared_pass

__all__ = ["INTERSECT_MASKS", "mask_counts_graph"]


#: Shared items of K truth and L pred masks along one axis: a (K, L) table per chunk, the tables summed.
INTERSECT_MASKS = ChunkPass("masks", chunk=intersect_counts, combine=merge_mask_counts, axis=-1)


def mask_counts_graph(truth_mask, pred_mask, *, split_every: int = 8):
    """Delayed :class:`~daskbicl.kernels.bicluster.mask_counting.MaskCounts` of two (K, n) and (L, n) masks."""
    def build():
        return counting_pass(INTERSECT_MASKS, (truth_mask, pred_mask), split_every=split_every)

    return shared_pass(f"masks-{split_every}", (truth_mask, pred_mask), build)
