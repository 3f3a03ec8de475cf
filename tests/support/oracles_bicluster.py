"""Brute-force oracles for the bicluster precision–recall measures (SPEC §4).

Everything here is written straight from the SPEC definitions, on explicit
Python sets of cells and exact :class:`fractions.Fraction` arithmetic, with no
shared code with :mod:`daskbicl.kernels.bicluster.precision_recall`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

MEASURES = ("goodness", "fmeasure", "dice", "jaccard")


def cells(rows, cols):
    """The explicit set of (i, j) cells of a bicluster rows × cols."""
    return {(i, j) for i in rows for j in cols}


def mask_to_index(mask):
    return [i for i, m in enumerate(mask) if m]


def raw(pre, rec, R, beta):
    """Uncorrected measures of one (pre, rec) point, exact (0/0 -> 0)."""
    b2 = beta * beta
    out = {"goodness": (R * pre + rec) / (R + 1)}
    out["fmeasure"] = (1 + b2) * pre * rec / (b2 * pre + rec) if pre or rec else Fraction(0)
    out["dice"] = 2 * pre * rec / (pre + rec) if pre or rec else Fraction(0)
    den = pre + rec - pre * rec
    out["jaccard"] = pre * rec / den if den else Fraction(0)
    return out


def expectations(b, x, D, R, beta):
    """E[M] of a random X of size x, as printed in the SPEC §4 table."""
    b2 = beta * beta
    return {
        "goodness": Fraction(R * b + x) / (D * (R + 1)),
        "fmeasure": (1 + b2) * b * x / (D * (b2 * b + x)),
        "dice": Fraction(2 * b * x, D * (b + x)),
        "jaccard": Fraction(b * x, D * b + D * x - b * x),
    }


def measures_from_counts(n, b, x, D, R=Fraction(1), beta=Fraction(1)):
    """All SPEC §4 measures of one pair from |B∩X| = n, |B| = b, |X| = x, |D|."""
    pre = Fraction(n, x)
    rec = Fraction(n, b)
    out = {"intersection": n, "precision": pre, "recall": rec}
    m = raw(pre, rec, R, beta)
    e = expectations(b, x, D, R, beta)
    whole = x == D or b == D
    if whole:
        pre_c = rec_c = Fraction(0)
    else:
        pre_c = (D * pre - b) / (D - b)
        rec_c = (D * rec - x) / (D - x)
    ms = raw(pre_c, rec_c, R, beta)
    for k in MEASURES:
        out[k] = m[k]
        if whole:
            out[k + "_corrected"] = Fraction(0)
            out[k + "_space"] = Fraction(0)
            continue
        out[k + "_corrected"] = (m[k] - e[k]) / (1 - e[k])
        if k == "goodness":
            out[k + "_space"] = ms[k]
        else:
            out[k + "_space"] = ms[k] if pre_c > 0 and rec_c > 0 else Fraction(0)
    out["pre_c"], out["rec_c"] = pre_c, rec_c
    return out


def pair_oracle(truth, pred, I, J, R=Fraction(1), beta=Fraction(1)):
    """Oracle for every (truth, pred) pair from explicit cell sets.

    ``truth`` and ``pred`` are lists of ``(row_mask, col_mask)``.
    Returns a dict key -> (K, L) object array of Fractions / ints.
    """
    D = I * J
    tsets = [cells(mask_to_index(r), mask_to_index(c)) for r, c in truth]
    psets = [cells(mask_to_index(r), mask_to_index(c)) for r, c in pred]
    table = {}
    for k, B in enumerate(tsets):
        for l, X in enumerate(psets):
            vals = measures_from_counts(len(B & X), len(B), len(X), D, R, beta)
            for key, v in vals.items():
                table.setdefault(key, np.empty((len(tsets), len(psets)), dtype=object))
                table[key][k, l] = v
    return table


def aggregate_oracle(table, key):
    """(1/K) Σ_k max_l M(B_k, X_l) with plain Python loops, exact."""
    arr = table[key]
    K, L = arr.shape
    return sum(max(arr[k, l] for l in range(L)) for k in range(K)) / K


def tables_from_masks(truth, pred):
    """The engine's count tables, built naively (one loop per pair)."""
    K, L = len(truth), len(pred)
    rs = np.zeros((K, L), dtype=np.int64)
    cs = np.zeros((K, L), dtype=np.int64)
    for k, (tr, tc) in enumerate(truth):
        for l, (pr, pc) in enumerate(pred):
            rs[k, l] = sum(1 for a, b in zip(tr, pr) if a and b)
            cs[k, l] = sum(1 for a, b in zip(tc, pc) if a and b)
    sizes = [np.array([sum(m[i]) for m in side], dtype=np.int64) for side in (truth, pred) for i in (0, 1)]
    return rs, cs, *sizes


def expected_by_enumeration(B, D_cells, x, measure, R=Fraction(1), beta=Fraction(1)):
    """E[M(B, X)] over *every* subset X of the matrix cells with |X| = x."""
    total = Fraction(0)
    count = 0
    for X in itertools.combinations(sorted(D_cells), x):
        n = len(B & set(X))
        total += raw(Fraction(n, x), Fraction(n, len(B)), R, beta)[measure]
        count += 1
    return total / count


def expected_over_biclusters(B, I, J, xr, xc, measure, R=Fraction(1), beta=Fraction(1)):
    """E[M(B, X)] over every bicluster X with xr rows and xc columns."""
    total = Fraction(0)
    count = 0
    for rows in itertools.combinations(range(I), xr):
        for cols in itertools.combinations(range(J), xc):
            n = len(B & cells(rows, cols))
            total += raw(Fraction(n, xr * xc), Fraction(n, len(B)), R, beta)[measure]
            count += 1
    return total / count
