"""Bootstrap replicates of the bicluster overlap tables, from the items' membership patterns (numpy only).

A bootstrap replicate draws the I rows and the J columns of the matrix
again, with replacement and independently.  A drawn row brings its whole
membership pattern: the truth and pred biclusters whose row sets contain
it.  So the shared rows of truth bicluster k and pred bicluster l in a
replicate are the drawn rows whose pattern holds both, and the row sizes
the drawn rows whose pattern holds k (or l).  Rows with the same pattern
are interchangeable: drawing I rows with replacement and counting them by
pattern is a Multinomial(I, c_s / I) redraw of the pattern counts c_s (the
rows in no bicluster are one pattern of their own).  The K x L tables of the
replicate follow exactly:

.. math::
    \\mathrm{shared}^*_{kl} = \\sum_s d_s\\,[k \\in s]\\,[l \\in s], \\qquad
    |E^*_k| = \\sum_s d_s\\,[k \\in s]

with :math:`d` the redrawn pattern counts — the same tables as counting
the explicitly resampled masks, and no re-read.  The patterns are the
distinct membership signatures the memberships pass counts
(:class:`~daskbicl.kernels.micro.memberships.Memberships`); for two
co-clusterings, the cells of the row and column contingency tables (a row
in truth cluster h and pred cluster h' is in the blocks (h, ·) and (h', ·)),
whose replicate is :func:`~daskbicl.kernels.coclustering.resampling.replicate_table`.

A replicate is the measure of the resampled data: a co-clustering's block
the redraw leaves with no row or no column does not exist there (it is
left out); a biclustering's emptied bicluster is kept, empty, and the
measures with the ``drop_empty`` option are finalized with it on (a
replicate that leaves a side with no bicluster is undefined for them).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..coclustering.contingency import Table
from ..micro.memberships import Memberships
from . import precision_recall as pr
from .mask_counting import BiclusterTables, MaskCounts

__all__ = ["Overlaps", "Patterns", "aggregate_replicates", "axis_patterns", "overlap_replicates", "pair_incidence",
           "replicate_tables", "table_patterns"]


class Patterns(NamedTuple):
    """The membership patterns of one axis: incidence of each pattern in the truth and pred biclusters.

    ``truth`` (S x K) and ``pred`` (S x L) are sparse 0/1 matrices,
    ``counts`` the items with each pattern (the last pattern: the items in
    no bicluster, possibly 0), ``n`` the items of the axis.
    """

    truth: Any  # scipy.sparse.csr_array
    pred: Any
    counts: np.ndarray
    n: int


def axis_patterns(m: Memberships) -> Patterns:
    """The :class:`Patterns` of one axis from its membership signatures.

    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> m = signature_counts(np.array([[1, 1, 0, 0]], bool), np.array([[0, 1, 1, 0]], bool))
    >>> p = axis_patterns(m)
    >>> p.truth.toarray().ravel().tolist(), p.pred.toarray().ravel().tolist(), p.counts.tolist()
    ([1, 1, 0, 0], [0, 1, 1, 0], [1, 1, 1, 1])
    """
    import scipy.sparse as sp

    s = m.n_signatures
    owner = np.repeat(np.arange(s), np.diff(m.ptr))
    el = np.asarray(m.el, dtype=np.int64)
    is_truth = el < m.n_truth
    truth = sp.csr_array((np.ones(int(is_truth.sum()), np.int64), (owner[is_truth], el[is_truth])),
                         shape=(s + 1, m.n_truth))
    pred = sp.csr_array((np.ones(int((~is_truth).sum()), np.int64), (owner[~is_truth], el[~is_truth] - m.n_truth)),
                        shape=(s + 1, m.n_pred))
    counts = np.append(np.asarray(m.cnt, dtype=np.int64), int(m.n_items) - int(np.sum(m.cnt)))
    return Patterns(truth, pred, counts, int(m.n_items))


def table_patterns(row_table: Table, col_table: Table) -> tuple[Patterns, Patterns]:
    """The :class:`Patterns` of both axes of two co-clusterings, whose blocks are the biclusters.

    A pattern is a cell (h, h') of an axis's contingency table: a row in truth
    row cluster h and pred row cluster h' is in the truth blocks (h, l) for
    every truth column cluster l and the pred blocks (h', l'), the blocks
    numbered row-cluster major as the bicluster tables number them.

    >>> rows, cols = table_patterns(Table.from_labels([0, 0, 1], [0, 1, 1]), Table.from_labels([0, 1], [0, 0]))
    >>> rows.truth.toarray().tolist(), rows.pred.toarray().tolist(), rows.counts.tolist()
    ([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]], [[1, 0], [0, 1], [0, 1], [0, 0]], [1, 1, 1, 0])
    """
    import scipy.sparse as sp

    shapes = ((len(row_table.truth_labels), len(row_table.pred_labels)),
              (len(col_table.truth_labels), len(col_table.pred_labels)))

    def blocks(cluster: np.ndarray, own: int, other: int, rows_axis: bool):
        """Incidence (cells x blocks) of the blocks holding each cell's cluster, ``own`` x ``other`` blocks."""
        s = np.repeat(np.arange(cluster.size), other)
        o = np.tile(np.arange(other), cluster.size)
        c = np.repeat(cluster, other)
        block = c * other + o if rows_axis else o * own + c
        return sp.csr_array((np.ones(s.size, np.int64), (s, block)), shape=(cluster.size + 1, own * other))

    out = []
    for axis, table in enumerate((row_table, col_table)):
        other = shapes[1 - axis]
        truth = blocks(np.asarray(table.rows), shapes[axis][0], other[0], axis == 0)
        pred = blocks(np.asarray(table.cols), shapes[axis][1], other[1], axis == 0)
        out.append(Patterns(truth, pred, np.append(np.asarray(table.counts, np.int64), 0), int(table.n)))
    return out[0], out[1]


def _axis_counts(p: Patterns, drawn: np.ndarray) -> MaskCounts:
    import scipy.sparse as sp

    drawn = np.asarray(drawn, dtype=np.int64)
    shared = (p.truth.T @ sp.diags_array(drawn, dtype=np.int64) @ p.pred).toarray().astype(np.int64, copy=False)
    return MaskCounts(shared, np.asarray(p.truth.T @ drawn, np.int64), np.asarray(p.pred.T @ drawn, np.int64), p.n)


def replicate_tables(rows: Patterns, cols: Patterns, drawn_rows: np.ndarray, drawn_cols: np.ndarray,
                     ids: tuple[np.ndarray, np.ndarray], blocks: tuple[bool, bool] = (False, False)) -> BiclusterTables:
    """The bicluster tables of one replicate.

    ``drawn_*`` are the redrawn pattern counts of the rows and of the
    columns, ``ids`` the truth and pred bicluster ids of the observed
    tables.  ``blocks[side]``: that side is a co-clustering, whose blocks
    the draw leaves empty do not exist in the resampled data (they are
    dropped, with their ids); a biclustering's emptied bicluster is kept,
    empty, as in the resampled masks (the measures with ``drop_empty`` are
    finalized with it on).

    >>> t = Table.from_labels([0, 0, 1], [0, 1, 1])
    >>> rows, cols = table_patterns(t, t)
    >>> r = replicate_tables(rows, cols, np.array([3, 0, 0, 0]), np.array([1, 1, 1, 0]), (np.arange(4), np.arange(4)),
    ...                      blocks=(True, True))
    >>> r.rows.shared.tolist(), r.rows.length, r.truth_ids.tolist(), r.pred_ids.tolist()
    ([[3, 3], [3, 3]], 3, [0, 1], [0, 1])
    """
    tables = BiclusterTables(_axis_counts(rows, drawn_rows), _axis_counts(cols, drawn_cols),
                             np.asarray(ids[0]), np.asarray(ids[1]))
    keep = [np.flatnonzero(((r > 0) & (c > 0)) | (not dropped)) for dropped, r, c in
            ((blocks[0], tables.rows.truth_sizes, tables.cols.truth_sizes),
             (blocks[1], tables.rows.pred_sizes, tables.cols.pred_sizes))]
    if keep[0].size < tables.truth_ids.size or keep[1].size < tables.pred_ids.size:
        tables = tables.drop(keep[0], keep[1])
    return tables


# --------------------------------------------------------------------------- many replicates at once


class Overlaps(NamedTuple):
    """One axis's overlap tables for a batch of B replicates, float64.

    ``shared`` (B, K, L), ``truth`` (B, K) and ``pred`` (B, L) sizes, ``n`` the items.
    """

    shared: np.ndarray
    truth: np.ndarray
    pred: np.ndarray
    n: int


def pair_incidence(p: Patterns):
    """Sparse (S, K·L): pattern s holds truth k and pred l (the row-wise Kronecker product of the incidences)."""
    import scipy.sparse as sp

    t, q = p.truth.tocsr(), p.pred.tocsr()
    t.sort_indices()
    q.sort_indices()
    n_t, n_p = np.diff(t.indptr), np.diff(q.indptr)
    m = n_t * n_p
    row = np.repeat(np.arange(m.size), m)
    offset = np.arange(int(m.sum())) - np.repeat(np.cumsum(m) - m, m)
    width = n_p[row]
    col = t.indices[t.indptr[row] + offset // np.maximum(width, 1)] * q.shape[1] + \
        q.indices[q.indptr[row] + offset % np.maximum(width, 1)]
    return sp.csr_array((np.ones(row.size), (row, col)), shape=(m.size, t.shape[1] * q.shape[1]))


def overlap_replicates(p: Patterns, drawn: np.ndarray, incidence=None) -> Overlaps:
    """The :class:`Overlaps` of the replicates ``drawn`` (B x patterns) of one axis.

    ``incidence``: the pattern-pair incidence, computed once for many batches
    (:func:`pair_incidence`); computed here when not given.

    >>> t = Table.from_labels([0, 0, 1], [0, 1, 1])
    >>> rows, _ = table_patterns(t, t)
    >>> o = overlap_replicates(rows, np.array([[1, 1, 1, 0], [0, 3, 0, 0]]))
    >>> o.shared[1].tolist()
    [[0.0, 0.0, 3.0, 3.0], [0.0, 0.0, 3.0, 3.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    >>> o.truth.tolist()
    [[2.0, 2.0, 1.0, 1.0], [3.0, 3.0, 0.0, 0.0]]
    """
    incidence = pair_incidence(p) if incidence is None else incidence
    d = np.asarray(drawn, dtype=np.float64)
    k, l = p.truth.shape[1], p.pred.shape[1]
    shared = np.asarray(incidence.T @ d.T).T.reshape(d.shape[0], k, l)
    return Overlaps(shared, np.asarray(p.truth.T @ d.T).T, np.asarray(p.pred.T @ d.T).T, p.n)


class _Terms:
    """The float terms of :mod:`precision_recall`'s formulas for a batch (B, K, L), each computed once, when read."""

    def __init__(self, rows: Overlaps, cols: Overlaps, n_cells: int):
        D = float(n_cells)
        self.n = rows.shared * cols.shared
        self.b = (rows.truth * cols.truth)[:, :, None]
        self.x = (rows.pred * cols.pred)[:, None, :]
        self.Db, self.Dx = D - self.b, D - self.x
        self.bx = self.b * self.x
        self.N = D * self.n - self.bx
        self.nz = (self.N != 0) & (self.Db > 0) & (self.Dx > 0)
        self._cache: dict = {}

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        cache = self.__dict__["_cache"]
        if name not in cache:
            cache[name] = getattr(self, f"_{name}")()
        return cache[name]

    def div(self, num, den, where=None) -> np.ndarray:
        """``num / den`` where ``where`` (default: ``nz``) holds, 0 elsewhere (``precision_recall._div``)."""
        out = np.zeros(self.N.shape)
        np.divide(num, den, out=out, where=self.nz if where is None else where)
        return out

    def _P(self):
        return self.x * self.Db

    def _Q(self):
        return self.b * self.Dx

    def _pre_c(self):
        return self.div(self.N, self.P)

    def _rec_c(self):
        return self.div(self.N, self.Q)

    def _union(self):
        return (self.b + self.x) - self.n

    def _positive(self):
        return self.nz & (self.N > 0)


#: The forms of each index, in the order of :data:`~.precision_recall.MEASURE_KEYS` (four indices, three forms).
_RAW, _CORRECTED, _SPACE = range(3)


def _goodness(t: _Terms, form: int, R: float) -> np.ndarray:
    rho, one_rho = pr.split_weight(R)
    if form == _RAW:
        return rho * (t.n / t.x) + one_rho * (t.n / t.b)
    if form == _CORRECTED:
        return t.div(t.N * (rho * t.b + one_rho * t.x), t.bx * (rho * t.Db + one_rho * t.Dx))
    return rho * t.pre_c + one_rho * t.rec_c


def _f(t: _Terms, form: int, weights: tuple[float, float]) -> np.ndarray:
    lam, mu = weights
    if form == _RAW:
        return t.n / (lam * t.b + mu * t.x)
    if form == _CORRECTED:
        return t.div(t.N, lam * t.Q + mu * t.P)
    return t.div(t.pre_c * t.rec_c, lam * t.pre_c + mu * t.rec_c, t.positive)


def _jaccard(t: _Terms, form: int) -> np.ndarray:
    if form == _RAW:
        return t.n / t.union
    if form == _CORRECTED:
        return t.div((t.b + t.x) * t.N, t.union * (t.P + t.Q))
    return t.div(t.pre_c * t.rec_c, t.pre_c + t.rec_c - t.pre_c * t.rec_c, t.positive)


def _score(t: _Terms, key: str, R: float, beta: float) -> np.ndarray:
    """One pair score of :func:`~.precision_recall.pair_scores` (``key`` a :data:`~.precision_recall.MEASURE_KEYS`:
    Goodness, F-measure, Dice, Jaccard, each raw, corrected and in the corrected space, in that order)."""
    index, form = divmod(pr.MEASURE_KEYS.index(key), 3)
    if index == 0:
        return _goodness(t, form, R)
    if index == 3:
        return _jaccard(t, form)
    return _f(t, form, pr.beta_weights(beta) if index == 1 else (0.5, 0.5))


def _mean_best(table: np.ndarray, valid_t: np.ndarray, valid_p: np.ndarray, aggregate: str) -> np.ndarray:
    """Per replicate, the mean best match over the non-empty truth (pred) biclusters; NaN when a side has none."""
    masked = table if valid_t.all() and valid_p.all() else np.where(valid_t[:, :, None] & valid_p[:, None, :], table,
                                                                     -np.inf)
    means = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for side, axis, valid in (("truth", 2, valid_t), ("pred", 1, valid_p)):
            if aggregate in (side, "both"):
                means[side] = np.where(valid, masked.max(axis=axis), 0.0).sum(axis=1) / valid.sum(axis=1)
        if aggregate == "both":
            x, y = means["truth"], means["pred"]
            means["both"] = np.where((x <= 0) | (y <= 0), np.minimum(x, y), 2.0 * x * y / (x + y))
    return np.where(valid_t.any(axis=1) & valid_p.any(axis=1), means[aggregate], math.nan)


def aggregate_replicates(rows: Overlaps, cols: Overlaps, n_cells: int, keys, *, R: float = 1.0, beta: float = 1.0,
                         clip: bool = False, aggregate: str = "truth") -> dict[str, np.ndarray]:
    """Each precision–recall aggregate ``keys`` (:data:`~.precision_recall.MEASURE_KEYS`) on each replicate.

    The formulas of :func:`~.precision_recall.pair_scores` and
    :func:`~.precision_recall.best_match_mean`, in float64 over a batch
    (the observed value is exact elsewhere: these place the interval), the
    biclusters a replicate leaves empty left out (``drop_empty=True``; NaN
    when a side has none left).

    >>> t = Table.from_labels([0, 0, 1], [0, 1, 1])
    >>> rows, cols = table_patterns(t, t)
    >>> d = np.array([[1, 1, 1, 0]])
    >>> aggregate_replicates(overlap_replicates(rows, d), overlap_replicates(cols, d), 9, ["dice"])["dice"].round(12).tolist()
    [0.45]
    """
    valid_t = (rows.truth > 0) & (cols.truth > 0)
    valid_p = (rows.pred > 0) & (cols.pred > 0)
    terms = _Terms(rows, cols, n_cells)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for key in keys:
            table = _score(terms, key, R, beta)
            if clip and key.endswith(("_corrected", "_space")):
                np.maximum(table, 0.0, out=table)
            out[key] = _mean_best(table, valid_t, valid_p, aggregate)
    return out
