"""
Tradeoff space of one sweep
===========================

Every result is a curve: the weighted index as a function of λ, the
importance of recall. The optimal tradeoff curve is their upper envelope;
its breakpoints, computed exactly, say which result is best for which
balance of precision and recall.
"""

# %%
from _sweeps import sweeps

import daskbicl

truth, sweep_a, _ = sweeps()
result = daskbicl.tradeoff(truth, sweep_a, names=["A"], index="fmeasure")
t = result.optimal["A"]
print(f"AUC of the optimal curve: {t.auc:.4f}")
print(t.intervals.round(4).to_string(index=False))

# %%
fig = result.plot(indices=["fmeasure", "jaccard"])
