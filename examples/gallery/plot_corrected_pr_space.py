"""
Corrected precision–recall space
================================

The same results with precision and recall corrected for size bias:
0 on an axis means "no better than a random result of the same size".
A large, imprecise result (algorithm B at small θ) that looked good on
recall moves towards 0.
"""

# %%
from _sweeps import sweeps

import daskbicl

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.results[["result", "pre_corrected", "rec_corrected"]].round(3).to_string(index=False))

# %%
fig = result.plot_corrected_pr()
