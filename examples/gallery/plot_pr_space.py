"""
Precision–recall space
======================

Each result of two parameter sweeps is a point (precision, recall) against
the planted bicluster. The isolines are the F-measure at λ = 0.5, and the
hatched corner holds results no better than predicting the whole matrix.
"""

# %%
from _sweeps import sweeps

import daskbicl

truth, sweep_a, sweep_b = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, sweep_b, names=["A", "B"], index="fmeasure")
print(result.results[["algorithm", "result", "pre", "rec"]].round(3).to_string(index=False))

# %%
fig = result.plot_pr(lam=0.5)
