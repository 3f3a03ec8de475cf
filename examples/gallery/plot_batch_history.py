"""
Batch results over time
=======================

A scheduled ``daskbicl batch`` keeps every score in its results file, with
the time each value was scored. Here three predictions are scored, one of
them is replaced (an algorithm was re-run), and the batch runs again: only
the changed pair is rescored, and the history figure — what
``daskbicl results FILE --plot OUT.png`` draws — shows its CARI jump while
the others hold.
"""

# %%
import sys
import tempfile
import textwrap
from pathlib import Path

import daskbicl
import daskbicl.plot
from daskbicl.batch import plot_results, run_batch

root = Path(tempfile.mkdtemp(prefix="daskbicl-gallery-"))
truth = daskbicl.random_partition(20_000, 400, 6, 4, seed=0, chunk=5_000)
daskbicl.save(truth, root / "truth.zarr")
truth = daskbicl.open(root / "truth.zarr")
for k in range(3):
    daskbicl.save(daskbicl.perturb(truth, 0.15 * (k + 1), seed=k + 1), root / f"run-{k}.zarr")
(root / "nightly.toml").write_text(textwrap.dedent("""
    [truth]
    sim = "truth.zarr"
    [pred]
    runs = "run-*.zarr"
    [[pairs]]
    truth = "sim"
    pred = "runs"
    measures = ["cari", "nce"]
"""))
first = run_batch(root / "nightly.toml", root / "nightly.sqlite")
daskbicl.save(daskbicl.perturb(truth, 0.05, seed=42), root / "run-2.zarr", overwrite=True)  # re-run, better
second = run_batch(root / "nightly.toml", root / "nightly.sqlite")
print("first run: ", first.summary())
print("second run:", second.summary())

# %%
fig = plot_results(root / "nightly.sqlite")

# %%
# Run from the shell, the script writes its figure to the current folder
# (the documentation build shows it here instead).
if "sphinx_gallery" not in sys.modules:
    print("figure:", daskbicl.plot.save(fig, Path(__file__).stem + ".png"))
