"""
How the measures fall with noise
================================

A synthetic overlapping biclustering (20 biclusters over 3,000 × 600 cells,
each taking each row and column with probability 0.1) is scored against
noisy copies of itself: each membership is kept with probability
1 − noise, and as many random memberships are added on average
(noise × 0.1 of the others), so the biclusters keep their sizes.

Similarities (1 = perfect) and the error RNIA (0 = perfect) go on two
axes of their own. Curves that coincide get different markers and line
styles so that each stays visible: raw F-measure, corrected F-measure and
E4SC nearly coincide here. The correction changes little because each
bicluster covers only 1 % of the matrix (a random bicluster of that size
scores close to 0), and E4SC equals the F-measure because the noise hits
truth and pred alike, so both directions of matching score the same.
MOCICE-BCubed falls much faster: it looks at pairs of cells, and noise
breaks pairs quadratically.
"""

# %%
import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import daskbicl
import daskbicl.plot

rng = np.random.default_rng(0)
row_mask = rng.random((20, 3000)) < 0.1
col_mask = rng.random((20, 600)) < 0.1
truth = daskbicl.biclustering(row_mask, col_mask)


def noisy(mask, noise, rng):
    """Keep each membership with probability 1 - noise; add others with probability noise * 0.1."""
    keep = mask & (rng.random(mask.shape) >= noise)
    return keep | (~mask & (rng.random(mask.shape) < noise * 0.1))


noise = np.linspace(0.0, 0.6, 7)
names = ["fmeasure", "fmeasure_corrected", "e4sc", "mocice_bcubed", "micro_rnia"]
rows = []
for p in noise:
    noisy_rng = np.random.default_rng(1)
    pred = daskbicl.biclustering(noisy(row_mask, p, noisy_rng), noisy(col_mask, p, noisy_rng))
    s = daskbicl.score(truth, pred, measures=names)
    rows.append([s["fmeasure"], s["fmeasure_corrected"], s["e4sc"], s["mocice_bcubed"].f1, s["micro_rnia"]])
rows = np.array(rows)
print(np.round(rows, 3))

# %%
fig = Figure(figsize=(6.4, 6.0), layout="constrained")
top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
styles = [("F-measure", "o", "-"), ("F-measure, corrected", "x", "--"), ("E4SC", "s", "-."),
          ("MOCICE-BCubed F1", "^", ":")]
for k, (label, marker, ls) in enumerate(styles):
    top.plot(noise, rows[:, k], marker=marker, ls=ls, mfc="none" if marker != "x" else None, ms=7, label=label)
top.set_ylabel("similarity (1 = perfect)")
top.set_ylim(-0.05, 1.05)
top.grid(alpha=0.3)
top.legend(loc="lower left", fontsize=8)
bottom.plot(noise, rows[:, 4], marker="D", color="0.2", label="RNIA")
bottom.set_ylabel("error (0 = perfect)")
bottom.set_ylim(-0.05, 1.05)
bottom.set_xlabel("noise (share of memberships lost, and as many added)")
bottom.grid(alpha=0.3)
bottom.legend(loc="upper left", fontsize=8)

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
