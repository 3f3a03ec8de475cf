"""Kernels run as plain Python for small inputs (issue 28, first use): the same values bit for bit, no numba.

* :func:`daskbicl.kernels.compiled.twin` of the cell-class kernels gives
  the compiled kernels' outputs byte for byte on many random problems (every
  inner-sum mode, classes beyond the dense trace table, merged copies), and
  MOCICE-BCubed from it equals the brute-force oracle of the SPEC text.
* The numpy packing of short strings gives the compiled packing's integers.
* A small first biclustering and string-label score in a fresh interpreter
  with an empty ``NUMBA_CACHE_DIR`` never imports numba, and its values equal
  the compiled kernels' (``compiled_only``), float for float.
* The rule: a large call, a spent budget or ``compiled_only`` runs the compiled kernel.
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

from .support import oracles_micro as oracle

ROOT = Path(__file__).resolve().parents[1]
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


def _same(a, b) -> bool:
    """Equal type, shape and bytes (floats bit for bit), recursively through tuples."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("seed", range(30))
def test_the_twin_of_the_class_kernels_equals_the_compiled_kernels_bit_for_bit(seed):
    from daskbicl.kernels.micro import class_kernels

    plain = compiled.twin(CLASS_KERNELS)
    tr, tc, pr, pc = _problem(seed)
    rows, cols, merged = _inputs(tr, tc, pr, pc)
    args = (merged.rows, merged.row_cnt, merged.cols, merged.col_cnt, 1 << 40)
    assert _same(compiled.run(plain.classes_of_pairs, *args), class_kernels.classes_of_pairs(*args))
    table = enumerate_classes(merged)
    if table is None or len(table) == 0:
        return
    tm, pm = merged.side_masks()
    index = (*merged.row_index, merged.row_cnt, *merged.col_index, merged.col_cnt)
    idx = np.arange(len(table), dtype=np.int64)
    assert _same(compiled.run(plain.trace_pairs, table.keys, idx, *index, pm),
                 class_kernels.trace_pairs(table.keys, idx, *index, pm))
    jac = _local_jaccard(merged, jaccard_table(bicluster_overlap(rows, cols)))
    for mode in (0, 1, 2, 3):  # the cheapest, pairs of traces, the transform, subsets from bit sets
        args = (table.keys, table.counts, 0, len(table), *index, tm, pm, merged.mult, jac, mode, INNER_UNITS,
                merged.bits)
        want = class_kernels.bcubed_of_classes(*args)
        got = compiled.run(plain.bcubed_of_classes, *args)
        assert _same(got, want), (mode, got, want)
    for s in range(min(len(table), 5)):
        assert _same(compiled.run(plain.pair_weights, table.keys[s], *index),
                     class_kernels.pair_weights(table.keys[s], *index))


def test_the_twin_sorts_traces_of_a_class_beyond_the_dense_table_as_the_kernel_does():
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
    plain = compiled.twin(CLASS_KERNELS)
    for mode in (1, 3):
        args = (table.keys, table.counts, 0, len(table), *merged.row_index, merged.row_cnt, *merged.col_index,
                merged.col_cnt, tm, pm, merged.mult, jac, mode, INNER_UNITS, merged.bits)
        assert _same(compiled.run(plain.bcubed_of_classes, *args), class_kernels.bcubed_of_classes(*args))


@pytest.mark.parametrize("seed", range(12))
def test_the_twin_gives_mocice_bcubed_of_the_brute_force_oracle(seed):
    tr, tc, pr, pc = (m[:, :10] for m in _problem(seed))  # at most 10 x 10 cells: the oracle is quadratic
    rows, cols, merged = _inputs(tr, tc, pr, pc)
    table = enumerate_classes(merged)
    up, ut = covered(merged, table)
    if table is None or not (up and ut):
        return
    plain = compiled.twin(CLASS_KERNELS)
    tm, pm = merged.side_masks()
    out = compiled.run(plain.bcubed_of_classes, table.keys, table.counts, 0, len(table), *merged.row_index,
                          merged.row_cnt, *merged.col_index, merged.col_cnt, tm, pm, merged.mult,
                          _local_jaccard(merged, jaccard_table(bicluster_overlap(rows, cols))), 0, INNER_UNITS,
                          merged.bits)
    want = oracle.mocice_bcubed(tr, tc, pr, pc)
    assert float(out[0]) / up == pytest.approx(float(want[0]), rel=1e-13)
    assert float(out[1]) / ut == pytest.approx(float(want[1]), rel=1e-13)


def test_the_twin_never_imports_numba_and_is_made_once():
    code = ("import sys\nfrom daskbicl.kernels import compiled\n"
            f"a = compiled.twin({CLASS_KERNELS!r})\nb = compiled.twin({CLASS_KERNELS!r})\n"
            "print(a is b, 'numba' in sys.modules, callable(a.bcubed_of_classes), hasattr(a, 'njit'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False", "True", "False"]


def test_a_module_using_other_numba_names_has_no_twin(tmp_path, monkeypatch):
    (tmp_path / "uses_prange_28.py").write_text("from numba import njit, prange\n\n@njit\ndef f(n):\n"
                                                "    return sum(prange(n))\n")
    (tmp_path / "imports_numba_28.py").write_text("import numba\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match="numba's prange, which has no plain stand-in"):
        compiled.twin("uses_prange_28")
    with pytest.raises(ImportError, match="imports numba itself"):
        compiled.twin("imports_numba_28")


def test_trailing_zeros_stand_in():
    for x in [1, 2, 3, 8, 12, 1 << 40, (1 << 62) + (1 << 61), np.int64(96), np.uint64(1 << 63)]:
        want = next(b for b in range(64) if int(x) >> b & 1)
        assert compiled.STAND_INS["trailing_zeros"](x) == want


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


def test_large_calls_spent_budgets_and_compiled_only_run_the_compiled_kernel():
    tr, tc, pr, pc = _problem(1)
    _, _, merged = _inputs(tr, tc, pr, pc)
    args = (merged.rows, merged.row_cnt, merged.cols, merged.col_cnt, 1 << 40)
    want = compiled.run(compiled.twin(CLASS_KERNELS).classes_of_pairs, *args)
    key = (CLASS_KERNELS, "classes_of_pairs")
    spent = compiled._SPENT.get(key, 0.0)
    try:
        compiled._SPENT[key] = 0.0
        assert _same(compiled.call(CLASS_KERNELS, "classes_of_pairs", 1e-7, *args), want)
        if CLASS_KERNELS not in sys.modules:  # (another test may have loaded it)
            assert compiled._SPENT[key] > 0.0  # a small call ran the twin and was charged
        assert _same(compiled.call(CLASS_KERNELS, "classes_of_pairs", 3600.0, *args), want)  # large: compiled
        assert CLASS_KERNELS in sys.modules and sys.modules[CLASS_KERNELS].classes_of_pairs.signatures
        compiled._SPENT[key] = 0.0
        assert compiled._compiled_ready(CLASS_KERNELS, "classes_of_pairs")
        assert _same(compiled.call(CLASS_KERNELS, "classes_of_pairs", 1e-7, *args), want)
        assert compiled._SPENT[key] == 0.0  # compiled in this process: never the twin again
    finally:
        compiled._SPENT[key] = spent


def test_the_budget_is_the_price_of_loading_or_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not compiled._in_cache(CLASS_KERNELS)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "class_kernels.bcubed_of_classes-1.py311.nbi").write_bytes(b"")
    assert compiled._in_cache(CLASS_KERNELS)
    assert compiled.LOAD_SECONDS < compiled.COMPILE_SECONDS


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


_THREADS = """
import threading, numpy as np
from daskbicl.kernels import compiled
from daskbicl.kernels.micro.class_traces import merge_identical
from daskbicl.kernels.micro.memberships import signature_counts
rng = np.random.default_rng(3)
tr, pr, tc, pc = (rng.random((4, n)) < 0.3 for n in (200, 200, 100, 100))
m = merge_identical(signature_counts(tr, pr), signature_counts(tc, pc))
args = (m.rows, m.row_cnt, m.cols, m.col_cnt, 1 << 40)
start, out = threading.Barrier(8), [None] * 8
def work(i):
    start.wait()
    for seconds in ((3600.0, 1e-9)[i % 2],) * 5:  # half buy (import the compiled module), half rent
        got = compiled.call("daskbicl.kernels.micro.class_kernels", "classes_of_pairs", seconds, *args)
        out[i] = (got[0].tobytes(), got[1].tobytes(), got[2])
threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert None not in out and len(set(out)) == 1, "threads disagree or failed"
print("ok")
"""


def test_threads_renting_while_another_imports_the_compiled_module():
    """A score's tasks run on threads: one importing the compiled module (listed, not yet defined) must not
    break the others' choice (seen once as an AttributeError on a partially imported module)."""
    out = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert out.returncode == 0 and out.stdout.split() == ["ok"], out.stderr
