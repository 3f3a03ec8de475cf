"""Bicluster precision–recall measures from intersection tables (numpy only).

For K true biclusters :math:`B_k = E_k \\times F_k` and L predicted biclusters
:math:`X_l = E'_l \\times F'_l` the engine counts, in one pass,
``rows_shared[k, l]`` :math:`= |E_k \\cap E'_l|` and ``cols_shared[k, l]``
:math:`= |F_k \\cap F'_l|`; with the bicluster sizes and :math:`|D| = I J`
every bicluster precision–recall measure (raw, corrected, corrected-space) is finalized here.

Exactness
---------
All the corrected quantities share one numerator,

.. math::

    N = |D|\\,|B \\cap X| - |B|\\,|X|,
    \\qquad
    pre^c = \\frac{N}{|X|(|D|-|B|)},
    \\qquad
    rec^c = \\frac{N}{|B|(|D|-|X|)},

which suffers catastrophic cancellation in float64 when the counts are large.
``N``, ``|D|-|B|``, ``|D|-|X|`` and ``|B|+|X|-|B \\cap X|`` are evaluated
*exactly* in integers — int64 when ``|D|**2 < 2**62`` (so no product can
overflow), Python integers (object arrays) otherwise — and converted to
float64 once (correctly rounded).  After that every formula is a ratio of
sums of non-negative terms, so the result is accurate to a few ulps even for
:math:`|D| = 10^{18}`.

Conventions (0/0 cases)
-----------------------
* A bicluster of size 0 is an error (:func:`empty_biclusters` finds them), so
  ``pre``, ``rec``, F and Jaccard are always defined; an empty intersection
  gives ``pre = rec = F = J = Goodness = 0``.
* Every corrected and corrected-space value is 0 when ``N = 0``; this covers
  ``|X| = |D|`` and ``|B| = |D|`` (0 by definition), where the
  formulas are 0/0 or ``(1 - 1)/(1 - 1)``.
* Corrected-space F-measure, Dice and Jaccard are 0 when ``pre^c <= 0`` or
  ``rec^c <= 0``.  ``pre^c`` and ``rec^c`` have the sign of ``N`` (their
  denominators are positive), so this is the same as ``N <= 0``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ...errors import InputError

__all__ = [
    "corrected_precision_recall_of",
    "pair_measures_of",
    "AGGREGATES",
    "MEASURE_KEYS",
    "PAIR_KEYS",
    "PairScores",
    "aggregate_measures",
    "best_match_mean",
    "corrected_precision_recall",
    "empty_biclusters",
    "pair_measures",
    "pair_scores",
]

class PairScores(NamedTuple):
    """Every (truth, pred) bicluster pair's counts and scores, each a (K, L) array (:func:`pair_scores`).

    The fields are named after the formulas computed (raw, ``_corrected``
    and corrected-``_space`` forms of four indices); which of them is a
    scored measure, and under which name, is said by the measure records
    (``daskbicl/measures/bicluster.py``).
    """

    intersection: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    goodness: np.ndarray
    goodness_corrected: np.ndarray
    goodness_space: np.ndarray
    fmeasure: np.ndarray
    fmeasure_corrected: np.ndarray
    fmeasure_space: np.ndarray
    dice: np.ndarray
    dice_corrected: np.ndarray
    dice_space: np.ndarray
    jaccard: np.ndarray
    jaccard_corrected: np.ndarray
    jaccard_space: np.ndarray


#: Keys of the dict returned by :func:`pair_measures` (the fields of :class:`PairScores`).
PAIR_KEYS: tuple[str, ...] = PairScores._fields

#: The twelve index forms aggregated by :func:`best_match_mean` (all fields but the counts and pre/rec).
MEASURE_KEYS: tuple[str, ...] = PAIR_KEYS[3:]

_INT64_SAFE = 1 << 62


def split_weight(t: float) -> tuple[float, float]:
    """``(t/(1+t), 1/(1+t))`` for ``t > 0``, without overflow or underflow to NaN.

    Goodness(R) weights precision by ``R/(R+1)``; F_beta weights recall by
    ``beta²/(1+beta²)`` (pass ``t = beta²`` as ``beta`` via :func:`beta_weights`).
    Written as weights, every parameter a float can hold gives a finite
    value: ``R = 1.7e308`` is precision alone, not ``inf/inf``.

    Examples
    --------
    >>> split_weight(1.0), split_weight(3.0)
    ((0.5, 0.5), (0.75, 0.25))
    >>> split_weight(1.7e308)
    (1.0, 5.88235294117647e-309)
    """
    if t >= 1.0:
        inv = 1.0 / t
        return 1.0 / (1.0 + inv), inv / (1.0 + inv)
    return t / (1.0 + t), 1.0 / (1.0 + t)


def beta_weights(beta: float) -> tuple[float, float]:
    """``(beta²/(1+beta²), 1/(1+beta²))``, the recall and precision weights of F_beta, for any finite ``beta > 0``.

    Examples
    --------
    >>> beta_weights(1.0), beta_weights(1e200)
    ((0.5, 0.5), (1.0, 0.0))
    """
    if beta >= 1.0:
        inv2 = (1.0 / beta) * (1.0 / beta)  # may underflow to 0: recall alone
        return 1.0 / (1.0 + inv2), inv2 / (1.0 + inv2)
    b2 = beta * beta  # may underflow to 0: precision alone
    return b2 / (1.0 + b2), 1.0 / (1.0 + b2)


def empty_biclusters(rows, cols) -> np.ndarray:
    """Indices of biclusters with no row or no column.

    Parameters
    ----------
    rows, cols : array_like of int, shape (K,)
        Number of rows and of columns of each bicluster.

    Returns
    -------
    numpy.ndarray of intp
        Sorted indices ``k`` with ``rows[k] == 0`` or ``cols[k] == 0``.

    Examples
    --------
    >>> empty_biclusters([3, 0, 2, 4], [1, 5, 0, 2]).tolist()
    [1, 2]
    """
    rows = np.asarray(rows)
    cols = np.asarray(cols)
    if rows.shape != cols.shape or rows.ndim != 1:
        raise InputError(
            f"rows and cols must be 1-D of the same length, got shapes {rows.shape} and {cols.shape}"
        )
    return np.flatnonzero((rows == 0) | (cols == 0))


def _as_counts(name: str, value, ndim: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.ndim != ndim:
        raise InputError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.dtype == object:
        try:
            arr = arr.astype(np.int64)
        except (OverflowError, TypeError, ValueError):
            raise InputError(f"{name} must hold integers below 2**63") from None
    if not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"{name} must have an integer dtype, got {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise InputError(f"{name} must be non-negative, got a value {arr.min()}")
    return arr


def _check_nonempty(side: str, rows: np.ndarray, cols: np.ndarray) -> None:
    empty = empty_biclusters(rows, cols)
    if empty.size:
        shown = ", ".join(str(k) for k in empty[:10].tolist())
        more = "" if empty.size <= 10 else f" (and {empty.size - 10} more)"
        raise InputError(
            f"{side} bicluster(s) {shown}{more} are empty (no row or no column); "
            "drop empty biclusters before scoring"
        )


def _exact(arr: np.ndarray, big: bool) -> np.ndarray:
    """View counts as int64 (small problem) or Python ints (huge problem)."""
    return arr.astype(object) if big else arr


def _tables(rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells):
    """Validate the inputs and return exact and float versions of the counts."""
    rs = _as_counts("rows_shared", rows_shared, 2)
    cs = _as_counts("cols_shared", cols_shared, 2)
    tr = _as_counts("truth_rows", truth_rows, 1)
    tc = _as_counts("truth_cols", truth_cols, 1)
    pr = _as_counts("pred_rows", pred_rows, 1)
    pc = _as_counts("pred_cols", pred_cols, 1)
    K, L = tr.shape[0], pr.shape[0]
    if tc.shape != (K,) or pc.shape != (L,):
        raise InputError(
            f"truth_rows/truth_cols have lengths {K}/{tc.shape[0]} and "
            f"pred_rows/pred_cols {L}/{pc.shape[0]}; each pair must match"
        )
    if rs.shape != (K, L) or cs.shape != (K, L):
        raise InputError(
            f"rows_shared and cols_shared must have shape (K, L) = {(K, L)}, got {rs.shape} and {cs.shape}"
        )
    _check_nonempty("truth", tr, tc)
    _check_nonempty("pred", pr, pc)
    if isinstance(n_cells, (bool, np.bool_)) or not isinstance(n_cells, (int, np.integer)):
        raise InputError(f"n_cells must be an integer, got {n_cells!r}")
    D = int(n_cells)
    if D < 1:
        raise InputError(f"n_cells must be >= 1, got {D}")
    if (rs > np.minimum(tr[:, None], pr[None, :])).any() or (cs > np.minimum(tc[:, None], pc[None, :])).any():
        raise InputError(
            "rows_shared/cols_shared exceed the size of a bicluster; the "
            "intersection tables do not match the bicluster sizes"
        )
    if max(int(a.max()) if a.size else 0 for a in (tr, tc, pr, pc)) > D:
        raise InputError(
            f"a bicluster has more rows or columns than the matrix has cells "
            f"(n_cells = {D}); n_cells must be I*J of the scored matrix"
        )
    big = D * D >= _INT64_SAFE
    tri, tci, pri, pci = (_exact(a, big) for a in (tr, tc, pr, pc))
    b = tri * tci
    x = pri * pci
    if (K and max(b.tolist()) > D) or (L and max(x.tolist()) > D):
        raise InputError(
            f"a bicluster has more cells than the matrix (n_cells = {D}); "
            "n_cells must be I*J of the scored matrix"
        )
    n = _exact(rs, big) * _exact(cs, big)
    N = D * n - b[:, None] * x[None, :]
    f = {
        "n": n.astype(np.float64),
        "b": b.astype(np.float64)[:, None],
        "x": x.astype(np.float64)[None, :],
        "N": N.astype(np.float64),
        "Db": (D - b).astype(np.float64)[:, None],
        "Dx": (D - x).astype(np.float64)[None, :],
        "union": (b[:, None] + x[None, :] - n).astype(np.float64),
    }
    # corrected values are 0 where N = 0 and, by definition, where |B| or |X|
    # is the whole matrix (then N = 0 anyway for consistent tables)
    f["nz"] = (f["N"] != 0) & (f["Db"] > 0) & (f["Dx"] > 0)
    intersection = n
    if not big or n.size == 0 or max(n.flat) < 2**63:
        intersection = n.astype(np.int64)
    return intersection, f


def _div(num: np.ndarray, den: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``num / den`` where ``where`` holds, 0 elsewhere (no warnings)."""
    num, den = np.broadcast_arrays(num, den)
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=where)
    return out


def corrected_precision_recall(
    rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells
) -> tuple[np.ndarray, np.ndarray]:
    """Corrected precision and recall of every (truth, pred) pair.

    .. math::

        pre^c = \\frac{|D|\\,pre - |B|}{|D| - |B|}, \\qquad
        rec^c = \\frac{|D|\\,rec - |X|}{|D| - |X|}

    0 for a random result, 1 for a perfect one, negative when worse than
    random; both are 0 when ``|B| = |D|`` or ``|X| = |D|``.

    Parameters
    ----------
    rows_shared, cols_shared : array_like of int, shape (K, L)
        :math:`|E_k \\cap E'_l|` and :math:`|F_k \\cap F'_l|`.
    truth_rows, truth_cols : array_like of int, shape (K,)
    pred_rows, pred_cols : array_like of int, shape (L,)
    n_cells : int
        :math:`|D| = I J`.

    Returns
    -------
    pre_c, rec_c : numpy.ndarray of float64, shape (K, L)

    Examples
    --------
    >>> pc, rc = corrected_precision_recall([[2]], [[2]], [2], [2], [2], [4], 100)
    >>> print(round(float(pc[0, 0]), 6), round(float(rc[0, 0]), 6))
    0.479167 1.0
    """
    _, f = _tables(rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells)
    nz = f["nz"]
    return _div(f["N"], f["x"] * f["Db"], nz), _div(f["N"], f["b"] * f["Dx"], nz)


def pair_measures(
    rows_shared,
    cols_shared,
    truth_rows,
    truth_cols,
    pred_rows,
    pred_cols,
    n_cells: int,
    *,
    R: float = 1.0,
    beta: float = 1.0,
    clip: bool = False,
) -> dict[str, np.ndarray]:
    """Every bicluster precision–recall measure for every (truth, pred) bicluster pair.

    With :math:`pre = |B \\cap X|/|X|`, :math:`rec = |B \\cap X|/|B|`:

    .. math::

        G_R = \\frac{R\\,pre + rec}{R + 1}, \\quad
        F_\\beta = \\frac{(1+\\beta^2)\\,pre\\,rec}{\\beta^2 pre + rec}, \\quad
        J = \\frac{pre\\,rec}{pre + rec - pre\\,rec},

    Dice is :math:`F_1`.  ``*_corrected`` is
    :math:`M^c = (M - E[M]) / (1 - E[M])` with :math:`E[M]` from docs/measures/bicluster.md
    (Goodness: :math:`(R|B| + |X|)/(|D|(R+1))`, the erratum form; Jaccard:
    the *approximation* :math:`E[J] \\approx |B||X| / (|D||B| + |D||X| -
    |B||X|)`, the "≈" row — expected intersection over expected union, not
    the exact expectation of the Jaccard index, see Notes), and
    ``*_space`` is the uncorrected formula fed :math:`pre^c, rec^c` (see
    :func:`corrected_precision_recall`).  In closed form, with
    :math:`N = |D||B \\cap X| - |B||X|`,
    :math:`P = |X|(|D|-|B|)`, :math:`Q = |B|(|D|-|X|)`:

    .. math::

        G_R^c = \\frac{N (R|B| + |X|)}{|B||X|\\,(R(|D|-|B|) + |D|-|X|)}, \\quad
        F_\\beta^c = \\frac{(1+\\beta^2) N}{\\beta^2 Q + P}, \\quad
        J^c = \\frac{(|B|+|X|)\\,N}{(|B|+|X|-|B \\cap X|)(P + Q)}.

    Parameters
    ----------
    rows_shared, cols_shared : array_like of int, shape (K, L)
        :math:`|E_k \\cap E'_l|` and :math:`|F_k \\cap F'_l|`.
    truth_rows, truth_cols : array_like of int, shape (K,)
        :math:`|E_k|`, :math:`|F_k|`; all > 0.
    pred_rows, pred_cols : array_like of int, shape (L,)
        :math:`|E'_l|`, :math:`|F'_l|`; all > 0.
    n_cells : int
        :math:`|D| = I J` (a Python int; may exceed 2**63).
    R : float, default 1
        Goodness weight of precision (weight ``R/(R+1)``); a finite float > 0,
        validated by its record (``daskbicl.measures.bicluster.R_PARAM``): the
        kernel does not check it again.
    beta : float, default 1
        F-measure :math:`\\beta` (> 1 favours recall); a finite float > 0,
        validated by its record (``daskbicl.measures.bicluster.BETA``).
    clip : bool, default False
        Clip negative ``*_corrected`` and ``*_space`` values at 0.

    Returns
    -------
    dict of str to numpy.ndarray, shape (K, L)
        Keys :data:`PAIR_KEYS`.  ``intersection`` is the exact int64
        :math:`|B \\cap X|` (an object array of Python ints in the unlikely
        case that a value reaches 2**63); every other entry is float64.

    Raises
    ------
    InputError
        Wrong shapes/dtypes, negative counts, intersections larger than the
        biclusters, an empty bicluster (its index is named), or a bicluster
        larger than ``n_cells``.

    Notes
    -----
    Since :math:`pre^c = N/P` and :math:`rec^c = N/Q`, the corrected-space
    F-measure equals :math:`(1+\\beta^2)N/(\\beta^2 Q + P) = F_\\beta^c`
    exactly, for every :math:`\\beta`, whenever :math:`N > 0` (Hanczar &
    Nadif's property); for :math:`N \\le 0` the space value is 0 and
    :math:`F_\\beta^c \\le 0`.  Corrected and corrected-space Goodness
    weight :math:`pre^c, rec^c` by :math:`R(|D|-|B|), |D|-|X|` and by
    :math:`R, 1` respectively, so they agree only when :math:`|B| = |X|` (or
    :math:`N = 0`).  :math:`J^c = D^c (|B|+|X|) / (2(|B|+|X|-|B \\cap X|))`
    with :math:`D^c` the corrected Dice, so corrected Jaccard and corrected
    Dice can rank two predictions differently (raw and corrected-space
    Jaccard are :math:`F_1/(2-F_1)` and rank like Dice).

    ``jaccard_corrected`` uses the approximate expectation
    :math:`E[J] \\approx |B||X| / (|D||B| + |D||X| - |B||X|)` (the ratio of
    the expected intersection :math:`|B||X|/|D|` to the expected union), as
    the definition prescribes; the exact expectation of :math:`J` over random X of
    size :math:`|X|` differs (the mean of a ratio is not the ratio of the
    means), so a random result's ``jaccard_corrected`` is 0 only
    approximately.  Goodness and F-measure use exact expectations.

    Examples
    --------
    A 2×2 truth bicluster and a 2×4 prediction containing it, in a 10×10
    matrix: precision 1/2, recall 1.

    >>> m = pair_measures([[2]], [[2]], [2], [2], [2], [4], 100)
    >>> {k: round(float(m[k][0, 0]), 4) for k in ("precision", "recall", "dice", "jaccard")}
    {'precision': 0.5, 'recall': 1.0, 'dice': 0.6667, 'jaccard': 0.5}
    >>> round(float(m["dice_corrected"][0, 0]), 4), round(float(m["dice_space"][0, 0]), 4)
    (0.6479, 0.6479)
    >>> float(pair_measures([[2]], [[2]], [2], [2], [10], [10], 100)["fmeasure_corrected"][0, 0])
    0.0
    """
    return pair_scores(rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells,
                       R=R, beta=beta, clip=clip)._asdict()


def pair_scores(rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells: int, *,
                R: float = 1.0, beta: float = 1.0, clip: bool = False) -> PairScores:
    """:func:`pair_measures` as a :class:`PairScores` record (the same arrays, bit for bit).

    >>> s = pair_scores([[2]], [[2]], [2], [2], [2], [4], 100)
    >>> float(s.precision[0, 0]), float(s.dice[0, 0])
    (0.5, 0.6666666666666666)
    """
    inter, f = _tables(rows_shared, cols_shared, truth_rows, truth_cols, pred_rows, pred_cols, n_cells)
    n, b, x, N = f["n"], f["b"], f["x"], f["N"]
    pre_c, rec_c = _div(N, x * f["Db"], f["nz"]), _div(N, b * f["Dx"], f["nz"])
    ones = np.ones_like(N)
    scores = PairScores(
        inter, np.broadcast_to(n / x, N.shape).copy(), np.broadcast_to(n / b, N.shape).copy(),
        *_goodness_forms(f, pre_c, rec_c, R, ones),
        *_f_forms(f, pre_c, rec_c, beta_weights(beta), ones),
        *_f_forms(f, pre_c, rec_c, (0.5, 0.5), ones),  # Dice = F_1
        *_jaccard_forms(f, pre_c, rec_c),
    )
    if clip:
        for key in MEASURE_KEYS:
            if key.endswith(("_corrected", "_space")):
                np.maximum(getattr(scores, key), 0.0, out=getattr(scores, key))
    return scores


def _goodness_forms(f: dict, pre_c, rec_c, R: float, ones) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Goodness raw, corrected, corrected-space, as the weighted form: rho = R/(R+1) on precision.

    (The same values as the printed formula, bit for bit at R = 1, and finite for every finite R > 0.)
    """
    n, b, x, N, nz = f["n"], f["b"], f["x"], f["N"], f["nz"]
    rho, one_rho = split_weight(R)
    raw = (rho * (n / x) + one_rho * (n / b)) * ones
    corrected = _div(N * (rho * b + one_rho * x), b * x * (rho * f["Db"] + one_rho * f["Dx"]), nz)
    return raw, corrected, rho * pre_c + one_rho * rec_c


def _f_forms(f: dict, pre_c, rec_c, weights: tuple[float, float], ones) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """F raw, corrected, corrected-space with weight lam = beta²/(1+beta²) on recall (``weights = (lam, mu)``)."""
    n, b, x, N, nz = f["n"], f["b"], f["x"], f["N"], f["nz"]
    lam, mu = weights
    P, Q = x * f["Db"], b * f["Dx"]
    raw = n / (lam * b + mu * x) * ones
    corrected = _div(N, lam * Q + mu * P, nz)
    return raw, corrected, _div(pre_c * rec_c, lam * pre_c + mu * rec_c, nz & (N > 0))


def _jaccard_forms(f: dict, pre_c, rec_c) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jaccard raw, corrected (the approximate expectation, see :func:`pair_measures`), corrected-space."""
    b, x, N, nz = f["b"], f["x"], f["N"], f["nz"]
    P, Q = x * f["Db"], b * f["Dx"]
    corrected = _div((b + x) * N, f["union"] * (P + Q), nz)
    return f["n"] / f["union"], corrected, _div(pre_c * rec_c, pre_c + rec_c - pre_c * rec_c, nz & (N > 0))


#: How best matches are averaged: over truth biclusters (Hanczar–Nadif), over pred ones, or both.
AGGREGATES = ("truth", "pred", "both")


def _both(x: float, y: float) -> float:
    """Harmonic mean of two positive scores; the smaller one when either is <= 0."""
    if x <= 0.0 or y <= 0.0:
        return min(x, y)
    return 2.0 * x * y / (x + y)


def best_match_mean(
    pairs: Mapping[str, np.ndarray], measures: Sequence[str] = MEASURE_KEYS, aggregate: str = "truth"
) -> dict[str, float]:
    """Aggregate pair scores over biclusterings: mean best match of each truth bicluster.

    .. math::

        I(\\text{truth}, \\text{pred}) = \\frac{1}{K} \\sum_{k=1}^{K}
        \\max_{l} M(B_k, X_l)

    Parameters
    ----------
    pairs : mapping of str to array, shape (K, L)
        Usually the output of :func:`pair_measures`.
    measures : sequence of str
        Keys of ``pairs`` to aggregate (default :data:`MEASURE_KEYS`).
    aggregate : {"truth", "pred", "both"}
        ``"truth"`` (the formula above, Hanczar–Nadif eq. (1)); ``"pred"``:
        the mean over pred biclusters of their best truth match, so spurious
        pred biclusters cost; ``"both"``: the harmonic mean of the two (the
        smaller of the two when either is <= 0, as corrected values can be).

    Returns
    -------
    dict of str to float
        With no predicted bicluster (L = 0) every aggregate is 0.

    Raises
    ------
    InputError
        K = 0 (the mean over no truth bicluster is undefined) or a key missing.

    Examples
    --------
    >>> best_match_mean({"dice": [[0.5, 0.9], [0.2, 0.1]]}, ["dice"])
    {'dice': 0.55}
    >>> best_match_mean({"dice": [[0.5, 0.9], [0.2, 0.1]]}, ["dice"], aggregate="pred")
    {'dice': 0.7}
    """
    if aggregate not in AGGREGATES:
        raise InputError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    out = {}
    for key in measures:
        if key not in pairs:
            raise InputError(f"measure {key!r} missing from the pair table")
        table = np.asarray(pairs[key], dtype=np.float64)
        if table.ndim != 2 or table.shape[0] == 0:
            raise InputError(
                f"{key}: need a (K, L) table with K >= 1 truth biclusters, got shape {table.shape}"
            )
        if table.shape[1] == 0:
            out[key] = 0.0
            continue
        by_truth = math.fsum(table.max(axis=1).tolist()) / table.shape[0]
        by_pred = math.fsum(table.max(axis=0).tolist()) / table.shape[1]
        out[key] = {"truth": by_truth, "pred": by_pred, "both": _both(by_truth, by_pred)}[aggregate]
    return out


def aggregate_measures(
    rows_shared,
    cols_shared,
    truth_rows,
    truth_cols,
    pred_rows,
    pred_cols,
    n_cells: int,
    *,
    R: float = 1.0,
    beta: float = 1.0,
    clip: bool = False,
) -> dict[str, float]:
    """The twelve aggregate measures of a pair of biclusterings.

    :func:`pair_measures` followed by :func:`best_match_mean`:

    .. math::

        I(\\text{truth}, \\text{pred}) = \\frac{1}{K} \\sum_{k} \\max_{l} M(B_k, X_l).

    Parameters and errors as in :func:`pair_measures`.

    Returns
    -------
    dict of str to float
        Keys :data:`MEASURE_KEYS`.

    Examples
    --------
    Two truth biclusters; the prediction finds the first exactly and misses
    the second.

    >>> s = aggregate_measures([[3, 0]], [[3, 0]], [3], [3], [3, 2], [3, 2], 400)
    >>> s["dice"], s["jaccard_corrected"]
    (1.0, 1.0)
    >>> s = aggregate_measures([[3], [0]], [[3], [0]], [3, 2], [3, 2], [3], [3], 400)
    >>> s["dice"], s["dice_corrected"] < 0.5
    (0.5, True)
    """
    pairs = pair_measures(
        rows_shared,
        cols_shared,
        truth_rows,
        truth_cols,
        pred_rows,
        pred_cols,
        n_cells,
        R=R,
        beta=beta,
        clip=clip,
    )
    return best_match_mean(pairs)


def pair_measures_of(tables, *, R: float = 1.0, beta: float = 1.0, clip: bool = False) -> dict[str, np.ndarray]:
    """:func:`pair_measures` of a :class:`~daskbicl.kernels.bicluster.mask_counting.BiclusterTables` record."""
    return pair_measures(*_table_args(tables), R=R, beta=beta, clip=clip)


def corrected_precision_recall_of(tables) -> tuple[np.ndarray, np.ndarray]:
    """:func:`corrected_precision_recall` of a :class:`~daskbicl.kernels.bicluster.mask_counting.BiclusterTables` record."""
    return corrected_precision_recall(*_table_args(tables))


def _table_args(tables) -> tuple:
    return (tables.rows.shared, tables.cols.shared, tables.rows.truth_sizes, tables.cols.truth_sizes,
            tables.rows.pred_sizes, tables.cols.pred_sizes, tables.n_cells)
