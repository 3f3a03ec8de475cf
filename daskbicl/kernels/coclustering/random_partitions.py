"""Cluster sizes of uniformly random partitions (the "num" and "all" random models).

Gates & Ahn (2017), The impact of random models on clustering similarity,
JMLR 18.  Given its cluster sizes, a uniformly random partition is a
uniform shuffle of the elements, so a random contingency table under these
models is: random sizes (here), then a random table with those margins
(Patefield's algorithm, :func:`scipy.stats.random_table`).

* **num** (``k`` clusters, uniform over the S(n, k) partitions): a uniform
  *surjection* of the n elements onto k labels forgets to a uniform
  partition (each partition is k! surjections), and the sizes of a uniform
  function are ``Multinomial(n, 1/k)``; so draw those and keep them when no
  label is empty (rejection).  The acceptance rate is ``k! S(n, k)/k^n``;
  :func:`num_acceptance` estimates it and callers refuse inputs where it is
  tiny (n not much above k log k).
* **all** (uniform over the Bell(n) partitions): Stam's (1983) urn
  algorithm — draw ``u`` urns with probability ``u^n / (e · u! · Bell(n))``,
  throw the n elements uniformly into them, keep the non-empty urns.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = ["num_acceptance", "sizes_all", "sizes_num", "urn_distribution"]

#: Rejection rounds tried for one "num" draw before giving up.
MAX_REJECTIONS = 10_000


def num_acceptance(n: int, k: int) -> float:
    """Probability that ``Multinomial(n, 1/k)`` leaves no label empty, by inclusion–exclusion in logs.

    >>> round(num_acceptance(8, 3), 6)   # 3! S(8, 3) / 3^8 = 6 · 966 / 6561
    0.883402
    """
    if k > n:
        return 0.0
    j = np.arange(k + 1)
    with np.errstate(divide="ignore"):  # j = k: log 0 = −inf, a term of 0
        log_terms = gammaln(k + 1) - gammaln(j + 1) - gammaln(k - j + 1) + n * np.log1p(-j / k)
    signs = np.where(j % 2 == 0, 1.0, -1.0)
    with np.errstate(divide="ignore"):
        value, sign = logsumexp(log_terms, b=signs, return_sign=True)
    return float(sign * math.exp(value)) if np.isfinite(value) else 0.0


def sizes_num(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Cluster sizes of a uniformly random partition of ``n`` elements into ``k`` non-empty clusters.

    >>> sizes = sizes_num(10, 3, np.random.default_rng(0))
    >>> int(sizes.sum()), len(sizes), bool((sizes > 0).all())
    (10, 3, True)
    """
    p = np.full(k, 1.0 / k)
    for _ in range(MAX_REJECTIONS):
        sizes = rng.multinomial(n, p)
        if sizes.all():
            return sizes.astype(np.int64)
    raise RuntimeError(f"no partition of {n} elements into {k} clusters after {MAX_REJECTIONS} rejections")


def urn_distribution(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(u, P(u))`` of Stam's urn count for ``n`` elements, over the ``u`` that carry any mass.

    >>> u, p = urn_distribution(3)   # Bell(3) = 5: P(u) = u^3 / (e u! 5)
    >>> round(float(p[0]), 6) == round(1 / (math.e * 5), 6)
    True
    """
    top = max(50, int(3 * n / max(math.log(n), 1.0)) + 1000)
    u = np.arange(1, top + 1, dtype=np.float64)
    log_w = n * np.log(u) - gammaln(u + 1)
    log_w -= logsumexp(log_w)
    keep = log_w > math.log(1e-300)
    return u[keep].astype(np.int64), np.exp(log_w[keep]) / np.exp(log_w[keep]).sum()


def sizes_all(n: int, rng: np.random.Generator, urns: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Cluster sizes of a uniformly random partition of ``n`` elements (any number of clusters).

    >>> int(sizes_all(10, np.random.default_rng(0)).sum())
    10
    """
    u, p = urns if urns is not None else urn_distribution(n)
    count = int(rng.choice(u, p=p))
    sizes = rng.multinomial(n, np.full(count, 1.0 / count))
    return sizes[sizes > 0].astype(np.int64)
