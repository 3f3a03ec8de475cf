"""The co-clustering path of the micro-object measures on many blocks (moved here from a timed unit test).

Two co-clusterings of 20,000 x 20,000 cells with 30 x 30 clusters each side
(900 blocks per side): MOCICE-BCubed and the overlap table from the two
contingency tables, no mask anywhere.  The peer, measured in the same run,
is the public call on the label arrays (``daskbicl.mocice_bcubed``: the
contingency tables counted, then the same kernel), so the ratio says what
share of a user's call the kernel is.

    PYTHONPATH=$PWD python3 benchmarks/coclustering_blocks.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import machine, measure  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.kernels.coclustering.contingency import Table  # noqa: E402
from daskbicl.kernels.micro.micro_scores import coclustering_bcubed, coclustering_overlap  # noqa: E402


def labels(seed: int, n: int = 20_000, k: int = 30):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(0, k, n) for _ in range(4))


def kernel(z, zp, w, wp):
    rows, cols = Table.from_labels(z, zp), Table.from_labels(w, wp)
    return tuple(coclustering_bcubed(rows, cols)), coclustering_overlap(rows, cols)


def public(z, zp, w, wp):
    return tuple(daskbicl.mocice_bcubed(daskbicl.partition(z, w), daskbicl.partition(zp, wp)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    print(f"load (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'seed':>4}  {'kernel s':>8}  {'public s':>8}  {'public/kernel':>13}  {'kernel peak MB':>14}")
    for seed in range(args.seeds):
        data = labels(seed)
        public(*data)  # the first call compiles nothing on this path, but imports and warms caches
        fast = measure(kernel, *data, repeat=3)
        peer = measure(public, *data, repeat=3)
        assert fast.result[0] == peer.result  # the same numbers
        print(f"{seed:>4}  {fast.seconds:>8.3f}  {peer.seconds:>8.3f}  {peer.seconds / fast.seconds:>13.2f}"
              f"  {fast.peak_mb:>14.1f}")
    print(f"load after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
