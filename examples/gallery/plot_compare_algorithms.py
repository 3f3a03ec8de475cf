"""
Comparing two algorithms
========================

With two sweeps, the comparison shows on which intervals of λ each
algorithm's optimal curve is highest: A wins where precision matters, B
where recall does.
"""

# %%
import sys
from pathlib import Path

from _sweeps import sweeps

import daskbicl
import daskbicl.plot

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.comparison.intervals.round(4).to_string(index=False))

# %%
fig = result.plot(indices=["fmeasure"])

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
