"""Draw every precision–recall / tradeoff figure of daskbicl on synthetic data.

Usage::

    python examples/figures.py [OUTPUT_FOLDER [N_RESULTS]]

Without a folder the figures go to a new temporary folder.  ``N_RESULTS``
(default 9 for A and 7 for B) gives each sweep that many results: 35 draws
the figures at the size of a real parameter sweep.  In the PR-space
figures only the results that are best for some λ are named.  The script
prints the path of each figure and a short text summary of the optimal
tradeoff curves (intervals, breakpoints, AUC).  The last three figures come
from :func:`daskbicl.tradeoff`, which counts each sweep against the truth
with the Dask engine — the same figures ``daskbicl tradeoff TRUTH A B
--index fmeasure --index jaccard --plot ... --pr-plot ...
--corrected-pr-plot ...`` writes from Zarr stores.

The data: one 240 × 160 matrix with a planted 40 × 30 bicluster B.  Two
"algorithms" each return a sweep of candidate biclusters X_θ: A grows a box
from the core of B outwards (precise but incomplete); B always covers all of
B but adds noise rows and columns (complete but imprecise).  Precision and recall
come from the same count tables the Dask engine produces
(|E ∩ E'|, |F ∩ F'| and the sizes), finalized by
:func:`daskbicl.kernels.bicluster.precision_recall.pair_measures`.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

import daskbicl
from daskbicl.kernels.bicluster.precision_recall import corrected_precision_recall, pair_measures
from daskbicl.plot import (
    plot_comparison,
    plot_corrected_pr_space,
    plot_pr_space,
    plot_tradeoff,
    plot_tradeoff_space,
    save,
)
from daskbicl.tradeoffs.space import application_domain, compare_algorithms, optimal_tradeoff

I, J = 240, 160


def planted(rng):
    rows = np.zeros(I, bool)
    cols = np.zeros(J, bool)
    rows[rng.choice(I, 40, replace=False)] = True
    cols[rng.choice(J, 30, replace=False)] = True
    return rows, cols


def sweep_a(rng, rows, cols, n=9):
    """Grow a box from the core of B: precise and incomplete, a little noise late."""
    out = []
    r_in, r_out = rng.permutation(np.flatnonzero(rows)), rng.permutation(np.flatnonzero(~rows))
    c_in, c_out = rng.permutation(np.flatnonzero(cols)), rng.permutation(np.flatnonzero(~cols))
    for theta in np.linspace(0.15, 0.95, n):
        pr, pc = np.zeros(I, bool), np.zeros(J, bool)
        pr[r_in[: int(theta * r_in.size)]] = True
        pc[c_in[: int(theta * c_in.size)]] = True
        pr[r_out[: int(6 * theta**4)]] = True
        pc[c_out[: int(3 * theta**4)]] = True
        out.append((pr, pc))
    return out


def sweep_b(rng, rows, cols, n=7):
    """Complete (all of B) plus noise rows and columns that shrink with θ."""
    out = []
    r_out = rng.permutation(np.flatnonzero(~rows))
    c_out = rng.permutation(np.flatnonzero(~cols))
    for theta in np.linspace(0.0, 1.0, n):
        pr, pc = rows.copy(), cols.copy()
        pr[r_out[: int(40 * (1 - theta)) + 6]] = True
        pc[c_out[: int(30 * (1 - theta)) + 4]] = True
        out.append((pr, pc))
    return out


def scores(truth, preds):
    """Precision, recall and corrected precision/recall of each X vs B."""
    (tr, tc) = truth
    prow = np.array([p for p, _ in preds])
    pcol = np.array([c for _, c in preds])
    tables = (
        (tr[None, :].astype(np.int64) @ prow.T.astype(np.int64)),
        (tc[None, :].astype(np.int64) @ pcol.T.astype(np.int64)),
        [tr.sum()],
        [tc.sum()],
        prow.sum(axis=1),
        pcol.sum(axis=1),
        I * J,
    )
    m = pair_measures(*tables)
    pc, rc = corrected_precision_recall(*tables)
    return m["precision"][0], m["recall"][0], pc[0], rc[0]


def main(argv: list[str]) -> list[Path]:
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="daskbicl-figures-"))
    n_a, n_b = (int(argv[1]), int(argv[1])) if len(argv) > 1 else (9, 7)
    rng = np.random.default_rng(7)
    truth = planted(rng)
    b = int(truth[0].sum() * truth[1].sum())
    preds_a, preds_b = sweep_a(rng, *truth, n=n_a), sweep_b(rng, *truth, n=n_b)
    pre_a, rec_a, pc_a, rc_a = scores(truth, preds_a)
    pre_b, rec_b, pc_b, rc_b = scores(truth, preds_b)
    names = [f"A{k}" for k in range(pre_a.size)] + [f"B{k}" for k in range(pre_b.size)]
    pre, rec = np.concatenate([pre_a, pre_b]), np.concatenate([rec_a, rec_b])
    pc, rc = np.concatenate([pc_a, pc_b]), np.concatenate([rc_a, rc_b])

    paths = []
    t = optimal_tradeoff(pre_a, rec_a, names=names[: pre_a.size], index="fmeasure")
    t_b = optimal_tradeoff(pre_b, rec_b, names=names[pre_a.size :], index="fmeasure")
    winners = set(t.intervals["winner"]) | set(t_b.intervals["winner"])
    best = [n in winners for n in names]  # name the results that are best for some λ, fade the others
    groups = [n[0] for n in names]
    fig = plot_pr_space(pre, rec, names=names, index="fmeasure", lam=0.5, truth_size=b, n_cells=I * J,
                        groups=groups, highlight=best)
    paths.append(save(fig, out / "pr_space.png"))
    fig = plot_corrected_pr_space(pc, rc, names=names, index="fmeasure", groups=groups, highlight=best)
    paths.append(save(fig, out / "corrected_pr_space.png"))

    dom = application_domain(
        pre_a, rec_a, names=names[: pre_a.size], truth_size=b, n_cells=I * J, index="fmeasure"
    )
    paths.append(save(plot_tradeoff(t, domain=dom), out / "tradeoff_fmeasure_A.svg"))
    fig = plot_tradeoff_space(
        pre_a,
        rec_a,
        names=names[: pre_a.size],
        index=["kulczynski", "fmeasure", "folke", "jaccard"],
        truth_size=b,
        n_cells=I * J,
    )
    paths.append(save(fig, out / "tradeoff_space_A.png"))
    comp = compare_algorithms(
        {"A": (pre_a, rec_a, names[: pre_a.size]), "B": (pre_b, rec_b, names[pre_a.size :])}, index="fmeasure"
    )
    paths.append(save(plot_comparison(comp), out / "comparison_fmeasure.png"))

    # The same data through the public API: Datasets in, data and figures out.
    truth_ds = daskbicl.biclustering(truth[0][None, :], truth[1][None, :], bicluster=["B"])
    sweeps = [
        daskbicl.biclustering(
            np.array([r for r, _ in preds]),
            np.array([c for _, c in preds]),
            bicluster=[f"{prefix}{k}" for k in range(len(preds))],
        )
        for preds, prefix in ((preds_a, "A"), (preds_b, "B"))
    ]
    st = daskbicl.tradeoff(truth_ds, *sweeps, names=["A", "B"], index="fmeasure", rec_min=0.2)
    np.testing.assert_allclose(st.results["pre"], pre)  # the engine counts what the kernels were fed
    paths.append(save(st.plot(indices=["fmeasure", "jaccard"]), out / "tradeoff_sweeps.png"))
    paths.append(save(st.plot_pr(), out / "pr_space_sweeps.png"))
    paths.append(save(st.plot_corrected_pr(), out / "corrected_pr_space_sweeps.png"))

    print(f"|B| = {b}, |D| = {I * J}")
    print(f"optimal F-measure tradeoff of A: AUC = {t.auc:.4f}")
    print(t.intervals[["lam_lo", "lam_hi", "winner", "pre", "rec"]].round(4).to_string(index=False))
    print("best algorithm by λ:")
    print(comp.intervals.round(4).to_string(index=False))
    for p in paths:
        print(p)
    return paths


if __name__ == "__main__":
    main(sys.argv[1:])
