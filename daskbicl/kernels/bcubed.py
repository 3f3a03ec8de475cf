"""MOCICE-BCubed from cell signature classes (numpy only).

Algorithm (MOCICE-BCubed)
-------------------------
Let the cell classes be s with weights w(s) (numbers of cells) and
:math:`N(U) = \\#\\{y : sig(y) \\supseteq U\\}`.  For a class s, the cells
y split by :math:`T = sig(y) \\cap s` into
:math:`M_s(T) = \\sum_{T \\subseteq U \\subseteq s} (-1)^{|U - T|} N(U)`
cells (exact int64 Möbius inversion over the subsets of s; every
intermediate is a count), and

.. math::

    \\sum_y \\varsigma(s, y) = \\sum_{T \\subseteq s} \\varsigma(T)\\, M_s(T),
    \\qquad |E_G(s)| = \\sum_{T \\subseteq s,\\ T_G \\neq \\emptyset} M_s(T),

so the precision numerator is
:math:`\\sum_s w(s) \\sum_T \\varsigma(T) M_s(T) / |E_G(s)|` (recall alike).
ς and τ are tabulated once per element of the down-closed family of cell
signatures.  Cost: :math:`O(\\sum_s |s| 2^{|s|})` over the classes s with
both a truth and a pred bit ("subsets" method).  When signatures are long
(heavy overlap) the "pairwise" method sums :math:`w(t)\\,\\varsigma(s \\cap t)`
over all pairs of classes instead, :math:`O(S^2)` word ANDs plus ς of the
distinct intersections (~100 ns per pair); the cheaper is chosen, and
:class:`~daskbicl.errors.TooLargeError` is raised when the estimated work
exceeds ``max_work`` (units of ~10 ns,
:data:`~daskbicl.kernels.signatures.DEFAULT_MAX_WORK`; through
:func:`daskbicl.score` the dask config key ``daskbicl.max_work``).
:func:`bcubed_block` computes the sums of a slice of classes, so a cluster
can process blocks in parallel and :func:`bcubed_finalize` adds them up.

Two co-clusterings need no signature classes at all (:func:`coclustering_bcubed`,
:func:`coclustering_overlap`, :func:`coclustering_coverage`): every cell is
in exactly one truth block and one pred block, so ς(x, y) = J(G, C) when y
is in x's blocks G and C and 0 otherwise, and the cell class of the pair of
blocks ((h, l), (h', l')) has :math:`n^{zz'}_{hh'} n^{ww'}_{ll'}` cells:

.. math::

    P = \\frac{1}{IJ} \\sum \\frac{(n^{zz'}_{hh'} n^{ww'}_{ll'})^2}{|G|}\\, J(G, C),
    \\qquad R = \\frac{1}{IJ} \\sum \\frac{(n^{zz'}_{hh'} n^{ww'}_{ll'})^2}{|C|}\\, J(G, C),

over the non-zero entries of the two contingency tables.

Accuracy (float64)
------------------
With ``exact=True`` everything is computed in rational arithmetic
(:class:`fractions.Fraction`) and the result is exact.  In float64 every
count is an exact integer and every term is non-negative (no cancellation),
so relative errors add along the longest chain of roundings.  With
:math:`u = 2^{-53}` (about 1.1e-16), L pred biclusters and fewer than
:math:`2^{53}` cells:

* each J(G, C) is one division (error u); ς and τ sum at most L of them and
  scale twice: at most (L + 2) u;
* "subsets" method: a class sums :math:`2^{m}` products ς(T) M_s(T)
  (m = number of biclusters, truth and pred, containing the class's cells)
  with numpy's pairwise summation (at most :math:`\\lceil\\log_2 n\\rceil + 18`
  roundings for n terms), the class term w·Σ/|E| rounds twice, the block
  and the block totals are summed with :func:`math.fsum` and divided once:
  P and R have relative error at most :math:`(L + m_{max} + 26)\\,u`;
* "pairwise" method: a class sums S products (S = number of non-empty cell
  classes) pairwise in chunks of at most :math:`2^{20}` and adds the
  :math:`k = \\lceil S / 2^{20} \\rceil` chunk sums in sequence: P and R
  have relative error at most
  :math:`(L + \\lceil\\log_2 S\\rceil + k + 25)\\,u`;
* co-clusterings: each term rounds 4 times, one :func:`math.fsum`, one
  division: at most 6 u;
* F1 is the harmonic mean of the float P and R evaluated exactly and rounded
  once (relative error at most that of P or R, plus u), so identical inputs
  give exactly 1.0;
* CE and RNIA are exact integer ratios rounded once (error u; D_max is exact
  while the shared counts sum below :math:`2^{53}`); E4SC: each F1 is one
  division, each macro-F1 one :func:`math.fsum` and one division, the
  harmonic mean rounds once: at most 4 u.

For :math:`2^{53}` cells or more add 4 u (counts converted to float64).
For 20 + 20 biclusters the MOCICE-BCubed bound is about 1e-14.

Degenerate cases
----------------
* Truth and pred covering no cell at all (no biclusters, or only biclusters
  with no row or no column): every measure is 0/0 and raises
  :class:`~daskbicl.errors.InputError`.
* Only one side covers a cell: MOCICE-BCubed P = R = F1 = 0 (the side
  covering nothing has a 0/0 normaliser, reported as 0; the other side
  scores 0 since no pair of cells shares a bicluster of both); CE = RNIA = 1;
  E4SC = 0.
* A bicluster with no cell (no row or no column) is the empty cell set: it
  never appears in a cell signature; in E4SC it is still averaged over and
  contributes F1 = 0 (2|a∩b|/(|a|+|b|) is taken as 0 when both are empty).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from ..errors import InputError, TooLargeError
from .bits import sortable_keys, unpack_bits
from .budget import DEFAULT_MAX_WORK, UNIT_SUBSET, too_large
from .cells import (
    _CHUNK,
    _UNIT_COCLUSTER_TERM,
    PRF,
    MicroTables,
    Overlap,
    _hmean,
    _nothing_covered,
    _part_counts,
    _part_masks,
)
from .signatures import (
    SignatureClasses,
    SubsetLattice,
    superset_lattice,
)

__all__ = [
    "BCubedPartial",
    "BCubedPlan",
    "bcubed_block",
    "bcubed_finalize",
    "bcubed_plan",
    "coclustering_bcubed",
    "jaccard_table",
    "mocice_bcubed",
]


# --------------------------------------------------------------------------
# MOCICE-BCubed
# --------------------------------------------------------------------------
def jaccard_table(overlap: Overlap, *, exact: bool = False) -> np.ndarray:
    """``J[l, k] = |X_l ∩ B_k| / |X_l ∪ B_k|`` (pred x truth; 0 for 0/0).

    Examples
    --------
    >>> ov = Overlap(np.array([[2]]), np.array([4]), np.array([3]))
    >>> jaccard_table(ov).tolist(), jaccard_table(ov, exact=True).tolist()
    ([[0.4]], [[Fraction(2, 5)]])
    """
    sh = overlap.shared.T
    den = overlap.pred_sizes[:, None] + overlap.truth_sizes[None, :] - sh
    if exact:
        out = np.empty(sh.shape, dtype=object)
        for (l, k), v in np.ndenumerate(sh):
            out[l, k] = Fraction(int(v), int(den[l, k])) if den[l, k] else Fraction(0)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, sh / np.where(den > 0, den, 1), 0.0)


def _sigma_tau(words: np.ndarray, n_truth: int, n_pred: int, jac: np.ndarray,
               exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """ς and τ of intersection signatures T = (c, g) (docs/measures/micro.md), per row."""
    n = len(words)
    dt = object if exact else np.float64
    sig, tau = np.zeros(n, dt), np.zeros(n, dt)
    nc, ng = _part_counts(words, n_truth, n_pred)
    code = ng * (n_truth + 1) + nc
    both = np.flatnonzero((nc > 0) & (ng > 0))
    if len(both) == 0:
        return sig, tau
    order = both[np.argsort(code[both], kind="stable")]
    cs = code[order]
    bounds = np.flatnonzero(np.concatenate([[True], cs[1:] != cs[:-1], [True]]))
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a, b = int(ng[order[lo]]), int(nc[order[lo]])
        step = max(1, _CHUNK // (a * b + n_truth + n_pred))
        for s in range(lo, hi, step):
            idx = order[s : min(hi, s + step)]
            bits = unpack_bits(words[idx], n_truth + n_pred)
            tp = np.nonzero(bits[:, :n_truth])[1].reshape(len(idx), b)
            pp = np.nonzero(bits[:, n_truth:])[1].reshape(len(idx), a)
            tot = jac[pp[:, :, None], tp[:, None, :]].max(axis=2).sum(axis=1)
            mn = min(a, b)
            if exact:
                sig[idx] = tot * Fraction(mn, a * a)
                tau[idx] = tot * Fraction(mn, a * b)
            else:
                sig[idx] = tot * mn / (a * a)
                tau[idx] = tot * mn / (a * b)
    return sig, tau


class BCubedPartial(NamedTuple):
    """Sums over a block of cell classes x of
    :math:`w(x) \\sum_y \\varsigma(x, y) / |E_G(x)|` (precision) and the τ
    analogue (recall); floats, or Fractions in exact mode."""

    precision: float | Fraction
    recall: float | Fraction


@dataclass(frozen=True, eq=False)
class BCubedPlan:
    """Precomputed tables of the MOCICE-BCubed finalize (picklable).

    ``words``/``count``/``popcount``/``n_pred_bits`` describe the n_classes
    cell classes with both a truth and a pred bit, sorted by popcount (the
    only ones with a non-zero term); blocks are slices of them.
    """

    method: str
    exact: bool
    n_truth: int
    n_pred: int
    words: np.ndarray
    count: np.ndarray
    popcount: np.ndarray
    n_truth_bits: np.ndarray
    union_pred: int
    union_truth: int
    jaccard: np.ndarray
    work: float
    lattice: SubsetLattice | None = None
    lattice_index: np.ndarray | None = None
    sigma: np.ndarray | None = None
    tau: np.ndarray | None = None
    all_words: np.ndarray | None = None
    all_count: np.ndarray | None = None
    n_cells: int = 0

    @property
    def n_classes(self) -> int:
        """Number of classes to process (the range of block indices)."""
        return len(self.count)

    @property
    def error_bound(self) -> float:
        """Bound on the relative float64 error of P and R (module docstring; 0 if exact).

        ``(L + m + 26) u`` for "subsets" (m = most biclusters on one cell),
        ``(L + ceil(log2 S) + ceil(S / 2**20) + 25) u`` for "pairwise" (S =
        non-empty cell classes), plus 4 u from :math:`2^{53}` cells on.
        """
        if self.exact:
            return 0.0
        if self.method == "subsets":
            m = int(self.popcount.max()) if len(self.popcount) else 0
            n = self.n_pred + m + 26
        else:
            assert self.all_count is not None
            s = max(1, len(self.all_count))
            n = self.n_pred + math.ceil(math.log2(s)) + -(-s // _CHUNK) + 25
        return (n + (4 if self.n_cells >= 2**53 else 0)) * 2.0**-53

    def block_bounds(self, n_blocks: int) -> list[tuple[int, int]]:
        """Split ``range(n_classes)`` into ≤ n_blocks slices of similar work.

        Examples
        --------
        >>> from daskbicl.kernels.cells import example_tables
        >>> plan = bcubed_plan(example_tables())
        >>> plan.block_bounds(4)[0][0], plan.block_bounds(4)[-1][1] == plan.n_classes
        (0, True)
        """
        if self.method == "subsets":
            w = np.exp2(self.popcount.astype(np.float64)) * (self.popcount + 2)
        else:
            w = np.ones(self.n_classes)
        cum = np.concatenate([[0.0], np.cumsum(w)])
        cuts = np.searchsorted(cum, np.linspace(0, cum[-1], max(1, n_blocks) + 1))
        cuts[0], cuts[-1] = 0, self.n_classes
        cuts = np.unique(cuts)
        return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


# Work units (~10 ns, see DEFAULT_MAX_WORK) per subset entry of a class and
# per pair of classes (measured).
_UNIT_CLASS_SUBSET, _UNIT_CLASS_PAIR = 2.0, 10.0


def _plan_cost(cells: SignatureClasses, both: np.ndarray, has_lattice: bool):
    pc = cells.popcount[both].astype(np.float64)
    sub = _UNIT_CLASS_SUBSET * float(np.sum(np.exp2(pc) * (pc + 2)))
    if not has_lattice:
        sub += UNIT_SUBSET * float(np.sum(np.exp2(cells.popcount.astype(np.float64))))
    nonempty = float(np.count_nonzero(cells.popcount))
    pair = _UNIT_CLASS_PAIR * float(len(pc)) * nonempty * (1 + cells.n_bits / 64)
    return {"subsets": sub, "pairwise": pair}


def bcubed_plan(tables: MicroTables, *, exact: bool = False,
                method: str | None = None) -> BCubedPlan:
    """Build the MOCICE-BCubed finalize plan (choose method, tabulate ς, τ).

    Parameters
    ----------
    tables : MicroTables
    exact : bool
        Rational arithmetic throughout (tests, small inputs).
    method : {None, "subsets", "pairwise"}
        Force a method; by default the cheaper (module docstring).

    Examples
    --------
    >>> from daskbicl.kernels.cells import example_tables
    >>> plan = bcubed_plan(example_tables())
    >>> plan.method, plan.n_classes          # tiny: pairs of classes are cheaper
    ('pairwise', 4)
    >>> bcubed_plan(example_tables(), method="subsets").n_classes
    4
    """
    cells = tables.cells
    k, l_ = cells.n_truth, cells.n_pred
    nc, ng = _part_counts(cells.words, k, l_)
    both = (nc > 0) & (ng > 0)
    lat = tables.lattice
    cost = _plan_cost(cells, both, lat is not None)
    if method is None:
        method = min(cost, key=cost.__getitem__)
    if method not in cost:
        raise InputError(f"method must be 'subsets' or 'pairwise', got {method!r}")
    cov = tables.coverage
    if cov.pred == 0 and cov.truth == 0:
        raise _nothing_covered("mocice_bcubed", "P = (...) / |U_G| and R = (...) / |U_C| are")
    if cost[method] > tables.max_work:
        raise too_large(f"MOCICE-BCubed on {cells.n_classes} cell classes ({method} method)",
                        cost[method], tables.max_work,
                        "CE, RNIA and E4SC do not need this step: leave 'mocice_bcubed' "
                        "out of measures to score them.")
    idx = np.flatnonzero(both)
    idx = idx[np.argsort(cells.popcount[idx], kind="stable")]
    jac = jaccard_table(tables.overlap, exact=exact)
    common = dict(method=method, exact=exact, n_truth=k, n_pred=l_,
                  words=cells.words[idx], count=cells.count[idx],
                  popcount=cells.popcount[idx], n_truth_bits=nc[idx],
                  union_pred=cov.pred, union_truth=cov.truth, jaccard=jac,
                  work=cost[method], n_cells=cells.total)
    if method == "pairwise":
        nz = cells.popcount > 0
        return BCubedPlan(**common, all_words=cells.words[nz], all_count=cells.count[nz])
    if lat is None:
        lat = superset_lattice(cells, max_work=tables.max_work, index_type=tables.index_type)
    sig, tau = _sigma_tau(lat.words, k, l_, jac, exact)
    li = lat.index_type(lat.words).find(cells.words[idx])
    _ = lat.down  # build once, before the plan is shipped to workers
    return BCubedPlan(**common, lattice=lat, lattice_index=li, sigma=sig, tau=tau)


def _terms(plan: BCubedPlan, w, vs, vt, eg, ec):
    """Per-class precision and recall terms."""
    if plan.exact:
        tp = [Fraction(int(a)) * b / int(c) for a, b, c in zip(w, vs, eg)]
        tr = [Fraction(int(a)) * b / int(c) for a, b, c in zip(w, vt, ec)]
        return tp, tr
    wf = w.astype(np.float64)
    return list(wf * vs / eg), list(wf * vt / ec)


def _block_subsets(plan: BCubedPlan, start: int, stop: int):
    lat = plan.lattice
    assert lat is not None and plan.lattice_index is not None  # a "subsets" plan
    assert plan.sigma is not None and plan.tau is not None
    down, cnt = lat.down, lat.count
    tp_all: list = []
    tr_all: list = []
    pc = plan.popcount
    s = start
    while s < stop:
        m = int(pc[s])
        e = min(stop, int(np.searchsorted(pc, m, side="right")), s + max(1, _CHUNK >> m))
        n = e - s
        cur = plan.lattice_index[s:e, None]
        for i in range(m - 1, -1, -1):
            cur = np.stack([down[cur, i], cur], axis=-1).reshape(n, -1)
        mm = cnt[cur]
        for i in range(m):
            v = mm.reshape(n, 1 << (m - 1 - i), 2, 1 << i)
            v[:, :, 0, :] -= v[:, :, 1, :]
        j = np.arange(1 << m)
        b = plan.n_truth_bits[s:e, None]
        has_p = j[None, :] >= (1 << b)
        has_t = (j[None, :] & ((1 << b) - 1)) != 0
        eg = np.where(has_p, mm, 0).sum(axis=1)
        ec = np.where(has_t, mm, 0).sum(axis=1)
        mv = mm.astype(object) if plan.exact else mm.astype(np.float64)
        vs = (plan.sigma[cur] * mv).sum(axis=1)
        vt = (plan.tau[cur] * mv).sum(axis=1)
        tp, tr = _terms(plan, plan.count[s:e], vs, vt, eg, ec)
        tp_all += tp
        tr_all += tr
        s = e
    return tp_all, tr_all


def _block_pairwise(plan: BCubedPlan, start: int, stop: int):
    k, l_ = plan.n_truth, plan.n_pred
    tm, pm = _part_masks(k, l_)
    ws, wt, ct = plan.words[start:stop], plan.all_words, plan.all_count
    assert wt is not None and ct is not None  # a "pairwise" plan
    nw = ws.shape[1]
    tp_all: list = []
    tr_all: list = []
    ns = max(1, min(len(ws), _CHUNK // max(len(wt), 1)))
    nt = max(1, _CHUNK // ns)
    ctv = ct.astype(object) if plan.exact else ct.astype(np.float64)
    for a in range(0, len(ws), ns):
        x = ws[a : a + ns]
        zero = 0 if plan.exact else 0.0
        vs = np.full(len(x), zero, dtype=object if plan.exact else np.float64)
        vt, eg, ec = vs.copy(), np.zeros(len(x), np.int64), np.zeros(len(x), np.int64)
        for b in range(0, len(wt), nt):
            y, cy = wt[b : b + nt], ct[b : b + nt]
            inter = (x[:, None, :] & y[None, :, :]).reshape(-1, nw)
            uk, inv = np.unique(sortable_keys(inter), return_inverse=True)
            u = np.ascontiguousarray(uk).view(np.uint64).reshape(len(uk), nw)
            inv = inv.reshape(len(x), len(y))
            su, tu = _sigma_tau(u, k, l_, plan.jaccard, plan.exact)
            hp = (u & pm).any(axis=1)[inv]
            ht = (u & tm).any(axis=1)[inv]
            eg += np.where(hp, cy[None, :], 0).sum(axis=1)
            ec += np.where(ht, cy[None, :], 0).sum(axis=1)
            cyv = ctv[b : b + nt][None, :]
            vs = vs + (su[inv] * cyv).sum(axis=1)
            vt = vt + (tu[inv] * cyv).sum(axis=1)
        tp, tr = _terms(plan, plan.count[a + start : a + start + len(x)], vs, vt, eg, ec)
        tp_all += tp
        tr_all += tr
    return tp_all, tr_all


def bcubed_block(plan: BCubedPlan, start: int, stop: int) -> BCubedPartial:
    """Partial MOCICE-BCubed sums over the cell classes ``start:stop``.

    Independent blocks; ``bcubed_finalize(plan, [bcubed_block(plan, a, b)
    for a, b in plan.block_bounds(n)])`` equals the single-block result (to
    one rounding per block in float mode, exactly in exact mode).

    Examples
    --------
    >>> from daskbicl.kernels.cells import example_tables
    >>> plan = bcubed_plan(example_tables(), exact=True)
    >>> bcubed_block(plan, 0, plan.n_classes)
    BCubedPartial(precision=Fraction(2203, 540), recall=Fraction(2189, 540))
    """
    if not 0 <= start <= stop <= plan.n_classes:
        raise InputError(f"block {start}:{stop} outside 0:{plan.n_classes}")
    fn = _block_subsets if plan.method == "subsets" else _block_pairwise
    tp, tr = fn(plan, start, stop)
    if plan.exact:
        return BCubedPartial(sum(tp, Fraction(0)), sum(tr, Fraction(0)))
    return BCubedPartial(math.fsum(tp), math.fsum(tr))


def bcubed_finalize(plan: BCubedPlan, partials) -> PRF:
    """Precision, recall and F1 from the block sums (see module doc).

    Examples
    --------
    >>> from daskbicl.kernels.cells import example_tables
    >>> plan = bcubed_plan(example_tables(), exact=True)
    >>> parts = [bcubed_block(plan, a, b) for a, b in plan.block_bounds(2)]
    >>> bcubed_finalize(plan, parts)
    PRF(precision=Fraction(2203, 4860), recall=Fraction(2189, 4860), f1=Fraction(4822367, 10672560))
    """
    partials = list(partials)
    up, ut = plan.union_pred, plan.union_truth
    zero = Fraction(0) if plan.exact else 0.0
    if up == 0 and ut == 0:
        raise _nothing_covered("mocice_bcubed", "P = (...) / |U_G| and R = (...) / |U_C| are")
    if up == 0 or ut == 0:  # documented convention: the 0/0 side counts as 0
        return PRF(zero, zero, zero)
    if plan.exact:
        p = sum((x.precision for x in partials), Fraction(0)) / up
        r = sum((x.recall for x in partials), Fraction(0)) / ut
    else:
        p = math.fsum(x.precision for x in partials) / up
        r = math.fsum(x.recall for x in partials) / ut
    if plan.exact:
        return PRF(p, r, _hmean(p, r))
    return PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))


def mocice_bcubed(tables: MicroTables, *, exact: bool = False,
                  method: str | None = None) -> PRF:
    """MOCICE-BCubed precision, recall and F1 (docs/measures/micro.md), in one block.

    Examples
    --------
    >>> from daskbicl.kernels.cells import example_tables
    >>> mocice_bcubed(example_tables(), exact=True)
    PRF(precision=Fraction(2203, 4860), recall=Fraction(2189, 4860), f1=Fraction(4822367, 10672560))
    >>> p, r, f = mocice_bcubed(example_tables())
    >>> round(p, 12), round(r, 12), round(f, 12)
    (0.45329218107, 0.450411522634, 0.451847260638)
    """
    plan = bcubed_plan(tables, exact=exact, method=method)
    return bcubed_finalize(plan, [bcubed_block(plan, 0, plan.n_classes)])


def coclustering_bcubed(rows, cols, *, exact: bool = False,
                        max_work: float = DEFAULT_MAX_WORK) -> PRF:
    """MOCICE-BCubed of two co-clusterings from their contingency tables.

    For a cell x in truth block C and pred block G, ς(x, y) = J(G, C) when y
    is in both and 0 otherwise, and E_G(x) = G, so with t = |G ∩ C| =
    :math:`n^{zz'}_{hh'} n^{ww'}_{ll'}`:
    :math:`P = \\frac{1}{IJ}\\sum t^3 / (|G| (|G| + |C| - t))` and R alike
    with |C|, over the non-zero entries of both tables (module docstring).
    O(nnz(rows) x nnz(cols)) terms; no mask, no signature.

    Examples
    --------
    >>> from daskbicl.kernels.contingency import Table
    >>> r = Table.from_labels(np.array([0, 0, 1]), np.array([0, 1, 1]))
    >>> c = Table.from_labels(np.array([0, 0]), np.array([0, 0]))
    >>> coclustering_bcubed(r, c, exact=True)   # (8/8 + 8/24 + 8/16) / 6
    PRF(precision=Fraction(11, 36), recall=Fraction(11, 36), f1=Fraction(11, 36))
    """
    a, ap = rows.truth_sizes(), rows.pred_sizes()
    b, bp = cols.truth_sizes(), cols.pred_sizes()
    n = rows.n * cols.n
    if n >= 2**62:
        raise TooLargeError(
            f"MOCICE-BCubed of two co-clusterings of {rows.n:,} x {cols.n:,} cells: 2**62 cells "
            "or more would overflow its int64 cell counts (no setting raises this limit)"
        )
    n_terms = len(rows.counts) * len(cols.counts)
    if _UNIT_COCLUSTER_TERM * n_terms > max_work:
        raise too_large(f"MOCICE-BCubed of two co-clusterings ({len(rows.counts)} x "
                        f"{len(cols.counts)} pairs of blocks)",
                        _UNIT_COCLUSTER_TERM * n_terms, max_work)
    # per non-zero entry: shared count, |C| and |G| factors of each axis
    rt, rc, rg = rows.counts, a[rows.rows], ap[rows.cols]
    ct, cc, cg = cols.counts, b[cols.rows], bp[cols.cols]
    if exact:
        p = r = Fraction(0)
        for (t1, c1, g1), (t2, c2, g2) in itertools.product(zip(rt, rc, rg), zip(ct, cc, cg)):
            t, c, g = int(t1) * int(t2), int(c1) * int(c2), int(g1) * int(g2)
            jt = Fraction(t * t * t, g + c - t)
            p += jt / g
            r += jt / c
        p, r = p / n, r / n
        return PRF(p, r, _hmean(p, r))
    # Each chunk is summed exactly (fsum) at once, so memory stays one chunk;
    # the exact partial sums are then summed exactly again.
    partial_p: list[float] = []
    partial_r: list[float] = []
    step = max(1, _CHUNK // max(len(ct), 1))
    for s in range(0, len(rt), step):
        t = rt[s : s + step, None] * ct[None, :]           # exact int64 (< 2**62)
        c = rc[s : s + step, None] * cc[None, :]
        g = rg[s : s + step, None] * cg[None, :]
        tf = t.astype(np.float64)
        tj = tf / (g + c - t) * tf                           # t J(G, C)
        partial_p.append(math.fsum((tf / g * tj).ravel().tolist()))
        partial_r.append(math.fsum((tf / c * tj).ravel().tolist()))
    p = math.fsum(partial_p) / n
    r = math.fsum(partial_r) / n
    return PRF(p, r, float(_hmean(Fraction(p), Fraction(r))))
