"""Pairs of cells counted by the biclusters they share: omega on cells and the Campello soft index.

A cell (i, j) lies in exactly the biclusters its row and its column share:
its membership is R_s ∩ C_t for its row's signature s and its column's
signature t.  :func:`cell_signatures` forms these intersections (every
row signature against every column signature: the work is their product,
checked against the work limit first) with ``cnt = rows of s × columns of
t``; :func:`~daskbicl.kernels.bicluster.omega_index.pair_histogram` then
counts the pairs of cells by (truth, pred) biclusters shared, exactly as for
rows.  :func:`cell_histogram` counts the cells themselves by (truth, pred)
biclusters containing them.

The Campello soft index as biclustlib computes it (``evaluation/csi.py``,
following Horta & Campello 2014): each biclustering becomes a soft
clustering of the cells (one cluster per bicluster, plus a singleton for
every uncovered cell); with a, b the truth and pred biclusters a pair shares
and u, v = max(1, #pred), max(1, #truth) biclusters containing a cell,

    A = Σ_pairs min(a, b) + Σ_cells min(u − 1, v − 1),
    D = Σ_pairs |a − b|   + Σ_cells |u − v|,          CSI = A / (A + D).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ...errors import TooLargeError
from .omega_index import MAX_ITEMS, pair_histogram

__all__ = ["cell_histogram", "cell_signatures", "csi_from_histograms"]


def cell_signatures(rows, cols, *, max_work: float = np.inf):
    """``(ptr, el, cnt)`` of the non-empty cell memberships (module docstring).

    ``rows`` and ``cols`` are ``(ptr, el, cnt)`` of the row and column joint
    signatures (one numbering of truth and pred biclusters on both axes).
    """
    n_r, n_c = len(rows[2]), len(cols[2])
    if float(n_r) * n_c > max_work:
        raise TooLargeError(
            f"the cell signatures need {n_r} row x {n_c} column signature intersections, above the work "
            f"limit {max_work:.3g} (dask config daskbicl.max_work); raise it to compute anyway")
    from .signature_pairs import cell_intersections  # numba: loaded only when cells are counted

    as64 = [np.asarray(x, np.int64) for x in (*rows, *cols)]
    return cell_intersections(*as64)


def cell_histogram(ptr, el, cnt, n_cells: int, n_truth: int) -> np.ndarray:
    """``d[a, b]`` = cells in exactly a truth and b pred biclusters (Python integers)."""
    ptr, el, cnt = np.asarray(ptr, np.int64), np.asarray(el, np.int64), np.asarray(cnt, np.int64)
    sig = np.repeat(np.arange(len(cnt)), np.diff(ptr))
    a = np.bincount(sig[el < n_truth], minlength=len(cnt))
    b = np.diff(ptr) - a
    out = np.zeros((int(a.max(initial=0)) + 1, int(b.max(initial=0)) + 1), object)
    out[:] = 0
    for ai, bi, c in zip(a.tolist(), b.tolist(), cnt.tolist()):
        out[ai, bi] += c
    out[0, 0] += n_cells - int(sum(cnt.tolist()))
    return out


def cell_pair_histogram(ptr, el, cnt, n_cells: int, n_truth: int, n_pred: int,
                        *, max_work: float = np.inf) -> np.ndarray:
    """Pairs of cells by (truth, pred) biclusters shared (refuses beyond :data:`MAX_ITEMS` cells)."""
    if n_cells > MAX_ITEMS:
        raise TooLargeError(
            f"{n_cells} cells: pairs of cells are counted in int64 up to {MAX_ITEMS} cells; "
            "score the row and column covers (omega_rows, omega_cols) instead")
    return pair_histogram(ptr, el, cnt, n_cells, n_truth, n_pred, max_work=max_work)


def csi_from_histograms(pairs: np.ndarray, cells: np.ndarray) -> float:
    """The Campello soft index from the pair and cell histograms (exact integers, one rounding).

    CSI is 1 when there is no disagreement at all (D = 0), e.g. two sides
    whose biclusters are single cells (every co-association is 0 on both).

    Examples
    --------
    >>> csi_from_histograms(np.array([[2, 0], [0, 1]]), np.array([[1, 0], [0, 2]]))
    1.0
    >>> csi_from_histograms(np.array([[2, 1], [0, 0]]), np.array([[1, 2], [0, 0]]))
    0.0
    """
    agree = disagree = 0
    for (a, b), n in np.ndenumerate(np.asarray(pairs, object)):
        agree += min(a, b) * int(n)
        disagree += abs(a - b) * int(n)
    for (a, b), n in np.ndenumerate(np.asarray(cells, object)):
        u, v = max(b, 1), max(a, 1)
        agree += min(u - 1, v - 1) * int(n)
        disagree += abs(u - v) * int(n)
    if disagree == 0:
        return 1.0
    return float(Fraction(agree, agree + disagree))
