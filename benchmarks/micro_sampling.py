"""The micro measures under ``method="auto"`` on issue 24's table: which method ran, time, memory, interval.

Each row of the issue's table (shapes biclustering algorithms return:
redundant outputs, noisy copies, independent preds) is scored with
``daskbicl.score(truth, pred, measures=[...])`` at the default method
("auto": exact when the planner's estimate fits ``daskbicl.max_work``,
else sampled to ``daskbicl.micro_tolerance``).  Printed per row: the method
used, wall seconds, peak RSS increase (MB), and F1 (``≈ v ± h`` when
sampled; for MOCICE-BCubed its F1, for CE and RNIA each value).  With
``--check``, on rows that were sampled, the exact value is computed too
(where the planner allows it) and the row says whether every interval
holds it.

"copy" = truth with 3 % of memberships flipped (noise 0.03), plus 2 extra
random biclusters; "redundant" = every truth bicluster returned 5 times,
each copy perturbed the same way; "indep" = pred drawn like truth.  Inputs
come from ``--seed`` (several seeds: the numbers hold for other draws).

Run:  python benchmarks/micro_sampling.py                 (the table, a few minutes)
      python benchmarks/micro_sampling.py --quick         (small rows, seconds)
      python benchmarks/micro_sampling.py --seed 0 1 2    (other input draws)
      python benchmarks/micro_sampling.py --rows 4 5 6 --method sample   (what sampling costs there)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402
from daskbicl.kernels.micro.estimates import Estimate  # noqa: E402


def _masks(k, n, density, rng):
    return rng.random((k, n)) < density


def _noisy(m, density, rng, noise=0.03):
    """Each membership flipped with probability ``noise`` (kept density: additions scaled by the density)."""
    return np.where(m, rng.random(m.shape) >= noise, rng.random(m.shape) < noise * density)


def pair(n_rows, n_cols, k, density, pred, seed):
    """((truth row, col masks), (pred row, col masks)) for one row of the table."""
    rng = np.random.default_rng(seed)
    tr, tc = _masks(k, n_rows, density, rng), _masks(k, n_cols, density, rng)
    if pred == "indep":
        return (tr, tc), (_masks(k, n_rows, density, rng), _masks(k, n_cols, density, rng))
    if pred == "copy":
        pr = np.concatenate([_noisy(tr, density, rng), _masks(2, n_rows, density, rng)])
        pc = np.concatenate([_noisy(tc, density, rng), _masks(2, n_cols, density, rng)])
        return (tr, tc), (pr, pc)
    reps = int(pred.split("x")[1])  # "redundant x5"
    pr = np.concatenate([_noisy(np.repeat(tr, reps, axis=0), density, rng)])
    pc = np.concatenate([_noisy(np.repeat(tc, reps, axis=0), density, rng)])
    return (tr, tc), (pr, pc)


#: (I, J, K, pred, density, measures) -- the issue's table.
TABLE = [
    (1000, 1000, 10, "redundant x5", 0.2, ["mocice_bcubed"]),
    (1000, 1000, 50, "copy", 0.2, ["mocice_bcubed"]),
    (1000, 1000, 100, "indep", 0.2, ["mocice_bcubed"]),
    (5000, 500, 20, "redundant x5", 0.05, ["mocice_bcubed"]),
    (10**4, 10**4, 20, "copy", 0.2, ["mocice_bcubed"]),
    (3 * 10**4, 3 * 10**4, 100, "copy", 0.05, ["mocice_bcubed"]),
    (10**5, 10**5, 20, "indep", 0.2, ["mocice_bcubed"]),
    (10**5, 10**5, 100, "indep", 0.2, ["micro_ce", "micro_rnia"]),
]

QUICK = [
    (300, 300, 6, "redundant x5", 0.2, ["mocice_bcubed"]),
    (500, 400, 20, "indep", 0.2, ["mocice_bcubed"]),
    (2000, 2000, 40, "indep", 0.2, ["micro_ce", "micro_rnia"]),
]


def _text(v) -> str:
    if isinstance(v, Estimate):
        return str(v)
    return f"{float(v):.6f}"


def _load() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def row(case, seed: int, check: bool, method: str = "auto") -> dict:
    n_rows, n_cols, k, pred, density, measures = case
    truth, pred_masks = pair(n_rows, n_cols, k, density, pred, seed)
    t, p = daskbicl.biclustering(*truth), daskbicl.biclustering(*pred_masks)
    out = {"I x J": f"{n_rows:.0e}x{n_cols:.0e}", "K+L": f"{k}+{len(pred_masks[0])}", "pred": pred,
           "d": density, "seed": seed, "measure": ",".join(measures), "load": _load()}
    try:
        m = measure(lambda: daskbicl.score(t, p, measures=measures, method=method))
    except daskbicl.TooLargeError as err:
        out.update({"method": "TooLargeError", "value": str(err)[:60]})
        return out
    fields = {n: (v.f1 if n == "mocice_bcubed" else v) for n, v in m.result.items()}
    sampled = [v for v in fields.values() if isinstance(v, Estimate)]
    out.update({"method": "sample" if sampled else "exact", "seconds": f"{m.seconds:.2f}",
                "peak_MB": f"{m.peak_mb:.0f}",
                "value": " ".join(_text(v) if len(fields) == 1 else f"{n}={_text(v)}" for n, v in fields.items())})
    if sampled:
        out["samples"] = min(v.samples for v in sampled)
    if check and sampled:
        started = time.perf_counter()
        try:
            exact = daskbicl.score(t, p, measures=measures, method="exact")
            out["exact_s"] = f"{time.perf_counter() - started:.1f}"
            out["covers"] = all(abs(float(e) - float(x)) <= e.half_width
                                for n in measures for e, x in zip(_fields(m.result[n]), _fields(exact[n])))
        except daskbicl.TooLargeError:
            out["exact_s"] = "refused"
    return out


def _fields(v) -> tuple:
    return tuple(v) if isinstance(v, tuple) else (v,)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--check", action="store_true", help="also the exact value where the planner allows it")
    ap.add_argument("--seed", type=int, nargs="+", default=[0])
    ap.add_argument("--rows", type=int, nargs="+", help="indices of TABLE rows to run (default: all)")
    ap.add_argument("--method", default="auto", choices=("auto", "exact", "sample"),
                    help="the micro measures' method (default auto)")
    args = ap.parse_args(argv)
    print(f"# {machine()}\n# {versions()}")
    daskbicl.mocice_bcubed(*(daskbicl.biclustering(*x) for x in pair(50, 40, 3, 0.3, "indep", 0)),
                           method="sample")  # compile the kernels outside the timings
    cases = QUICK if args.quick else [TABLE[i] for i in (args.rows or range(len(TABLE)))]
    rows = []
    for c in cases:
        for s in args.seed:
            rows.append(row(c, s, args.check, args.method))
            print(rows[-1], flush=True)  # as it comes: long rows under load
    print_table(rows, ["I x J", "K+L", "pred", "d", "seed", "measure", "method", "seconds", "peak_MB", "value",
                       "samples", "exact_s", "covers", "load"])


if __name__ == "__main__":
    main()
