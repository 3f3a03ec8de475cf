"""Kernels ready when the user is (issue 28): the compile announcement, ``daskbicl warm``, the worker plugin.

* A first numba compile of a daskbicl kernel is announced once per process
  and group (a ``CompileWarning`` naming what compiles and how long it
  takes); a load from numba's cache is not announced.
* Whether a group is cached is asked of numba itself, so an empty
  ``NUMBA_CACHE_DIR`` is seen as uncached even when the package folder
  holds a cache (the CLI's notice used to be skipped then).
* :func:`daskbicl.warmup.warm` reaches every kernel signature a score
  uses: after it, scoring other biclusterings and string labels adds none
  (it runs the compiled kernels even on its small inputs, which a score would
  run as plain Python: daskbicl.kernels.compiled).
* ``daskbicl warm`` and the ``WarmKernels`` worker plugin (real LocalCluster).

Processes that must start with an empty cache run in a fresh interpreter with
their own ``NUMBA_CACHE_DIR``; the others use the cache ``warm`` fills.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import daskbicl
from daskbicl.kernels import compiled
from daskbicl.warmup import WarmKernels, warm

ROOT = Path(__file__).resolve().parents[1]
STRINGS = "the string-label hash table"
MICRO = "the micro-object kernels"
#: Kernels called from Python by a score (the others are called by these).
ENTRIES = [("daskbicl.kernels.micro.family_walk", "enumerate_family"), ("daskbicl.kernels.micro.family_leaf", "leaf_bcubed"),
           ("daskbicl.kernels.coclustering.string_codes", "_code_rows"),
           ("daskbicl.kernels.coclustering.string_codes", "_code_pairs"),
           ("daskbicl.kernels.coclustering.string_codes", "_rehash"),
           ("daskbicl.kernels.coclustering.byte_counting", "count_byte_pairs"),
           ("daskbicl.kernels.bicluster.mask_pairs", "_element_lists"),
           ("daskbicl.kernels.bicluster.mask_pairs", "_add_pairs"),
           ("daskbicl.kernels.bicluster.mask_positions", "_by_element"),
           ("daskbicl.kernels.bicluster.mask_positions", "_add_pairs"),
           ("daskbicl.kernels.bicluster.mask_positions", "_positions"),
           ("daskbicl.kernels.coclustering.string_codes", "pack_narrow"),
           ("daskbicl.kernels.coclustering.string_codes", "narrow_slot_ranks"),
           ("daskbicl.kernels.coclustering.slot_lookup", "slot_ranks")]


def _python(code: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def warmed():
    """Every kernel compiled or loaded in this process (the package's own cache, as the suite uses)."""
    return warm()


_FIRST_USE = """
import json, warnings
import numpy as np
from daskbicl.engine.labels import _factorize_fixed_width
from daskbicl.kernels.compiled import CompileWarning
values = np.array([f"c{i % 11}" for i in range(70000)])  # a chunk large enough for the compiled packing
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    codes, uniques = _factorize_fixed_width(values)
    _factorize_fixed_width(np.char.add(values, "x"))  # another width: compiled again, not announced again
print(json.dumps({"codes": codes.tolist(), "uniques": uniques.tolist(),
                  "warnings": [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]}))
"""


@pytest.mark.slow
def test_a_first_compile_is_announced_once_and_a_cached_load_not_at_all(tmp_path):
    first = _python(_FIRST_USE, tmp_path)
    assert first.returncode == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["warnings"] == [compiled.message(STRINGS)]
    assert "string-label hash table" in out["warnings"][0] and "about 2 s" in out["warnings"][0]
    labels = [f"c{i % 11}" for i in range(70000)]
    assert [out["uniques"][c] for c in out["codes"]] == labels  # the codes are exact
    again = _python(_FIRST_USE, tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["warnings"] == []  # loaded from the cache the first run wrote


def test_an_empty_numba_cache_dir_is_not_ready_even_with_the_package_cache_warm(tmp_path, warmed):
    assert compiled.ready(MICRO) and compiled.ready(STRINGS)
    code = "from daskbicl.kernels import compiled; print(compiled.ready(%r), compiled.ready(%r), compiled.cached())"
    out = _python(code % (MICRO, STRINGS), tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "False"]


def test_the_cli_says_a_compile_once_as_it_happens_and_nothing_when_none_does(tmp_path):
    """No up-front notice: a small micro score compiles nothing (the plain-Python twins), a real compile is said once."""
    import numpy as np

    truth, pred = tmp_path / "t.zarr", tmp_path / "p.zarr"
    rng = np.random.default_rng(0)
    daskbicl.save(daskbicl.biclustering(rng.random((3, 40)) < 0.3, rng.random((3, 30)) < 0.3), truth)
    daskbicl.save(daskbicl.biclustering(rng.random((2, 40)) < 0.3, rng.random((2, 30)) < 0.3), pred)
    score = "import sys\nfrom daskbicl.cli import main\nsys.exit(main(sys.argv[1:]))\n"

    def cli(cache, *args):
        env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(cache))
        return subprocess.run([sys.executable, "-c", score, *map(str, args)], capture_output=True, text=True,
                              timeout=600, env=env, cwd=ROOT)

    small = cli(tmp_path / "empty", "score", truth, pred, "--measure", "micro_ce", "--measure", "mocice_bcubed")
    assert small.returncode == 0, small.stderr
    assert "compiling" not in small.stderr
    n = 70_000  # one chunk of one-byte codes large enough for the compiled counter
    daskbicl.save((rng.integers(0, 7, n), rng.integers(0, 3, 40)), tmp_path / "a.zarr")
    daskbicl.save((rng.integers(0, 5, n), rng.integers(0, 3, 40)), tmp_path / "b.zarr")
    large = cli(tmp_path / "empty2", "score", tmp_path / "a.zarr", tmp_path / "b.zarr", "--measure", "ari_rows")
    assert large.returncode == 0, large.stderr
    said = [line for line in large.stderr.splitlines() if "compiling" in line]
    assert said == [compiled.message("the one-byte code counter")], large.stderr


def _signatures() -> dict[tuple[str, str], int]:
    return {(m, d.py_func.__name__): len(d.signatures)
            for modules, _ in compiled.KERNEL_MODULES.values() for m in modules for d in compiled._dispatchers(m)}


def test_warm_reaches_every_kernel_signature_a_score_uses(warmed):
    import numpy as np

    assert set(warmed) == set(compiled.KERNEL_MODULES)
    before = _signatures()
    for entry in ENTRIES:  # (a load from the cache gives its callees no signature of their own)
        assert before[entry] > 0, entry
    rng = np.random.default_rng(28)
    for n, k, density in [(300, 5, 0.3), (1200, 12, 0.1), (80, 2, 0.9)]:
        a = daskbicl.biclustering(rng.random((k, n)) < density, rng.random((k, n // 2)) < density)
        b = daskbicl.biclustering(rng.random((k + 1, n)) < density, rng.random((k + 1, n // 2)) < density)
        daskbicl.score(a, b)
    for width in (1, 5, 8, 9, 30):
        rows = np.array([f"{i:0{width}d}" for i in rng.integers(0, 40, 6000)])
        cols = np.array([f"{i:0{width}d}" for i in rng.integers(0, 4, 5000)])
        daskbicl.score((rows, cols), (rows[::-1].copy(), cols))
        if hasattr(np.dtypes, "StringDType"):
            daskbicl.score((rows.astype(np.dtypes.StringDType()), cols), (rows[::-1].copy(), cols))
    codes = (rng.integers(0, 100, 1 << 17)).astype(np.uint8)  # large chunks of one-byte codes
    daskbicl.score((codes, codes[:5000]), (codes[::-1].copy(), codes[:5000]))
    codes.flags.writeable = False
    daskbicl.score((codes, codes[:5000]), (codes, codes[:5000]))
    assert _signatures() == before


def test_daskbicl_warm_on_the_command_line(warmed):
    out = subprocess.run([sys.executable, "-m", "daskbicl", "warm"], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(":")[1].strip() for line in lines] == list(compiled.KERNEL_MODULES)
    assert all(line.endswith(" s") and "ready in" in line for line in lines)
    assert "kernels ready in" in out.stderr and "compiling" not in out.stderr  # the cache is warm


def _loaded(dask_worker=None) -> dict:
    from daskbicl.kernels import compiled as on_worker

    return {f"{m}:{d.py_func.__name__}": len(d.signatures) for modules, _ in on_worker.KERNEL_MODULES.values()
            for m in modules for d in on_worker._dispatchers(m)}


def _plugin_seconds(dask_worker) -> dict:
    return dask_worker.plugins[WarmKernels.name].seconds


def test_the_worker_plugin_loads_every_kernel_on_every_worker(local_cluster, warmed):
    from distributed import Client

    with Client(local_cluster) as client:
        client.register_plugin(WarmKernels())
        seconds = client.run(_plugin_seconds)
        assert len(seconds) == 2
        assert all(set(s) == set(compiled.KERNEL_MODULES) for s in seconds.values())
        loaded = client.run(_loaded)
        assert all(sigs[f"{m}:{f}"] > 0 for sigs in loaded.values() for m, f in ENTRIES)


def _announced(dask_worker=None) -> list:
    from daskbicl.kernels import compiled as on_worker

    return sorted(on_worker._STATE.announced)


def test_a_fresh_worker_compiles_at_most_once(tmp_path):
    """A worker process with an empty numba cache compiles what a score needs once; a fresh worker started
    after it on the same cache (a restarted or new worker of the image) loads it and compiles nothing."""
    import numpy as np
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    n = 70_000  # one chunk of one-byte codes, large enough for the compiled counter
    a, b = tmp_path / "a.zarr", tmp_path / "b.zarr"
    daskbicl.save((rng.integers(0, 7, n), rng.integers(0, 3, 40)), a)
    daskbicl.save((rng.integers(0, 5, n), rng.integers(0, 3, 40)), b)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "PYTHONPATH": str(ROOT)}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, env=env,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        values, said = [], []
        for _ in range(2):
            lazy = daskbicl.score(daskbicl.open(a), daskbicl.open(b), measures="ari_rows", compute=False)
            values.append(client.compute(lazy).result())
            said.append(list(client.run(_announced).values()))
            client.restart()  # a fresh worker process, the same cache folder
        assert said[0] == [["the one-byte code counter"]], said  # the first worker compiled, and said so
        assert said[1] == [[]], said  # the fresh worker loaded it: nothing compiled
        assert values[0] == values[1]


def test_turns_are_one_lock_per_cache_and_skipped_when_the_lock_file_cannot_be_opened(tmp_path, monkeypatch):
    """The lock file is named after NUMBA_CACHE_DIR (and the install); a lock file that cannot be opened (here a
    folder in its place) means no turns, not a failed warm."""
    import tempfile

    from daskbicl.warmup import cache_turn, turn_file

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "a"))
    first = turn_file()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "b"))
    assert turn_file() != first and Path(first).parent == tmp_path
    with cache_turn():
        assert Path(turn_file()).is_file()  # held: the file is there
    Path(first).mkdir()  # cannot be opened as a file
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "a"))
    with cache_turn():
        pass
