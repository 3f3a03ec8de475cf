"""
Two sweeps of 35 results, four indices
======================================

The figures at the size of a real parameter sweep: two algorithms with 35
results each, compared under four weighted indices. One row per index: the
comparison of the two algorithms' optimal curves, then each algorithm's own
curves. Of the 35 curves of an algorithm, only those that are best for some
λ get a colour, a legend entry and a label on the optimal curve; the others
are grey. The precision-recall figure names the same winners and fades the
other results.
"""

# %%
import sys
from pathlib import Path

from _sweeps import sweeps

import daskbicl
import daskbicl.plot

truth, sweep_a, sweep_b = sweeps(n_a=35, n_b=35)
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"])
for index in ("fmeasure", "jaccard", "kulczynski", "folke"):
    winners = {alg: list(t.intervals["winner"]) for alg, t in result.for_index(index).optimal.items()}
    print(f"{index:<11}", winners)

# %%
fig = result.plot(indices=["fmeasure", "jaccard", "kulczynski", "folke"])

# %%
pr = result.plot_pr()

# %%
# Run from the shell, the script writes its figures to the current folder
# (the documentation build shows them here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
    print("figure:", daskbicl.plot.save(pr, Path(__file__).stem + "-pr.png"))
