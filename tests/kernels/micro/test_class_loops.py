"""The cell-class loops run as plain Python for small inputs (issue 28, first use): the same values bit for bit.

* :mod:`daskbicl.kernels.micro.class_loops` run as plain Python gives
  the compiled kernels' outputs byte for byte on many random problems (every
  inner-sum mode, classes beyond the dense trace table, merged copies), and
  MOCICE-BCubed from it equals the brute-force oracle of the SPEC text.
* The numpy packing of short strings gives the compiled packing's integers.
* A small first biclustering and string-label score in a fresh interpreter
  with an empty ``NUMBA_CACHE_DIR`` never imports numba, and its values equal
  the compiled kernels' (``compiled_only``), float for float.
* The rule: a large call, a kernel compiled in this process or ``compiled_only`` runs the compiled kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import daskbicl
from daskbicl.kernels import compiled
from daskbicl.kernels.micro import class_loops as plain
from daskbicl.kernels.micro.class_traces import (
    INNER_UNITS,
    _local_jaccard,
    covered,
    enumerate_classes,
    merge_identical,
)
from daskbicl.kernels.micro.family_tasks import jaccard_table
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import bicluster_overlap

from ...support import oracles_micro as oracle

ROOT = Path(__file__).resolve().parents[3]
CLASS_KERNELS = "daskbicl.kernels.micro.class_kernels"


def _problem(seed: int):
    """Random overlapping truth and pred masks: sizes, counts, densities and exact copies vary with the seed."""
    rng = np.random.default_rng(seed)
    n_i, n_j = int(rng.integers(1, 30)), int(rng.integers(1, 20))
    k, l_ = int(rng.integers(1, 5)), int(rng.integers(1, 5))  # classes of at most 11 elements: 2^11 subsets
    density = float(rng.uniform(0.1, 0.9))
    tr, tc = rng.random((k, n_i)) < density, rng.random((k, n_j)) < density
    pr, pc = rng.random((l_, n_i)) < density, rng.random((l_, n_j)) < density
    if seed % 3 == 0:  # pred repeats truth biclusters: merged with multiplicities
        pr, pc = np.concatenate([pr, tr[:2], tr[:1]]), np.concatenate([pc, tc[:2], tc[:1]])
    if seed % 5 == 0:  # a cell in every bicluster: one class of every element
        for m in (tr, tc, pr, pc):
            m[:, 0] = True
    return tr, tc, pr, pc


def _inputs(tr, tc, pr, pc):
    rows, cols = signature_counts(tr, pr), signature_counts(tc, pc)
    merged = merge_identical(rows, cols)
    return rows, cols, merged


def run(function, *args):
    """A plain loop as :func:`~daskbicl.kernels.micro.class_traces.run_kernel` runs it (products wrap)."""
    with np.errstate(over="ignore"):
        return function(*args)


def _same(a, b) -> bool:
    """Equal type, shape and bytes (floats bit for bit), recursively through tuples."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(30))
def test_the_plain_class_loops_equal_the_compiled_kernels_bit_for_bit(seed):
    from daskbicl.kernels.micro import class_kernels

    tr, tc, pr, pc = _problem(seed)
    rows, cols, merged = _inputs(tr, tc, pr, pc)
    args = (merged.rows, merged.row_cnt, merged.cols, merged.col_cnt, 1 << 40)
    assert _same(run(plain.classes_of_pairs, *args), class_kernels.classes_of_pairs(*args))
    table = enumerate_classes(merged)
    if table is None or len(table) == 0:
        return
    tm, pm = merged.side_masks()
    index = (*merged.row_index, merged.row_cnt, *merged.col_index, merged.col_cnt)
    idx = np.arange(len(table), dtype=np.int64)
    assert _same(run(plain.trace_pairs, table.keys, idx, *index, pm),
                 class_kernels.trace_pairs(table.keys, idx, *index, pm))
    jac = _local_jaccard(merged, jaccard_table(bicluster_overlap(rows, cols)))
    for mode in (0, 1, 2, 3):  # the cheapest, pairs of traces, the transform, subsets from bit sets
        args = (table.keys, table.counts, 0, len(table), *index, tm, pm, merged.mult, jac, mode, INNER_UNITS,
                merged.bits)
        want = class_kernels.bcubed_of_classes(*args)
        got = run(plain.bcubed_of_classes, *args)
        assert _same(got, want), (mode, got, want)
    for s in range(min(len(table), 5)):
        assert _same(run(plain.pair_weights, table.keys[s], *index),
                     class_kernels.pair_weights(table.keys[s], *index))


def test_the_plain_loops_sort_traces_of_a_class_beyond_the_dense_table_as_the_kernel_does():
    """A class of 18 distinct biclusters (> 16: traces sorted, not tabled); pairs of traces and bit sets."""
    from daskbicl.kernels.micro import class_kernels

    rng = np.random.default_rng(18)
    tr, tc, pr, pc = (rng.random((9, n)) < 0.6 for n in (6, 5, 6, 5))
    for m in (tr, tc, pr, pc):
        m[:, 0] = True
    rows, cols, merged = _inputs(tr, tc, pr, pc)
    table = enumerate_classes(merged)
    assert table is not None and table.sizes.max() > 16
    tm, pm = merged.side_masks()
    jac = _local_jaccard(merged, jaccard_table(bicluster_overlap(rows, cols)))
    for mode in (1, 3):
        args = (table.keys, table.counts, 0, len(table), *merged.row_index, merged.row_cnt, *merged.col_index,
                merged.col_cnt, tm, pm, merged.mult, jac, mode, INNER_UNITS, merged.bits)
        assert _same(run(plain.bcubed_of_classes, *args), class_kernels.bcubed_of_classes(*args))


@pytest.mark.parametrize("seed", range(12))
def test_the_plain_loops_give_mocice_bcubed_of_the_brute_force_oracle(seed):
    tr, tc, pr, pc = (m[:, :10] for m in _problem(seed))  # at most 10 x 10 cells: the oracle is quadratic
    rows, cols, merged = _inputs(tr, tc, pr, pc)
    table = enumerate_classes(merged)
    up, ut = covered(merged, table)
    if table is None or not (up and ut):
        return
    tm, pm = merged.side_masks()
    out = run(plain.bcubed_of_classes, table.keys, table.counts, 0, len(table), *merged.row_index,
                          merged.row_cnt, *merged.col_index, merged.col_cnt, tm, pm, merged.mult,
                          _local_jaccard(merged, jaccard_table(bicluster_overlap(rows, cols))), 0, INNER_UNITS,
                          merged.bits)
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    assert float(out[0]) / up == pytest.approx(float(want[0]), rel=1e-13)
    assert float(out[1]) / ut == pytest.approx(float(want[1]), rel=1e-13)


@pytest.mark.parametrize("width", [1, 4, 7, 8])
def test_short_strings_pack_as_the_compiled_kernel_packs(width):
    from daskbicl.engine.spread_labels import _pack_by_numpy
    from daskbicl.kernels.coclustering.string_codes import pack_narrow

    rng = np.random.default_rng(width)
    words = rng.integers(0, 256, (3000, width)).astype(np.uint32)
    out = np.empty(3000, np.uint64)
    assert pack_narrow(words, out)
    got = _pack_by_numpy(words)
    assert got is not None and got.dtype == np.uint64 and np.array_equal(got, out)
    words[1234, width - 1] = 256  # a character above Latin-1: refused by both
    assert not pack_narrow(words, np.empty(3000, np.uint64)) and _pack_by_numpy(words) is None


_FIRST = """
import json, sys
import numpy as np
import daskbicl
from daskbicl.kernels.compiled import compiled_only
rng = np.random.default_rng(28)
masks = [(rng.random((4, 300)) < 0.2, rng.random((4, 200)) < 0.2) for _ in range(2)]
pair = [daskbicl.biclustering(r, c) for r, c in masks]
names = [np.array([f"cell-{i}" for i in rng.integers(0, 9, 6000)]) for _ in range(2)]
strings = [(n, n[:3000].copy()) for n in names]
if sys.argv[1] == "compiled":
    with compiled_only():
        bicl, text = daskbicl.score(*pair), daskbicl.score(*strings)
else:
    bicl, text = daskbicl.score(*pair), daskbicl.score(*strings)
print(json.dumps({"bicl": {k: repr(v) for k, v in bicl.items()}, "strings": {k: repr(v) for k, v in text.items()},
                  "numba": "numba" in sys.modules}))
"""


def _first(mode: str, cache: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(cache), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", _FIRST, mode], capture_output=True, text=True, timeout=900,
                         env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.slow
def test_a_small_first_score_never_imports_numba_and_equals_the_compiled_kernels(tmp_path):
    plain = _first("default", tmp_path / "empty")
    assert plain["numba"] is False
    forced = _first("compiled", tmp_path / "filled")  # compiles the kernels (a minute under load)
    assert forced["numba"] is True
    assert plain == {**forced, "numba": False}  # every measure, float for float (repr: exact)
    assert {"micro_ce", "mocice_bcubed", "e4sc"} <= set(plain["bicl"])  # the micro-object measures were scored


def test_compiled_only_nests_and_restores():
    assert compiled._FORCED[0] == 0
    with compiled.compiled_only():
        with compiled.compiled_only():
            assert compiled._FORCED[0] == 2
        assert compiled._FORCED[0] == 1
    assert compiled._FORCED[0] == 0


def test_scores_of_small_inputs_are_the_same_with_and_without_compiled_only():
    rng = np.random.default_rng(5)
    a = daskbicl.biclustering(rng.random((3, 60)) < 0.3, rng.random((3, 40)) < 0.3)
    b = daskbicl.biclustering(rng.random((4, 60)) < 0.3, rng.random((4, 40)) < 0.3)
    with compiled.compiled_only():
        want = daskbicl.score(a, b)
    assert daskbicl.score(a, b) == want


_RULE = """
import sys, numpy as np
from daskbicl.kernels.compiled import compiled_only
from daskbicl.kernels.micro.class_traces import PLAIN_WORK, merge_identical, run_kernel
from daskbicl.kernels.micro.memberships import signature_counts
rng = np.random.default_rng(3)
tr, pr, tc, pc = (rng.random((4, n)) < 0.3 for n in (200, 200, 100, 100))
m = merge_identical(signature_counts(tr, pr), signature_counts(tc, pc))
args = (m.rows, m.row_cnt, m.cols, m.col_cnt, 1 << 40)
small = run_kernel("classes_of_pairs", PLAIN_WORK, *args)
seen = ["numba" in sys.modules]
with compiled_only():
    forced = run_kernel("classes_of_pairs", 1.0, *args)
k = sys.modules["daskbicl.kernels.micro.class_kernels"]
seen.append(bool(k.classes_of_pairs.signatures))
n = len(k.bcubed_of_classes.signatures)
large = run_kernel("classes_of_pairs", 2 * PLAIN_WORK, *args)
again = run_kernel("classes_of_pairs", 1.0, *args)  # compiled in this process: compiled
same = all(a[0].tobytes() == small[0].tobytes() and a[1].tobytes() == small[1].tobytes() and a[2] == small[2]
           for a in (forced, large, again))
print(*seen, same, n)
"""


def test_small_work_runs_the_plain_loops_and_large_work_or_compiled_only_the_compiled_kernel():
    out = subprocess.run([sys.executable, "-c", _RULE], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True", "0"]
