"""Overlapping normalised mutual information of two covers (numpy only).

Each cluster is a binary variable over the n items (in it or not).  For a
truth cluster X_k and a pred cluster Y_l the four joint frequencies are
p11 = |X_k ∩ Y_l|/n, p10 = |X_k − Y_l|/n, p01 = |Y_l − X_k|/n and
p00 = 1 − p11 − p10 − p01; with h(p) = −p log2 p,

* H(X_k) = h(|X_k|/n) + h(1 − |X_k|/n);
* H(X_k | Y_l) = h(p11) + h(p10) + h(p01) + h(p00) − H(Y_l), *admitted* only
  when h(p11) + h(p00) > h(p10) + h(p01) (the two variables agree more than
  they disagree; Lancichinetti, Fortunato & Kertész 2009);
* H(X_k | Y) = the smallest admitted H(X_k | Y_l), or H(X_k) when none is.

Variants (as cdlib's ``onmi`` module, the Python port its authors checked
against McDaid's C++ code):

* ``"lfk"``: 1 − ½ (mean_k H(X_k|Y)/H(X_k) + mean_l H(Y_l|X)/H(Y_l)), a
  cluster with H = 0 (empty or holding every item) counting 1;
* ``"mgh"`` (McDaid, Greene & Hurley 2011): I / max(H(X), H(Y)) with
  H(X) = Σ_k H(X_k), H(X|Y) = Σ_k H(X_k|Y) and
  I = ½ (H(X) − H(X|Y) + H(Y) − H(Y|X));
* ``"mgh_lfk"``: 1 − ½ (H(X|Y)/H(X) + H(Y|X)/H(Y)).

Two covers holding the same clusters score 1 in every variant (cdlib
returns 1 for equal covers before any entropy; without that rule a cluster
holding every item, H = 0, would count 1 in the "lfk" mean).  A ratio with a
zero entropy below it counts 1 otherwise; "mgh" with H(X) = H(Y) = 0 is 1.

Everything follows from the cluster sizes and the K x L table of shared
items, so the whole measure costs O(K·L) after one counting pass.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError

__all__ = ["VARIANTS", "onmi", "same_covers"]

VARIANTS = ("lfk", "mgh", "mgh_lfk")


def _h(p: np.ndarray) -> np.ndarray:
    """−p log2 p, 0 at p = 0 (exact zeros: every p is a ratio of integers)."""
    p = np.asarray(p, np.float64)
    out = np.zeros_like(p)
    pos = p > 0
    out[pos] = -p[pos] * np.log2(p[pos])
    return out


def _binary(size: np.ndarray, n: int) -> np.ndarray:
    return _h(size / n) + _h((n - size) / n)


def _conditional(shared: np.ndarray, size_x: np.ndarray, size_y: np.ndarray, n: int) -> np.ndarray:
    """H(X_k | Y) for every row k of ``shared`` (K x L)."""
    n11 = shared.astype(np.int64)
    n10 = size_x[:, None] - n11
    n01 = size_y[None, :] - n11
    n00 = n - n11 - n10 - n01
    agree = _h(n11 / n) + _h(n00 / n)
    disagree = _h(n10 / n) + _h(n01 / n)
    cond = agree + disagree - _binary(size_y, n)[None, :]
    h_x = _binary(size_x, n)
    cond = np.where(agree > disagree, cond, h_x[:, None])
    best = cond.min(axis=1) if cond.shape[1] else h_x.copy()
    return np.minimum(np.maximum(best, 0.0), h_x)


def _normalised_mean(cond: np.ndarray, h: np.ndarray) -> float:
    ratio = np.ones_like(h)
    pos = h > 0
    ratio[pos] = cond[pos] / h[pos]
    return float(ratio.mean())


def same_covers(shared: np.ndarray, size_x: np.ndarray, size_y: np.ndarray) -> bool:
    """True when the two covers hold the same clusters, each as many times (order ignored)."""
    if len(size_x) != len(size_y):
        return False
    equal = (shared == size_x[:, None]) & (shared == size_y[None, :])
    if not (equal.any(axis=1).all() and equal.any(axis=0).all()):
        return False
    copies_pred, copies_truth = equal.sum(axis=1), equal.sum(axis=0)
    k, l_ = np.nonzero(equal)
    return bool(np.all(copies_pred[k] == copies_truth[l_]))


def onmi(shared, truth_sizes, pred_sizes, n: int, variant: str = "lfk") -> float:
    """The overlapping NMI of two covers of ``n`` items (module docstring).

    Parameters
    ----------
    shared : array (K, L)
        Items in both truth cluster k and pred cluster l.
    truth_sizes, pred_sizes : arrays (K,), (L,)
        Cluster sizes.
    n : int
        Number of items (those in no cluster included).
    variant : {"lfk", "mgh", "mgh_lfk"}

    Examples
    --------
    >>> s = np.array([[2, 0], [0, 2]])
    >>> onmi(s, np.array([2, 2]), np.array([2, 2]), 4)
    1.0
    >>> round(onmi(np.array([[1, 1], [1, 1]]), np.array([2, 2]), np.array([2, 2]), 4, "mgh"), 12)
    0.0
    """
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if n <= 0:
        raise InputError("the overlapping NMI needs at least one item")
    shared = np.asarray(shared, np.int64)
    size_x = np.asarray(truth_sizes, np.int64)
    size_y = np.asarray(pred_sizes, np.int64)
    if len(size_x) == 0 or len(size_y) == 0:
        raise InputError("the overlapping NMI needs at least one cluster on each side")
    if same_covers(shared, size_x, size_y):  # as cdlib: 1, even with a cluster of every item
        return 1.0
    hx_k, hy_l = _binary(size_x, n), _binary(size_y, n)
    cond_x = _conditional(shared, size_x, size_y, n)
    cond_y = _conditional(shared.T, size_y, size_x, n)
    if variant == "lfk":
        return 1.0 - 0.5 * (_normalised_mean(cond_x, hx_k) + _normalised_mean(cond_y, hy_l))
    hx, hy = float(hx_k.sum()), float(hy_l.sum())
    hxy, hyx = float(cond_x.sum()), float(cond_y.sum())
    if variant == "mgh":
        top = max(hx, hy)
        return 1.0 if top == 0 else 0.5 * (hx - hxy + hy - hyx) / top
    return 1.0 - 0.5 * ((hxy / hx if hx > 0 else 1.0) + (hyx / hy if hy > 0 else 1.0))
