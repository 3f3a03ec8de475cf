"""Partition (co-clustering) measures finalized from contingency tables.

Every function here takes one or two :class:`~daskbicl.kernels.coclustering.contingency.Table`
objects (the row table n^{zz'} and the column table n^{ww'}) and returns a
float.  Pair counts are evaluated in exact integer arithmetic (Python ints,
so CARI's sums of ~10^40 neither overflow nor cancel) and rounded once, at the
end, through :class:`fractions.Fraction`.

References
----------
Hubert & Arabie (1985), Comparing partitions. Robert, Vasseur & Brault
(2021), Comparing high-dimensional partitions with the Co-clustering Adjusted
Rand Index, J. Classification 38. Lomet (2012), PhD thesis (co-clustering
error). The definitions, in words: docs/measures/coclustering.md.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from .contingency import Table
from .information_terms import entropy, mutual_info

#: Tables of at most this many cells are matched dense (``linear_sum_assignment``);
#: larger ones with the sparse LAPJVsp solver, in O(non-zero cells) memory.
DENSE_MATCH_LIMIT = 1 << 22

__all__ = [
    "Matched",
    "accuracy",
    "accuracy_of",
    "ari",
    "cari",
    "cell_accuracy",
    "cell_accuracy_of",
    "ce",
    "ce_of",
    "matched_of",
    "nce",
    "nce_of",
    "matched_count",
    "matching",
    "entropy",
    "mutual_info",
    "sure_cells",
    "comi",
    "conmi",
    "enmi",
    "sum_squares",
]


def sum_squares(values: np.ndarray) -> int:
    """Exact ``Σ v²`` of non-negative int64 counts, as a Python int.

    Uses uint64 arithmetic when it provably cannot overflow
    (``Σ v² ≤ (Σ v)² < 2**64``), Python integers otherwise.

    >>> sum_squares(np.array([3, 4]))
    25
    >>> sum_squares(np.array([2**40, 2**40]))  # 2**81: beyond uint64
    2417851639229258349412352
    """
    values = np.asarray(values, dtype=np.int64)
    if values.size == 0:
        return 0
    # The int64 total is exact when len·max < 2**63 (checked in Python ints),
    # and Σv² ≤ (Σv)² < 2**64 when that total is below 2**32.
    exact_total = len(values) * int(values.max()) < (1 << 63)
    if exact_total and int(values.sum(dtype=np.int64)) < (1 << 32):
        v = values.astype(np.uint64)
        return int(np.dot(v, v))
    return sum(v * v for v in values.tolist())


def _pairs(sum_sq: int, n: int) -> int:
    """Σ C(n_k, 2) = (Σ n_k² − n) / 2, exactly."""
    return (sum_sq - n) // 2


def _adjusted_rand(a: int, r: int, c: int, n_pairs: int) -> float:
    """ARI from exact pair counts; 1.0 when both partitions are trivial alike.

    ARI = (a − rc/N) / ((r + c)/2 − rc/N) = 2(aN − rc) / (N(r + c) − 2rc).
    """
    den = n_pairs * (r + c) - 2 * r * c
    if den == 0:
        return 1.0
    return float(Fraction(2 * (a * n_pairs - r * c), den))


def ari(table: Table) -> float:
    """Adjusted Rand index of one partition pair from its contingency table.

    .. math::
        \\mathrm{ARI} = \\frac{a - rc/N}{(r+c)/2 - rc/N},\\quad
        a = \\sum_{hh'} \\binom{n_{hh'}}{2},\\ r = \\sum_h \\binom{n_{h\\cdot}}{2},\\
        c = \\sum_{h'} \\binom{n_{\\cdot h'}}{2},\\ N = \\binom{n}{2}

    Examples
    --------
    >>> ari(Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0]))
    1.0
    >>> round(ari(Table.from_labels([0, 0, 1, 1], [0, 1, 0, 1])), 6)
    -0.5
    """
    n = table.n
    a = _pairs(sum_squares(table.counts), n)
    r = _pairs(sum_squares(table.truth_sizes()), n)
    c = _pairs(sum_squares(table.pred_sizes()), n)
    return _adjusted_rand(a, r, c, n * (n - 1) // 2)


def cari(rows: Table, cols: Table) -> float:
    """Co-clustering adjusted Rand index from the row and column tables.

    CARI is the ARI of the cell table ``rows ⊗ cols``; its pair counts factor
    (Σ over the Kronecker product of n² equals the product of the two Σ n²),
    so it costs O(HH' + LL') after the two tables exist.

    .. math::
        a = \\tfrac12\\big(S(n^{zz'}) S(n^{ww'}) - IJ\\big),\\
        r = \\tfrac12\\big(S(n^{z}) S(n^{w}) - IJ\\big),\\
        c = \\tfrac12\\big(S(n^{z'}) S(n^{w'}) - IJ\\big),\\ S(x) = \\sum x^2

    Examples
    --------
    >>> z, zp = [0, 0, 1, 1], [0, 0, 1, 1]
    >>> w, wp = [0, 1, 1], [0, 0, 1]
    >>> round(cari(Table.from_labels(z, zp), Table.from_labels(w, wp)), 6)
    0.274725
    """
    n_cells = rows.n * cols.n
    a = _pairs(sum_squares(rows.counts) * sum_squares(cols.counts), n_cells)
    r = _pairs(sum_squares(rows.truth_sizes()) * sum_squares(cols.truth_sizes()), n_cells)
    c = _pairs(sum_squares(rows.pred_sizes()) * sum_squares(cols.pred_sizes()), n_cells)
    return _adjusted_rand(a, r, c, n_cells * (n_cells - 1) // 2)


#: Tables of at most this many cells are always matched dense (the dense solver wins on small tables).
_SMALL_DENSE = 1 << 16
#: Larger tables are matched dense when at least 1/_DENSE_FILL of their cells are non-zero.
_DENSE_FILL = 5
#: Rounds of sure-cell pre-matching (each one O(non-zero cells); later rounds find few cells).
_SURE_ROUNDS = 8


def matched_count(table: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> int:
    """Objects on the best one-to-one matching of truth to pred clusters.

    ``max_σ Σ_h n_{h,σ(h)}`` (rectangular tables are padded implicitly with
    empty clusters), in two steps whose cost follows the non-zero cells:

    1. **Sure cells** (:func:`sure_cells`) are in every optimal matching;
       they are matched at once, their rows and columns removed, and the
       rule applied again to what is left (a few rounds).  When one
       clustering is a noisy copy of the other this matches nearly every
       cluster in O(non-zero cells), and without importing
       :mod:`scipy.optimize` (0.25–0.4 s: a fresh ``daskbicl score`` in the
       shell pays it on its first solver call), so small tables take this
       step too although the dense solver alone would be some 35 µs quicker.
    2. What is left is solved exactly: **dense** with
       :func:`scipy.optimize.linear_sum_assignment` when it has at most
       ``dense_limit`` cells and is small (at most 2^16 cells) or at least
       1/5 full, otherwise **sparse**, on its non-zero cells, with
       :func:`scipy.sparse.csgraph.min_weight_full_bipartite_matching`
       (LAPJVsp) in O(non-zero cells) memory.  The fill rule is where the
       two solvers cross over on random tables (``benchmarks/latency.py``).

    >>> matched_count(Table.from_labels([0, 0, 0, 1, 1], [5, 5, 6, 6, 6]))
    4
    >>> matched_count(Table.from_labels([0, 0, 0, 1, 1], [5, 5, 6, 6, 6]), dense_limit=0)  # sparse solver
    4
    """
    def total():
        return int(matching(table, dense_limit)[2].sum(dtype=np.int64))

    return table.memo(("matched", dense_limit), total)


def matching(table: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best one-to-one matching :func:`matched_count` sums: ``(truth index, pred index, count)`` of its cells.

    Only non-zero cells are listed (a cluster matched to an empty one is left
    out), sorted by truth index; ties between optimal matchings are broken by
    the solver.

    >>> r, c, n = matching(Table.from_labels([0, 0, 0, 1, 1], [5, 5, 6, 6, 6]))
    >>> r.tolist(), c.tolist(), n.tolist()
    ([0, 1], [0, 1], [2, 2])
    """
    def solve():
        rows, cols, counts = table.rows, table.cols, table.counts
        shape = table.shape
        row_ids, col_ids = np.arange(shape[0]), np.arange(shape[1])
        found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for _ in range(_SURE_ROUNDS):
            sure = sure_cells(rows, cols, counts, shape)
            if not sure.any():
                break
            found.append((row_ids[rows[sure]], col_ids[cols[sure]], counts[sure]))
            row_taken = np.zeros(shape[0], dtype=bool)
            col_taken = np.zeros(shape[1], dtype=bool)
            row_taken[rows[sure]] = True
            col_taken[cols[sure]] = True
            rest = ~(row_taken[rows] | col_taken[cols])
            rows, cols, counts = rows[rest], cols[rest], counts[rest]
            if counts.size == 0:
                break
            (rows, row_kept), (cols, col_kept) = _compact_ids(rows, shape[0]), _compact_ids(cols, shape[1])
            row_ids, col_ids = row_ids[row_kept], col_ids[col_kept]
            shape = (len(row_kept), len(col_kept))
        if counts.size:
            r, c, n = _best_matching(rows, cols, counts, shape, dense_limit)
            found.append((row_ids[r], col_ids[c], n))
        r, c, n = (np.concatenate([f[i] for f in found]) if found else np.zeros(0, np.int64) for i in range(3))
        order = np.argsort(r, kind="stable")
        return r[order].astype(np.intp), c[order].astype(np.intp), n[order].astype(np.int64)

    return table.memo(("matching", dense_limit), solve)


def _group_max(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=values.dtype)
    np.maximum.at(out, index, values)
    return out


def _runner_up(index: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group (row or column): its largest value, and its largest value but one (0 if none).

    A largest value that occurs twice in a group is also its runner-up.
    """
    top = _group_max(index, values, size)
    at_top = values == top[index]
    ties = np.bincount(index[at_top], minlength=size) > 1
    second = _group_max(index[~at_top], values[~at_top], size)
    return top, np.where(ties, top, second)


def sure_cells(rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Mask of the cells that lie in *every* maximum-weight matching of the table.

    Cell ``(h, h')`` qualifies when ``n_{hh'} > r_h + c_{h'}``, where
    ``r_h`` is the largest *other* cell of row ``h`` and ``c_{h'}`` the
    largest other cell of column ``h'`` (0 when there is none).  Exchange
    argument: in a matching without the cell, ``h`` is matched to some
    ``g'`` (weight at most ``r_h``, or 0 if unmatched) and ``h'`` to some
    ``g`` (at most ``c_{h'}``); replacing these two pairs by ``(h, h')`` and
    ``(g, g')`` changes the weight by ``n_{hh'} + n_{gg'} − n_{hg'} −
    n_{gh'} ≥ n_{hh'} − r_h − c_{h'} > 0``, so that matching was not
    optimal.  The inequality is strict on purpose: with ties a cell lies in
    *some* optimal matching only, and two such cells can share a row
    (``[[2, 2]]``), so they are left to the solver.  A qualifying cell is the
    strict largest of its row and of its column, so no two share a row or a
    column, and all of them are in every optimal matching together.  The
    rule implies the margin form ``3 n_{hh'} > n_{h·} + n_{·h'}`` (``r_h ≤
    n_{h·} − n_{hh'}``) and finds more cells.  Cost: O(non-zero cells + H + H').

    >>> t = Table.from_dense([[5, 1, 0], [2, 3, 0], [0, 2, 2]])
    >>> sure_cells(t.rows, t.cols, t.counts, t.shape).astype(int).tolist()  # 5 > 1 + 2, but 3 < 2 + 2
    [1, 0, 0, 0, 0, 0]

    Without row 0 and column 0 the 3 qualifies (3 > 0 + 2): :func:`matched_count`
    applies the rule again to what is left.
    """
    if counts.size == 0:
        return np.zeros(0, dtype=bool)
    row_top, row_second = _runner_up(rows, counts, shape[0])
    col_top, col_second = _runner_up(cols, counts, shape[1])
    top = (counts == row_top[rows]) & (counts == col_top[cols])
    return top & (counts > row_second[rows] + col_second[cols])


def _compact_ids(index: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``index`` renumbered 0..k-1 over the values it uses (order kept), and those values; O(size + len(index))."""
    used = np.zeros(size, dtype=bool)
    used[index] = True
    new = np.cumsum(used) - 1
    return new[index], np.flatnonzero(used)


def _best_matching(rows, cols, counts, shape, dense_limit: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    h, hp = shape
    cells = h * hp
    if cells <= dense_limit and (cells <= _SMALL_DENSE or _DENSE_FILL * counts.size >= cells):
        from scipy.optimize import linear_sum_assignment  # imported when needed: 0.3 s

        dense = np.zeros(shape, dtype=np.int64)
        dense[rows, cols] = counts
        r, c = linear_sum_assignment(dense, maximize=True)
        keep = dense[r, c] > 0
        return r[keep], c[keep], dense[r[keep], c[keep]]
    return _sparse_matching(rows, cols, counts, shape)


def _sparse_matched_count(rows, cols, counts, shape) -> int:
    """The total of :func:`_sparse_matching` (the sparse solver alone, for benchmarks and tests)."""
    return int(_sparse_matching(rows, cols, counts, shape)[2].sum(dtype=np.int64))


def _sparse_matching(rows, cols, counts, shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximum-weight matching of the sparse table, as a *full* matching.

    A full matching (every vertex of the smaller side matched) need not exist
    among the non-zero cells, so each vertex ``u`` of the smaller side gets a
    private dummy partner ``u*``.  Every full matching of that graph then has
    exactly ``len(U)`` edges, and with weights ``n_{uv} + 1`` on real edges and
    ``1`` on dummy edges its weight is ``len(U) + Σ n`` over its real edges:
    the maximum full matching is the maximum-weight matching of the table.
    The shift by 1 keeps every edge weight non-zero, as the solver requires.
    Weights are float64: exact while counts stay below 2**53.
    """
    import scipy.sparse as sp
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    h, hp = shape
    swapped = h > hp
    if swapped:  # the smaller side is the one every vertex of which is matched
        rows, cols, h, hp = cols, rows, hp, h
    own = np.arange(h)
    graph = sp.csr_array(
        (
            np.concatenate([counts.astype(np.float64) + 1.0, np.ones(h)]),
            (np.concatenate([rows, own]), np.concatenate([cols, hp + own])),
        ),
        shape=(h, hp + h),
    )
    r, c = min_weight_full_bipartite_matching(graph, maximize=True)
    real = c < hp
    # Read the matched counts back exactly from the int64 table.
    lookup = sp.csr_array((counts, (rows, cols)), shape=(h, hp))
    r, c = r[real], c[real]
    n = np.asarray(lookup[r, c], dtype=np.int64).reshape(-1)
    return (c, r, n) if swapped else (r, c, n)


class Matched(NamedTuple):
    """What the matching measures read of one axis's table: the objects on its best one-to-one matching
    (:func:`matched_count`), its objects, and ``max(H, H')`` (its larger number of clusters).

    The measures below are computed from these alone (``ce(rows, cols) ==
    ce_of(matched_of(rows), matched_of(cols))``), so the bootstrap computes them from the
    replicates' counts (:mod:`.matching_replicates`) with the same code.
    """

    matched: int
    n: int
    clusters: int


def matched_of(table: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> Matched:
    """The :class:`Matched` of ``table``.

    >>> matched_of(Table.from_labels([0, 0, 1, 1], [0, 0, 1, 0]))
    Matched(matched=3, n=4, clusters=2)
    """
    return Matched(matched_count(table, dense_limit), table.n, max(table.shape))


def _ce_fraction(rows: Matched, cols: Matched) -> Fraction:
    # CE = d_r + d_c − d_r·d_c = 1 − (1 − d_r)(1 − d_c), with 1 − d = matched / n.
    return 1 - Fraction(int(rows.matched) * int(cols.matched), int(rows.n) * int(cols.n))


def accuracy_of(axis: Matched) -> float:
    """:func:`accuracy` from the :class:`Matched` of the table."""
    return float(Fraction(int(axis.matched), int(axis.n)))


def cell_accuracy_of(rows: Matched, cols: Matched) -> float:
    """:func:`cell_accuracy` from the :class:`Matched` of the row and the column tables."""
    return float(1 - _ce_fraction(rows, cols))


def ce_of(rows: Matched, cols: Matched) -> float:
    """:func:`ce` from the :class:`Matched` of the row and the column tables."""
    return float(_ce_fraction(rows, cols))


def accuracy(table: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> float:
    """Share of objects on the best one-to-one matching of clusters, ``1 − d`` of CE.

    >>> accuracy(Table.from_labels([0, 0, 1, 1], [0, 0, 1, 0]))
    0.75
    """
    return accuracy_of(matched_of(table, dense_limit))


def cell_accuracy(rows: Table, cols: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> float:
    """``1 − CE``, exactly: the product of the row and column accuracies.

    >>> cell_accuracy(Table.from_labels([0, 0, 1, 1], [0, 0, 1, 0]), Table.from_labels([0, 1], [0, 1]))
    0.75
    """
    return cell_accuracy_of(matched_of(rows, dense_limit), matched_of(cols, dense_limit))


def ce(rows: Table, cols: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> float:
    """Co-clustering error (Lomet): ``d_r + d_c − d_r·d_c``.

    ``d_r = 1 − max_σ Σ_h n^{zz'}_{h,σ(h)} / I`` and ``d_c`` likewise on the
    column table; 0 means identical up to relabeling.

    Examples
    --------
    >>> rows = Table.from_labels([0, 0, 1, 1], [0, 0, 1, 0])   # d_r = 1/4
    >>> cols = Table.from_labels([0, 1], [0, 1])               # d_c = 0
    >>> ce(rows, cols)
    0.25
    """
    return ce_of(matched_of(rows, dense_limit), matched_of(cols, dense_limit))


#: NCE normalisers: the largest CE (the default), the one the paper prints, each axis alone (bikm1).
NCE_NORMALIZERS = ("corrected", "printed", "per_axis")


def _per_axis_nce(rows: Matched, cols: Matched) -> float:
    """bikm1's ``NCE_LBM``: each axis's distance over its own largest value, combined as CE.

    ``a = d_r H/(H − 1)``, ``b = d_c L/(L − 1)`` (0 when H or L is 1),
    ``NCE = 1 − (a + b − a b) = (1 − a)(1 − b)``, in exact fractions.
    """
    factors = []
    for axis in (rows, cols):
        k = int(axis.clusters)
        d = 1 - Fraction(int(axis.matched), int(axis.n))
        factors.append(1 - (d * Fraction(k, k - 1) if k > 1 else Fraction(0)))
    return float(factors[0] * factors[1])


def nce_of(rows: Matched, cols: Matched, normalizer: str = "corrected") -> float:
    """:func:`nce` from the :class:`Matched` of the row and the column tables."""
    h, l_ = int(rows.clusters), int(cols.clusters)
    if normalizer == "per_axis":
        return _per_axis_nce(rows, cols)
    if normalizer == "corrected":
        if h * l_ == 1:
            return 1.0
        norm = 1 - Fraction(1, h * l_)
    elif normalizer == "printed":
        norm = Fraction(h + l_ - 1, h * l_)
    else:
        raise ValueError(f"normalizer must be one of {NCE_NORMALIZERS}, got {normalizer!r}")
    return float(1 - _ce_fraction(rows, cols) / norm)


def nce(rows: Table, cols: Table, dense_limit: int = DENSE_MATCH_LIMIT, normalizer: str = "corrected") -> float:
    """Normalised co-clustering error: CE divided by its largest value, from 1.

    .. math::
        \\mathrm{NCE} = 1 - \\frac{\\mathrm{CE}}{1 - 1/(HL)},\\quad
        H = \\max(H, H'),\\ L = \\max(L, L')

    and 1 when ``H·L = 1``.  In [0, 1]: 1 = identical up to relabeling, 0 =
    the largest possible CE, reached by independent uniform clusters.

    ``normalizer="printed"`` divides by the published ``1/H + 1/L − 1/(HL)``
    instead (to reproduce published numbers).  That normaliser is smaller than
    the largest CE whenever ``H`` or ``L`` exceeds 2, so NCE then goes below
    0, down to ``1 − (HL − 1)/(H + L − 1)``.  ``normalizer="per_axis"``
    normalises each axis's distance alone, ``d_r H/(H − 1)`` and ``d_c L/(L −
    1)``, and combines them as CE (the R package bikm1's ``NCE_LBM``).

    >>> u = Table.from_dense(np.ones((3, 3), dtype=np.int64))   # independent, uniform
    >>> nce(u, u), nce(u, u, normalizer="printed"), nce(u, u, normalizer="per_axis")
    (0.0, -0.6, 0.0)
    >>> nce(Table.from_labels([0, 1, 1], [1, 0, 0]), Table.from_labels([4, 2], [0, 1]))
    1.0
    """
    if normalizer not in NCE_NORMALIZERS:
        raise ValueError(f"normalizer must be one of {NCE_NORMALIZERS}, got {normalizer!r}")
    return nce_of(matched_of(rows, dense_limit), matched_of(cols, dense_limit), normalizer)


def xlogx_sum(values: np.ndarray) -> float:
    """``Σ v log v`` over positive integer counts, grouped by distinct value.

    Each distinct count ``u`` with multiplicity ``m`` contributes one term
    ``(m u) log u`` (``m u`` is an exact integer in float64 below 2**53), and
    the terms are summed with :func:`math.fsum` (correctly rounded, so the
    result does not depend on the order of the counts).  Label counts repeat
    a few values, so this costs one pass over the counts plus a handful of
    logarithms.

    >>> round(xlogx_sum(np.array([2, 2, 4])), 12) == round(2 * 2 * math.log(2) + 4 * math.log(4), 12)
    True
    """
    values = np.asarray(values, dtype=np.int64)
    values = values[values > 1]  # 1 log 1 = 0
    if values.size == 0:
        return 0.0
    top = int(values.max())
    if top <= 4 * values.size + 1024:
        mult = np.bincount(values)
        distinct = np.flatnonzero(mult)
        mult = mult[distinct]
    else:
        distinct, mult = np.unique(values, return_counts=True)
    weight = mult.astype(np.float64) * distinct.astype(np.float64)
    return math.fsum((weight * np.log(distinct.astype(np.float64))).tolist())


def _entropies(table: Table) -> tuple[float, float]:
    return table.memo("entropies", lambda: (entropy(table.truth_sizes()), entropy(table.pred_sizes())))


def _ratio(num: float, den: float) -> float:
    """``num / den`` clipped to [0, 1]; 1 when both are 0 (trivial partitions)."""
    if den <= 0.0:
        return 1.0
    return min(max(num / den, 0.0), 1.0)


def comi(rows: Table, cols: Table) -> float:
    """Co-clustering mutual information: ``MI(z, z') + MI(w, w')``.

    It equals the mutual information of the cell table (the Kronecker product
    of the two tables), in nats.

    >>> t = Table.from_labels([0, 0, 1, 1], [0, 0, 1, 1])
    >>> round(comi(t, t), 10)  # 2 log 2
    1.3862943611
    """
    return mutual_info(rows) + mutual_info(cols)


def conmi(rows: Table, cols: Table) -> float:
    """Co-clustering normalized MI: ``coMI / max(H(z)+H(w), H(z')+H(w'))``.

    1 when both joint entropies are 0.

    >>> t = Table.from_labels([0, 0, 1, 1], [0, 1, 0, 1])
    >>> conmi(t, t)
    0.0
    """
    hz, hzp = _entropies(rows)
    hw, hwp = _entropies(cols)
    return _ratio(comi(rows, cols), max(hz + hw, hzp + hwp))


def enmi(rows: Table, cols: Table) -> float:
    """Extended NMI: ``NMI(z, z') + NMI(w, w')``, NMI = MI / max(entropies).

    Range [0, 2], as published.

    >>> t = Table.from_labels([0, 0, 1, 1], [1, 1, 0, 0])
    >>> enmi(t, t)
    2.0
    """
    total = 0.0
    for table in (rows, cols):
        h, hp = _entropies(table)
        total += _ratio(mutual_info(table), max(h, hp))
    return total
