"""Brute-force oracles for the micro-object measures (SPEC §6).

Written directly from the SPEC text on explicit Python sets of cells, pair by
pair, in exact rational arithmetic (:class:`fractions.Fraction`).  Only for
tiny inputs: MOCICE-BCubed is O(cells² · K · L), CE enumerates every
one-to-one matching with :func:`itertools.permutations` (scipy's assignment on the explicit
overlaps when there are more than 50,000 matchings).

A biclustering is given as two bool masks ``(n_biclusters, I)`` and
``(n_biclusters, J)``.  Where a SPEC formula is 0/0 because neither side
covers a cell, the oracle raises :class:`NothingCovered`; the only other
conventions are the ones the measures document: a side covering no cell has
a 0/0 MOCICE-BCubed normaliser that counts as 0, the F1 of two empty sets
is 0, and the maximum over no bicluster is 0.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


class NothingCovered(ZeroDivisionError):
    """Neither side covers a cell: the SPEC quantity is 0/0."""


def cell_sets(row_mask, col_mask) -> list[frozenset]:
    """The cell set E x F of every bicluster."""
    row_mask, col_mask = np.asarray(row_mask, bool), np.asarray(col_mask, bool)
    return [frozenset(itertools.product(np.flatnonzero(r).tolist(),
                                        np.flatnonzero(c).tolist()))
            for r, c in zip(row_mask, col_mask)]


def _memberships(sets, cells):
    return {x: frozenset(i for i, s in enumerate(sets) if x in s) for x in cells}


def mocice_bcubed(truth_rows, truth_cols, pred_rows, pred_cols):
    """MOCICE-BCubed (precision, recall, F1) as Fractions, from the SPEC text."""
    truth = cell_sets(truth_rows, truth_cols)
    pred = cell_sets(pred_rows, pred_cols)
    n_i, n_j = np.shape(truth_rows)[1], np.shape(truth_cols)[1]
    cells = list(itertools.product(range(n_i), range(n_j)))
    G = _memberships(pred, cells)
    C = _memberships(truth, cells)

    def jac(g, c):
        return Fraction(len(pred[g] & truth[c]), len(pred[g] | truth[c]))

    def phi(x, y):
        g, c = G[x] & G[y], C[x] & C[y]
        if not g or not c:
            return Fraction(0)
        return sum((max(jac(gg, cc) for cc in c) for gg in g), Fraction(0)) / len(g)

    def sigma(x, y):
        g, c = G[x] & G[y], C[x] & C[y]
        if not g:
            return Fraction(0)
        return min(len(g), len(c)) * phi(x, y) / len(g)

    def tau(x, y):
        g, c = G[x] & G[y], C[x] & C[y]
        if not c:
            return Fraction(0)
        return min(len(g), len(c)) * phi(x, y) / len(c)

    u_g = [x for x in cells if G[x]]
    u_c = [x for x in cells if C[x]]
    if not u_g and not u_c:
        raise NothingCovered("|U_G| = |U_C| = 0")
    p = Fraction(0)
    for x in u_g:
        e = frozenset().union(*(pred[g] for g in G[x]))
        p += sum((sigma(x, y) for y in e), Fraction(0)) / len(e)
    p = p / len(u_g) if u_g else Fraction(0)
    r = Fraction(0)
    for x in u_c:
        e = frozenset().union(*(truth[c] for c in C[x]))
        r += sum((tau(x, y) for y in e), Fraction(0)) / len(e)
    r = r / len(u_c) if u_c else Fraction(0)
    f1 = 2 * p * r / (p + r) if p + r else Fraction(0)
    return p, r, f1


def _union_counts(truth, pred, multiset):
    """(|U|, |I|): sets of cells, or (multiset) Patrikainen & Meila's counts
    sum over cells of max / min of the numbers of truth and pred biclusters."""
    cells = set().union(*truth, *pred)
    if not cells:
        raise NothingCovered("|U| = 0")
    if not multiset:
        inter = set().union(*truth) & set().union(*pred)
        return len(cells), len(inter)
    u = sum(max(sum(x in s for s in truth), sum(x in s for s in pred)) for x in cells)
    i = sum(min(sum(x in s for s in truth), sum(x in s for s in pred)) for x in cells)
    return u, i


def micro_ce(truth_rows, truth_cols, pred_rows, pred_cols, multiset=True):
    """CE = (|U| - D_max)/|U|, D_max over all one-to-one matchings (permutations)."""
    truth = cell_sets(truth_rows, truth_cols)
    pred = cell_sets(pred_rows, pred_cols)
    u, _ = _union_counts(truth, pred, multiset)
    small, big = (pred, truth) if len(pred) <= len(truth) else (truth, pred)
    if math.perm(len(big), len(small)) <= 50_000:  # every one-to-one matching
        d_max = max((sum(len(a & big[j]) for a, j in zip(small, perm))
                     for perm in itertools.permutations(range(len(big)), len(small))),
                    default=0)
    else:  # too many to enumerate (e.g. 25 x 25 blocks): scipy's assignment on the explicit overlaps
        from scipy.optimize import linear_sum_assignment

        overlap = np.array([[len(a & b) for b in big] for a in small], dtype=np.int64)
        r, c = linear_sum_assignment(overlap, maximize=True)
        d_max = int(overlap[r, c].sum())
    return Fraction(u - d_max, u)


def rnia(truth_rows, truth_cols, pred_rows, pred_cols, multiset=True):
    """RNIA = (|U| - |I|)/|U| on cell sets (multiset counts by default)."""
    truth = cell_sets(truth_rows, truth_cols)
    pred = cell_sets(pred_rows, pred_cols)
    u, i = _union_counts(truth, pred, multiset)
    return Fraction(u - i, u)


def e4sc(truth_rows, truth_cols, pred_rows, pred_cols):
    """E4SC = harmonic mean of macroF1(pred→truth) and macroF1(truth→pred).

    SPEC §6: macroF1(A→B) is the mean over *every* a in A, so an empty
    bicluster (the empty cell set) is averaged over like any other.
    """
    truth = cell_sets(truth_rows, truth_cols)
    pred = cell_sets(pred_rows, pred_cols)
    if not set().union(*truth, *pred):
        raise NothingCovered("no cell in any bicluster")

    def f1(a, b):
        return Fraction(2 * len(a & b), len(a) + len(b)) if a or b else Fraction(0)

    def macro(a_side, b_side):
        if not a_side:
            return Fraction(0)
        best = [max((f1(a, b) for b in b_side), default=Fraction(0)) for a in a_side]
        return sum(best, Fraction(0)) / len(a_side)

    a, b = macro(pred, truth), macro(truth, pred)
    return 2 * a * b / (a + b) if a + b else Fraction(0)
