"""Chunk-level counting on bicluster masks (numpy + scipy.sparse only).

For one chunk of rows (or columns), truth masks ``t`` of shape (K, m) and pred
masks ``p`` of shape (L, m), :func:`intersect_counts` returns the (K, L) int64
table ``|E_k ∩ E'_l|`` restricted to the chunk, and the per-bicluster sizes.

Two exact strategies, chosen by density:

* dense: ``t @ p.T`` as a float32 BLAS product.  Entries are integers no
  larger than ``m``; float32 represents every integer up to 2**24 exactly and
  every partial sum of 0/1 products is such an integer, so the product is
  exact when ``m <= 2**24`` (longer chunks are split).
* sparse: when masks are mostly empty, one count per element and pair of
  biclusters holding it, Σ_i (#truth biclusters containing i)·(#pred
  containing i) in all: for large chunks numpy finds each row's True
  entries and a compiled kernel pairs them by element
  (:mod:`~daskbicl.kernels.bicluster.mask_positions`), CSR products
  (``scipy.sparse``) for small ones (numba not loaded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import TooLargeError

__all__ = ["MaskCounts", "intersect_counts", "merge_mask_counts"]

#: Largest chunk length for which the float32 product is exact.
_EXACT_F32 = 1 << 24

#: Below this fraction of True entries the sparse product is used.
_SPARSE_DENSITY = 0.02


@dataclass(frozen=True)
class MaskCounts:
    """Counts over a set of rows (or columns): shared (K, L), sizes, length."""

    shared: np.ndarray  # (K, L) int64
    truth_sizes: np.ndarray  # (K,) int64
    pred_sizes: np.ndarray  # (L,) int64
    length: int


def _dense_product(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    out = np.zeros((t.shape[0], p.shape[0]), dtype=np.int64)
    for start in range(0, t.shape[1], _EXACT_F32):
        sl = slice(start, start + _EXACT_F32)
        prod = t[:, sl].astype(np.float32) @ p[:, sl].astype(np.float32).T
        out += np.rint(prod).astype(np.int64)
    return out


def _csr(mask: np.ndarray):
    """CSR of a bool mask built from its non-zeros (no dense numeric copy)."""
    from scipy import sparse

    r, c = np.nonzero(mask)
    return sparse.csr_array((np.ones(r.size, dtype=np.int64), (r, c)), shape=mask.shape)


def _sparse_product(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.asarray((_csr(t) @ _csr(p).T).toarray(), dtype=np.int64)


#: Sparse chunks of at least this many mask entries (truth and pred) are counted by the compiled
#: kernel (:mod:`~daskbicl.kernels.bicluster.mask_positions`); smaller ones never load numba.
MASK_KERNEL_MIN = 1 << 22


#: Large sparse chunks are counted from the positions of their True entries (numpy finds them,
#: :mod:`~daskbicl.kernels.bicluster.mask_positions` lists and pairs them); False: the byte-by-byte
#: scan of :mod:`~daskbicl.kernels.bicluster.mask_pairs` (kept for benchmarks/out_of_core.py --mask-counting).
BY_POSITIONS = True


def _sparse_shared(t: np.ndarray, p: np.ndarray, t_sizes: np.ndarray, p_sizes: np.ndarray) -> np.ndarray:
    if t.size + p.size < MASK_KERNEL_MIN or t.shape[1] >= 2**31:  # (the kernel lists elements as int32)
        return _sparse_product(t, p)
    if BY_POSITIONS:
        from .mask_positions import shared_from_positions

        return shared_from_positions(t, p, t_sizes, p_sizes)
    from .mask_pairs import shared_members

    return shared_members(np.ascontiguousarray(t), np.ascontiguousarray(p), t_sizes, p_sizes)


def _row_sizes(mask: np.ndarray) -> np.ndarray:
    """True entries per row (int64): ``np.count_nonzero`` row by row (a fast scan of bools; a sum over an
    axis would widen every entry to int64)."""
    return np.fromiter((np.count_nonzero(row) for row in mask), dtype=np.int64, count=mask.shape[0])


def intersect_counts(t, p) -> MaskCounts:
    """Shared-member counts between truth and pred biclusters on one chunk.

    Parameters
    ----------
    t : bool array (K, m)
        Truth membership of the chunk's m rows (or columns).
    p : bool array (L, m)
        Pred membership of the same rows.

    Examples
    --------
    >>> t = np.array([[1, 1, 0, 0], [0, 1, 1, 1]], dtype=bool)
    >>> p = np.array([[1, 1, 1, 0]], dtype=bool)
    >>> c = intersect_counts(t, p)
    >>> c.shared.tolist(), c.truth_sizes.tolist(), c.pred_sizes.tolist()
    ([[2], [2]], [2, 3], [3])
    """
    t = np.asarray(t, dtype=bool)
    p = np.asarray(p, dtype=bool)
    if t.ndim != 2 or p.ndim != 2 or t.shape[1] != p.shape[1]:
        raise ValueError(f"mask chunks must be (K, m) and (L, m), got {t.shape} and {p.shape}")
    m = t.shape[1]
    t_sizes = _row_sizes(t)
    p_sizes = _row_sizes(p)
    density = (t_sizes.sum() + p_sizes.sum()) / max(1, (t.shape[0] + p.shape[0]) * m)
    if t.size and p.size and density < _SPARSE_DENSITY:
        shared = _sparse_shared(t, p, t_sizes, p_sizes)
    else:
        shared = _dense_product(t, p)
    return MaskCounts(shared, t_sizes, p_sizes, m)


def merge_mask_counts(*parts: MaskCounts) -> MaskCounts:
    """Exact sum of chunk results over disjoint sets of rows."""
    first = parts[0]
    shared = first.shared.copy()
    t_sizes = first.truth_sizes.copy()
    p_sizes = first.pred_sizes.copy()
    length = first.length
    for part in parts[1:]:
        shared += part.shared
        t_sizes += part.truth_sizes
        p_sizes += part.pred_sizes
        length += part.length
    return MaskCounts(shared, t_sizes, p_sizes, length)


@dataclass(frozen=True)
class BiclusterTables:
    """Everything the bicluster precision–recall measures are finalized from.

    ``rows.shared[k, l] = |E_k ∩ E'_l|``, ``cols.shared[k, l] = |F_k ∩ F'_l|``,
    bicluster sizes on each axis, the matrix shape, and the bicluster ids.
    """

    rows: MaskCounts
    cols: MaskCounts
    truth_ids: np.ndarray
    pred_ids: np.ndarray

    @property
    def n_cells(self) -> int:
        return int(self.rows.length) * int(self.cols.length)

    def drop(self, truth_keep: np.ndarray, pred_keep: np.ndarray) -> BiclusterTables:
        def sub(c: MaskCounts) -> MaskCounts:
            return MaskCounts(
                c.shared[np.ix_(truth_keep, pred_keep)], c.truth_sizes[truth_keep], c.pred_sizes[pred_keep], c.length
            )

        return BiclusterTables(sub(self.rows), sub(self.cols), self.truth_ids[truth_keep], self.pred_ids[pred_keep])


def block_ids(row_labels: np.ndarray, col_labels: np.ndarray) -> np.ndarray:
    """Ids ``"h/l"`` of the blocks of a co-clustering, row-cluster major."""
    return np.array([f"{h}/{l}" for h in row_labels.tolist() for l in col_labels.tolist()], dtype=object)


def tables_from_partitions(rows, cols, limit: int = 1 << 26) -> BiclusterTables:
    """Bicluster tables of two co-clusterings, from their contingency tables.

    A co-clustering is the biclustering of its blocks (h, l) = E_h × F_l, so
    ``|E_(h,l) ∩ E'_(h',l')| = n^{zz'}_{hh'}`` and
    ``|F_(h,l) ∩ F'_(h',l')| = n^{ww'}_{ll'}``: no mask pass is needed.

    Parameters
    ----------
    rows, cols : daskbicl.kernels.coclustering.contingency.Table
    """
    H, Hp = rows.shape
    L, Lp = cols.shape
    if H * L * Hp * Lp > limit:
        raise TooLargeError(
            f"as biclusterings these co-clusterings have {H * L:,} and {Hp * Lp:,} blocks: a "
            f"{H * L:,} x {Hp * Lp:,} bicluster table exceeds the limit of {limit:,} cells"
        )
    R = rows.dense(limit=limit)
    C = cols.dense(limit=limit)
    shared_rows = np.kron(R, np.ones((L, Lp), dtype=np.int64))
    shared_cols = np.kron(np.ones((H, Hp), dtype=np.int64), C)
    row_counts = MaskCounts(
        shared_rows, np.repeat(rows.truth_sizes(), L), np.repeat(rows.pred_sizes(), Lp), rows.n
    )
    col_counts = MaskCounts(
        shared_cols, np.tile(cols.truth_sizes(), H), np.tile(cols.pred_sizes(), Hp), cols.n
    )
    return BiclusterTables(
        row_counts,
        col_counts,
        block_ids(rows.truth_labels, cols.truth_labels),
        block_ids(rows.pred_labels, cols.pred_labels),
    )
