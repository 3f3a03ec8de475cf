"""The exact cell-class method ("traces") of the micro-object measures (numpy; numba kernels).

Every quantity of a cell x depends only on its *class* S(x), the set of
biclusters containing it; a cell (i, j) has the class R(i) ∩ C(j) of its
row signature R(i) and column signature C(j).  This module computes the
coverage counts and MOCICE-BCubed from the classes instead of the family
of sets sharing a cell (docs/measures/micro.md, "The class method"):

1. **Identical biclusters are merged** (per side, from the Gram tables) into
   one element with a multiplicity; an empty bicluster (no cell) is dropped.
   A cell's class then has |S| distinct elements whatever the number of
   copies, and every count is weighted by the multiplicities.
2. **Classes** are enumerated from every pair of (merged, distinct) row and
   column signatures as bit words, with their numbers of cells
   (:func:`enumerate_classes`): O(rows' signatures x columns' signatures).
3. **Per class S**, the cells y are grouped by S ∩ S(y) = (R(i') ∩ S) ∩
   (C(j') ∩ S): the *traces* of the rows and columns on S.  With n_r(a) rows
   of trace a and n_c(b) columns of trace b, the number of cells y with
   S ∩ S(y) = Q is h_S(Q) = sum over a ∩ b = Q of n_r(a) n_c(b), computed
   either directly (distinct row traces x distinct column traces pairs) or
   by a superset-sum transform over the 2^|S| subsets of S (2^|S| |S|),
   whichever is cheaper, per class.  Then |E_G(S)| = sum of h_S(Q) over Q
   with a pred member, and the precision numerator of S's cells is
   n(S) / |E_G(S)| · sum_Q h_S(Q) ς(Q) (recall alike with τ and |E_C(S)|).

Every count is an exact integer (int64, below 2**62 cells); the float64
sums are compensated (Neumaier), so precision and recall carry a relative
error of at most (4d + 16) u (u = 2**-53, d the largest class), reported as
``bcubed_error``.  :func:`class_bcubed_exact` evaluates the same integer
tables in rational arithmetic (tests, ``exact=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ...errors import InputError
from .budget import (
    UNIT_CLASS,
    UNIT_CLASS_SQ,
    UNIT_PRED_STEP,
    UNIT_SIG_PAIR,
    UNIT_SUBSET,
    UNIT_TRACE,
    UNIT_TRACE_PAIR,
    UNIT_WORD,
)
from .cell_records import Coverage, coverage_from_histogram
from .memberships import Memberships

#: Largest class whose subsets the kernel counts from the element bit sets (as class_loops.BITSET_BITS).
BITSET_BITS = 16

__all__ = ["PLAIN_WORK", "ClassTable", "Merged", "class_bcubed", "run_kernel", "class_bcubed_exact",
           "class_coverage", "class_work", "covered",
           "enumerate_classes", "merge_identical", "MAX_CLASS"]

#: Largest number of distinct (merged) biclusters in one class the method handles:
#: a trace is a 64-bit word.
MAX_CLASS = 62



@dataclass(frozen=True, eq=False)
class Merged:
    """Biclusters with identical cell sets merged (one side at a time).

    ``rep[e]`` is the element standing for e (-1: e has no cell), ``mult[e]``
    the number of biclusters e stands for (0 unless e is a representative);
    ``rows`` / ``cols`` are the distinct signatures as bit words restricted to
    the representatives, with their counts.
    """

    n_truth: int
    n_pred: int
    rep: np.ndarray
    mult: np.ndarray
    rows: np.ndarray
    row_cnt: np.ndarray
    cols: np.ndarray
    col_cnt: np.ndarray

    @property
    def words(self) -> int:
        """64-bit words per signature."""
        return int(self.rows.shape[1])

    @cached_property
    def row_index(self) -> tuple[np.ndarray, np.ndarray]:
        """The row signatures containing each element (CSR: ``ptr``, signatures)."""
        return _element_index(self.rows, self.n_truth + self.n_pred)

    @cached_property
    def col_index(self) -> tuple[np.ndarray, np.ndarray]:
        """The column signatures containing each element."""
        return _element_index(self.cols, self.n_truth + self.n_pred)

    @cached_property
    def bits(self) -> tuple[np.ndarray, np.ndarray]:
        """Each element's rows and columns as bit sets (an item per bit), or zero words when too large.

        A signature counted c times takes c consecutive bits.  Built only
        while both fit :data:`BITS_LIMIT` bytes (the class method's per-class
        subset counts, :func:`~daskbicl.kernels.micro.class_loops.bitset_work`).
        """
        n = self.n_truth + self.n_pred
        items = int(self.row_cnt.sum()) + int(self.col_cnt.sum())
        if n * (items / 8 + 16) > BITS_LIMIT:
            return np.zeros((n, 0), np.uint64), np.zeros((n, 0), np.uint64)
        return _bit_sets(self.rows, self.row_cnt, n), _bit_sets(self.cols, self.col_cnt, n)

    def side_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """Bit words of the truth elements and of the pred elements."""
        n = self.n_truth + self.n_pred
        return _mask(np.arange(self.n_truth), self.words), _mask(np.arange(self.n_truth, n), self.words)


def _element_index(sig: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lists = [np.flatnonzero((sig[:, e // 64] >> np.uint64(e % 64)) & np.uint64(1)) for e in range(n)]
    ptr = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    return ptr, (np.concatenate(lists) if n else np.zeros(0)).astype(np.int64)


#: Largest memory (bytes) of the elements' row and column bit sets (:attr:`Merged.bits`).
BITS_LIMIT = 64 << 20


def _bit_sets(sig: np.ndarray, cnt: np.ndarray, n: int) -> np.ndarray:
    """(n, words) uint64: bit t set when the item t (signature i repeated cnt[i] times) is in element e."""
    items = int(cnt.sum())
    words = max(1, -(-items // 64))
    out = np.zeros((n, words * 8), np.uint8)
    owner = np.repeat(np.arange(len(cnt)), cnt)
    for e in range(n):
        member = ((sig[owner, e // 64] >> np.uint64(e % 64)) & np.uint64(1)).astype(bool)
        packed = np.packbits(member, bitorder="little")
        out[e, : len(packed)] = packed
    return out.view(np.uint64)


def _mask(elements, words: int) -> np.ndarray:
    out = np.zeros(words, np.uint64)
    for e in np.asarray(elements, np.int64).tolist():
        out[e // 64] |= np.uint64(1) << np.uint64(e % 64)
    return out


def _packed_unique(m: Memberships, keep: np.ndarray, words: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct signatures of ``m`` restricted to the ``keep`` bits, with summed counts."""
    el = m.el.astype(np.int64)
    owner = np.repeat(np.arange(m.n_signatures), np.diff(m.ptr))
    out = np.zeros((m.n_signatures, words), np.uint64)
    np.bitwise_or.at(out, (owner, el // 64), np.left_shift(np.uint64(1), (el % 64).astype(np.uint64)))
    out &= keep[None, :]
    nz = out.any(axis=1)
    out, cnt = out[nz], m.cnt[nz]
    if len(cnt) == 0:
        return np.zeros((0, words), np.uint64), np.zeros(0, np.int64)
    uniq, inv = np.unique(out, axis=0, return_inverse=True)
    counts = np.zeros(len(uniq), np.int64)
    np.add.at(counts, inv.ravel(), cnt)
    return np.ascontiguousarray(uniq), counts


def merge_identical(rows: Memberships, cols: Memberships) -> Merged:
    """Merge the biclusters of one side whose cell sets are equal (module docstring).

    Examples
    --------
    >>> from daskbicl.kernels.micro.memberships import signature_counts
    >>> r = signature_counts(np.array([[1, 1, 0]], bool), np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], bool))
    >>> c = signature_counts(np.array([[1, 1]], bool), np.array([[1, 1], [1, 1], [1, 1]], bool))
    >>> m = merge_identical(r, c)
    >>> m.rep.tolist(), m.mult.tolist()     # pred 1 and 2 are one bicluster listed twice
    ([0, 1, 1, 3], [1, 2, 0, 1])
    """
    if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
        raise InputError(
            f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but column signatures "
            f"{cols.n_truth}+{cols.n_pred}; count both from the same truth and pred masks.")
    k, n = rows.n_truth, rows.n_elem
    rg, cg = rows.gram, cols.gram
    rd, cd = np.diagonal(rg), np.diagonal(cg)
    rep = np.full(n, -1, np.int64)
    for e in range(n):
        if rd[e] == 0 or cd[e] == 0:
            continue  # no cell
        lo, hi = (0, k) if e < k else (k, n)
        same = np.flatnonzero((rg[e, lo:e] == rd[e]) & (rd[lo:e] == rd[e]) &
                              (cg[e, lo:e] == cd[e]) & (cd[lo:e] == cd[e]))
        rep[e] = lo + int(same[0]) if len(same) else e
    mult = np.zeros(n, np.int64)
    np.add.at(mult, rep[rep >= 0], 1)
    words = max(1, -(-n // 64))
    keep = _mask(np.flatnonzero(mult > 0), words)
    r, rc = _packed_unique(rows, keep, words)
    c, cc = _packed_unique(cols, keep, words)
    return Merged(k, rows.n_pred, rep, mult, r, rc, c, cc)


@dataclass(frozen=True)
class ClassTable:
    """The cell classes: bit words ``keys`` (n, words), cells ``counts``, distinct sizes ``sizes``."""

    keys: np.ndarray
    counts: np.ndarray
    sizes: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def nbytes(self) -> int:
        """Memory of the arrays."""
        return int(self.keys.nbytes + self.counts.nbytes + self.sizes.nbytes)


def enumerate_classes(merged: Merged, limit: int = 1 << 62) -> ClassTable | None:
    """Every non-empty class R ∩ C of a row and a column signature, with its number of cells.

    None when there are more than ``limit`` classes, or a class has more than
    :data:`MAX_CLASS` distinct elements (the method does not apply).

    Examples
    --------
    >>> from daskbicl.kernels.micro.cell_records import example_memberships
    >>> t = enumerate_classes(merge_identical(*example_memberships()))
    >>> sorted(zip(t.keys[:, 0].tolist(), t.counts.tolist()))   # bits: truth 0, 1, pred 2, 3
    [(1, 1), (5, 3), (8, 1), (10, 3), (11, 1), (13, 1)]
    """
    keys, counts, ok = run_kernel("classes_of_pairs", float(class_work(merged, None)), merged.rows, merged.row_cnt,
                               merged.cols, merged.col_cnt, int(limit))
    if not ok:
        return None
    sizes = np.zeros(len(counts), np.int64)
    for w in range(keys.shape[1]):
        sizes += np.bitwise_count(keys[:, w]).astype(np.int64)
    if len(sizes) and int(sizes.max()) > MAX_CLASS:
        return None
    order = np.lexsort(keys.T[::-1]) if len(counts) else np.zeros(0, np.int64)
    return ClassTable(np.ascontiguousarray(keys[order]), counts[order], sizes[order])


def _side_counts(merged: Merged, table: ClassTable) -> tuple[np.ndarray, np.ndarray]:
    """Per class: truth and pred biclusters containing its cells, with multiplicity."""
    a = np.zeros(len(table), np.int64)
    b = np.zeros(len(table), np.int64)
    for e in np.flatnonzero(merged.mult > 0).tolist():
        on = ((table.keys[:, e // 64] >> np.uint64(e % 64)) & np.uint64(1)).astype(np.int64)
        if e < merged.n_truth:
            a += on * int(merged.mult[e])
        else:
            b += on * int(merged.mult[e])
    return a, b


def class_coverage(merged: Merged, table: ClassTable) -> Coverage:
    """Coverage counts (with multiplicity) from the classes (cells in no bicluster excluded)."""
    a, b = _side_counts(merged, table)
    hist = np.zeros((merged.n_truth + 1, merged.n_pred + 1), dtype=object)
    for x, y, cnt in zip(a.tolist(), b.tolist(), table.counts.tolist()):
        hist[x, y] += cnt
    return coverage_from_histogram(hist, merged.n_truth, merged.n_pred)


def covered(merged: Merged, table: ClassTable) -> tuple[int, int]:
    """(|U_G|, |U_C|): cells in a pred bicluster, in a truth bicluster."""
    a, b = _side_counts(merged, table)
    return int(table.counts[b > 0].astype(object).sum()), int(table.counts[a > 0].astype(object).sum())


def class_work(merged: Merged, table: ClassTable | None) -> np.ndarray | float:
    """Estimated work units of each class's sums (or, without classes, of enumerating them).

    A class S of d elements costs its traces (the signatures listed under
    its elements: sum over e in S of the row and column signatures
    containing e), its sorted Jaccard lists (d^2), and the cheaper inner sum
    (:func:`inner_work`): every pair of distinct row and column traces, each
    with a step per pred bicluster of the pair's set, or the 2^d d transform
    plus the sets it books.  The distinct traces and the pred steps are
    counted exactly on a seeded sample of classes (:func:`_trace_sample`)
    and carried to the classes of the same size.
    """
    nr, nc = len(merged.row_cnt), len(merged.col_cnt)
    if table is None:
        return UNIT_SIG_PAIR * nr * nc * merged.words
    listed = np.zeros(len(table), np.float64)
    r_ptr, c_ptr = merged.row_index[0], merged.col_index[0]
    for e in np.flatnonzero(merged.mult > 0).tolist():
        on = (table.keys[:, e // 64] >> np.uint64(e % 64)) & np.uint64(1)
        listed += on.astype(np.float64) * float(r_ptr[e + 1] - r_ptr[e] + c_ptr[e + 1] - c_ptr[e])
    d = table.sizes.astype(np.float64)
    by_traces = UNIT_TRACE * listed
    words = merged.bits[0].shape[1] + merged.bits[1].shape[1]
    by_bits = bitset_work(d, _preds(merged, table), words)
    use_bits = by_bits <= by_traces
    pairs, steps = _trace_sample(merged, table, ~use_bits)
    by_traces += inner_work(d, pairs, steps)
    return UNIT_CLASS + UNIT_CLASS_SQ * d * d + np.where(use_bits, by_bits, by_traces)


def bitset_work(d: np.ndarray, preds: np.ndarray, words: int) -> np.ndarray:
    """Work units of classes counted from the element bit sets, as the kernel chooses (inf: not used).

    Same formula as :func:`~daskbicl.kernels.micro.class_loops.bitset_work`.
    """
    if words == 0:
        return np.full(len(d), np.inf)
    sub = np.exp2(np.minimum(d, 200.0))
    work = sub * (UNIT_WORD * words + UNIT_SUBSET * d + UNIT_TRACE_PAIR + UNIT_PRED_STEP * preds / 2.0)
    return np.where(d <= BITSET_BITS, work, np.inf)


def _preds(merged: Merged, table: ClassTable) -> np.ndarray:
    """Pred elements of each class."""
    preds = np.zeros(len(table), np.float64)
    pm = merged.side_masks()[1]
    for w in range(table.keys.shape[1]):
        preds += np.bitwise_count(table.keys[:, w] & pm[w]).astype(np.float64)
    return preds


def inner_work(d: np.ndarray, pairs: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """The cheaper inner sum of classes of ``d`` elements, as the kernel chooses (work units).

    Direct: every pair of traces plus a step per pred of its set; the
    transform (d ≤ 20 only): 2^d d subsets plus the at most min(2^d, pairs)
    sets it books (:func:`~daskbicl.kernels.micro.class_loops.inner_work`
    is the same formula for one class).
    """
    direct = UNIT_TRACE_PAIR * pairs + UNIT_PRED_STEP * steps
    sub = np.exp2(np.minimum(d, 200.0))
    per_pair = direct / np.maximum(pairs, 1.0)
    transform = UNIT_SUBSET * sub * np.maximum(d, 1.0) + np.minimum(sub, pairs) * per_pair
    return np.minimum(direct, np.where(d <= 20, transform, np.inf))


#: The kernel's units of a pair of traces, a pred step, a subset (its choice of inner sum).
INNER_UNITS = np.array([UNIT_TRACE_PAIR, UNIT_PRED_STEP, UNIT_SUBSET, UNIT_WORD, UNIT_TRACE])

#: Classes whose distinct traces the estimate counts (a seeded sample).
TRACE_SAMPLE = 512


def _trace_sample(merged: Merged, table: ClassTable, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per class: (pairs of distinct row and column traces, pred steps), counted or carried.

    A seeded sample of :data:`TRACE_SAMPLE` classes (of ``among``, default all) is counted exactly
    (:func:`~daskbicl.kernels.micro.class_loops.trace_pairs`); every other
    class gets the mean over the sampled classes of its size, as a fraction
    of its upper bound (pairs: min(rows, 2^d) x min(columns, 2^d); steps:
    pairs x its pred biclusters); a size never sampled gets the largest
    fractions seen.
    """
    n = len(table)
    pool = np.arange(n) if among is None else np.flatnonzero(among)
    if len(pool) == 0:
        return np.zeros(n), np.zeros(n)
    sub = np.exp2(np.minimum(table.sizes.astype(np.float64), 200.0))
    bound = np.minimum(len(merged.row_cnt), sub) * np.minimum(len(merged.col_cnt), sub)
    preds = _preds(merged, table)
    pm = merged.side_masks()[1]
    idx = np.sort(np.random.default_rng(n).choice(pool, min(len(pool), TRACE_SAMPLE), replace=False)).astype(np.int64)
    got = run_kernel("trace_pairs", float(np.sum(_bound_work(merged, table, idx, inner=False))), table.keys, idx,
                  *merged.row_index, merged.row_cnt, *merged.col_index, merged.col_cnt, pm)
    pair_frac = np.minimum(got[0] / np.maximum(bound[idx], 1.0), 1.0)
    step_frac = np.minimum(got[1] / np.maximum(got[0] * preds[idx], 1.0), 1.0)
    pf = np.full(n, float(pair_frac.max(initial=0.0)))
    sf = np.full(n, float(step_frac.max(initial=0.0)))
    sizes = table.sizes[idx]
    for size in np.unique(sizes).tolist():  # (classes outside ``among`` get values too; unused)
        pf[table.sizes == size] = float(pair_frac[sizes == size].mean())
        sf[table.sizes == size] = float(step_frac[sizes == size].mean())
    pairs, steps = bound * pf, bound * pf * preds * sf
    pairs[idx], steps[idx] = got[0], got[1]
    return pairs, steps


#: Work units (about 0.1 ms compiled, a tenth of a second at most as plain Python) up to which a call runs
#: the loops as plain Python (:mod:`~daskbicl.kernels.micro.class_loops`) instead of compiling them.
PLAIN_WORK = 1e4


def run_kernel(function: str, work: float, *args):
    """``function(*args)`` of the class loops: plain for at most :data:`PLAIN_WORK` units of ``work``, else compiled.

    Compiled as well when the kernel already is in this process, or inside
    :func:`~daskbicl.kernels.compiled.compiled_only`.  The values are the
    same either way (:mod:`~daskbicl.kernels.micro.class_loops`).
    """
    import sys

    from ..compiled import forced

    kernels = sys.modules.get("daskbicl.kernels.micro.class_kernels")
    ready = bool(getattr(getattr(kernels, function, None), "signatures", ()))
    if work > PLAIN_WORK or ready or forced():
        from . import class_kernels

        return getattr(class_kernels, function)(*args)
    from . import class_loops

    with np.errstate(over="ignore"):  # unsigned 64-bit products wrap, as in the compiled loops
        return getattr(class_loops, function)(*args)


def _bound_work(merged: Merged, table: ClassTable, idx: np.ndarray, inner: bool) -> np.ndarray:
    """An upper bound of the work units of the classes ``idx`` in the kernels (no kernel run to find it).

    Each class of d elements: its table set-up, its traces (every signature
    listed under each element), and every pair of distinct traces (at most
    min(signatures, 2^d) per side), with a step per element when ``inner``
    (its sums: the kernel takes the transform or the bit sets only when
    cheaper).
    """
    d = table.sizes[idx].astype(np.float64)
    sub = np.exp2(np.minimum(d, 200.0))
    nr, nc = float(len(merged.row_cnt)), float(len(merged.col_cnt))
    pairs = np.minimum(nr, sub) * np.minimum(nc, sub)
    per_pair = UNIT_TRACE_PAIR + (UNIT_PRED_STEP * d if inner else 0.0)
    return UNIT_CLASS + UNIT_CLASS_SQ * d * d + UNIT_TRACE * d * (nr + nc) + pairs * per_pair


def _local_jaccard(merged: Merged, jaccard) -> np.ndarray:
    """``J[e, f]`` for pred e and truth f in the global numbering (0 elsewhere), float64."""
    k, n = merged.n_truth, merged.n_truth + merged.n_pred
    out = np.zeros((n, n), np.float64)
    if merged.n_pred and k:
        out[k:, :k] = np.asarray(jaccard, dtype=np.float64)
    return out


def class_bcubed(merged: Merged, table: ClassTable, jaccard, lo: int = 0, hi: int | None = None,
                 mode: int = 0) -> tuple[float, float, int]:
    """(precision numerator, recall numerator, largest class) of the classes ``lo:hi`` (float64).

    ``jaccard`` is the L x K table of :func:`~daskbicl.kernels.micro.family_tasks.jaccard_table`;
    ``mode`` forces the per-class method (1: pairs of traces, 2: transform,
    3: subsets from the element bit sets when built;
    0: the cheaper), for tests.
    """
    hi = len(table) if hi is None else hi
    tm, pm = merged.side_masks()
    work = float(np.sum(_bound_work(merged, table, np.arange(lo, hi), inner=True)))
    out = run_kernel("bcubed_of_classes", work, table.keys, table.counts, lo, hi, *merged.row_index, merged.row_cnt,
                  *merged.col_index, merged.col_cnt, tm, pm, merged.mult, _local_jaccard(merged, jaccard), mode,
                  INNER_UNITS, merged.bits)
    return float(out[0]), float(out[1]), int(table.sizes[lo:hi].max(initial=0))


def class_bcubed_exact(merged: Merged, table: ClassTable, jaccard, lo: int = 0,
                       hi: int | None = None) -> tuple[Fraction, Fraction]:
    """:func:`class_bcubed` in rational arithmetic (``jaccard`` of Fractions; small inputs)."""
    k = merged.n_truth
    p_num = r_num = Fraction(0)
    hi = len(table) if hi is None else hi
    work = _bound_work(merged, table, np.arange(lo, hi), inner=False)
    for s in range(lo, hi):
        elems, qs, ws = run_kernel("pair_weights", float(work[s - lo]), table.keys[s], *merged.row_index,
                                merged.row_cnt, *merged.col_index, merged.col_cnt)
        elems = elems.tolist()
        eg = er = 0
        sp = sr = Fraction(0)
        for q, w in zip(qs.tolist(), ws.tolist()):
            members = [elems[j] for j in range(len(elems)) if q >> j & 1]
            g = [e for e in members if e >= k]
            c = [e for e in members if e < k]
            eg += w if g else 0
            er += w if c else 0
            if g and c:
                ng = sum(int(merged.mult[e]) for e in g)
                nc = sum(int(merged.mult[e]) for e in c)
                tot = sum((int(merged.mult[e]) * max(jaccard[e - k][f] for f in c) for e in g), Fraction(0))
                mn = min(ng, nc)
                sp += w * tot * mn / (ng * ng)
                sr += w * tot * mn / (ng * nc)
        n_s = int(table.counts[s])
        if eg:
            p_num += n_s * sp / eg
        if er:
            r_num += n_s * sr / er
    return p_num, r_num


#: Most classes the planning step enumerates (its hash table: at most 4 slots
#: of ``8 words + 9`` bytes per class, ~350 MB for 200 biclusters).
CLASS_LIMIT = 1 << 21

#: Largest work (units) of enumerating the classes in the planning step (~2 s).
ENUM_LIMIT = 2e8


@dataclass(frozen=True)
class ClassEstimate:
    """The class method's inputs and estimated work (``inf`` when it does not apply: ``why``)."""

    merged: Merged
    table: ClassTable | None
    work: float
    why: str = ""
    per_class: np.ndarray | None = None


def class_estimate(rows: Memberships, cols: Memberships, coverage: bool, bcubed: bool) -> ClassEstimate:
    """Merge, enumerate the classes (when cheap enough) and estimate the method's work.

    Never takes more than about :data:`ENUM_LIMIT` work units (~2 s): with
    more pairs of signatures, or more than :data:`CLASS_LIMIT` classes, the
    method is not used (work ``inf``).
    """
    merged = merge_identical(rows, cols)
    enum = float(class_work(merged, None))
    if enum > ENUM_LIMIT:
        return ClassEstimate(merged, None, float("inf"),
                             f"{len(merged.row_cnt):,} x {len(merged.col_cnt):,} pairs of signatures")
    table = enumerate_classes(merged, CLASS_LIMIT)
    if table is None:
        return ClassEstimate(merged, None, float("inf"),
                             f"more than {CLASS_LIMIT:,} cell classes or a class of more than "
                             f"{MAX_CLASS} distinct biclusters")
    work = enum + UNIT_CLASS * len(table) * (coverage or bcubed)
    per_class = None
    if bcubed:
        per_class = np.asarray(class_work(merged, table), dtype=np.float64)
        work += float(np.sum(per_class))
    return ClassEstimate(merged, table, work, per_class=per_class)


def class_ranges(merged: Merged, table: ClassTable, n_tasks: int,
                 per_class: np.ndarray | None = None) -> tuple[tuple[int, int], ...]:
    """Contiguous ranges of classes of similar estimated work (``per_class``: :func:`class_work`), one per task."""
    if per_class is None:
        per_class = np.asarray(class_work(merged, table), dtype=np.float64)
    cost = np.cumsum(per_class)
    total = float(cost[-1]) if len(cost) else 0.0
    cuts = np.searchsorted(cost, total * np.arange(1, n_tasks) / n_tasks, side="right")
    edges = [0, *np.minimum(cuts, len(table)).tolist(), len(table)]
    return tuple((int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]))
