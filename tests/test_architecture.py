"""The layering the README's "How it works" describes, checked on the source.

* no import cycle inside ``daskbicl`` (function-local imports included, so no
  local import can exist only to dodge one);
* ``daskbicl/kernels`` imports numpy, scipy, numba (the compiled family
  walk of the micro-object measures and the string hash table, imported
  only when one runs) and the
  standard library only (never dask, distributed, xarray, zarr or pandas),
  and of the package only other kernels and ``daskbicl.errors``;
* ``daskbicl/io`` and ``daskbicl/engine`` run work through
  ``daskbicl.scheduling``; io never imports engine;
* no module is longer than the size one reads in a sitting (700 lines), no
  function longer than 120 lines (an explicit allow-list, to be emptied);
* no module outside ``daskbicl/measures/`` names a measure or a tradeoff
  index (no exceptions).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "daskbicl"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str) -> list[tuple[str, bool]]:
    """``(imported name, is_function_local)`` for every import of ``module``.

    ``from .x import y`` names ``pkg.x.y`` when that is a module, else ``pkg.x``.
    """
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        local = getattr(node, "col_offset", 0) > 0
        if isinstance(node, ast.Import):
            out += [(a.name, local) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                name = f"{base}.{a.name}"
                out.append((name if name in MODULES else base, local))
    return out


def _internal_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for m in MODULES:
        for name, _ in _imports(m):
            if name in MODULES and name != m:
                graph[m].add(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package():
    assert _cycles(_internal_graph()) == []


#: The kernel modules compiled with numba; no other module imports them at its top.
NUMBA_KERNELS = {
    "daskbicl.kernels.compiled",  # the compile listener and cache check: numba imported inside functions only
    "daskbicl.kernels.micro.family_walk",
    "daskbicl.kernels.micro.family_leaf",
    "daskbicl.kernels.micro.class_kernels",
    "daskbicl.kernels.micro.sampling",
    "daskbicl.kernels.coclustering.string_codes",
    "daskbicl.kernels.coclustering.byte_counting",
    "daskbicl.kernels.bicluster.signature_pairs",
    "daskbicl.kernels.bicluster.mask_pairs",
    "daskbicl.kernels.bicluster.mask_positions",
    "daskbicl.kernels.coclustering.slot_lookup",
}


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("daskbicl.kernels")])
def test_kernels_import_numpy_and_scipy_only(module):
    allowed_internal = {"daskbicl.errors"}
    for name, _ in _imports(module):
        top = name.split(".")[0]
        assert top not in {"dask", "distributed", "xarray", "zarr", "pandas", "matplotlib"}, (module, name)
        if top == "daskbicl":
            assert name.startswith("daskbicl.kernels") or name in allowed_internal, (module, name)
        if top == "numba":
            assert module in NUMBA_KERNELS, (module, name)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_numba_kernels_are_imported_lazily(module):
    """``import daskbicl`` must not load numba: its kernels are imported inside functions only."""
    for name, local in _imports(module):
        if name in NUMBA_KERNELS or name.startswith(tuple(k + "." for k in NUMBA_KERNELS)):
            assert local or module in NUMBA_KERNELS, (module, name)


@pytest.mark.parametrize("module", [m for m in MODULES if m.startswith("daskbicl.io")])
def test_io_never_imports_the_engine(module):
    for name, _ in _imports(module):
        assert not name.startswith("daskbicl.engine"), (module, name)
        assert not name.startswith("daskbicl.measures"), (module, name)


#: dask's graph internals (being replaced by task spec and expressions): daskbicl builds graphs with public calls
#: only (``dask.delayed``, ``dask.array``, ``dask.annotate``, ``Client.compute``) and never rebuilds one.
GRAPH_INTERNALS = ("dask.highlevelgraph", "dask.layers", "dask.blockwise", "dask._task_spec", "dask._expr")
LAYER_NAMES = ("HighLevelGraph", "MaterializedLayer", "Layer", "Blockwise")


def _graph_internals(module: str, source: str) -> list[str]:
    """Imports of dask's graph internals in ``module`` (its ``source``), and attribute uses of layer classes."""
    found = [name for name, _ in _imports(module) if name.startswith(GRAPH_INTERNALS)
             or name.rpartition(".")[2] in LAYER_NAMES and name.startswith("dask")]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in LAYER_NAMES:
            found.append(f".{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "layers" and not isinstance(node.ctx, ast.Store):
            found.append(".layers")
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_uses_dask_graph_internals(module):
    """No HighLevelGraph, layer class or ``.layers`` of a graph in the package: public dask only."""
    found = _graph_internals(module, MODULES[module].read_text(encoding="utf-8"))
    assert not found, f"{module} uses dask's graph internals: {found}"


def test_the_graph_internals_check_finds_them(tmp_path):
    source = ("from dask.highlevelgraph import HighLevelGraph, MaterializedLayer\n"
              "def f(x):\n    return x.__dask_graph__().layers\n")
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    MODULES["daskbicl.probe"] = path
    try:
        found = _graph_internals("daskbicl.probe", source)
    finally:
        del MODULES["daskbicl.probe"]
    assert "dask.highlevelgraph" in found and ".layers" in found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_readable(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= 700, f"{module} has {lines} lines: split it by concern"


def test_module_file_names_do_not_repeat_across_layers():
    """A file name says what it holds, once in the house (no ``partition.py`` in three layers)."""
    seen: dict[str, str] = {}
    for module, path in MODULES.items():
        if path.name == "__init__.py":
            continue
        assert path.name not in seen, f"{module} and {seen[path.name]} share the file name {path.name}"
        seen[path.name] = module


@pytest.mark.parametrize("domain", ["coclustering", "bicluster", "micro", "tradeoff"])
def test_kernels_are_split_by_domain(domain):
    assert f"daskbicl.kernels.{domain}" in MODULES
    flat = [m for m in MODULES if m.count(".") == 2 and m.startswith("daskbicl.kernels.")]
    assert set(flat) <= {"daskbicl.kernels.compiled"} | {f"daskbicl.kernels.{d}" for d in ("coclustering", "bicluster", "micro", "tradeoff")}, flat


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_opaque_module_aliases(module):
    """``from ..kernels import micro as KM`` meant two modules in two files: import modules by their name."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            for a in node.names:
                if f"{base}.{a.name}" in MODULES and a.asname and a.asname.lstrip("_").isupper():
                    raise AssertionError(f"{module}: 'import {a.name} as {a.asname}'")


def _measure_name_literals(path: Path, names: set[str]) -> list[str]:
    """String literals of ``path`` equal to a registered measure name (docstrings and ``__all__`` aside)."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            skip.update(id(x) for x in ast.walk(node.value))  # the names of functions, not of measures
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
            and node.value.strip().lower() in names]


def test_no_module_outside_the_registry_names_a_measure():
    """Which measures exist, and what they need, is said by their records only.

    Outside ``daskbicl/measures/`` (the records) no module writes a
    measure's name: interfaces read the registry (CLI choices, ``daskbicl
    measures``, the docs' tables), capability facts are fields of the record
    (``Measure.compiled``), defaults are constants of their records
    (``DEFAULT_INDEX`` of the tradeoff indices), kernels return arrays and
    NamedTuples named after the formulas they compute. No exceptions: the
    tradeoff kernel's formula records are nameless (two index names,
    "fmeasure" and "jaccard", are also bicluster measures' names).
    """
    from daskbicl.measures import REGISTRY

    names = set(REGISTRY)
    found = [hit for module, path in MODULES.items() if module.split(".")[1:2] != ["measures"]
             for hit in _measure_name_literals(path, names)]
    assert not found, "\n".join(found)


#: The names of the tradeoff indices a user types (``index=``, ``--index``) and the lookups by name.
INDEX_NAMES = {"DEFAULT_INDEX", "INDICES", "INDEX_RECORDS", "WeightedIndex", "get_index", "canonical_index",
               "weighted_index"}
#: The modules that name an index for the user: they take the names from the registry layer.
INDEX_READERS = ("daskbicl.cli", "daskbicl.plot._common", "daskbicl.plot.prspace", "daskbicl.plot.tradeoff_figures",
                 "daskbicl.tradeoffs.space", "daskbicl.tradeoffs.sweep")


def _names_from(path: Path, module: str) -> set[str]:
    """The names ``path`` imports from ``module`` (absolute or relative to the package)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith(module.split(".", 1)[1]):
            out |= {a.name for a in node.names}
    return out


def test_the_index_names_live_in_the_registry_layer_only():
    """The tradeoff kernel is the maths (nameless formula records); the names users type are records of
    measures.weighted_indices, and the CLI, the figures and the tradeoff functions read them there."""
    from daskbicl.kernels.tradeoff import indices
    from daskbicl.measures.weighted_indices import INDICES

    assert not INDEX_NAMES & set(vars(indices)), "the kernel defines index names or lookups by name"
    written = [hit for module, path in MODULES.items() if module.split(".")[1:2] != ["measures"]
               for hit in _measure_name_literals(path, set(INDICES))]
    assert not written, "\n".join(written)
    for module in INDEX_READERS:
        assert _names_from(MODULES[module], "daskbicl.measures.weighted_indices") & INDEX_NAMES, module


def test_the_index_name_check_finds_a_name_in_a_kernel(tmp_path):
    """The literal check above sees an index name written as a record's field (what the kernel used to do)."""
    probe = tmp_path / "probe.py"
    probe.write_text('"""Folke."""\nFOLKE = dict(name="folke", label="Folke")\n')
    assert len(_measure_name_literals(probe, {"folke"})) == 2


#: Longest function (lines from ``def`` to its last line, docstring included) one reads in a sitting.
FUNCTION_LINES = 120

def _long_functions(path: Path, module: str, limit: int) -> dict[str, int]:
    """``{module.function: lines}`` of every function (methods and nested ones too) longer than ``limit``."""
    out = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > limit:
                out[f"{module}.{node.name}"] = lines
    return out


def test_functions_stay_readable():
    found = {}
    for module, path in MODULES.items():
        found.update(_long_functions(path, module, FUNCTION_LINES))
    assert not found, f"functions over {FUNCTION_LINES} lines (no exemptions), split them: {found}"


def test_the_function_length_check_counts_from_def_to_the_last_line(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def short():\n    return 1\n\n\nclass A:\n    def long(self):\n" + "        x = 1\n" * 5
                     + "        return x\n")
    assert _long_functions(probe, "probe", 6) == {"probe.long": 7}
    assert _long_functions(probe, "probe", 7) == {}


def test_the_measure_name_check_finds_a_literal(tmp_path):
    from daskbicl.measures import REGISTRY

    name = next(iter(REGISTRY))
    probe = tmp_path / "probe.py"
    probe.write_text(f'"""Doc {name}."""\n__all__ = ["{name}"]\nX = " {name.upper()} "\n')
    hits = _measure_name_literals(probe, set(REGISTRY))
    assert len(hits) == 1 and hits[0].endswith(f"{' ' + name.upper() + ' '!r}")


def test_registration_does_not_depend_on_import_order():
    """Every record module registers its measures whichever is imported first (fresh interpreters)."""
    import subprocess

    records = sorted(p.stem for p in (PACKAGE / "measures").glob("*.py")
                     if "register(" in p.read_text() and p.stem != "registry")
    def registered(first: str) -> list[str]:
        code = f"{first}import daskbicl; from daskbicl.measures import REGISTRY; print(' '.join(sorted(REGISTRY)))"
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              cwd=PACKAGE.parent)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    baseline = registered("")
    assert baseline
    for first in records:
        assert registered(f"import daskbicl.measures.{first}; ") == baseline, first


# --------------------------------------------------------------------------- the generated functions, typed


def test_the_generated_measure_functions_have_a_stub_from_the_registry():
    """``measures/functions.pyi`` is what the registry generates today, and says what the runtime functions take."""
    import inspect

    import daskbicl
    from daskbicl.measures import REGISTRY
    from daskbicl.measures.api import function_stubs

    path = PACKAGE / "measures" / "functions.pyi"
    assert path.read_text(encoding="utf-8") == function_stubs(REGISTRY), (
        "functions.pyi is stale: python3 -c 'from daskbicl.measures.api import write_function_stubs as w; w()'")
    defs = {n.name: n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
    assert list(defs) == list(REGISTRY)
    kinds = {"args": inspect.Parameter.POSITIONAL_OR_KEYWORD, "kwonlyargs": inspect.Parameter.KEYWORD_ONLY}
    for name, node in defs.items():
        runtime = inspect.signature(getattr(daskbicl, name)).parameters
        stub = [(a.arg, kind) for field, kind in kinds.items() for a in getattr(node.args, field)]
        assert stub == [(p.name, p.kind) for p in runtime.values()], name
        assert ast.unparse(node.returns) == ("float" if not REGISTRY[name].fields else "PRF"), name


def test_mypy_sees_every_measure_function(tmp_path):
    """A type checker knows ``daskbicl.cari`` & co.: it flags a misspelt parameter and types a record's fields."""
    import os
    import subprocess

    (tmp_path / "use.py").write_text(
        "import daskbicl\n\nvalue: float = daskbicl.cari('t.zarr', 'p.zarr')\n"
        "reveal_type(daskbicl.mocice_bcubed('t.zarr', 'p.zarr', method='exact').precision)\n"
        "daskbicl.nce('t.zarr', 'p.zarr', normaliser='printed')\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "--follow-imports=silent", "--ignore-missing-imports", "use.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MYPYPATH": str(PACKAGE.parent)})
    out = proc.stdout
    assert 'use.py:4: note: Revealed type is "float | fractions.Fraction"' in out, out
    assert 'use.py:5: error: Unexpected keyword argument "normaliser" for "nce"' in out, out
    assert "Found 1 error" in out, out


# --------------------------------------------------------------------------- docstrings name what exists

#: Dotted names in the package's text and the docs that name something that no longer exists, each with where
#: it is written (files of other branches this round). Strict: a fixed one fails the test until taken off.
STALE_REFERENCES: dict[str, str] = {}


def _dotted_references() -> dict[str, list[str]]:
    """``daskbicl.<module>.<...>`` written in the package's sources, CONTRIBUTING.md and docs/ -> where.

    Only names whose second part is a module of the package (``daskbicl.max_work`` & co. are
    configuration keys, ``daskbicl.run_id`` an MLflow tag: not names of code).
    """
    import re

    subpackages = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    texts = [*PACKAGE.rglob("*.py"), PACKAGE.parent / "CONTRIBUTING.md",
             *(p for p in (PACKAGE.parent / "docs").rglob("*.md") if "_build" not in p.parts)]
    out: dict[str, list[str]] = {}
    for path in texts:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in re.finditer(r"(?<![\w/])daskbicl(?:\.[A-Za-z_]\w*){2,}", line):
                if m.group(0).split(".")[1] in subpackages:
                    out.setdefault(m.group(0), []).append(f"{path.relative_to(PACKAGE.parent)}:{i}")
    return out


def _resolves(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attribute in parts[k:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return False
        return True
    return False


def test_dotted_names_in_docstrings_and_docs_exist():
    """A docstring that points at ``daskbicl.kernels.tradeoff.indices.Tradeoff`` after it moved is a stale docstring."""
    refs = _dotted_references()
    assert "daskbicl.tradeoffs.space.optimal_tradeoff" in refs  # the scan finds references
    stale = {name: where for name, where in refs.items() if not _resolves(name) and name not in STALE_REFERENCES}
    assert not stale, stale
    fixed = [name for name in STALE_REFERENCES if name not in refs or _resolves(name)]
    assert not fixed, f"no longer stale, take off STALE_REFERENCES: {fixed}"
    assert not _resolves("daskbicl.kernels.tradeoff.indices.Tradeoff") and _resolves("daskbicl.measures.api.score")


# --------------------------------------------------------------------------- no dead exports in the inner layers

#: Functions of ``engine/`` and ``kernels/`` exported in ``__all__`` that nothing calls (files of other owners this
#: round). Strict: one used again, or deleted, fails the test until taken off.
UNUSED_EXPORTS: dict[str, str] = {}


def _unused_exports() -> list[str]:
    """Exported functions of engine/ and kernels/ that no code, test, benchmark or example uses."""
    import re
    from collections import Counter

    root = PACKAGE.parent
    text = "\n".join(p.read_text(encoding="utf-8") for folder in ("daskbicl", "tests", "benchmarks", "examples")
                     for p in (root / folder).rglob("*.py") if p != Path(__file__).resolve())
    words = Counter(re.findall(r"\w+", text))
    defined = Counter(re.findall(r"\bdef (\w+)\(", text)) + Counter(re.findall(r"[\"'](\w+)[\"']", text))
    out = []
    for module, path in MODULES.items():
        if not module.startswith(("daskbicl.engine.", "daskbicl.kernels.")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported = {e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant)}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in exported:
                if words[node.name] - defined[node.name] <= 0:  # only its def and its __all__ entry
                    out.append(f"{module}.{node.name}")
    return out


def test_no_exported_engine_or_kernel_function_is_dead_code():
    """An inner-layer function nobody calls is deleted, not kept (issue 25: micro_from_partition_tables)."""
    unused = _unused_exports()
    assert not [name for name in unused if name not in UNUSED_EXPORTS], unused
    assert not [name for name in UNUSED_EXPORTS if name not in unused], "no longer unused: take off UNUSED_EXPORTS"
