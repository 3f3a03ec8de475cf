"""Labels as users have them: what factorising strings, categoricals, floats and unassigned entries costs.

All 8 co-clustering measures (``daskbicl.score``, local threaded
scheduler) on N labels per axis (rows *and* columns), the same clustering
given as:

* ``int64`` -- the integer pass every other form is compared with (ratio 1);
* ``Categorical`` -- pandas categoricals (their codes are the labels);
* ``str (object)`` -- Python strings, as a list, a pandas column or
  ``names[codes]`` give them (few distinct objects repeated);
* ``str (object, distinct objects)`` -- every entry its own Python string
  object (as ``str(x)`` per entry or a CSV parser give them);
* ``str (numpy U)`` -- fixed-width unicode, ``np.array(list_of_str)`` or a
  plain ``to_zarr`` of such an array;
* ``str (StringDType)`` -- numpy's variable-length strings, what a Zarr
  string array reads as;
* ``float64`` -- integral floats;
* ``int64 with -1`` and ``str with None`` -- 1 % unassigned entries,
  ``unassigned="cluster"``.

Peers in the same run: scikit-learn's ``adjusted_rand_score`` on the row
labels alone, as integers and as the same strings (it factorises with
``np.unique``, a sort), and a naive route: ``pandas.factorize`` each whole
array first, then score the integers.

Run:  python benchmarks/labels.py               (N = 1e7, the issue's size)
      python benchmarks/labels.py --size 2e6
      python benchmarks/labels.py --quick       (seconds; the test suite runs this)
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _common import machine, measure, print_table, versions  # noqa: E402

import daskbicl  # noqa: E402

ROW_CLUSTERS, COL_CLUSTERS = 100, 50


def _names(k: int) -> np.ndarray:
    return np.array([f"cluster_{i:03d}" for i in range(k)], dtype=object)


def forms(codes: np.ndarray, k: int, rng) -> dict:
    """The same labels in every form the benchmark times."""
    names = _names(k)
    noisy = rng.random(codes.size) < 0.01
    strings = names[codes]
    return {
        "int64": codes,
        "Categorical": pd.Categorical.from_codes(codes, categories=list(names)),
        "str (object)": strings,
        "str (object, distinct objects)": np.array([s[:-1] + s[-1] for s in strings.tolist()], dtype=object)
        if codes.size <= 2 * 10**7 else None,
        "str (numpy U)": strings.astype(str),
        "str (StringDType)": strings.astype(str).astype(np.dtypes.StringDType()),
        "float64": codes.astype(np.float64),
        "int64 with -1": np.where(noisy, -1, codes),
        "str with None": np.where(noisy, None, strings),
    }


def naive(truth, pred):
    """Factorise each whole array with pandas, then score the integer codes."""
    codes = [pd.factorize(np.asarray(x, dtype=object))[0] for x in (*truth, *pred)]
    return daskbicl.score((codes[0], codes[1]), (codes[2], codes[3]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=float, default=1e7, help="labels per axis (default 1e7)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n = 20_000 if args.quick else int(args.size)
    repeat = 1 if args.quick else args.repeat
    print(f"# {machine()}\n# {versions()}")
    print(f"# {n:,} labels per axis, {ROW_CLUSTERS} row and {COL_CLUSTERS} column clusters, all 8 co-clustering "
          f"measures; best of {repeat}; peak = RSS increase")
    rng = np.random.default_rng(0)
    codes = {
        "t_rows": rng.integers(0, ROW_CLUSTERS, n), "p_rows": rng.integers(0, ROW_CLUSTERS, n),
        "t_cols": rng.integers(0, COL_CLUSTERS, n), "p_cols": rng.integers(0, COL_CLUSTERS, n),
    }
    built = {key: forms(c, ROW_CLUSTERS if "rows" in key else COL_CLUSTERS, rng) for key, c in codes.items()}
    daskbicl.score((codes["t_rows"][:1000], codes["t_cols"][:1000]), (codes["p_rows"][:1000], codes["p_cols"][:1000]))
    rows = []
    base = None
    want = None
    for form in built["t_rows"]:
        if built["t_rows"][form] is None:
            continue
        truth = (built["t_rows"][form], built["t_cols"][form])
        pred = (built["p_rows"][form], built["p_cols"][form])
        policy = "cluster" if "-1" in form or "None" in form else "error"
        m = measure(daskbicl.score, truth, pred, unassigned=policy, repeat=repeat)
        if form == "int64":
            base, want = m.seconds, m.result
        elif policy == "error":
            assert m.result == want, form  # every form scores exactly like the integers
        rows.append({"labels": form, "daskbicl s": f"{m.seconds:.3f}", "vs int64": f"{m.seconds / base:.2f}",
                     "peak MB": f"{m.peak_mb:.0f}"})
    nv = measure(naive, (built["t_rows"]["str (object)"], built["t_cols"]["str (object)"]),
                 (built["p_rows"]["str (object)"], built["p_cols"]["str (object)"]), repeat=repeat)
    rows.append({"labels": "naive: pd.factorize whole arrays, then score (str object)",
                 "daskbicl s": f"{nv.seconds:.3f}", "vs int64": f"{nv.seconds / base:.2f}", "peak MB": f"{nv.peak_mb:.0f}"})
    print_table(rows, ["labels", "daskbicl s", "vs int64", "peak MB"])

    from sklearn.metrics import adjusted_rand_score

    limit = min(n, 10**7)
    print(f"\n# scikit-learn adjusted_rand_score, row labels only ({limit:,} labels)")
    peers = []
    for form in ("int64", "str (object)", "str (numpy U)"):
        a, b = built["t_rows"][form][:limit], built["p_rows"][form][:limit]
        sk = measure(adjusted_rand_score, a, b, repeat=repeat)
        ours = measure(daskbicl.ari_rows, (a, built["t_cols"][form][:10]), (b, built["p_cols"][form][:10]),
                       repeat=repeat)
        peers.append({"labels": form, "sklearn s": f"{sk.seconds:.3f}", "daskbicl ari_rows s": f"{ours.seconds:.3f}",
                      "sklearn / daskbicl": f"{sk.seconds / ours.seconds:.1f}"})
    print_table(peers, ["labels", "sklearn s", "daskbicl ari_rows s", "sklearn / daskbicl"])


if __name__ == "__main__":
    main()
