"""The covers of rows and of columns: joint membership signatures, then small per-axis counts.

The omega index and the overlapping NMI compare the *row cover* of truth
with that of pred (and the column covers likewise): for a biclustering, the
row set of every bicluster is one cluster of rows; for a co-clustering, each
row cluster once.  One chunked pass per axis counts the joint membership
signatures (:func:`~daskbicl.engine.micro_pass.memberships_graph`, the pass
the micro-object measures use, shared with them within one score call), and
one task per axis turns them into a :class:`CoverCounts` on the cluster:
the cluster sizes, the K x L table of shared items and, when a measure
needs it, the histogram of pairs of items by the number of truth and pred
clusters they share (:func:`~daskbicl.kernels.bicluster.omega_index.pair_histogram`).
Only these small tables travel back to the client.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.bicluster.cell_pairs import cell_histogram, cell_pair_histogram, cell_signatures
from ..kernels.bicluster.omega_index import pair_histogram
from ..kernels.micro.memberships import Memberships

__all__ = ["AXES", "CellCounts", "CoverCounts", "CoverTables", "cell_counts", "cover_counts"]

#: The axes a cover can be taken on.
AXES = frozenset({"rows", "cols"})


@dataclass(frozen=True)
class CoverCounts:
    """What the cover measures of one axis read (module docstring).

    ``shared[k, l]`` = items in truth cluster k and pred cluster l;
    ``pairs[a, b]`` = pairs of items sharing a truth and b pred clusters
    (None when no selected measure needs it).
    """

    n_items: int
    truth_sizes: np.ndarray
    pred_sizes: np.ndarray
    shared: np.ndarray
    pairs: np.ndarray | None


@dataclass(frozen=True)
class CellCounts:
    """Cells and pairs of cells by the (truth, pred) biclusters containing them (Python integers)."""

    n_cells: int
    cells: np.ndarray
    pairs: np.ndarray


@dataclass(frozen=True)
class CoverTables:
    """The :class:`CoverCounts` of rows and of columns, and the :class:`CellCounts` (None when not asked for)."""

    rows: CoverCounts | None
    cols: CoverCounts | None
    cells: CellCounts | None = None


def cover_counts(m: Memberships, pairs: bool, limit: float) -> CoverCounts:
    """The counts of one axis from its merged signatures (runs as a task)."""
    k = m.n_truth
    sizes = m.sizes()
    hist = pair_histogram(m.ptr, m.el, m.cnt, m.n_items, m.n_truth, m.n_pred, max_work=limit) if pairs else None
    return CoverCounts(int(m.n_items), sizes[:k].copy(), sizes[k:].copy(), m.gram[:k, k:].copy(), hist)


def cell_counts(rows: Memberships, cols: Memberships, limit: float) -> CellCounts:
    """Cell and cell-pair histograms from the row and column signatures of the biclusters (a task)."""
    n_cells = int(rows.n_items) * int(cols.n_items)
    ptr, el, cnt = cell_signatures((rows.ptr, rows.el, rows.cnt), (cols.ptr, cols.el, cols.cnt), max_work=limit)
    pairs = cell_pair_histogram(ptr, el, cnt, n_cells, rows.n_truth, rows.n_pred, max_work=limit)
    return CellCounts(n_cells, cell_histogram(ptr, el, cnt, n_cells, rows.n_truth), pairs)
