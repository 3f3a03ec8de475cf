"""Sampled values and their 95 % intervals (plain Python and numpy; no numba).

:class:`Estimate` is what a sampled measure returns: a float that carries
its half-width.  The other functions turn the per-block sums the sampler
draws (:mod:`daskbicl.kernels.micro.sampling`) into means, variances and
half-widths: a sampled precision or recall is the mean of n independent
terms in [0, 1], so by the central limit theorem its 95 % interval is
``mean ± 1.96 · sd / sqrt(n)``; F1 = 2PR / (P + R) gets its interval by the
delta method (first-order propagation of the two independent variances).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ...errors import InputError

__all__ = ["BlockSums", "Estimate", "Moments", "Z95", "blocks_needed", "combine", "f1_estimate", "half_width"]

#: Two-sided 95 % normal quantile.
Z95 = 1.959963984540054

class Estimate(float):
    """A sampled value: a float that carries its 95 % half-width and its number of samples.

    It is a float (arithmetic, formatting and comparisons work as usual), so
    code that reads exact values keeps working; ``exact`` is False and
    ``half_width`` says how far the true value may be (95 % confidence
    interval ``[low, high]``).  Arithmetic on it gives plain floats: carry
    the interval yourself.

    Examples
    --------
    >>> e = Estimate(0.4312, 0.0008, 250000)
    >>> float(e), e.half_width, e.exact, e.samples
    (0.4312, 0.0008, False, 250000)
    >>> print(e)
    ≈ 0.4312 ± 0.0008
    >>> print(Estimate(0.0033171, 0.0000212, 65536))
    ≈ 0.003317 ± 0.000021
    """

    half_width: float
    samples: int
    exact = False

    def __new__(cls, value: float, half_width: float, samples: int):
        self = super().__new__(cls, value)
        self.half_width = float(half_width)
        self.samples = int(samples)
        return self

    def __reduce__(self):
        return (Estimate, (float(self), self.half_width, self.samples))

    @property
    def low(self) -> float:
        """Lower end of the 95 % interval."""
        return float(self) - self.half_width

    @property
    def high(self) -> float:
        """Upper end of the 95 % interval."""
        return float(self) + self.half_width

    def __repr__(self) -> str:
        return f"Estimate({float(self)!r}, half_width={self.half_width!r}, samples={self.samples})"

    def __str__(self) -> str:
        """``≈ value ± half-width``: 4 decimals, more when the half-width needs them (never "± 0.0000")."""
        hw = self.half_width
        digits = 4 if not 0 < hw < 5e-5 else min(12, 1 - math.floor(math.log10(hw)))
        return f"≈ {float(self):.{digits}f} ± {hw:.{digits}f}"

    def as_dict(self) -> dict:
        """``{"value", "exact", "half_width", "samples"}`` (the JSON form)."""
        return {"value": float(self), "exact": False, "half_width": self.half_width, "samples": self.samples}


class BlockSums(NamedTuple):
    """Sum and sum of squares of the sampled terms of one block, and its number of pairs."""

    total: float
    squares: float
    n: int


class Moments(NamedTuple):
    """Mean, sample variance of one term and number of pairs of a side (:func:`combine`)."""

    mean: float
    variance: float
    samples: int


def combine(blocks) -> Moments:
    """Mean and variance of the terms of ``blocks``, added in the order given (index order)."""
    total = squares = 0.0
    n = 0
    for b in blocks:
        total += b.total
        squares += b.squares
        n += b.n
    if n == 0:
        raise InputError("no sampled pair to estimate from")
    mean = total / n
    var = max(squares / n - mean * mean, 0.0) * n / max(n - 1, 1)
    return Moments(mean, var, n)


def half_width(m: Moments) -> float:
    """95 % half-width of a mean of terms in [0, 1].

    When every term came out the same (variance 0) the normal interval would
    be empty; the rule of three (3 / n) is used instead, so an estimate is
    never presented as exact.
    """
    if m.variance == 0.0:
        return 3.0 / m.samples
    return Z95 * math.sqrt(m.variance / m.samples)


def f1_estimate(p: Moments, r: Moments) -> tuple[float, float]:
    """F1 = 2PR / (P + R) and its 95 % half-width by the delta method (P, R sampled independently)."""
    if p.mean + r.mean == 0.0:
        return 0.0, max(half_width(p), half_width(r))
    s = p.mean + r.mean
    f1 = 2 * p.mean * r.mean / s
    dp, dr = 2 * r.mean**2 / s**2, 2 * p.mean**2 / s**2
    var = dp**2 * p.variance / p.samples + dr**2 * r.variance / r.samples
    hw = Z95 * math.sqrt(var)
    if var == 0.0:
        hw = max(half_width(p), half_width(r))
    return f1, hw


def blocks_needed(p: Moments, r: Moments, tolerance: float, block: int) -> int:
    """Blocks per side for a 95 % half-width of at most ``tolerance`` on P, R and F1 (from a pilot).

    Takes 10 % more than the pilot's variances ask for, so the final
    half-width (from all blocks) is at most the tolerance in most runs.
    """
    s = max(p.mean + r.mean, 1e-12)
    dp, dr = 2 * r.mean**2 / s**2, 2 * p.mean**2 / s**2
    per_pair = max(p.variance, r.variance, dp**2 * p.variance + dr**2 * r.variance)
    n = 1.1 * (Z95 / tolerance) ** 2 * per_pair
    return max(1, math.ceil(n / block))
