"""
Precision–recall space
======================

Each result of two parameter sweeps is a point (precision, recall) against
the planted bicluster. The isolines are the F-measure at λ = 0.5, and the
hatched corner holds results no better than predicting the whole matrix.
"""

# %%
import sys
from pathlib import Path

from _sweeps import sweeps

import daskbicl
import daskbicl.plot

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.results[["algorithm", "result", "pre", "rec"]].round(3).to_string(index=False))

# %%
fig = result.plot_pr(lam=0.5)

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
