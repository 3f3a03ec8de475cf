"""Synthetic parameter sweeps shared by the gallery scripts (not an example itself).

One 240 × 160 matrix with a planted 40 × 30 bicluster B. Algorithm A grows
a box from the core of B outwards (precise but incomplete); algorithm B
always covers all of B but adds noise rows and columns that shrink with its
parameter (complete but imprecise).
"""

from __future__ import annotations

import numpy as np

import daskbicl

I, J = 240, 160


def sweeps(seed: int = 7, n_a: int = 9, n_b: int = 7):
    """``(truth, sweep_a, sweep_b)`` as daskbicl biclusterings, with ``n_a`` and ``n_b`` results."""
    rng = np.random.default_rng(seed)
    rows, cols = np.zeros(I, bool), np.zeros(J, bool)
    rows[rng.choice(I, 40, replace=False)] = True
    cols[rng.choice(J, 30, replace=False)] = True
    r_in, r_out = rng.permutation(np.flatnonzero(rows)), rng.permutation(np.flatnonzero(~rows))
    c_in, c_out = rng.permutation(np.flatnonzero(cols)), rng.permutation(np.flatnonzero(~cols))
    a = []
    for theta in np.linspace(0.15, 0.95, n_a):
        pr, pc = np.zeros(I, bool), np.zeros(J, bool)
        pr[r_in[: int(theta * r_in.size)]] = True
        pc[c_in[: int(theta * c_in.size)]] = True
        pr[r_out[: int(6 * theta**4)]] = True
        pc[c_out[: int(3 * theta**4)]] = True
        a.append((pr, pc))
    b = []
    for theta in np.linspace(0.0, 1.0, n_b):
        pr, pc = rows.copy(), cols.copy()
        pr[r_out[: int(40 * (1 - theta)) + 6]] = True
        pc[c_out[: int(30 * (1 - theta)) + 4]] = True
        b.append((pr, pc))
    truth = daskbicl.biclustering(rows[None, :], cols[None, :], bicluster=["B"])

    def as_ds(results, prefix):
        return daskbicl.biclustering(np.array([r for r, _ in results]), np.array([c for _, c in results]),
                                     bicluster=[f"{prefix}{k}" for k in range(len(results))])

    return truth, as_ds(a, "A"), as_ds(b, "B")
