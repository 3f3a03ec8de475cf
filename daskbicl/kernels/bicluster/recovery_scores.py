"""The scores of Nicholls & Wallace's comparison of sparse biclustering methods (biclust_comp).

Everything here is computed from the joint membership signatures of the
rows and of the columns (:class:`~daskbicl.kernels.micro.memberships.Memberships`:
truth biclusters numbered 0..K-1, pred biclusters K..K+L-1), never cell by cell:

* the *sparse* biclusters are those with fewer than ``share`` of the rows
  **and** fewer than ``share`` of the columns (biclust_comp's
  ``identify_sparse_biclusters``, ``share`` = 0.4); the others are *dense*.
  The comparison is exact: ``share`` is read as the decimal it is written
  as (0.4 is 2/5) and a size s of n items is sparse when ``s·q < p·n``
  for ``share = p/q``;
* the clustering error of one class (Patrikainen & Meila's D_max / |U|, the
  similarity biclust_comp reports as CE) keeps the truth and pred
  biclusters of that class only: D_max is the best one-to-one matching of
  the K x L table of shared cells restricted to the class, |U| counts every
  cell max(a, b) times, a and b being the truth and pred biclusters of the
  class containing it.  |U| needs the cells' memberships: the row and the
  column signatures are projected on the class (identical projections
  merged), then every projected row signature is intersected with every
  projected column signature (:func:`~daskbicl.kernels.bicluster.cell_pairs.cell_signatures`,
  the work is their product);
* the redundancy of pred is the Jaccard index of the cell sets of every two
  pred biclusters, from the pred x pred blocks of the two Gram tables.

Biclusters with no row or no column cover no cell; they are left out on both
sides (biclust_comp's ``remove_empty_factors`` does so for the biclusters
a method returns).  Counts are exact integers (Python integers where a
product of two counts could pass int64).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .cell_pairs import cell_histogram, cell_signatures

__all__ = ["CLASSES", "ClassCounts", "RecoveryTables", "ce_of_class", "recovery_tables", "redundancy",
           "sparse_flags", "STATISTICS"]

#: The two classes of biclusters (biclust_comp's sparse and dense factors).
CLASSES = ("sparse", "dense")

#: How the pairwise redundancies of pred are summarised (biclust_comp's three columns).
STATISTICS = ("mean", "average_max", "max")


@dataclass(frozen=True)
class ClassCounts:
    """One class: its truth and pred biclusters, D_max and the multiset union |U| (Python integers)."""

    n_truth: int
    n_pred: int
    matched: int
    union: int


@dataclass(frozen=True)
class RecoveryTables:
    """What ``recovered``, ``redundancy`` and the class CEs read (module docstring).

    ``pred_shared[k, l]`` = cells in both non-empty pred biclusters k and l
    (the diagonal holds their sizes).
    """

    pred_shared: np.ndarray
    classes: dict

    @property
    def recovered(self) -> int:
        """The number of non-empty pred biclusters (biclust_comp's ``recovered_K``)."""
        return int(self.pred_shared.shape[0])


def _fraction(share: float) -> Fraction:
    """``share`` as the decimal it is written as (``0.4`` -> 2/5, not the binary double above it)."""
    return Fraction(repr(float(share)))


def sparse_flags(sizes: np.ndarray, n_items: int, share: float) -> np.ndarray:
    """``sizes < share·n_items`` compared exactly.

    >>> sparse_flags(np.array([1, 2, 3]), 5, 0.4).tolist()   # 2/5 is not below 0.4
    [True, False, False]
    """
    f = _fraction(share)
    return np.array([s * f.denominator < f.numerator * int(n_items) for s in np.asarray(sizes).tolist()], bool)


def _project(m, keep: np.ndarray):
    """``(ptr, el, cnt)`` of the signatures of ``m`` restricted to the elements ``keep``, merged."""
    kept = keep[m.el]
    merged: dict[bytes, list] = {}
    for s in range(len(m.cnt)):
        lo, hi = int(m.ptr[s]), int(m.ptr[s + 1])
        sig = m.el[lo:hi][kept[lo:hi]].astype(np.int64)
        if sig.size:
            entry = merged.setdefault(sig.tobytes(), [sig, 0])
            entry[1] += int(m.cnt[s])
    sigs = [v[0] for v in merged.values()]
    ptr = np.concatenate([[0], np.cumsum([len(s) for s in sigs], dtype=np.int64)]).astype(np.int64)
    el = np.concatenate(sigs) if sigs else np.zeros(0, np.int64)
    return ptr, el, np.array([v[1] for v in merged.values()], np.int64)


def multiset_union(rows, cols, keep: np.ndarray, max_work: float = np.inf) -> int:
    """Σ over cells of max(a, b): a, b the truth and pred biclusters among ``keep`` containing the cell."""
    r, c = _project(rows, keep), _project(cols, keep)
    if not len(r[2]) or not len(c[2]):
        return 0
    ptr, el, cnt = cell_signatures(r, c, max_work=max_work)
    hist = cell_histogram(ptr, el, cnt, int(rows.n_items) * int(cols.n_items), rows.n_truth)
    return sum(max(a, b) * int(n) for (a, b), n in np.ndenumerate(hist) if n)


def _shared_cells(rows, cols, t_idx: np.ndarray, p_idx: np.ndarray) -> np.ndarray:
    r = rows.gram[np.ix_(t_idx, p_idx)]
    c = cols.gram[np.ix_(t_idx, p_idx)]
    if float(rows.n_items) * float(cols.n_items) >= 2.0**62:  # products could pass int64
        return r.astype(object) * c.astype(object)
    return r.astype(np.int64) * c.astype(np.int64)


def _matched(shared: np.ndarray) -> int:
    """D_max: the largest total of a one-to-one matching (scipy's assignment, the sum in integers)."""
    if shared.size == 0:
        return 0
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(shared.astype(np.float64), maximize=True)
    return sum(int(x) for x in shared[r, c].tolist())


def recovery_tables(rows, cols, share: float = 0.4, max_work: float = np.inf, classes: bool = True) -> RecoveryTables:
    """The :class:`RecoveryTables` of two biclusterings from their row and column signatures (a task).

    ``classes=False`` leaves the sparse and dense classes out (``classes`` is then empty).
    """
    k, n_elem = rows.n_truth, rows.n_elem
    sizes_r, sizes_c = rows.sizes(), cols.sizes()
    nonempty = (sizes_r > 0) & (sizes_c > 0)
    sparse = sparse_flags(sizes_r, rows.n_items, share) & sparse_flags(sizes_c, cols.n_items, share)
    out = {}
    for name, member in (("sparse", nonempty & sparse), ("dense", nonempty & ~sparse)) if classes else ():
        t_idx = np.flatnonzero(member[:k])
        p_idx = np.flatnonzero(member[k:]) + k
        matched = _matched(_shared_cells(rows, cols, t_idx, p_idx)) if len(t_idx) and len(p_idx) else 0
        union = multiset_union(rows, cols, member, max_work) if len(t_idx) else 0
        out[name] = ClassCounts(len(t_idx), len(p_idx), matched, union)
    p_all = np.flatnonzero(nonempty[k:n_elem]) + k
    pred_shared = _shared_cells(rows, cols, p_all, p_all)
    return RecoveryTables(pred_shared, out)


def ce_of_class(tables: RecoveryTables, name: str) -> float:
    """D_max / |U| of the class ``name``; nan when truth has no bicluster of it, 0 when pred has none.

    >>> t = RecoveryTables(np.zeros((0, 0), np.int64), {"sparse": ClassCounts(2, 1, 3, 12)})
    >>> ce_of_class(t, "sparse")
    0.25
    """
    c = tables.classes[name]
    if c.n_truth == 0:
        return math.nan
    if c.n_pred == 0:
        return 0.0
    return float(Fraction(c.matched, c.union))


def _pair_jaccard(shared: np.ndarray) -> np.ndarray:
    """Cell Jaccard index of every two pred biclusters, 0 on the diagonal."""
    n = shared.shape[0]
    out = np.zeros((n, n))
    sizes = [shared[i, i] for i in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j:
                s = shared[i, j]
                out[i, j] = float(Fraction(int(s), int(sizes[i] + sizes[j] - s)))
    return out


def redundancy(tables: RecoveryTables, statistic: str = "mean") -> float:
    """Redundancy of pred (biclust_comp): the pairwise cell Jaccard of its biclusters, summarised.

    ``"mean"``: over the L(L-1) ordered pairs of distinct biclusters (the
    mean bicluster redundancy, MBR, of Nicholls & Wallace); ``"average_max"``:
    the mean over biclusters of the largest Jaccard with another one;
    ``"max"``: the largest.  0 with fewer than two biclusters.

    >>> shared = np.array([[4, 2], [2, 2]])   # the second bicluster lies inside the first
    >>> redundancy(RecoveryTables(shared, {})), redundancy(RecoveryTables(shared, {}), "max")
    (0.5, 0.5)
    """
    jac = _pair_jaccard(tables.pred_shared)
    n = jac.shape[0]
    if n < 2:
        return 0.0
    if statistic == "mean":
        return math.fsum(jac.ravel().tolist()) / (n * (n - 1))
    if statistic == "average_max":
        return math.fsum(jac.max(axis=0).tolist()) / n
    if statistic == "max":
        return float(jac.max())
    raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
