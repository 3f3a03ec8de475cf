"""Element-centric similarity (Gates et al. 2019) of the cells of two biclusterings whose biclusters do not overlap.

The elements are the cells; each bicluster is a cluster of cells and every
cell no bicluster covers is a cluster of its own (clusim's ``Clustering``
needs every element in a cluster).  With no two biclusters of a side
sharing a cell, each side is a partition of the cells and ECS has the
closed form of :mod:`daskbicl.kernels.coclustering.element_centric`: a cell
in truth cluster A and pred cluster B scores ``|A ∩ B| / max(|A|, |B|)``.
Summed over the cells, by kind of cell:

* in truth bicluster k and pred bicluster l: ``s_kl² / max(|B_k|, |X_l|)``
  over the pairs, ``s_kl`` = shared rows × shared columns;
* in B_k and no pred bicluster: ``(|B_k| − Σ_l s_kl) / |B_k|`` (the pred
  cluster is the cell alone), and symmetrically for pred;
* in no bicluster of either side: 1 each.

So the K x L tables of shared rows and columns and the sizes suffice
(from the Gram tables of the signature pass); the same tables tell whether
two biclusters of a side overlap.

When biclusters overlap the affinities have no closed form (clusim solves
a personalised PageRank per element).  A cell's memberships are those its
row and its column share, so the cells of a row signature class and a column
signature class all have one (truth, pred) membership: :func:`cell_classes`
forms those pairs (at most :data:`MAX_PAIRS`), merges equal memberships
with their cell counts (exact integers) and
:mod:`~daskbicl.kernels.bicluster.element_centric_overlap` solves the
PageRank on the classes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...errors import InputError
from .element_centric_overlap import ALPHA, MAX_CLASSES, check_classes, class_scores, overlapping_similarity

__all__ = ["MAX_PAIRS", "cell_classes", "cell_pair_scores", "cell_similarity_of_biclusterings", "signature_bits"]

# Pairs of row and column signature classes above which ecs on overlapping biclusters is refused.
MAX_PAIRS = 2_000_000

# Row classes x column classes x biclusters formed at once (bounds the bool temporaries to 32 MiB).
_CELL_BITS = 1 << 25


def signature_bits(m) -> tuple[np.ndarray, np.ndarray]:
    """The signatures of one axis as a bool matrix (signatures x K + L) and their counts, the empty one included.

    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> bits, n = signature_bits(signature_counts(np.array([[1, 1, 0]], bool), np.array([[1, 0, 0]], bool)))
    >>> bits.astype(int).tolist(), n.tolist()
    ([[1, 1], [1, 0], [0, 0]], [1, 1, 1])
    """
    bits = np.zeros((m.n_signatures + 1, m.n_elem), bool)
    owner = np.repeat(np.arange(m.n_signatures), np.diff(m.ptr))
    bits[owner, m.el] = True
    counts = np.append(np.asarray(m.cnt, np.int64), int(m.n_items) - int(np.sum(m.cnt, dtype=np.int64)))
    return bits, counts


def _pair_blocks(r_bits: np.ndarray, c_bits: np.ndarray):
    """The memberships of the cells of every (row class, column class) pair, a block of row classes at a time."""
    step = max(1, _CELL_BITS // max(1, c_bits.shape[0] * c_bits.shape[1]))
    for lo in range(0, len(r_bits), step):
        yield r_bits[lo:lo + step, None, :] & c_bits[None, :, :]


def _check_pairs(n_rows: int, n_cols: int, max_pairs: int) -> None:
    if n_rows * n_cols > max_pairs:
        raise InputError(
            f"ecs on overlapping biclusters: {n_rows:,} row x {n_cols:,} column signature classes "
            f"make {n_rows * n_cols:,} kinds of cell, more than the budget of {max_pairs:,}")


def cell_classes(rows, cols, *, max_pairs: int = MAX_PAIRS, max_classes: int = MAX_CLASSES,
                 with_inverse: bool = False):
    """The cells' joint classes ``(truth, pred, counts)`` from the row and column Memberships.

    Every pair of a row class and a column class (:func:`signature_bits`)
    is one membership, the biclusters both contain; equal ones are merged,
    counts summed exactly.  ``with_inverse`` adds each pair's class (row
    class major; −1 for a pair with no cell).  Refused above ``max_pairs``
    pairs or ``max_classes`` classes.
    """
    r_bits, r_cnt = signature_bits(rows)
    c_bits, c_cnt = signature_bits(cols)
    _check_pairs(len(r_cnt), len(c_cnt), max_pairs)
    if int(rows.n_items) * int(cols.n_items) >= 2**63:
        raise InputError("ecs on overlapping biclusters counts cells in int64: at most 2**63 - 1 cells")
    n_bits = r_bits.shape[1]
    keys = np.concatenate([np.packbits(b.reshape(-1, n_bits), axis=1) for b in _pair_blocks(r_bits, c_bits)])
    counts = np.multiply.outer(r_cnt, c_cnt).ravel()
    keep = np.flatnonzero(counts > 0)
    uniq, inverse = np.unique(keys[keep], axis=0, return_inverse=True)
    check_classes(len(uniq), max_classes)
    inverse = inverse.ravel()
    total = np.zeros(len(uniq), np.int64)
    np.add.at(total, inverse, counts[keep])
    bits = np.unpackbits(uniq, axis=1, count=n_bits).astype(bool)
    k = rows.n_truth
    if not with_inverse:
        return bits[:, :k], bits[:, k:], total
    full = np.full(len(counts), -1, np.int64)
    full[keep] = inverse
    return bits[:, :k], bits[:, k:], total, full


def overlapping_cell_similarity(rows, cols) -> float:
    """ECS of the cells of biclusterings whose biclusters may overlap (α = 0.9, clusim's)."""
    truth, pred, counts = cell_classes(rows, cols)
    return overlapping_similarity(truth, pred, counts, alpha=ALPHA)


def _disjoint_pair_scores(rows, cols, r_bits: np.ndarray, c_bits: np.ndarray) -> np.ndarray:
    """Closed form per pair: ``|A ∩ B| / max(|A|, |B|)``, A and B the cell's bicluster or the cell alone."""
    k = rows.n_truth
    sizes = rows.sizes().astype(np.float64) * cols.sizes().astype(np.float64)
    out = []
    for cells in _pair_blocks(r_bits, c_bits):
        in_t, in_p = cells[..., :k], cells[..., k:]
        has_t, has_p = in_t.any(axis=-1), in_p.any(axis=-1)
        t_of = in_t.argmax(axis=-1) if k else np.zeros(has_t.shape, np.int64)
        p_of = (in_p.argmax(axis=-1) if rows.n_pred else np.zeros(has_p.shape, np.int64)) + k
        if not len(sizes):
            out.append(np.ones(cells.shape[:2]))
            continue
        shared = rows.gram[t_of, p_of].astype(np.float64) * cols.gram[t_of, p_of].astype(np.float64)
        a, b = sizes[t_of], sizes[p_of]
        with np.errstate(divide="ignore", invalid="ignore"):
            both = shared / np.maximum(a, b)
            out.append(np.where(has_t & has_p, both, np.where(has_t, 1 / a, np.where(has_p, 1 / b, 1.0))))
    return np.concatenate(out)


def cell_pair_scores(rows, cols, *, max_pairs: int = MAX_PAIRS) -> np.ndarray:
    """The score of a cell of each (row class, column class) pair, in :func:`signature_bits`' order.

    Closed form when no two biclusters of a side share a cell, else the
    class PageRank (NaN for a pair with no cell).

    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[1, 0, 0]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> cell_pair_scores(rows, cols).tolist()   # rows {0, 1}, {0}, {}: x the one column class and none
    [[0.5, nan], [0.25, nan], [1.0, nan]]
    """
    k = rows.n_truth
    sizes = rows.sizes().astype(object) * cols.sizes().astype(object)
    truth = np.flatnonzero(sizes[:k] != 0)
    pred = np.flatnonzero(sizes[k:] != 0) + k
    if not (_overlap(rows, cols, truth) or _overlap(rows, cols, pred)):
        (r_bits, r_cnt), (c_bits, c_cnt) = signature_bits(rows), signature_bits(cols)
        _check_pairs(len(r_cnt), len(c_cnt), max_pairs)
        scores = _disjoint_pair_scores(rows, cols, r_bits, c_bits)
        return np.where(np.multiply.outer(r_cnt, c_cnt) == 0, np.nan, scores)
    truth_c, pred_c, counts, inverse = cell_classes(rows, cols, max_pairs=max_pairs, with_inverse=True)
    scores = np.append(class_scores(truth_c, pred_c, counts), np.nan)
    return scores[inverse].reshape(rows.n_signatures + 1, cols.n_signatures + 1)


def _overlap(rows, cols, idx: np.ndarray) -> bool:
    r = rows.gram[np.ix_(idx, idx)].astype(object)
    c = cols.gram[np.ix_(idx, idx)].astype(object)
    shared = r * c
    np.fill_diagonal(shared, 0)
    return bool((shared != 0).any())


def cell_similarity_of_biclusterings(rows, cols) -> float:
    """ECS of the cells from the row and column :class:`~daskbicl.kernels.micro.memberships.Memberships`.

    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> rows = signature_counts(np.array([[1, 1, 0]], bool), np.array([[1, 0, 0]], bool))
    >>> cols = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1]], bool))
    >>> cell_similarity_of_biclusterings(rows, cols)   # 2 cells score 2/4, 2 score 1/4, 2 uncovered score 1
    0.5833333333333334
    """
    k = rows.n_truth
    sizes = rows.sizes().astype(object) * cols.sizes().astype(object)
    truth = np.flatnonzero(sizes[:k] != 0)
    pred = np.flatnonzero(sizes[k:] != 0) + k
    if _overlap(rows, cols, truth) or _overlap(rows, cols, pred):
        return overlapping_cell_similarity(rows, cols)
    n_cells = int(rows.n_items) * int(cols.n_items)
    if n_cells == 0:
        return 1.0
    shared = rows.gram[np.ix_(truth, pred)].astype(object) * cols.gram[np.ix_(truth, pred)].astype(object)
    a, b = sizes[truth], sizes[pred]
    terms = [Fraction(int(s) * int(s), max(int(a[i]), int(b[j]))) for (i, j), s in np.ndenumerate(shared) if s]
    terms += [Fraction(int(a[i] - shared[i].sum()), int(a[i])) for i in range(len(a))]
    terms += [Fraction(int(b[j] - shared[:, j].sum()), int(b[j])) for j in range(len(b))]
    uncovered = n_cells - int(a.sum()) - int(b.sum()) + int(shared.sum())
    total = math.fsum(float(t) for t in terms) + uncovered
    return min(total / n_cells, 1.0)
