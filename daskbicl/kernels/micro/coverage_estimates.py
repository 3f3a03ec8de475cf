"""Sampled coverage counts of CE and RNIA, and their 95 % intervals (numpy only; no numba).

CE and RNIA need, besides the exact K x L table of shared cells (CE's
matching, always exact), cell counts over the union of every bicluster:
with c_C(x) and c_G(x) the truth and pred biclusters containing a cell x
and c(x) = c_C(x) + c_G(x),

* ``|I|`` with multiplicity = Σ_x min(c_C, c_G), and ``|U|`` =
  Σ_x max(c_C, c_G) = T − |I|, T = Σ|B| over every bicluster of both sides
  (an exact integer);
* as sets: |U| = #{x : c(x) > 0}, |I| = #{x : c_C(x) > 0 and c_G(x) > 0}.

The sampler (:meth:`~daskbicl.kernels.micro.sampling.Sampler.coverage_block`)
draws a bicluster of either side with probability proportional to its
size and a cell uniform in it, so a cell x comes with probability c(x)/T.
Then for any f that is 0 off the covered cells, Σ_x f(x) = T·E[f(x)/c(x)]:
each count above is T times the mean of one bounded term (a = min/c,
p = 1/c, q = [both]/c), unbiased, with no rejection step.  CE and RNIA are
smooth functions of these means; their 95 % half-widths come from the
delta method (first-order propagation, with the covariance of p and q for
the set RNIA, a ratio of two means of the same cells).

Examples
--------
>>> s = CoverageSample(total=10, sums=(2.0, 1.0, 5.0, 3.0, 1.0, 0.5, 0.5), samples=10)
>>> round(float(rnia_estimate(s, multiset=True)), 6)     # m = 0.2: (1 - 0.4) / 0.8
0.75
>>> rnia_estimate(s, multiset=True).exact
False
"""

from __future__ import annotations

import math
from typing import NamedTuple

from .cell_records import Coverage, Overlap
from .estimates import Z95, Estimate

__all__ = ["CoverageSample", "CoverageSums", "cells_needed", "ce_estimate", "combine_coverage", "matched_cells",
           "rnia_estimate", "sampled_ce", "sampled_rnia"]


class CoverageSums(NamedTuple):
    """One block's sums of a, a², p, p², q, q², p·q (module docstring) and its number of cells."""

    sums: tuple
    n: int


class CoverageSample(NamedTuple):
    """What a sampled coverage ships back: T (exact), the sums of every block (index order) and the cells drawn.

    It stands where the exact :class:`~daskbicl.kernels.micro.cell_records.Coverage`
    would be in a :class:`~daskbicl.kernels.micro.cell_records.MicroResult`.
    """

    total: int
    sums: tuple
    samples: int


def combine_coverage(total: int, blocks) -> CoverageSample:
    """The blocks' sums added in the order given (index order: the same digits on any cluster)."""
    acc = [0.0] * 7
    n = 0
    for b in blocks:
        acc = [x + y for x, y in zip(acc, b.sums)]
        n += b.n
    return CoverageSample(int(total), tuple(acc), n)


class _Stats(NamedTuple):
    a: float
    p: float
    q: float
    va: float
    vp: float
    vq: float
    cpq: float
    n: int


def _stats(s: CoverageSample) -> _Stats:
    n = s.samples
    sa, saa, sp, spp, sq, sqq, spq = s.sums
    a, p, q = sa / n, sp / n, sq / n
    k = max(n - 1, 1)
    return _Stats(a, p, q, max(saa - n * a * a, 0.0) / k, max(spp - n * p * p, 0.0) / k,
                  max(sqq - n * q * q, 0.0) / k, (spq - n * p * q) / k, n)


def _estimate(value: float, variance: float, scale: float, n: int) -> Estimate:
    """``value`` with half-width 1.96·sqrt(variance / n); the rule of three (3/n, scaled) when it is 0."""
    hw = Z95 * math.sqrt(max(variance, 0.0) / n)
    if hw == 0.0:
        hw = 3.0 / n * max(scale, 1e-300)
    return Estimate(value, hw, n)


def rnia_estimate(s: CoverageSample, *, multiset: bool = True) -> Estimate:
    """RNIA = (|U| − |I|)/|U| from sampled coverage counts, with its 95 % half-width."""
    t = _stats(s)
    if multiset:  # (T(1 − a) − T a) / (T(1 − a)); d/da = −1/(1 − a)²
        scale = 1.0 / (1.0 - t.a) ** 2
        return _estimate((1.0 - 2.0 * t.a) / (1.0 - t.a), t.va * scale**2, scale, t.n)
    r = t.q / t.p  # 1 − Q/P: a ratio of two means of the same cells
    return _estimate(1.0 - r, (t.vq - 2.0 * r * t.cpq + r * r * t.vp) / t.p**2, 1.0 / t.p, t.n)


def ce_estimate(s: CoverageSample, matched: int, *, multiset: bool = True) -> Estimate:
    """CE = 1 − D_max/|U| from sampled |U| and the exact matching total ``matched`` (D_max)."""
    t = _stats(s)
    d = matched / s.total
    if multiset:  # 1 − D / (T(1 − a)); d/da = −D/(T(1 − a)²)
        scale = d / (1.0 - t.a) ** 2
        return _estimate(1.0 - d / (1.0 - t.a), t.va * scale**2, scale, t.n)
    scale = d / t.p**2  # 1 − D / (T P)
    return _estimate(1.0 - d / t.p, t.vp * scale**2, scale, t.n)


def cells_needed(s: CoverageSample, tolerance: float, matched: int | None = None, *, ce: bool = True) -> int:
    """Cells for a 95 % half-width of at most ``tolerance`` on RNIA and (``ce``) CE, both readings (from a pilot).

    ``matched`` is D_max; without it, D_max ≤ Σ min(c_C, c_G) = T·a bounds
    the CE's sensitivity (the multiset CE's is at most the multiset
    RNIA's).  10 % more than the pilot's variances ask for.
    """
    t = _stats(s)
    r = t.q / t.p
    d = t.a if matched is None else matched / s.total
    per_cell = max(t.va / (1.0 - t.a) ** 4,
                   (t.vq - 2.0 * r * t.cpq + r * r * t.vp) / t.p**2,
                   t.vp * (d / t.p**2) ** 2 if ce else 0.0)
    return max(1, math.ceil(1.1 * (Z95 / tolerance) ** 2 * per_cell))


class _Matching(NamedTuple):
    coverage: Coverage
    overlap: Overlap | None


def _stand_in(s: CoverageSample, overlap: Overlap | None) -> _Matching:
    """Exact tables with |U| = T: CE's and RNIA's own code then checks coverage and solves the matching."""
    return _Matching(Coverage(s.total, 0, 0, 0, s.total, 0), overlap)


def matched_cells(s: CoverageSample, overlap: Overlap, max_work: float) -> int:
    """D_max, the best one-to-one matching's shared cells, exactly (:func:`~daskbicl.kernels.micro.micro_scores.micro_ce`'s
    assignment and its work limit; InputError when no cell is covered)."""
    from .micro_scores import micro_ce

    q = micro_ce(_stand_in(s, overlap), exact=True, max_work=max_work)  # (T − D_max) / T
    return s.total - int(q * s.total)


def sampled_ce(s: CoverageSample, overlap: Overlap, *, multiset: bool, max_work: float) -> Estimate:
    """CE from sampled coverage counts and the exact overlap table."""
    return ce_estimate(s, matched_cells(s, overlap, max_work), multiset=multiset)


def sampled_rnia(s: CoverageSample, *, multiset: bool) -> Estimate:
    """RNIA from sampled coverage counts (InputError when no cell is covered, as the exact RNIA)."""
    if s.total == 0:
        from .micro_scores import rnia

        rnia(_stand_in(s, None))
    return rnia_estimate(s, multiset=multiset)
