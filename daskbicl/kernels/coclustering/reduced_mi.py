"""Reduced mutual information (Newman, Cantwell & Young 2020), as clusim's ``rmi``.

Newman, Cantwell & Young (2020), Improved mutual information measure for
clustering, classification, and community detection, Phys. Rev. E 101,
042304.  The mutual information counts the information pred gives about
truth, but not the cost of transmitting the contingency table itself; RMI
subtracts it:

.. math::
    \\mathrm{RMI} = \\frac1n\\Big[\\log\\frac{n!\\ \\prod n_{hh'}!}{\\prod_h a_h!\\ \\prod_{h'} b_{h'}!}
        - \\log\\Omega(a, b)\\Big]

where the first term is the exact (finite-n) mutual information in nats
times n and ``Ω(a, b)`` is the number of contingency tables with margins
``a`` and ``b``, estimated as clusim does with the Diaconis–Efron-type
formula of the paper's appendix (with ``w = n/(n + RS/2)``, ``x = (1 −
w)/R + w a/n``, ``y = (1 − w)/S + w b/n``, ``ν = (S + 1)/(S Σx²) − 1/S``,
``μ = (R + 1)/(R Σy²) − 1/R``):

.. math::
    \\log\\Omega \\approx (R-1)(S-1)\\log(n + RS/2) + \\tfrac{R+\\nu-2}{2}\\sum\\log y
        + \\tfrac{S+\\mu-2}{2}\\sum\\log x
        + \\tfrac12\\big[\\log\\Gamma(\\mu R) + \\log\\Gamma(\\nu S)
        - R(\\log\\Gamma(S) + \\log\\Gamma(\\mu)) - S(\\log\\Gamma(R) + \\log\\Gamma(\\nu))\\big].

The normalised form divides by the mean of the two self-informations,
``(RMI(z, z) + RMI(z', z')) / 2`` (times n), so it is 1 for identical
partitions (and, by convention, when both sides have a single cluster,
where it is 0/0).  Natural logarithms (clusim defaults to bits; the normalised
value does not depend on the base).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .contingency import Table

__all__ = ["log_omega", "normalized_rmi", "rmi"]


def log_omega(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated log of the number of tables with margins ``a`` and ``b`` (nats).

    >>> round(log_omega(np.array([5, 5]), np.array([5, 5])), 6)   # an estimate: exactly log 6 = 1.791759
    1.627859
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    r, s, n = a.size, b.size, float(a.sum())
    w = n / (n + 0.5 * r * s)
    x = (1 - w) / r + w * a / n
    y = (1 - w) / s + w * b / n
    nu = (s + 1) / (s * float(np.sum(x * x))) - 1 / s
    mu = (r + 1) / (r * float(np.sum(y * y))) - 1 / r
    return float(
        (r - 1) * (s - 1) * math.log(n + 0.5 * r * s)
        + 0.5 * (r + nu - 2) * math.fsum(np.log(y).tolist())
        + 0.5 * (s + mu - 2) * math.fsum(np.log(x).tolist())
        + 0.5 * (gammaln(mu * r) + gammaln(nu * s) - r * (gammaln(s) + gammaln(mu)) - s * (gammaln(r) + gammaln(nu)))
    )


def _log_factorials(values: np.ndarray) -> float:
    distinct, mult = np.unique(np.asarray(values, dtype=np.int64), return_counts=True)
    return math.fsum((mult * gammaln(distinct + 1.0)).tolist())


def _exact_information(table: Table) -> float:
    """``log n! + Σ log n_{hh'}! − Σ log a_h! − Σ log b_{h'}!`` (nats)."""
    return math.fsum([
        float(gammaln(table.n + 1.0)), _log_factorials(table.counts),
        -_log_factorials(table.truth_sizes()), -_log_factorials(table.pred_sizes()),
    ])


def rmi(table: Table) -> float:
    """Reduced mutual information per element, in nats (can be below 0).

    >>> t = Table.from_labels([0] * 5 + [1] * 5, [0] * 5 + [1] * 5)
    >>> round(rmi(t), 6)   # clusim: rmi(..., logbase=np.e)
    0.390157
    """
    if table.n == 0:
        return 0.0
    return (_exact_information(table) - log_omega(table.truth_sizes(), table.pred_sizes())) / table.n


def _self_information(sizes: np.ndarray) -> float:
    """``n · RMI(z, z)``: the exact information of a partition with itself, minus ``log Ω(a, a)``."""
    n = float(sizes.sum())
    return float(gammaln(n + 1.0)) - _log_factorials(sizes) - log_omega(sizes, sizes)


def normalized_rmi(table: Table) -> float:
    """``RMI / mean(RMI(z, z), RMI(z', z'))``: 1 for identical partitions, about 0 for independent ones.

    >>> t = Table.from_labels([0] * 5 + [1] * 5, [0] * 5 + [1] * 5)
    >>> normalized_rmi(t)
    1.0
    """
    if table.shape == (1, 1):  # both trivial: 0/0 (clusim returns nan); identical partitions score 1
        return 1.0
    num = _exact_information(table) - log_omega(table.truth_sizes(), table.pred_sizes())
    den = (_self_information(table.truth_sizes()) + _self_information(table.pred_sizes())) / 2.0
    return num / den
