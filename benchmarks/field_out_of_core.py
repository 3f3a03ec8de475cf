"""The field's measures out of core: co-clusterings of 10^9 labels per axis on two 700 MB workers, against the read floor.

Uses benchmarks/out_of_core.py's cluster (``dask scheduler`` + ``dask worker
--nworkers 2 --nthreads 1 --memory-limit 700MB``, separate processes), its
peak-memory sampler, its read floor (``dask.array.from_zarr(...).sum()``
over every array the score reads, on the same workers) and its alternating
best-of-``--repeat`` timing.  Two store pairs are written once in ``--dir``
(by ``daskbicl generate --cluster``, compact label codes; minutes at 10^9)
and re-used on later runs:

* ``partition``: ``--labels`` rows x ``--labels`` columns, ``--clusters``
  clusters per axis, 10 % of labels redrawn in pred.  Scored: homogeneity,
  completeness, V-measure, NCA, PSI, ECS, RMI and normalised RMI on rows and
  columns, and ``ecs`` on the cells (all from the two contingency tables
  of one pass);
* ``cover``: the same sizes with ``--cover-clusters`` clusters per axis
  (their blocks are the biclusters: ``--cover-clusters``² per side).
  Scored: ``recovered``, ``redundancy``, ``ce_sparse``, ``ce_dense`` (row and
  column signature pass), ``omega_rows/cols`` and ``onmi_rows/cols`` (the
  cover pass).  ``omega`` on cells and ``csi`` are not: they refuse above
  4·10^9 cells (pairs of cells counted in int64).

Each row: score wall time (the ``daskbicl score`` command a user runs, on
the cluster), start-up cost of that command on two tiny stores, the floor,
the ratios, peak RSS per worker, spill, restarts.

Run:  python benchmarks/field_out_of_core.py --dir /big/disk/field-ooc   (10^9 labels per axis; writing the
                                                                          stores takes minutes, once)
      python benchmarks/field_out_of_core.py --dir /tmp/field-ooc --quick   (10^5 per axis, about a minute;
                                                                            the test suite runs this)
Target (issue 27): every new measure scored at 10^9 labels per axis out of core, workers below their limit;
the ratio to the read floor is reported (no target was set for it).  Remove --dir afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import out_of_core  # noqa: E402
from _common import machine, print_table  # noqa: E402
from out_of_core import Cluster, _generate, _row, _start_cost, _timed  # noqa: E402

PARTITION = [f"{m}_{axis}" for m in ("homogeneity", "completeness", "v_measure", "nca", "psi", "ecs", "rmi", "nrmi")
             for axis in ("rows", "cols")] + ["ecs"]
# ``omega`` on cells and ``csi`` are left out: they count pairs of cells in int64 and refuse above 4·10^9 cells.
COVER = ["recovered", "redundancy", "ce_sparse", "ce_dense", "omega_rows", "omega_cols", "onmi_rows", "onmi_cols"]
GROUPS = {"partition": ("clusters", PARTITION), "cover": ("cover_clusters", COVER)}


def _case(cluster, args, limit_mb, group: str) -> dict:
    attr, measures = GROUPS[group]
    k = getattr(args, attr)
    folder = os.path.join(args.dir, f"{group}-{args.labels}-{k}")
    gen = _generate(folder, args.fresh, "--rows", args.labels, "--cols", args.labels, "--row-clusters", k,
                    "--col-clusters", k, "--noise", 0.1, "--preds", 1, "--cluster", "--scheduler", cluster.address)
    stores = [os.path.join(folder, "truth.zarr"), os.path.join(folder, "pred.zarr")]
    command = ["score", *stores, "--scheduler", cluster.address, "--json"]
    for m in measures:
        command += ["--measure", m]
    phase, floor, score, out = _timed(cluster, args.repeat, stores, command)
    values = json.loads(out.stdout)
    shown = {m: values[m] for m in measures[:3]}
    return _row(f"{group}: {args.labels:.0e}^2, {k} clusters/axis, {len(measures)} measures", cluster, phase, floor,
                stores, gen, limit_mb, {"some values": json.dumps(shown)}, score, args.start)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="folder for the stores (kept and re-used; default: a temporary folder)")
    ap.add_argument("--groups", nargs="+", choices=sorted(GROUPS), default=sorted(GROUPS))
    ap.add_argument("--labels", type=float, default=1e9, help="rows and columns of each store")
    ap.add_argument("--clusters", type=int, default=1000, help="clusters per axis (partition measures)")
    ap.add_argument("--cover-clusters", type=int, default=10,
                    help="clusters per axis of the cover/recovery stores (their squares are the biclusters)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="700MB")
    ap.add_argument("--repeat", type=int, default=2, help="floor and score measured alternately, best of N")
    ap.add_argument("--fresh", action="store_true", help="rewrite the stores even when present")
    ap.add_argument("--quick", action="store_true", help="10^5 labels per axis (seconds; checks the script)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    if args.quick:
        args.labels, args.clusters, args.cover_clusters, args.repeat = 1e5, 50, 4, 1
    args.labels = int(args.labels)
    args.dir = args.dir or tempfile.mkdtemp(prefix="daskbicl-field-ooc-")
    os.makedirs(args.dir, exist_ok=True)
    from dask.utils import parse_bytes

    limit_mb = parse_bytes(args.memory_limit) / 2**20
    print(f"# {machine()}; load average {os.getloadavg()[0]:.2f} at start")
    print(f"# cluster: scheduler + {args.workers} workers x 1 thread, --memory-limit {args.memory_limit}; "
          f"stores in {args.dir}")
    import cloudpickle

    cloudpickle.register_pickle_by_value(out_of_core)  # its samplers run in the workers, which cannot import it
    rows = []
    cluster = Cluster(args.workers, args.memory_limit, args.dir)
    try:
        args.start = _start_cost(cluster, args)
        for group in args.groups:
            rows.append(_case(cluster, args, limit_mb, group))
            print(f"# {group} done; load average {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        cluster.close()
    print_table(rows, list(rows[0]))
    print(f"# load average {os.getloadavg()[0]:.2f} at the end")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
