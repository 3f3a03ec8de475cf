"""
Comparing two algorithms
========================

With two sweeps, the comparison shows on which intervals of λ each
algorithm's optimal curve is highest: A wins where precision matters, B
where recall does.
"""

# %%
from _sweeps import sweeps

import daskbicl

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.comparison.intervals.round(4).to_string(index=False))

# %%
fig = result.plot(indices=["fmeasure"])
