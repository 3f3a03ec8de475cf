"""Every micro measure through every exact route, and sampled values with fixed seeds, as repr() in JSON.

A refactor of the micro engine must not move a value: run this on the base
and on the branch and compare the two files (``--compare``)::

    python3 benchmarks/micro_values.py --out /tmp/base.json
    python3 benchmarks/micro_values.py --out /tmp/branch.json --compare /tmp/base.json

Inputs: ``--cases`` seeded random overlapping biclusterings (small and
medium, some with copied or nested biclusters) and a few co-clusterings.
Routes, in this process (:class:`~daskbicl.kernels.micro.micro_scores.MicroTables`):
the plan's own choice, the family walk and the cell classes forced, the
coverage counts by the family walk and by signature pairs, in floats and
in rational arithmetic, dealt into 1, 3 and 16 tasks under small budgets;
and through :func:`daskbicl.score` (the engine's graph, local scheduler)
with ``method="exact"``, ``"auto"`` and ``"sample"`` (seeded by
``daskbicl.micro_seed``).  An exact value must be equal to the last digit;
a sampled one ideally too (else compare interval coverage).
"""

from __future__ import annotations

import argparse
import json
import sys

import dask
import numpy as np

import daskbicl
from daskbicl.errors import DaskbiclError
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import MicroTables, e4sc, micro_ce, rnia

MEASURES = ["mocice_bcubed", "micro_ce", "micro_rnia", "e4sc"]


def _masks(rng, k, l_, n_i, n_j, density, dupes=0, nested=False):
    tr, tc = rng.random((k, n_i)) < density, rng.random((k, n_j)) < density
    pr, pc = rng.random((l_, n_i)) < density, rng.random((l_, n_j)) < density
    for d in range(min(dupes, l_, k)):
        pr[d], pc[d] = tr[d], tc[d]
        pr[d, rng.integers(n_i)] ^= d % 2 == 1
    if nested and l_ >= 2:
        pr[1], pc[1] = pr[0] & pr[1], pc[0] & pc[1]
    return tr, tc, pr, pc


def cases(n: int):
    """``n`` seeded (name, masks) of overlapping biclusterings, small and medium."""
    rng = np.random.default_rng(20261201)
    out = []
    for i in range(n):
        medium = i % 5 == 4
        n_i, n_j = (int(rng.integers(60, 300)), int(rng.integers(40, 200))) if medium else \
            (int(rng.integers(3, 30)), int(rng.integers(3, 25)))
        k, l_ = int(rng.integers(1, 9 if medium else 6)), int(rng.integers(1, 9 if medium else 6))
        density = float(rng.uniform(0.15, 0.7))
        out.append((f"case{i}", _masks(rng, k, l_, n_i, n_j, density, dupes=int(rng.integers(0, 3)),
                                       nested=bool(rng.integers(0, 2)))))
    return out


def _value(fn):
    try:
        v = fn()
    except DaskbiclError as err:
        return f"{type(err).__name__}"
    if isinstance(v, tuple):
        return repr(tuple(v))
    return repr(v)


def table_routes(masks):
    """Values of each in-process route (MicroTables' options)."""
    tr, tc, pr, pc = masks
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    out = {}
    routes = {"plan": {}, "family": {"method": "family"}, "classes": {"method": "classes"},
              "family-t1": {"method": "family", "n_tasks": 1},
              "family-t3-b4": {"method": "family", "n_tasks": 3, "budget": 4},
              "family-t16-b2": {"method": "family", "n_tasks": 16, "budget": 2},
              "classes-t3": {"method": "classes", "n_tasks": 3},
              "cov-family": {"coverage_by": "family"}, "cov-pairs": {"coverage_by": "pairs"}}
    for name, kw in routes.items():
        for exact in (False, True):
            def t(kw=kw, exact=exact):
                return MicroTables(rows, cols, exact=exact, union_budget=1 << 22, **kw)
            key = f"{name}{'-exact' if exact else ''}"
            if "coverage_by" not in kw:
                tab = t()
                out[f"{key}/bcubed"] = _value(lambda tab=tab: tab.bcubed)
                out[f"{key}/bcubed_error"] = _value(lambda tab=tab: tab.bcubed_error)
            tab = t()
            for ms in (True, False):
                out[f"{key}/ce-{ms}"] = _value(lambda tab=tab, ms=ms, exact=exact: micro_ce(tab, multiset=ms, exact=exact))
                out[f"{key}/rnia-{ms}"] = _value(lambda tab=tab, ms=ms, exact=exact: rnia(tab, multiset=ms, exact=exact))
            out[f"{key}/e4sc"] = _value(lambda tab=tab, exact=exact: e4sc(tab, exact=exact))
    return out


def _score(t, p, method, **params):
    got = daskbicl.score(t, p, measures=MEASURES, method=method, **params)
    return {m: repr(tuple(v) if isinstance(v, tuple) else v) for m, v in got.items()}


def engine_routes(masks, sample: bool):
    """Values through daskbicl.score (the engine's graph) with each method."""
    tr, tc, pr, pc = masks
    t, p = daskbicl.biclustering(tr, tc), daskbicl.biclustering(pr, pc)
    out = {}
    for method in ("exact", "auto") + (("sample",) if sample else ()):
        for ms in (True, False):
            try:
                got = _score(t, p, method, multiset=ms)
            except DaskbiclError as err:
                out[f"score-{method}-{ms}"] = type(err).__name__
                continue
            out.update({f"score-{method}-{ms}/{m}": v for m, v in got.items()})
    if sample:  # auto under a tiny work limit: the fallback to sampling
        with dask.config.set({"daskbicl.max_work": 2e3}):
            out.update({f"score-auto-tiny/{m}": v for m, v in _score(t, p, "auto").items()})
    return out


def coclusterings(n: int):
    rng = np.random.default_rng(7)
    out = {}
    for i in range(n):
        n_i, n_j = int(rng.integers(5, 400)), int(rng.integers(5, 300))
        k, l_ = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        t = daskbicl.partition(rng.integers(0, k, n_i), rng.integers(0, l_, n_j))
        p = daskbicl.partition(rng.integers(0, l_, n_i), rng.integers(0, k, n_j))
        for method in ("exact", "auto"):
            out.update({f"cocl{i}/score-{method}/{m}": v for m, v in _score(t, p, method).items()})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", help="a previous --out file: print how many values differ")
    args = ap.parse_args(argv)
    values: dict[str, str] = {}
    with dask.config.set({"daskbicl.micro_seed": 11, "daskbicl.micro_tolerance": 2e-2}):
        for i, (name, masks) in enumerate(cases(args.cases)):
            values.update({f"{name}/{k}": v for k, v in table_routes(masks).items()})
            values.update({f"{name}/{k}": v for k, v in engine_routes(masks, sample=i % 4 == 0).items()})
        values.update(coclusterings(20))
    with open(args.out, "w") as f:
        json.dump(values, f, indent=0, sort_keys=True)
    print(f"{len(values)} values -> {args.out}")
    if args.compare:
        with open(args.compare) as f:
            base = json.load(f)
        keys = sorted(set(base) & set(values))  # runs of different --cases: the cases both hold
        print(f"{len(set(base) ^ set(values))} values in one file only")
        differ = [k for k in keys if base.get(k) != values.get(k)]
        sampled = [k for k in differ if "score-sample" in k or "score-auto" in k and "≈" in str(base.get(k))]
        print(f"compared {len(keys)} values: {len(differ)} differ ({len(sampled)} of them sampled)")
        for k in differ[:40]:
            print(f"  {k}: {base.get(k)} -> {values.get(k)}")
        return 1 if len(differ) > len(sampled) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
