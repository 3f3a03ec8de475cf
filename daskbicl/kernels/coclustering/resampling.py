"""Bootstrap replicates of contingency tables, and the labelled value they give (numpy only).

A bootstrap replicate of a co-clustering draws its I rows and its J columns
again, with replacement and independently (the two-way bootstrap).  Drawing
I rows with replacement and counting their (truth, pred) row-cluster pairs
is the same as redrawing the row contingency table from
Multinomial(I, n_hh' / I); the columns likewise.  So a replicate costs two
small redraws and never touches the labels:

* :class:`Redraw` (:func:`redraw_counts`) redraws the non-zero cells of one
  table for many replicates at once: one multinomial draw in which the
  cells of an equal small count are pooled into one category, the pool's
  items then spread uniformly over its cells (an exact multinomial redraw,
  with far fewer binomial draws when most cells hold an item or two), or,
  when the table has more cells than items, one draw of the items and a
  ``bincount``;
* :func:`replicate_table` turns one replicate's counts back into a
  :class:`~daskbicl.kernels.coclustering.contingency.Table` (clusters left
  empty by the draw dropped, the users' labels kept), which every measure
  reads as it reads the observed table;
* :func:`percentile_interval` is the percentile interval of the replicate
  values, and :class:`Bootstrapped` the value that carries it.

What the interval covers: the variability of the score under another draw
of rows and columns from the same population — not the algorithm's own
randomness, not errors of the reference (docs/guide/reading-a-score.md).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..micro.estimates import Estimate
from .contingency import Table

__all__ = ["POOLED_AT_MOST", "AxisReplicates", "Bootstrapped", "Redraw", "ari_replicates", "axis_replicates",
           "bias_corrected_interval", "cari_replicates", "entropy_replicates", "mi_replicates", "percentile_interval",
           "ratio_replicates", "redraw_counts", "replicate_table"]


class Bootstrapped(Estimate):
    """An exact value with its bootstrap interval over the items (rows and columns redrawn).

    A float (the value computed on the data, exact), like the sampled
    :class:`~daskbicl.kernels.micro.estimates.Estimate` it extends: ``low``
    and ``high`` are the percentile interval at ``level``, ``method`` is
    ``"bootstrap"`` (``"bootstrap-bc"`` for the bias-corrected interval,
    :func:`bias_corrected_interval`), ``samples`` the number of replicates
    and ``undefined`` the share of replicates on which the measure was
    undefined (left out).
    ``half_width`` is the larger distance from the value to an end.

    >>> b = Bootstrapped(0.61, 0.58, 0.65, 999)
    >>> float(b), b.low, b.high, b.method, b.exact
    (0.61, 0.58, 0.65, 'bootstrap', True)
    >>> print(b)
    0.6100 [0.5800, 0.6500]
    """

    exact = True
    method = "bootstrap"
    level: float
    undefined: float
    _low: float
    _high: float

    def __new__(cls, value: float, low: float, high: float, samples: int, level: float = 0.95,
                undefined: float = 0.0, method: str = "bootstrap"):
        value = float(value)
        half = max(value - low, high - value) if not (math.isnan(low) or math.isnan(high)) else math.nan
        self = super().__new__(cls, value, half, samples)
        self._low, self._high = float(low), float(high)
        self.level, self.undefined = float(level), float(undefined)
        self.method = method
        return self

    def __reduce__(self):
        return (Bootstrapped, (float(self), self._low, self._high, self.samples, self.level, self.undefined,
                               self.method))

    @property
    def low(self) -> float:
        """Lower end of the percentile interval."""
        return self._low

    @property
    def high(self) -> float:
        """Upper end of the percentile interval."""
        return self._high

    def __repr__(self) -> str:
        method = "" if self.method == "bootstrap" else f", method={self.method!r}"
        return (f"Bootstrapped({float(self)!r}, low={self._low!r}, high={self._high!r}, samples={self.samples}, "
                f"level={self.level!r}{method})")

    def __str__(self) -> str:
        """``value [low, high]``, 4 decimals."""
        return f"{float(self):.4f} [{self._low:.4f}, {self._high:.4f}]"

    def as_dict(self) -> dict:
        """The JSON form: value, its interval and how it was made."""
        return {"value": float(self), "exact": True, "low": self._low, "high": self._high, "method": self.method,
                "level": self.level, "samples": self.samples, "undefined": self.undefined}


#: Cells whose count is at most this and shared by at least one other cell are redrawn as one pool
#: (:class:`Redraw`): one binomial of the multinomial chain for the pool, then its items spread
#: uniformly over its cells.  Chosen by measurement (1,000 x 1,000 clusters, 10 % noise: most cells
#: hold 1 item); a constant, so the digits do not depend on the machine.
POOLED_AT_MOST = 8


class Redraw:
    """Multinomial(n, counts / n) redraws of one table's cells, n = Σ counts, set up once per table.

    A multinomial redraw of K cells costs K - 1 binomial draws per replicate.
    Cells with the same small count have the same probability, so their
    joint redraw is the same as (1) redrawing their pool as one category,
    with the summed probability, then (2) spreading the pool's m items
    uniformly over its cells (Multinomial(m, equal shares): m uniform
    integers, counted).  Both together are an exact multinomial redraw of
    the cells (the multinomial's grouping property); step (2) is cheaper
    than the binomials of step (1) while a cell holds few items
    (:data:`POOLED_AT_MOST`).  When the table has fewer items than cells the
    items themselves are drawn and counted per cell.

    >>> r = Redraw(np.array([3, 1, 1, 1])).draw(5, np.random.default_rng(0))
    >>> r.shape, r.sum(axis=1).tolist()
    ((5, 4), [6, 6, 6, 6, 6])
    """

    def __init__(self, counts) -> None:
        self.counts = np.asarray(counts, dtype=np.int64)
        self.n = int(self.counts.sum())
        values, inverse, sizes = np.unique(self.counts, return_inverse=True, return_counts=True)
        pooled = (values <= POOLED_AT_MOST) & (sizes > 1) & (values > 0)
        groups = np.flatnonzero(pooled)
        in_pool = pooled[inverse]
        #: cells redrawn on their own (in table order), then one category per pool
        self.single = np.flatnonzero(~in_pool)
        order = np.argsort(inverse[in_pool], kind="stable")
        self.members = np.flatnonzero(in_pool)[order]  # pooled cells, pool by pool
        self.pool_sizes = sizes[groups]
        self.pool_starts = np.cumsum(self.pool_sizes) - self.pool_sizes
        weights = np.concatenate([self.counts[self.single], values[groups] * self.pool_sizes])
        self.p = weights / self.n if self.n else weights.astype(np.float64)

    def draw(self, replicates: int, rng: np.random.Generator) -> np.ndarray:
        """``(replicates, len(counts))`` int64: each row an independent Multinomial(n, counts / n) redraw."""
        counts, n, k = self.counts, self.n, self.counts.size
        if k == 1 or n == 0:
            return np.broadcast_to(counts, (replicates, k)).copy()
        if n < k:  # fewer items than cells: draw the items, count them per cell
            cells = rng.choice(k, size=(replicates, n), p=counts / n)
            cells += (np.arange(replicates) * k)[:, None]
            return np.bincount(cells.ravel(), minlength=replicates * k).reshape(replicates, k)
        if self.members.size == 0:
            return rng.multinomial(n, counts / n, size=replicates).astype(np.int64, copy=False)
        drawn = rng.multinomial(n, self.p, size=replicates)
        offsets = np.arange(replicates) * k
        picked = []
        for pool, (size, start) in enumerate(zip(self.pool_sizes.tolist(), self.pool_starts.tolist())):
            taken = drawn[:, self.single.size + pool]  # the pool's items in each replicate
            spread = rng.integers(0, size, int(taken.sum()))  # each item's cell within the pool, uniformly
            picked.append(self.members[start + spread] + np.repeat(offsets, taken))
        out = np.bincount(np.concatenate(picked), minlength=replicates * k).reshape(replicates, k)
        out[:, self.single] = drawn[:, : self.single.size]
        return out


def redraw_counts(counts: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """``(replicates, len(counts))`` int64: each row a Multinomial(n, counts / n) redraw, n = Σ counts
    (:class:`Redraw`).

    >>> r = redraw_counts(np.array([3, 1]), 5, np.random.default_rng(0))
    >>> r.shape, r.sum(axis=1).tolist()
    ((5, 2), [4, 4, 4, 4, 4])
    """
    return Redraw(counts).draw(replicates, rng)


def replicate_table(table: Table, counts: np.ndarray) -> Table:
    """The table of one replicate: ``counts`` for the cells of ``table``, empty cells and clusters dropped.

    >>> t = Table.from_labels([0, 0, 1], [5, 6, 6])
    >>> r = replicate_table(t, np.array([0, 2, 1]))
    >>> r.truth_labels.tolist(), r.pred_labels.tolist(), r.dense().tolist()
    ([0, 1], [6], [[2], [1]])
    """
    keep = counts > 0
    rows, cols = table.rows[keep], table.cols[keep]
    used_r = np.zeros(table.shape[0], dtype=bool)
    used_c = np.zeros(table.shape[1], dtype=bool)
    used_r[rows] = True
    used_c[cols] = True
    return Table((np.cumsum(used_r) - 1)[rows].astype(np.intp), (np.cumsum(used_c) - 1)[cols].astype(np.intp),
                 np.asarray(counts[keep], dtype=np.int64), table.truth_labels[used_r], table.pred_labels[used_c])


def bias_corrected_interval(values: np.ndarray, observed: float, level: float) -> tuple[float, float, float]:
    """``(low, high, undefined share)``: the bias-corrected (BC) percentile interval (Efron 1982).

    With z0 the normal quantile of the share of replicates below the
    observed value (ties counted half), the ends are the replicate
    quantiles at Phi(2 z0 - z) and Phi(2 z0 + z), z the normal quantile of
    (1 + level) / 2 (Phi the normal distribution function):
    when the replicates sit above the observed value (a statistic biased
    upwards, such as the plug-in mutual information), the interval moves
    down by about that bias.  It stays inside the range of the replicates
    (bounded measures stay in their bounds).  :math:`z_0` is computed
    with the proportion kept within :math:`[1/(2m), 1 - 1/(2m)]`; no
    acceleration term (BCa's jackknife over the items, one deleted item per
    non-zero cell and axis of the counted tables, is not implemented).

    >>> v = np.linspace(0.0, 1.0, 101)
    >>> [round(x, 6) for x in bias_corrected_interval(v, 0.5, 0.9)]  # no bias: the percentile interval
    [0.05, 0.95, 0.0]
    >>> low, high, _ = bias_corrected_interval(v, 0.4, 0.9)  # replicates above the value: moved down
    >>> bool(low < 0.05 and high < 0.95)
    True
    """
    from scipy.special import ndtr, ndtri

    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    undefined = (values.size - finite.size) / values.size if values.size else 1.0
    if finite.size == 0 or not math.isfinite(observed):
        return math.nan, math.nan, 1.0 if finite.size == 0 else float(undefined)
    m = finite.size
    share = (np.count_nonzero(finite < observed) + 0.5 * np.count_nonzero(finite == observed)) / m
    z0 = float(ndtri(min(max(share, 0.5 / m), 1.0 - 0.5 / m)))
    z = float(ndtri((1.0 + level) / 2.0))
    low, high = np.quantile(finite, [float(ndtr(2.0 * z0 - z)), float(ndtr(2.0 * z0 + z))])
    return float(low), float(high), float(undefined)


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float, float]:
    """``(low, high, undefined share)``: the percentile interval of the finite replicate values.

    NaN marks a replicate on which the measure was undefined; it is left out
    and counted.  No finite value: ``(nan, nan, 1.0)``.

    >>> [round(x, 12) for x in percentile_interval(np.array([0.1, 0.2, np.nan, 0.3, 0.4]), 0.5)]
    [0.175, 0.325, 0.2]
    """
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    undefined = (values.size - finite.size) / values.size if values.size else 1.0
    if finite.size == 0:
        return math.nan, math.nan, 1.0
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high), float(undefined)


# --------------------------------------------------------------------------- many replicates at once


class AxisReplicates(NamedTuple):
    """Per replicate (arrays of length B) the sums the pair-counting and information measures read.

    ``*_sq`` are sums of squares of the cell counts and of the truth and pred
    cluster sizes; ``*_xlogx`` sums of ``x log x``; ``n`` the items (the same
    in every replicate).  float64: the point value is exact elsewhere, these
    only place the interval.
    """

    n: int
    cell_sq: np.ndarray
    truth_sq: np.ndarray
    pred_sq: np.ndarray
    cell_xlogx: np.ndarray
    truth_xlogx: np.ndarray
    pred_xlogx: np.ndarray


def _margins(cells: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """``(B, size)`` int64: the cluster sizes of each replicate, cell counts summed by ``index`` (exact in float64)."""
    b = cells.shape[0]
    flat = (index[None, :] + (np.arange(b) * size)[:, None]).ravel()
    return np.bincount(flat, weights=cells.ravel(), minlength=b * size).reshape(b, size).astype(np.int64)


def axis_replicates(table: Table, drawn: np.ndarray) -> AxisReplicates:
    """The sums of :class:`AxisReplicates` for the replicates ``drawn`` (B x cells) of ``table``.

    Exact integer sums of squares and margins; ``x log x`` read from a table of its values at
    0 .. max (the same float64 values ``x * log x`` gives, summed in the same order).

    >>> t = Table.from_labels([0, 0, 1], [0, 1, 1])
    >>> s = axis_replicates(t, np.array([[1, 1, 1], [3, 0, 0]]))
    >>> s.cell_sq.tolist(), s.truth_sq.tolist(), s.pred_sq.tolist()
    ([3.0, 9.0], [5.0, 9.0], [5.0, 9.0])
    """
    cells = np.asarray(drawn, dtype=np.int64)
    truth, pred = (_margins(cells, index, size) for index, size in ((table.rows, table.shape[0]),
                                                                    (table.cols, table.shape[1])))
    top = max(int(truth.max(initial=0)), int(pred.max(initial=0)))
    x = np.arange(top + 1, dtype=np.float64)
    xlogx = x * np.log(np.maximum(x, 1.0))

    def sq(a):
        return np.einsum("ij,ij->i", a, a).astype(np.float64)

    return AxisReplicates(table.n, sq(cells), sq(truth), sq(pred), xlogx[cells].sum(axis=-1),
                          xlogx[truth].sum(axis=-1), xlogx[pred].sum(axis=-1))


def _adjusted(a, r, c, pairs):
    den = pairs * (r + c) - 2.0 * r * c
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, 1.0, 2.0 * (a * pairs - r * c) / den)


def ari_replicates(s: AxisReplicates) -> np.ndarray:
    """The adjusted Rand index of each replicate (the formula of ``cocluster_scores.ari``, in float64)."""
    n = float(s.n)
    return _adjusted((s.cell_sq - n) / 2, (s.truth_sq - n) / 2, (s.pred_sq - n) / 2, n * (n - 1) / 2)


def cari_replicates(rows: AxisReplicates, cols: AxisReplicates) -> np.ndarray:
    """CARI of each replicate: the ARI of the cell table, whose sums of squares are products of the axes'."""
    n = float(rows.n) * float(cols.n)
    return _adjusted((rows.cell_sq * cols.cell_sq - n) / 2, (rows.truth_sq * cols.truth_sq - n) / 2,
                     (rows.pred_sq * cols.pred_sq - n) / 2, n * (n - 1) / 2)


def mi_replicates(s: AxisReplicates) -> np.ndarray:
    """Mutual information (nats) of each replicate, ``(Σ n log n − Σ a log a − Σ b log b)/n + log n``, at least 0."""
    n = float(s.n)
    if n <= 1:
        return np.zeros_like(s.cell_sq)
    return np.maximum((s.cell_xlogx - s.truth_xlogx - s.pred_xlogx) / n + math.log(n), 0.0)


def entropy_replicates(s: AxisReplicates) -> tuple[np.ndarray, np.ndarray]:
    """``(H(truth), H(pred))`` of each replicate, at least 0."""
    n = float(s.n)
    if n <= 1:
        return np.zeros_like(s.cell_sq), np.zeros_like(s.cell_sq)
    return (np.maximum(math.log(n) - s.truth_xlogx / n, 0.0), np.maximum(math.log(n) - s.pred_xlogx / n, 0.0))


def ratio_replicates(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` clipped to [0, 1], 1 where ``den`` is 0 (``cocluster_scores._ratio``, elementwise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den <= 0.0, 1.0, np.clip(num / den, 0.0, 1.0))
