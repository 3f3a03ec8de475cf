"""
Tradeoff space of one sweep
===========================

Every result is a curve: the weighted index as a function of λ, the
importance of recall. The optimal tradeoff curve is their upper envelope;
its breakpoints, computed exactly, say which result is best for which
balance of precision and recall.
"""

# %%
import sys
from pathlib import Path

from _sweeps import sweeps

import daskbicl
import daskbicl.plot

truth, sweep_a, _ = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, names=["A"], index="fmeasure")
t = result.optimal["A"]
print(f"AUC of the optimal curve: {t.auc:.4f}")
print(t.intervals.round(4).to_string(index=False))

# %%
fig = result.plot(indices=["fmeasure", "jaccard"])

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
