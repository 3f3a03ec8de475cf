"""
Corrected precision–recall space
================================

The same results with precision and recall corrected for size bias:
0 on an axis means "no better than a random result of the same size".
A large, imprecise result (algorithm B at small θ) that looked good on
recall moves towards 0.
"""

# %%
import sys
from pathlib import Path

from _sweeps import sweeps

import daskbicl
import daskbicl.plot

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.results[["result", "pre_corrected", "rec_corrected"]].round(3).to_string(index=False))

# %%
fig = result.plot_corrected_pr()

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
