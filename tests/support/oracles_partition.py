"""Brute-force oracles written from the definitions (SPEC §3), for tiny inputs.

They never use the kernels' factorisations: CARI is the ARI of the explicit
I·J cell labels from a loop over all pairs of cells; CE enumerates every
one-to-one matching; MI is computed from the explicit cell table.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction


def cell_labels(z, w):
    """The cell (micro-object) labels of a co-clustering: (z_i, w_j) for every cell."""
    return [(int(zi), int(wj)) for zi in z for wj in w]


def ari_pairs(a, b) -> Fraction | None:
    """ARI from a loop over all pairs of objects, exactly (None when 0/0)."""
    n = len(a)
    both = same_a = same_b = 0
    for i, j in itertools.combinations(range(n), 2):
        sa = a[i] == a[j]
        sb = b[i] == b[j]
        both += sa and sb
        same_a += sa
        same_b += sb
    total = n * (n - 1) // 2
    if total == 0:
        return None
    expected = Fraction(same_a * same_b, total)
    max_index = Fraction(same_a + same_b, 2)
    if max_index == expected:
        return None
    return (both - expected) / (max_index - expected)


def ari(a, b) -> float:
    value = ari_pairs(list(a), list(b))
    return 1.0 if value is None else float(value)


def cari(z, zp, w, wp) -> float:
    return ari(cell_labels(z, w), cell_labels(zp, wp))


def misclassified(a, b) -> Fraction:
    """1 − max over one-to-one label matchings of the agreement, by enumeration."""
    la, lb = sorted(set(a)), sorted(set(b))
    k = max(len(la), len(lb))
    la = la + [("pad", i) for i in range(k - len(la))]
    lb = lb + [("pad", i) for i in range(k - len(lb))]
    best = 0
    for perm in itertools.permutations(range(k)):
        mapping = {la[i]: lb[perm[i]] for i in range(k)}
        best = max(best, sum(mapping[x] == y for x, y in zip(a, b)))
    return 1 - Fraction(best, len(a))


def ce(z, zp, w, wp) -> Fraction:
    """CE as the misclassified fraction of cells under the best row and column matchings.

    The cell-level definition: a cell is well classified when both its row and
    its column are; for the product matchings this equals Lomet's
    d_r + d_c − d_r·d_c (checked separately).
    """
    dr = misclassified(list(z), list(zp))
    dc = misclassified(list(w), list(wp))
    return dr + dc - dr * dc


def nce(z, zp, w, wp, normalizer: str = "corrected") -> Fraction:
    """1 − CE / (1 − 1/(HL)) (1 when HL = 1); "printed": the published 1/H + 1/L − 1/(HL)."""
    h = max(len(set(z)), len(set(zp)))
    l_ = max(len(set(w)), len(set(wp)))
    if normalizer == "printed":
        return 1 - ce(z, zp, w, wp) / (Fraction(1, h) + Fraction(1, l_) - Fraction(1, h * l_))
    if h * l_ == 1:
        return Fraction(1)
    return 1 - ce(z, zp, w, wp) / (1 - Fraction(1, h * l_))


def entropy(labels) -> float:
    n = len(labels)
    return -sum(c / n * math.log(c / n) for c in Counter(labels).values())


def mutual_info(a, b) -> float:
    n = len(a)
    joint = Counter(zip(a, b))
    ca, cb = Counter(a), Counter(b)
    return sum(c / n * math.log(n * c / (ca[x] * cb[y])) for (x, y), c in joint.items())


def comi(z, zp, w, wp) -> float:
    """MI of the explicit cell labels."""
    return mutual_info(cell_labels(z, w), cell_labels(zp, wp))


def conmi(z, zp, w, wp) -> float:
    cz, cp = cell_labels(z, w), cell_labels(zp, wp)
    den = max(entropy(cz), entropy(cp))
    return 1.0 if den == 0 else mutual_info(cz, cp) / den


def nmi(a, b) -> float:
    den = max(entropy(a), entropy(b))
    return 1.0 if den == 0 else mutual_info(a, b) / den


def enmi(z, zp, w, wp) -> float:
    return nmi(list(z), list(zp)) + nmi(list(w), list(wp))


ORACLES = {
    "cari": cari,
    "ari_rows": lambda z, zp, w, wp: ari(z, zp),
    "ari_cols": lambda z, zp, w, wp: ari(w, wp),
    "ce": lambda *a: float(ce(*a)),
    "nce": lambda *a: float(nce(*a)),
    "comi": comi,
    "conmi": conmi,
    "enmi": enmi,
}


def ce_cells(z, zp, w, wp) -> Fraction:
    """CE from the cells: 1 − max over (row matching, column matching) pairs of
    the fraction of cells whose row and column are both matched.  Enumerates
    every pair of matchings (tiny inputs only)."""
    def matchings(a, b):
        la, lb = sorted(set(a)), sorted(set(b))
        k = max(len(la), len(lb))
        la = la + [("pad", i) for i in range(k - len(la))]
        lb = lb + [("pad", i) for i in range(k - len(lb))]
        for perm in itertools.permutations(range(k)):
            yield {la[i]: lb[perm[i]] for i in range(k)}

    cells = [(zi, zpi, wj, wpj) for zi, zpi in zip(z, zp) for wj, wpj in zip(w, wp)]
    best = 0
    for mr in matchings(list(z), list(zp)):
        for mc in matchings(list(w), list(wp)):
            best = max(best, sum(mr[a] == b and mc[c] == d for a, b, c, d in cells))
    return 1 - Fraction(best, len(cells))
