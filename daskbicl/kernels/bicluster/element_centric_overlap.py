"""Element-centric similarity (Gates et al. 2019) of two overlapping clusterings, solved on signature classes.

Each element ``i`` of a clustering walks the *cluster-induced element
graph*: from an element, pick one of its clusters uniformly, then one
element of that cluster uniformly (itself included).  Its affinity vector is
the personalised PageRank of that walk restarted at ``i`` with probability
``1 − α``: ``p_i = (1 − α) e_i + α p_i W`` (clusim's ``element_sim``,
α = 0.9 there).  An element in no cluster is a cluster of its own
(``p_i = e_i``).  Element ``i`` scores ``S_i = 1 − ‖p_i − p'_i‖₁ / (2α)``
and ECS is the mean of ``S_i``.

**Signature classes.**  Elements with the same set of clusters (the same
*signature*) are interchangeable in the walk, so ``p_i(j)`` is
``u[g, h] + s_g [i = j]`` for ``i`` in class ``g`` and ``j`` in class ``h``:
one value per pair of classes plus a spike at ``i`` itself (``s_g = 1 − α``,
or 1 for the class of elements in no cluster).  With ``M`` the classes x
clusters membership matrix, ``n`` the class sizes, ``m`` the number of
clusters of each class and ``|C|`` the cluster sizes, the class-to-class
walk is ``T = D_m⁻¹ M D_|C|⁻¹ Mᵀ D_n`` and the class PageRank is
``R = (1 − α)(I − αT)⁻¹``, so ``u[g, h] = (R[g, h] − (1 − α)[g = h]) / n_h``.
``T`` is a product through the clusters, and the Woodbury identity turns
the inverse into one of the cluster x cluster matrix (the walk from
cluster to cluster, ``Q = D_|C|⁻¹ Mᵀ D_n D_m⁻¹ M``):

.. math::
    u = \\alpha (1 - \\alpha)\\, D_m^{-1} M\\, (I - \\alpha Q)^{-1} D_{|C|}^{-1} M^\\top .

**Joint classes.**  The two clusterings' signatures together cut the
elements into joint classes ``J`` with counts ``N_J``; an element of joint
class ``(g, g')`` has the L1 distance

.. math::
    \\sum_{(h, h')} N_{hh'}\\, |u[g, h] - u'[g', h']|
    + |u[g,g] + s_g - u'[g',g'] - s'_{g'}| - |u[g,g] - u'[g',g']| ,

the same for every element of the class.  So the cost is a linear solve of
the number of clusters per side and a sum over pairs of joint classes,
never over elements: the elements are counted as exact integers and only
the classes are budgeted (:data:`MAX_CLASSES`).  For partitions the result
is the closed form of :mod:`daskbicl.kernels.coclustering.element_centric`.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputError

__all__ = ["ALPHA", "MAX_CLASSES", "check_classes", "class_scores", "joint_classes", "overlapping_similarity"]

ALPHA = 0.9

# Joint classes above which the pair sum (classes², 15 s at 10^4 under a load of 13) is refused.
MAX_CLASSES = 10_000

# Entries of one block of the pair sum (bounds the temporaries to ~50 MB).
_BLOCK = 1 << 21


def joint_classes(truth: np.ndarray, pred: np.ndarray, counts: np.ndarray, *, with_inverse: bool = False):
    """Merge rows with the same (truth, pred) signature, summing their counts exactly.

    Returns ``(truth, pred, counts)`` with distinct rows and no zero count
    (and, ``with_inverse``, each input row's class, −1 for rows of count 0).

    >>> t = np.array([[1, 0], [1, 0], [0, 1]], bool); p = np.array([[1], [1], [0]], bool)
    >>> [x.tolist() for x in joint_classes(t, p, np.array([2, 3, 4]), with_inverse=True)]
    [[[False, True], [True, False]], [[False], [True]], [4, 5], [1, 1, 0]]
    """
    truth, pred = np.asarray(truth, bool), np.asarray(pred, bool)
    counts = np.asarray(counts, np.int64)
    keep = np.flatnonzero(counts > 0)
    both = np.packbits(np.concatenate([truth[keep], pred[keep]], axis=1), axis=1)
    _, first, inverse = np.unique(both, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    total = np.zeros(len(first), np.int64)
    np.add.at(total, inverse, counts[keep])
    out = truth[keep[first]], pred[keep[first]], total
    if not with_inverse:
        return out
    full = np.full(len(counts), -1, np.int64)
    full[keep] = inverse
    return (*out, full)


def check_classes(n_joint: int, max_classes: int = MAX_CLASSES) -> None:
    """Refuse (:class:`~daskbicl.errors.InputError`) more joint classes than the budget."""
    if n_joint > max_classes:
        raise InputError(
            f"ecs on overlapping clusters: the elements fall into {n_joint:,} classes of equal memberships "
            f"(truth and pred together), more than the budget of {max_classes:,} (the cost grows with the "
            "square of the classes)")


def _side(member: np.ndarray, counts: np.ndarray, alpha: float):
    """The factors ``(left, right)`` with ``u = left @ right``, and the spikes, of one clustering's classes."""
    classes, codes = np.unique(np.packbits(member, axis=1), axis=0, return_inverse=True)
    codes = codes.ravel()
    first = np.zeros(len(classes), np.int64)
    first[codes] = np.arange(len(codes))
    m_cls = member[first].astype(np.float64)                      # classes x clusters
    n = np.zeros(len(classes), np.float64)
    np.add.at(n, codes, counts.astype(np.float64))
    sizes = n @ m_cls                                             # |C|, elements in each cluster
    m_cls = m_cls[:, sizes > 0]
    sizes = sizes[sizes > 0]
    n_clusters = m_cls.sum(axis=1)                                 # m, clusters of each class
    walk_in = m_cls / np.maximum(n_clusters, 1.0)[:, None]         # D_m⁻¹ M: class -> cluster
    walk_out = m_cls.T / sizes[:, None]                            # D_|C|⁻¹ Mᵀ: cluster -> one element
    q = (walk_out * n[None, :]) @ walk_in                         # cluster -> cluster
    left = walk_in @ np.linalg.inv(np.eye(len(sizes)) - alpha * q) if len(sizes) else walk_in
    spikes = np.where(n_clusters > 0, 1.0 - alpha, 1.0)
    return codes, left, alpha * (1.0 - alpha) * walk_out, spikes


def class_scores(truth: np.ndarray, pred: np.ndarray, counts: np.ndarray, *, alpha: float = ALPHA,
                 max_classes: int = MAX_CLASSES) -> np.ndarray:
    """The score ``S`` of an element of each joint class (rows distinct, see :func:`joint_classes`).

    ``truth`` (J x K) and ``pred`` (J x L) are the classes' memberships, ``counts``
    their elements.  Refused (:class:`~daskbicl.errors.InputError`) above ``max_classes``.

    >>> t = np.array([[1, 0], [1, 1], [0, 1]], bool); p = np.array([[1, 0], [1, 0], [0, 1]], bool)
    >>> class_scores(t, p, np.array([1, 1, 1])).round(6).tolist()
    [0.795455, 0.75, 0.295455]
    """
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    n_joint = len(counts)
    check_classes(n_joint, max_classes)
    t_codes, t_left, t_right, t_spike = _side(truth, counts, alpha)
    p_codes, p_left, p_right, p_spike = _side(pred, counts, alpha)
    weights = counts.astype(np.float64)
    out = np.empty(n_joint, np.float64)
    step = max(1, _BLOCK // max(n_joint, 1))
    for lo in range(0, n_joint, step):
        tb, pb = t_codes[lo:lo + step], p_codes[lo:lo + step]
        a = (t_left[tb] @ t_right)[:, t_codes]                    # u[g, h] for the block's g, every J'
        b = (p_left[pb] @ p_right)[:, p_codes]
        rows = np.arange(len(tb))
        own = np.arange(lo, lo + len(tb))
        self_a, self_b = a[rows, own], b[rows, own]
        dist = np.abs(a - b) @ weights
        dist += np.abs(self_a + t_spike[tb] - self_b - p_spike[pb]) - np.abs(self_a - self_b)
        out[lo:lo + step] = 1.0 - dist / (2.0 * alpha)
    return out


def overlapping_similarity(truth: np.ndarray, pred: np.ndarray, counts: np.ndarray, *, alpha: float = ALPHA,
                           max_classes: int = MAX_CLASSES) -> float:
    """ECS: the count-weighted mean of :func:`class_scores` over the joint classes (1 if no element).

    >>> t = np.array([[1, 0], [1, 1], [0, 1]], bool); p = np.array([[1, 0], [1, 0], [0, 1]], bool)
    >>> round(overlapping_similarity(t, p, np.array([1, 1, 1])), 6)
    0.613636
    """
    truth, pred, counts = joint_classes(truth, pred, counts)
    total = int(counts.sum())
    if total == 0:
        return 1.0
    scores = class_scores(truth, pred, counts, alpha=alpha, max_classes=max_classes)
    return min(max(math.fsum((scores * counts.astype(np.float64)).tolist()) / total, 0.0), 1.0)
