"""Quick start: score a co-clustering against a reference from Python.

Run:  python examples/quickstart.py
"""

import tempfile

import numpy as np
from distributed import Client, LocalCluster

import daskbicl


def main():
    rng = np.random.default_rng(0)

    # A reference co-clustering of 100,000 genes x 2,000 samples ...
    z = rng.integers(0, 8, 100_000)
    w = rng.integers(0, 4, 2_000)
    genes = [f"gene{i}" for i in range(z.size)]
    samples = [f"sample{j}" for j in range(w.size)]
    truth = daskbicl.partition(z, w, row=genes, col=samples)

    # ... and a result that got 10% of the rows wrong, with its own label ids,
    # listing the genes in another order (rows are matched by gene id).
    z2 = np.where(rng.random(z.size) < 0.1, rng.integers(0, 8, z.size), z) * 1000 + 17
    order = rng.permutation(z.size)
    pred = daskbicl.partition(z2[order], w, row=[genes[i] for i in order], col=samples)

    print("all co-clustering measures:")
    for name, value in daskbicl.score(truth, pred).items():
        print(f"  {name:<9} {value:.6f}")

    print("one measure:", daskbicl.cari(truth, pred))
    print("accessor:   ", truth.bicl.nce(pred))

    # Stores on disk are opened lazily and scored chunk by chunk.
    with tempfile.TemporaryDirectory() as folder:
        daskbicl.save(truth, f"{folder}/truth.zarr")
        daskbicl.save(pred, f"{folder}/pred.zarr")
        print("from Zarr:  ", daskbicl.score(f"{folder}/truth.zarr", f"{folder}/pred.zarr", measures=["cari", "nce"]))

    # On a cluster: any active dask.distributed Client is used automatically.
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster):
        print("on a cluster:", daskbicl.score(truth, pred, measures=["cari"]))


if __name__ == "__main__":  # worker processes re-import this file
    main()
