"""Omega index and overlapping NMI on the rows of 200 + 200 overlapping biclusters.

* ``target`` — the issue's target: the row covers of 200 truth + 200 pred
  biclusters over 10^6 rows (10 columns), for two layouts of
  daskbicl's synthetic generator: ``blocks`` (each bicluster a run of
  rows, overlapping its neighbours: few distinct signatures) and ``random``
  (each row in each bicluster with probability d: nearly every row its own
  signature, the costly case for omega); omega and ONMI timed separately
  (each a fresh ``daskbicl.score`` call: the signature pass is included),
  peak RSS above the start;
* ``peers`` — clusim's ``omega_index`` and cdlib's ONMI (LFK) on random
  covers of n rows (every row in at least one cluster, which both need),
  n growing until a peer takes more than 60 s (each peer run is a child
  process killed at 60 s); daskbicl on the same covers, the values
  compared, the ratio of times.

Every line prints the 1-minute load average (``os.getloadavg``) when it was
measured: the machine is shared.

Run:  python benchmarks/field_overlap.py           (full, a few minutes)
      python benchmarks/field_overlap.py --quick   (seconds; what the test runs)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, measure, print_table, versions  # noqa: E402

PEER_LIMIT_S = 60.0


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _warm_up() -> None:
    """Load (or compile, on a first run) the numba pair kernel before anything is timed."""
    import daskbicl

    t = daskbicl.biclustering(np.eye(3, dtype=bool), np.ones((3, 1), bool))
    daskbicl.score(t, t, measures=["omega_rows"])


def _target(rows: int, k: int, layout: str, density: float) -> list[dict]:
    import daskbicl
    from daskbicl.io.synthetic_biclustering import random_biclustering

    truth = random_biclustering(rows, 10, k, density=density, layout=layout, overlap=0.5, seed=1,
                                         chunk=1 << 17)
    pred = random_biclustering(rows, 10, k, density=density, layout=layout, overlap=0.3, seed=2,
                                        chunk=1 << 17)
    out = []
    for name in ("omega_rows", "onmi_rows"):
        load = _load()
        m = measure(lambda n=name: daskbicl.score(truth, pred, measures=[n])[n])
        out.append(dict(case=f"{layout} d={density:g}", rows=rows, biclusters=f"{k}+{k}", measure=name,
                        value=f"{m.result:.6f}", seconds=f"{m.seconds:.2f}", peak_mb=f"{m.peak_mb:.0f}",
                        load=load))
    return out


def _covers(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two random (k, n) covers, every row in at least one cluster (density 5/k: ~5 clusters a row)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):
        mask = rng.random((k, n)) < min(1.0, 5.0 / k)
        mask[rng.integers(0, k, n), np.arange(n)] = True
        out.append(mask)
    return out[0], out[1]


def _peer_child(peer: str, n: int, k: int, seed: int) -> None:
    """Run one peer on one size; print its time and value as JSON (in a child process)."""
    t, p = _covers(n, k, seed)
    if peer == "clusim":
        from clusim.clustering import Clustering
        from clusim.sim import omega_index
    else:
        from cdlib.evaluation.internal.onmi import onmi
    start = time.perf_counter()  # the imports above are not timed; building the peer's inputs is
    if peer == "clusim":
        def clu(mask):
            return Clustering(elm2clu_dict={i: np.flatnonzero(mask[:, i]).tolist() for i in range(n)})

        value = float(omega_index(clu(t), clu(p)))
    else:
        value = float(onmi([set(np.flatnonzero(r).tolist()) for r in t], [set(np.flatnonzero(r).tolist()) for r in p],
                           variant="LFK"))
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}))


def _run_peer(peer: str, n: int, k: int, seed: int):
    cmd = [sys.executable, __file__, "--peer", peer, str(n), str(k), str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PEER_LIMIT_S)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        return "absent" if "ModuleNotFoundError" in proc.stderr else f"failed: {proc.stderr.strip()[-200:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _peers(sizes: list[int], k: int) -> list[dict]:
    import daskbicl

    out = []
    for peer, name in (("clusim", "omega_rows"), ("cdlib", "onmi_rows")):
        for n in sizes:
            load = _load()
            got = _run_peer(peer, n, k, seed=n)
            t, p = _covers(n, k, seed=n)
            truth = daskbicl.biclustering(t, np.ones((k, 1), bool))
            pred = daskbicl.biclustering(p, np.ones((k, 1), bool))
            ours = measure(lambda a=truth, b=pred, m=name: daskbicl.score(a, b, measures=[m])[m])
            row = dict(peer=peer, measure=name, rows=n, biclusters=f"{k}+{k}", daskbicl_s=f"{ours.seconds:.3f}",
                       load=load)
            if got is None:
                out.append({**row, "peer_s": f"> {PEER_LIMIT_S:.0f}", "ratio": "", "equal": ""})
                break
            if isinstance(got, str):
                out.append({**row, "peer_s": got, "ratio": "", "equal": ""})
                break
            out.append({**row, "peer_s": f"{got['seconds']:.3f}", "ratio": f"{got['seconds'] / ours.seconds:.1f}",
                        "equal": str(abs(got["value"] - ours.result) < 1e-9)})
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (seconds)")
    parser.add_argument("--peer", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer:
        _peer_child(args.peer[0], int(args.peer[1]), int(args.peer[2]), int(args.peer[3]))
        return 0
    print(f"machine: {machine()}\n{versions()}\nload (1 min) at start: {_load()}\n")
    if args.quick:
        rows, k, sizes, peer_k = 20_000, 20, [200, 400], 10
        cases = [("blocks", 0.05), ("random", 0.01)]
    else:
        rows, k, sizes, peer_k = 1_000_000, 200, [1000, 2000, 4000, 8000, 16000, 32000], 200
        cases = [("blocks", 0.01), ("random", 0.001), ("random", 0.002)]
    _warm_up()
    target = [r for layout, d in cases for r in _target(rows, k, layout, d)]
    print("target: the row covers of the biclusters (daskbicl.score, threads scheduler)")
    print_table(target, ["case", "rows", "biclusters", "measure", "value", "seconds", "peak_mb", "load"])
    print("\npeers: random covers, every row in a cluster; the peer in a child process killed at 60 s")
    peers = _peers(sizes, peer_k)
    print_table(peers, ["peer", "measure", "rows", "biclusters", "peer_s", "daskbicl_s", "ratio", "equal", "load"])
    bad = [r for r in peers if r["equal"] == "False"]
    if bad:
        print(f"\nVALUES DIFFER: {bad}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
