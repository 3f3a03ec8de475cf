"""Monte Carlo estimates of MOCICE-BCubed from the membership lists (numpy and numba only).

Precision is a mean over the cells x covered by pred of a mean over the
cells y of E_G(x) (the union of the pred biclusters containing x) of
ς(x, y); recall likewise with the truth side and τ (docs/measures/micro.md,
"Exact or sampled").  Both levels are sampled without bias, and every draw
reads only the row and column membership lists
(:class:`~daskbicl.kernels.micro.memberships.Memberships`), never the masks:

* a cell uniform over one bicluster b: a row signature containing b, drawn
  with probability proportional to its number of rows, and a column
  signature likewise; the cell's biclusters are the elements the two
  lists share;
* a cell uniform over a union of biclusters: b drawn with probability
  proportional to its size, a cell uniform in b, kept with probability
  1 / (number of the union's biclusters containing it), else drawn again.

So a pair (x, y) costs O(number of biclusters) whatever the number of
cells, and the mean of ς over n pairs is an unbiased estimate of precision
with a standard error sd / sqrt(n).

Determinism: the draws come in *blocks* of a fixed number of pairs; block
j of a side draws from its own generator (SplitMix64) seeded from a fixed
seed, the side and j only.  Blocks are summed in index order
(:func:`combine`), so the digits do not depend on how blocks are dealt to
tasks, on the number of workers, or on the chunking of the masks (the
membership lists are the same for any chunking).

The statistics of the blocks (means, half-widths, F1, how many blocks)
are in :mod:`daskbicl.kernels.micro.estimates`, which imports no numba.

Examples
--------
>>> from daskbicl.kernels.micro.cell_records import example_memberships
>>> from daskbicl.kernels.micro.estimates import combine
>>> rows, cols = example_memberships()
>>> s = Sampler.build(rows, cols)
>>> blocks = [s.block("precision", j, 256) for j in range(4)]
>>> est = combine(blocks)
>>> 0 <= est.mean <= 1 and est.samples == 1024
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ...errors import InputError
from ..compiled import announce_compiles
from .coverage_estimates import CoverageSums
from .estimates import BlockSums
from .memberships import Memberships

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["SEED", "Sampler"]

#: The fixed seed every estimate starts from (same digits on any cluster).
SEED = 0x5A3D_1E5B_C0BE_D001

_SIDES = {"precision": 1, "recall": 2, "coverage": 3}


# --------------------------------------------------------------------------- compiled draws


@njit(cache=True, nogil=True)
def _next(state):
    """SplitMix64: the next 64-bit word of the generator ``state`` (uint64 array of one)."""
    z = state[0] + np.uint64(0x9E3779B97F4A7C15)
    state[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def _below(state, n):
    """An integer uniform in [0, n) (bias below n / 2**64)."""
    return np.int64(_next(state) % np.uint64(n))


@njit(cache=True, nogil=True)
def _pick(cum, lo, hi, u):
    """The first index j in [lo, hi) with cum[j] > u (cum ascending)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def _signature(state, e, ax, out):
    """A row (or column) signature containing element e, by its number of items; its id."""
    eptr, esig, ecum = ax[3], ax[4], ax[5]
    lo, hi = eptr[e], eptr[e + 1]
    base = ecum[lo - 1] if lo > 0 else 0
    j = _pick(ecum, lo, hi, base + _below(state, ecum[hi - 1] - base))
    return esig[j]


@njit(cache=True, nogil=True)
def _cell(state, e, rows, cols, out):
    """A cell uniform in bicluster e: its biclusters into ``out`` (ascending); their number."""
    rs = _signature(state, e, rows, out)
    cs = _signature(state, e, cols, out)
    rptr, rel, cptr, cel = rows[0], rows[1], cols[0], cols[1]
    i, iend, j, jend = rptr[rs], rptr[rs + 1], cptr[cs], cptr[cs + 1]
    n = 0
    while i < iend and j < jend:
        a, b = rel[i], cel[j]
        if a == b:
            out[n] = a
            n += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return n


@njit(cache=True, nogil=True)
def _in_union(state, members, n_members, sizes, cum, rows, cols, out, lo, hi):
    """A cell uniform over the union of ``members[:n_members]`` (their sizes cumulated in ``cum``).

    Only elements in [lo, hi) count as members of a cell; returns the
    cell's number of elements in ``out``.
    """
    total = cum[n_members - 1]
    while True:
        e = members[_pick(cum, 0, n_members, _below(state, total))]
        n = _cell(state, e, rows, cols, out)
        inside = 0
        for t in range(n):
            v = out[t]
            if lo <= v < hi:
                for s in range(n_members):
                    if members[s] == v:
                        inside += 1
                        break
        if _below(state, inside) == 0:
            return n


@njit(cache=True, nogil=True)
def _term(x, nx, y, ny, k, jac, recall):
    """ς(x, y) (precision) or τ(x, y) (recall) from the two cells' ascending bicluster lists."""
    g = np.empty(min(nx, ny), np.int64)
    c = np.empty(min(nx, ny), np.int64)
    ng = nc = 0
    i = j = 0
    while i < nx and j < ny:
        a, b = x[i], y[j]
        if a == b:
            if a < k:
                c[nc] = a
                nc += 1
            else:
                g[ng] = a - k
                ng += 1
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    if ng == 0 or nc == 0:
        return 0.0
    phi = 0.0
    for s in range(ng):
        best = 0.0
        for t in range(nc):
            v = jac[g[s], c[t]]
            if v > best:
                best = v
        phi += best
    phi /= ng
    return min(ng, nc) * phi / (nc if recall else ng)


@njit(cache=True, nogil=True)
def _block(seed, n_pairs, lo, hi, k, sizes, rows, cols, jac, recall):
    """Sum and sum of squares of ``n_pairs`` sampled terms of one side (own elements [lo, hi))."""
    state = np.empty(1, np.uint64)
    state[0] = seed
    n_own = hi - lo
    own = np.arange(lo, hi)
    own_cum = np.cumsum(sizes[lo:hi])
    width = sizes.shape[0]
    x = np.empty(width, np.int64)
    y = np.empty(width, np.int64)
    members = np.empty(width, np.int64)
    cum = np.empty(width, np.int64)
    total = squares = 0.0
    for _ in range(n_pairs):
        nx = _in_union(state, own, n_own, sizes, own_cum, rows, cols, x, lo, hi)
        m = 0
        acc = 0
        for t in range(nx):
            if lo <= x[t] < hi:
                members[m] = x[t]
                acc += sizes[x[t]]
                cum[m] = acc
                m += 1
        ny = _in_union(state, members, m, sizes, cum, rows, cols, y, lo, hi)
        v = _term(x, nx, y, ny, k, jac, recall)
        total += v
        squares += v * v
    return total, squares


@njit(cache=True, nogil=True)
def _coverage_block(seed, n_cells, k, sizes, rows, cols):
    """Sums of the coverage terms of ``n_cells`` cells drawn in proportion to their number of biclusters.

    A bicluster of either side drawn by size, then a cell uniform in it: a
    cell x comes with probability c(x) / T, c(x) = |C(x)| + |G(x)|.  Per
    cell the terms are a = min/c, p = 1/c and q = [both sides]/c; returns
    the sums of a, a², p, p², q, q² and p·q (:mod:`~daskbicl.kernels.micro.coverage_estimates`).
    """
    state = np.empty(1, np.uint64)
    state[0] = seed
    width = sizes.shape[0]
    cum = np.cumsum(sizes)
    total = cum[width - 1]
    x = np.empty(width, np.int64)
    out = np.zeros(7, np.float64)
    for _ in range(n_cells):
        e = _pick(cum, 0, width, _below(state, total))
        n = _cell(state, e, rows, cols, x)
        truth = 0
        for t in range(n):
            truth += x[t] < k
        pred = n - truth
        a = min(truth, pred) / n
        p = 1.0 / n
        q = p if truth > 0 and pred > 0 else 0.0
        out[0] += a
        out[1] += a * a
        out[2] += p
        out[3] += p * p
        out[4] += q
        out[5] += q * q
        out[6] += p * q
    return out


@njit(cache=True, nogil=True)
def _mix(a, b):
    state = np.empty(1, np.uint64)
    state[0] = a ^ (b * np.uint64(0xD1342543DE82EF95))
    return _next(state)


# --------------------------------------------------------------------------- the sampler


def _axis(m: Memberships):
    """(ptr, el, cnt, eptr, esig, ecum): the lists, and per element its signatures with cumulated counts."""
    eptr, esig = m.index
    ecum = np.cumsum(m.cnt[esig]).astype(np.int64) if len(esig) else np.zeros(0, np.int64)
    return (m.ptr.astype(np.int64), m.el.astype(np.int64), m.cnt.astype(np.int64),
            eptr.astype(np.int64), esig.astype(np.int64), ecum)


@dataclass(frozen=True, eq=False)
class Sampler:
    """What the draws read: both axes' lists, the bicluster sizes and the pred x truth Jaccard table.

    Build with :meth:`build` (cheap: O(memberships)); :meth:`block` draws
    one block.  ``ecum`` cumulates counts over all elements' signatures:
    within an element's range the difference to its start is what is drawn.
    """

    rows: tuple
    cols: tuple
    sizes: np.ndarray
    jac: np.ndarray
    n_truth: int
    n_pred: int

    @classmethod
    def build(cls, rows: Memberships, cols: Memberships) -> Sampler:
        if (rows.n_truth, rows.n_pred) != (cols.n_truth, cols.n_pred):
            raise InputError(
                f"row signatures have {rows.n_truth}+{rows.n_pred} biclusters but column signatures "
                f"{cols.n_truth}+{cols.n_pred}; count both from the same truth and pred masks.")
        k = rows.n_truth
        sizes = (rows.sizes() * cols.sizes()).astype(np.int64)
        shared = rows.gram[:k, k:] * cols.gram[:k, k:]
        den = sizes[k:, None] + sizes[None, :k] - shared.T
        jac = np.divide(shared.T, den, out=np.zeros(den.shape), where=den > 0)
        return cls(_axis(rows), _axis(cols), sizes, np.ascontiguousarray(jac, np.float64), k, rows.n_pred)

    def covered(self, side: str) -> bool:
        """Whether the side's biclusters cover any cell (else its score is a convention, not sampled)."""
        lo, hi = self._range(side)
        return bool(self.sizes[lo:hi].sum() > 0)

    def _range(self, side: str) -> tuple[int, int]:
        if side not in ("precision", "recall"):
            raise InputError(f"side must be 'precision' or 'recall', got {side!r}")
        return (self.n_truth, self.n_truth + self.n_pred) if side == "precision" else (0, self.n_truth)

    def block(self, side: str, index: int, n_pairs: int, seed: int = SEED) -> BlockSums:
        """Block ``index`` of ``side``: ``n_pairs`` sampled terms (the same for a given seed and index)."""
        lo, hi = self._range(side)
        if not self.covered(side):
            raise InputError(f"the {'pred' if side == 'precision' else 'truth'} biclusters cover no cell: "
                             f"nothing to sample for {side}")
        word = np.uint64(_mix(np.uint64(seed), np.uint64(index * 4 + _SIDES[side])))
        total, squares = _block(word, int(n_pairs), lo, hi, self.n_truth, self.sizes,
                                self.rows, self.cols, self.jac, side == "recall")
        return BlockSums(float(total), float(squares), int(n_pairs))

    @property
    def total(self) -> int:
        """T: the sizes of every truth and pred bicluster added up (cells counted with multiplicity)."""
        return int(self.sizes.sum())

    def coverage_block(self, index: int, n_cells: int, seed: int = SEED) -> CoverageSums:
        """Block ``index`` of the coverage counts: ``n_cells`` cells drawn by their number of biclusters."""
        if self.total == 0:
            raise InputError("no bicluster covers a cell: nothing to sample for the coverage counts")
        word = np.uint64(_mix(np.uint64(seed), np.uint64(index * 4 + _SIDES["coverage"])))
        sums = _coverage_block(word, int(n_cells), self.n_truth, self.sizes, self.rows, self.cols)
        return CoverageSums(tuple(float(v) for v in sums), int(n_cells))
