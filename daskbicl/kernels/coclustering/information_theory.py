"""Information-theoretic measures per axis: NMI, AMI (with the expected MI), VI.

Every function takes one :class:`~daskbicl.kernels.coclustering.contingency.Table` (the
row table n^{zz'} or the column table n^{ww'}); :func:`vi` takes both.

Conventions follow scikit-learn's ``normalized_mutual_info_score`` and
``adjusted_mutual_info_score`` (natural logarithms; ``average_method`` in
``min``, ``geometric``, ``arithmetic``, ``max``; 1.0 when both sides have a
single cluster), so the values agree with scikit-learn to rounding.

The expected mutual information
-------------------------------
Under the permutation model (margins ``a_h = n_{h·}`` and ``b_{h'} = n_{·h'}``
fixed) the count of a cell is hypergeometric, and

.. math::
    E[\\mathrm{MI}] = \\sum_{h,h'} \\sum_{k} \\frac{k}{N}
        \\log\\frac{N k}{a_h b_{h'}}\\; P(k;\\, N, a_h, b_{h'}).

:func:`expected_mutual_info` groups the margins by distinct value (pairs of
equal sizes have equal terms), and sums each hypergeometric distribution
only over the window around its mean where it is not negligible: by
Bernstein's inequality (which holds for sampling without replacement,
Hoeffding 1963, Thm 4) the mass outside ``μ ± d`` is at most ``δ`` when
``d = L/3 + sqrt(L²/9 + 2σ²L)``, ``L = log(2/δ)``, ``σ² = a (b/N)(1 − b/N)``.
Inside the window the probabilities come from the ratio
``P(k+1)/P(k) = (a−k)(b−k) / ((k+1)(N−a−b+k+1))``, summed in logarithms
from the mode and normalised over the window (no ``lgamma`` of numbers near
N, whose rounding is what makes naive implementations lose digits at large
N).  Every term satisfies ``|k/N · log(Nk/(ab))| ≤ min(a, b)/N · log N``,
so the total error is at most ``2 δ log N · min(H, H')``; ``δ`` is chosen so
that this is below ``tol`` (default 1e-12, absolute, in nats).
"""

from __future__ import annotations

import math

import numpy as np

from .cocluster_scores import _entropies
from .contingency import Table
from .information_terms import bregman_terms, mutual_info, variation_of_information

__all__ = ["AVERAGE_METHODS", "EMI_TOL", "ami", "expected_mutual_info", "generalized_average", "nmi", "vi"]

#: The averages of the two entropies NMI and AMI may divide by (scikit-learn's names).
AVERAGE_METHODS = ("arithmetic", "geometric", "min", "max")

#: Default absolute error bound of :func:`expected_mutual_info`, in nats.
EMI_TOL = 1e-12

#: Window entries evaluated at once (bounds the memory of the EMI sum: ~8 arrays of this many floats).
_BATCH = 1 << 21

#: A denominator avg(H, H') − E[MI] within this (relative) of 0 is exactly 0 up to the EMI error bound.
_DEGENERATE = 1e-10

#: E[MI] is refined until its error bound is below this share of its value (relative precision).
EMI_REL = 1e-14
#: n below this: n·k and a·b fit in int64.
_INT64_N = 3_037_000_499


def generalized_average(u: float, v: float, method: str) -> float:
    """The ``method`` average of two entropies.

    >>> generalized_average(1.0, 4.0, "geometric"), generalized_average(1.0, 4.0, "arithmetic")
    (2.0, 2.5)
    """
    if method == "min":
        return min(u, v)
    if method == "max":
        return max(u, v)
    if method == "geometric":
        return math.sqrt(u * v)
    if method == "arithmetic":
        return (u + v) / 2.0
    raise ValueError(f"average_method must be one of {AVERAGE_METHODS}, got {method!r}")


def _single_clusters(table: Table) -> bool:
    """Both sides put everything in one cluster (scikit-learn's special case: a perfect match)."""
    return table.shape[0] == table.shape[1] == 1


def nmi(table: Table, average_method: str = "arithmetic") -> float:
    """Normalized mutual information ``MI / avg(H, H')`` of one axis.

    1.0 when both sides have a single cluster; 0.0 when MI is 0; clipped to
    [0, 1] against rounding.

    >>> t = Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0])
    >>> nmi(t), nmi(Table.from_labels([0, 0, 1, 1], [0, 1, 0, 1]))
    (1.0, 0.0)
    """
    if _single_clusters(table):
        return 1.0
    mi = mutual_info(table)
    if mi == 0.0:
        return 0.0
    h, hp = _entropies(table)
    return min(max(mi / generalized_average(h, hp, average_method), 0.0), 1.0)


def _window(a: np.ndarray, b: np.ndarray, n: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Per pair of margins, the range of cell counts outside which the hypergeometric mass is below delta."""
    lo0 = np.maximum(0, a + b - n)
    hi0 = np.minimum(a, b)
    big = math.log(2.0 / delta)
    p = b / n
    var = a * p * (1.0 - p)
    d = big / 3.0 + np.sqrt((big / 3.0) ** 2 + 2.0 * var * big)
    mean = a * p
    lo = np.maximum(lo0, np.floor(mean - d).astype(np.int64) - 1)
    hi = np.minimum(hi0, np.ceil(mean + d).astype(np.int64) + 1)
    return lo, hi


def _offsets(a, b, k, n: int) -> np.ndarray:
    """``(n k − a b) / (a b)`` per window entry, from the exact integer numerator.

    int64 when ``n² < 2^63``; beyond, ``n·lo − a·b`` per pair in Python
    integers (a few window widths of ``n``, so the per-entry part fits int64).
    """
    ab = (a.astype(np.float64) * b.astype(np.float64))[:, None]
    if n < _INT64_N:
        return (n * k - (a * b)[:, None]).astype(np.float64) / ab
    base = np.array([n * int(lo) - int(x) * int(y) for lo, x, y in zip(k[:, 0].tolist(), a.tolist(), b.tolist())],
                    dtype=object)
    if not all(abs(v) < (1 << 62) for v in base.tolist()) or n * int(k.shape[1]) >= (1 << 62):
        d = [[n * int(kk) - int(x) * int(y) for kk in row] for row, x, y in zip(k.tolist(), a.tolist(), b.tolist())]
        return np.array([[v / (int(x) * int(y)) for v in row] for row, x, y in zip(d, a.tolist(), b.tolist())])
    step = n * (k - k[:, :1])
    return (base.astype(np.int64)[:, None] + step).astype(np.float64) / ab


def _emi_batch(a, b, lo, width, n: int) -> np.ndarray:
    """Σ_k P(k) q f(x_k) for each pair over the window ``lo .. lo + width − 1`` (per-pair widths).

    ``q = ab/n²`` and ``f(x) = (1 + x) log1p(x) − x ≥ 0`` with ``x_k = (nk −
    ab)/(ab)``: the expectation of the cell's KL term ``p log(p/q) − p + q``,
    whose ``− p + q`` part has expectation 0 cell by cell, so every term is
    ``≥ 0`` and the sum keeps its relative precision (k = 0 contributes q).
    """
    span = int(width.max())
    k = lo[:, None] + np.arange(span)[None, :]
    inside = np.arange(span)[None, :] < width[:, None]
    af, bf = a[:, None].astype(np.float64), b[:, None].astype(np.float64)
    kf = k.astype(np.float64)
    # log P(k+1) − log P(k); the last column of each row is not used
    with np.errstate(divide="ignore", invalid="ignore"):
        step = (np.log(af - kf) + np.log(bf - kf)) - (np.log(kf + 1.0) + np.log(float(n) - af - bf + kf + 1.0))
    step = np.where(inside, step, 0.0)
    logp = np.zeros_like(kf)
    np.cumsum(step[:, :-1], axis=1, out=logp[:, 1:])
    logp = np.where(inside, logp, -np.inf)
    logp -= logp.max(axis=1, keepdims=True)
    prob = np.exp(logp)
    prob /= prob.sum(axis=1, keepdims=True)
    x = np.where(inside, _offsets(a, b, np.where(inside, k, lo[:, None]), n), 0.0)
    g = (af * bf / (float(n) * float(n))) * bregman_terms(x.ravel()).reshape(x.shape)
    return (prob * np.where(inside, g, 0.0)).sum(axis=1)


def _batches(sorted_widths: np.ndarray, order: np.ndarray):
    """Consecutive slices of ``order`` (sorted by width) of at most ``_BATCH`` window entries each."""
    start, total = 0, sorted_widths.size
    while start < total:
        lo, hi = 1, total - start  # the largest m with widths[start + m - 1] * m <= _BATCH (at least 1)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(sorted_widths[start + mid - 1]) * mid <= _BATCH:
                lo = mid
            else:
                hi = mid - 1
        yield order[start:start + lo]
        start += lo


def _emi_sum(table: Table, tol: float) -> float:
    """E[MI] with absolute error at most ``tol``: the windowed sum of the module docs."""
    n = int(table.n)
    ua, ma = np.unique(table.truth_sizes()[table.truth_sizes() > 0], return_counts=True)
    ub, mb = np.unique(table.pred_sizes()[table.pred_sizes() > 0], return_counts=True)
    clusters = min(int(ma.sum()), int(mb.sum()))
    # every term is at most (k/n) log n + ab/n² ≤ 2 min(a, b)/n · log n
    delta = max(tol / (4.0 * math.log(n) * clusters), 1e-300)
    a = np.repeat(ua, ub.size).astype(np.int64)
    b = np.tile(ub, ua.size).astype(np.int64)
    weight = np.repeat(ma, ub.size).astype(np.float64) * np.tile(mb, ua.size)
    lo, hi = _window(a, b, n, delta)
    width = hi - lo + 1
    order = np.argsort(width, kind="stable")
    parts = []
    for idx in _batches(width[order], order):
        parts.extend((weight[idx] * _emi_batch(a[idx], b[idx], lo[idx], width[idx], n)).tolist())
    return max(math.fsum(parts), 0.0)


def expected_mutual_info(table: Table, tol: float = EMI_TOL) -> float:
    """E[MI] of one axis under the permutation model, with error at most ``min(tol, 1e-14·E[MI])`` (nats).

    See the module docs for the method and the bound: the window is chosen
    for ``tol`` first and, when the result is so small that ``tol`` is not
    below :data:`EMI_REL` of it, again for ``EMI_REL`` times the result (the
    windows grow with ``log(1/δ)`` only), so near-trivial tables keep their
    relative precision.

    >>> t = Table.from_labels([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
    >>> round(expected_mutual_info(t), 12)   # scikit-learn's expected_mutual_information agrees
    0.277258872224
    """
    def compute():
        if int(table.n) <= 1 or 1 in table.shape:
            return 0.0
        # first window for the asymptotic E[MI] ≈ (H−1)(H'−1)/(2n), so one pass usually suffices
        guess = (table.shape[0] - 1) * (table.shape[1] - 1) / (2.0 * table.n)
        first = min(tol, 0.1 * EMI_REL * guess)
        value = _emi_sum(table, first)
        if value * EMI_REL < first:
            value = _emi_sum(table, max(value * EMI_REL, 1e-300))
        return value

    return table.memo(("emi", tol), compute)


def ami(table: Table, average_method: str = "arithmetic", tol: float = EMI_TOL) -> float:
    """Adjusted mutual information ``(MI − E[MI]) / (avg(H, H') − E[MI])`` of one axis.

    As scikit-learn: 1.0 when both sides have a single cluster, 0.0 when
    only one side has, and 1.0 when the denominator is 0 (every permutation
    of the labels has the same MI, e.g. one side all singletons), where
    scikit-learn reaches 1.0 by clamping both terms to one machine epsilon.

    >>> ami(Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0]))
    1.0
    >>> round(ami(Table.from_labels([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])), 12)  # below chance
    -0.448188687256
    """
    if _single_clusters(table):
        return 1.0
    if 1 in table.shape:  # one side has a single cluster, the other several: no information
        return 0.0
    mi = mutual_info(table)
    emi = expected_mutual_info(table, tol)
    h, hp = _entropies(table)
    norm = generalized_average(h, hp, average_method)
    den = norm - emi
    if abs(den) <= _DEGENERATE * max(1.0, norm):
        # The average entropy equals E[MI]: every permutation gives the same MI
        # (e.g. one side all singletons), so MI equals its expectation and its
        # largest value at once; scikit-learn returns 1.0 here.
        return 1.0
    return (mi - emi) / den


def vi(rows: Table, cols: Table) -> float:
    """Variation of information of the cell partitions, in nats.

    The cell partition's entropies and mutual information are sums of the
    row and column ones, so VI(cells) = VI(rows) + VI(cols), each a sum of
    non-negative cell terms (:func:`~daskbicl.kernels.coclustering.information_terms.variation_of_information`).

    >>> t = Table.from_labels([0, 0, 1, 1], [0, 1, 0, 1])   # independent halves: 2 log 2
    >>> round(vi(t, Table.from_labels([0], [0])), 10)
    1.3862943611
    """
    return variation_of_information(rows) + variation_of_information(cols)
