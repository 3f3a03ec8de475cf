"""Weighted precision–recall indices and the tradeoff-space maths (numpy only).

The maths only: each index is a nameless :class:`IndexFormula` record
(:data:`KULCZYNSKI`, :data:`FMEASURE`, :data:`FOLKE`, :data:`JACCARD`) and
every function takes the record.  The names a user types (``index=``,
``daskbicl tradeoff --index``), the display names and the default index are
records of the registry layer, :mod:`daskbicl.measures.weighted_indices`,
which also holds the by-name :func:`~daskbicl.measures.weighted_indices.weighted_index`.

Every weighted index :math:`I_\\lambda(pre, rec)` with :math:`\\lambda \\in
[0, 1]` the importance of recall becomes *linear in* :math:`\\lambda` after a
monotone transform :math:`g`, on at most two pieces:

=============  ==============  ===============================================
index          :math:`g(I)`    :math:`g(I_\\lambda)`
=============  ==============  ===============================================
Kulczynski     :math:`I`       :math:`pre + \\lambda (rec - pre)`
F-measure      :math:`1/I`     :math:`1/pre + \\lambda (1/rec - 1/pre)`
Folke          :math:`\\log I`  :math:`\\log pre + \\lambda \\log(rec/pre)`
Jaccard        :math:`1/I`     :math:`1/pre + 2\\lambda (1/rec - 1)` on
                               :math:`[0, \\tfrac12]`;
                               :math:`1/rec + 2(1-\\lambda)(1/pre - 1)` on
                               :math:`[\\tfrac12, 1]`
=============  ==============  ===============================================

So every breakpoint of the optimal tradeoff curve has a closed form, and
the optimal curve is the upper envelope of lines in :math:`g`-space (per
piece), computed exactly by a sweep over λ; areas are closed-form integrals
of the winning curve on each interval.

Two distinct results' curves change order at most once on [0, 1], for all
four indices: each index is non-decreasing in ``pre`` and in ``rec`` and
equals ``pre`` at λ = 0 and ``rec`` at λ = 1, so a result that is ahead at
both ends dominates everywhere, which rules out a win-lose-win pattern.
Distinct curves touch without crossing only at λ = 0 (equal ``pre``) or
λ = 1 (equal ``rec``); no breakpoint is reported there.

Conventions: a result with ``pre = 0`` or ``rec = 0`` has
:math:`I_\\lambda = 0` on the open interval (0, 1) for the F-measure, Folke
and Jaccard (0/0 is 0), and equals ``pre``/``rec`` at λ = 0/1 exactly.  Ties
(identical results) go to the result listed first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import InputError, MeasureError

__all__ = [
    "FMEASURE",
    "FOLKE",
    "JACCARD",
    "KULCZYNSKI",
    "IndexFormula",
    "R_from_lambda",
    "below_segments",
    "beta_from_lambda",
    "envelope_segments",
    "index_integral",
    "index_scalar",
    "index_values",
    "lambda_from_R",
    "lambda_from_beta",
    "regular",
    "unit",
]

_EPS = 1e-12  # segments shorter than this are absorbed by their neighbour
_TINY = 1e-300


# --------------------------------------------------------------------------- the four indices, as data


@dataclass(frozen=True)
class IndexFormula:
    """One weighted index as maths: its formula and the pieces of the envelope algorithm.

    Nameless: the name a user types and the display name are the registry
    layer's (:class:`daskbicl.measures.weighted_indices.WeightedIndex`).

    Attributes
    ----------
    pieces : tuple of (float, float)
        Intervals of λ on which ``g(I_λ)`` is linear in λ.
    value : callable
        ``value(p, r, lam)`` on broadcast arrays with ``0 < lam < 1``
        (0/0 gives 0).
    scalar : callable
        The same for Python floats (fast inside ``quad``).
    regular : callable
        ``regular(p, r)``: results whose curve is a proper line in g-space.
    slope : callable
        ``slope(p, r, piece)``: slope in λ of ``transformed`` on a piece.
    transformed : callable
        ``transformed(p, r, t)``: ±g(I_t), larger is better, each a sum of
        same-sign terms (no cancellation).
    integral : callable
        ``integral(p, r, a, b)``: closed-form ∫_a^b I_λ dλ within one piece.
    """

    pieces: tuple[tuple[float, float], ...]
    value: Callable
    scalar: Callable
    regular: Callable
    slope: Callable
    transformed: Callable
    integral: Callable

    @property
    def kinks(self) -> tuple[float, ...]:
        """Inner piece boundaries (where the curve may have a kink)."""
        return tuple(lo for lo, _ in self.pieces[1:])


def _all_regular(p, r):
    return np.ones(np.shape(p), dtype=bool)


def _positive(p, r):
    return (p > 0) & (r > 0)


def _ratio(num, den):
    """num/den, 0 where den <= 0 (the 0/0 convention)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def _reciprocal_integral(g, slope):
    """∫ 1/g over [a, b] where g = 1/I is linear in λ with slope -slope(...) (F-measure, Jaccard)."""

    def integral(p: float, r: float, a: float, b: float, piece: int = 0) -> float:
        if p <= 0 or r <= 0:
            return 0.0
        sigma = -float(slope(p, r, piece))  # slope of g = 1/I
        p, r = max(p, _TINY), max(r, _TINY)
        ga, gb = g(p, r, a), g(p, r, b)
        d = b - a
        if sigma == 0:
            return d / ga
        x = sigma * d / ga
        return (math.log1p(x) if abs(x) < 0.5 else math.log(gb / ga)) / sigma

    return integral


# Kulczynski: (1 - λ) pre + λ rec, linear itself.
def _k_value(p, r, lam):
    return (1 - lam) * p + lam * r


def _k_integral(p: float, r: float, a: float, b: float, piece: int = 0) -> float:
    return (b - a) * (p + (r - p) * (a + b) / 2)


KULCZYNSKI = IndexFormula(
    pieces=((0.0, 1.0),),
    value=_k_value, scalar=_k_value, regular=_all_regular,
    slope=lambda p, r, piece: r - p,
    transformed=lambda p, r, t: (1 - t) * p + t * r,
    integral=_k_integral,
)


# F-measure: pre rec / (λ pre + (1 - λ) rec); 1/I = (1 - λ)/pre + λ/rec is linear.
def _f_value(p, r, lam):
    return _ratio(p * r, lam * p + (1 - lam) * r)


def _f_scalar(p: float, r: float, lam: float) -> float:
    den = lam * p + (1 - lam) * r
    return p * r / den if den > 0 else 0.0


def _f_slope(p, r, piece):
    p, r = np.maximum(p, _TINY), np.maximum(r, _TINY)  # 1/p cannot overflow (moves I by < 1e-297)
    return 1 / p - 1 / r


def _f_g(p, r, t):
    return t / r + (1 - t) / p


FMEASURE = IndexFormula(
    pieces=((0.0, 1.0),),
    value=_f_value, scalar=_f_scalar, regular=_positive, slope=_f_slope,
    transformed=lambda p, r, t: -_f_g(np.maximum(p, _TINY), np.maximum(r, _TINY), t),
    integral=_reciprocal_integral(_f_g, _f_slope),
)


# Folke: pre^(1-λ) rec^λ (the erratum's exponents); log I is linear.
def _fo_value(p, r, lam):
    return p ** (1 - lam) * r**lam


def _fo_slope(p, r, piece):
    return np.log(r) - np.log(p)


def _fo_integral(p: float, r: float, a: float, b: float, piece: int = 0) -> float:
    if p <= 0 or r <= 0:
        return 0.0
    sigma = float(_fo_slope(p, r, piece))
    d = b - a
    ia = _fo_value(p, r, a)
    if abs(sigma * d) < 1:  # I = I(a) exp(sigma (λ - a))
        return ia * d if sigma == 0 else ia * math.expm1(sigma * d) / sigma
    return (_fo_value(p, r, b) - ia) / sigma


FOLKE = IndexFormula(
    pieces=((0.0, 1.0),),
    value=_fo_value, scalar=_fo_value, regular=_positive, slope=_fo_slope,
    transformed=lambda p, r, t: (1 - t) * np.log(p) + t * np.log(r),
    integral=_fo_integral,
)


# Jaccard: pre rec / (w(λ) pre + w(1-λ) rec - v(λ) pre rec); 1/I is linear on [0, 1/2] and on [1/2, 1].
def _j_den(p, r, lam):
    w = np.minimum(2 * lam, 1.0)
    wc = np.minimum(2 * (1 - lam), 1.0)
    return w * p + wc * r - (1 - np.abs(1 - 2 * lam)) * p * r


def _j_value(p, r, lam):
    return _ratio(p * r, _j_den(p, r, lam))


def _j_scalar(p: float, r: float, lam: float) -> float:
    den = min(2 * lam, 1) * p + min(2 * (1 - lam), 1) * r - (1 - abs(1 - 2 * lam)) * p * r
    return p * r / den if den > 0 else 0.0


def _j_slope(p, r, piece):
    p, r = np.maximum(p, _TINY), np.maximum(r, _TINY)
    return -2 * (1 / r - 1) if piece == 0 else 2 * (1 / p - 1)


def _j_g(p, r, t):
    if t <= 0.5:
        return 1 / p + 2 * t * (1 / r - 1)
    return 1 / r + 2 * (1 - t) * (1 / p - 1)


JACCARD = IndexFormula(
    pieces=((0.0, 0.5), (0.5, 1.0)),
    value=_j_value, scalar=_j_scalar, regular=_positive, slope=_j_slope,
    transformed=lambda p, r, t: -_j_g(np.maximum(p, _TINY), np.maximum(r, _TINY), t),
    integral=_reciprocal_integral(_j_g, _j_slope),
)

def unit(name: str, value) -> np.ndarray:
    """``value`` as float64, checked finite and within [0, 1]."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a number (or an array of numbers) within [0, 1], got {value!r:.60}") from None
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise InputError(f"{name} must be finite and within [0, 1]")
    return arr


def index_values(pre, rec, lam, formula: IndexFormula):
    """The weighted index ``formula`` at (pre, rec, λ), broadcast; exact at λ = 0 (``pre``) and 1 (``rec``).

    The formulas, the 0/0 convention and the by-name entry point are those of
    :func:`daskbicl.measures.weighted_indices.weighted_index`.

    Parameters
    ----------
    pre, rec, lam : array_like of float in [0, 1]
        Broadcast together.
    formula : IndexFormula

    Returns
    -------
    numpy.ndarray or numpy.float64
        The broadcast shape (a scalar for scalar inputs).

    Examples
    --------
    The check values (pre = 0.5, rec = 0.9, λ = 0.2):

    >>> [round(float(index_values(0.5, 0.9, 0.2, f)), 3) for f in (KULCZYNSKI, FMEASURE, FOLKE, JACCARD)]
    [0.58, 0.549, 0.562, 0.489]
    >>> index_values([0.5, 0.5], 0.9, [0.0, 1.0], JACCARD).tolist()
    [0.5, 0.9]
    """
    p, r, lam = np.broadcast_arrays(unit("pre", pre), unit("rec", rec), unit("lam", lam))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = formula.value(p, r, lam)
    out = np.where(lam == 0, p, np.where(lam == 1, r, out))
    return out[()] if out.ndim == 0 else out


def index_scalar(p: float, r: float, lam: float, formula: IndexFormula) -> float:
    """Plain-Python :func:`index_values` for one point (fast inside ``quad``)."""
    if lam <= 0:
        return p
    if lam >= 1:
        return r
    return formula.scalar(p, r, lam)


def regular(p: np.ndarray, r: np.ndarray, formula: IndexFormula) -> np.ndarray:
    """Results whose curve is a proper line in g-space (not 0 on (0, 1))."""
    return formula.regular(p, r)


def lambda_from_beta(beta):
    """λ of the F-measure :math:`F_\\beta`: :math:`\\lambda = \\beta^2 / (1 + \\beta^2)`.

    Examples
    --------
    >>> float(lambda_from_beta(1.0)), float(lambda_from_beta(2.0))
    (0.5, 0.8)
    """
    b = np.asarray(beta, dtype=np.float64)
    if np.any(~np.isfinite(b) | (b < 0)):
        raise MeasureError("beta must be finite and >= 0")
    return (b * b / (1 + b * b))[()]


def beta_from_lambda(lam):
    """Inverse of :func:`lambda_from_beta`: :math:`\\beta = \\sqrt{\\lambda/(1-\\lambda)}`.

    λ = 1 gives ``inf``.

    Examples
    --------
    >>> float(beta_from_lambda(0.8))
    2.0
    """
    lam = unit("lam", lam)
    with np.errstate(divide="ignore"):
        return np.sqrt(lam / (1 - lam))[()]


def lambda_from_R(R):
    """λ of Goodness(R) (= weighted Kulczynski): :math:`\\lambda = 1/(1 + R)`.

    Examples
    --------
    >>> float(lambda_from_R(1.0)), float(lambda_from_R(3.0))
    (0.5, 0.25)
    """
    R = np.asarray(R, dtype=np.float64)
    if np.any(np.isnan(R) | (R < 0)):
        raise MeasureError("R must be >= 0")
    return (1 / (1 + R))[()]


def R_from_lambda(lam):
    """Inverse of :func:`lambda_from_R`: :math:`R = (1-\\lambda)/\\lambda`.

    λ = 0 gives ``inf``.

    Examples
    --------
    >>> float(R_from_lambda(0.25))
    3.0
    """
    lam = unit("lam", lam)
    with np.errstate(divide="ignore"):
        return ((1 - lam) / lam)[()]


# --------------------------------------------------------------------------- the envelope


def _best(v: np.ndarray, S: np.ndarray, among: np.ndarray) -> int:
    """Among the lines ``among`` tied for the largest value, the one that wins
    just after: the steepest, then the highest, then the first listed."""
    vmax = float(v.max())
    tied = among[v[among] >= vmax - 1e-13 * max(1.0, abs(vmax))]
    if tied.size == 0:
        return -1
    tied = tied[S[tied] == S[tied].max()]
    return int(tied[np.argmax(v[tied])])


def _upper_envelope(values, S, lo: float, hi: float) -> list[tuple[float, float, int]]:
    """Exact upper envelope on [lo, hi] of lines with slopes ``S``.

    ``values(t)`` evaluates all the lines accurately at t.  Sweep from ``lo``:
    the next breakpoint is the nearest crossing of the current winner by a
    steeper line, ``t + (v_w(t) - v_j(t)) / (S_j - S_w)``; there the new
    winner is chosen by :func:`_best`.  Every step strictly increases the
    winner's slope, so there are at most len(S) steps.
    """
    everyone = np.arange(S.size)
    t = lo
    w = _best(values(t), S, everyone)
    segments = []
    start = lo
    while True:
        steeper = np.flatnonzero(S > S[w])
        if steeper.size == 0:
            break
        v = values(t)
        gap = np.maximum(v[w] - v[steeper], 0.0)
        cross = t + gap / (S[steeper] - S[w])
        j = int(np.argmin(cross))
        t_new = float(cross[j])
        if t_new >= hi - _EPS:  # a crossing at the very end changes nothing
            break
        t = max(t_new, t)
        new = _best(values(t), S, steeper)
        w_new = new if new >= 0 else int(steeper[j])
        if t - start > _EPS:
            segments.append((start, t, w))
            start = t
        w = w_new
    segments.append((start, hi, w))
    return segments


def envelope_segments(p: np.ndarray, r: np.ndarray, idx: IndexFormula) -> list[tuple[float, float, int]]:
    """Winner intervals ``(lam_lo, lam_hi, position)`` of the upper envelope over [0, 1], merged."""
    ok = np.flatnonzero(idx.regular(p, r))
    if ok.size == 0:  # every curve is 0 on (0, 1)
        return [(0.0, 1.0, 0)]
    po, ro = p[ok], r[ok]
    segs: list[tuple[float, float, int]] = []
    for piece, (lo, hi) in enumerate(idx.pieces):
        S = idx.slope(po, ro, piece)
        for a, b, k in _upper_envelope(lambda t: idx.transformed(po, ro, t), S, lo, hi):
            k = int(ok[k])
            if segs and segs[-1][2] == k:
                segs[-1] = (segs[-1][0], b, k)
            else:
                segs.append((a, b, k))
    return segs


def below_segments(p: float, r: float, ref: tuple[float, float], idx: IndexFormula) -> list[tuple[float, float]]:
    """λ intervals where the curve of (p, r) is strictly under that of ``ref``."""
    if not idx.regular(np.array([p]), np.array([r]))[0]:
        return [(0.0, 1.0)]
    out: list[tuple[float, float]] = []
    for piece, (lo, hi) in enumerate(idx.pieces):
        pr = np.array([p, ref[0]], dtype=np.float64), np.array([r, ref[1]], dtype=np.float64)
        v, sl = idx.transformed(*pr, lo), idx.slope(*pr, piece)
        da, ds = float(v[0] - v[1]), float(sl[0] - sl[1])  # result - ref at lo, larger is better
        if ds == 0:
            iv = (lo, hi) if da < 0 else None
        else:
            root = lo - da / ds
            iv = (lo, min(hi, root)) if ds > 0 else (max(lo, root), hi)
        if iv is not None and iv[1] - iv[0] > _EPS:
            if out and abs(out[-1][1] - iv[0]) <= _EPS:
                out[-1] = (out[-1][0], iv[1])
            else:
                out.append(iv)
    return out


def index_integral(p: float, r: float, idx: IndexFormula, a: float, b: float) -> float:
    """Closed-form :math:`\\int_a^b I_\\lambda(p, r)\\,d\\lambda`, split at the index's kinks."""
    if b <= a:
        return 0.0
    total = 0.0
    for piece, (lo, hi) in enumerate(idx.pieces):
        x, y = max(a, lo), min(b, hi)
        if y > x:
            total += idx.integral(p, r, x, y, piece)
    return total
