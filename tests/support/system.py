"""Which tests are system tests: a real cluster, a subprocess, a signal, the S3 server, a mount.

tests/conftest.py marks them ``system`` at collection, so ``pytest -m "not system"`` is the fast lane
(CONTRIBUTING.md, "Running the checks").  Nothing is declared test by test: a test is a system test when

* it uses, directly or through its fixtures, one of :data:`SYSTEM_FIXTURES` (the session LocalCluster, a
  Client on it, moto's S3 server), or
* its code (decorators included: a ``parametrize`` over helpers may call them), the code of its
  fixtures, or a helper they name (a function of a module under ``tests``, followed by name through
  the module's globals) imports or names one of :data:`SYSTEM_MODULES` or :data:`SYSTEM_OBJECTS`, or
  calls ``os.kill``;

or its module sets ``pytestmark = pytest.mark.system`` (for what the reading below cannot see).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types

#: Fixtures that start or reach real infrastructure (tests/conftest.py).
SYSTEM_FIXTURES = frozenset({"client", "local_cluster", "s3", "s3_server"})

#: Modules whose use means a process, a signal or a mount.
SYSTEM_MODULES = frozenset({"subprocess", "signal", "multiprocessing"})

#: ``module -> names`` whose use means a real cluster (daskbicl's ``cluster`` starts one or connects).
SYSTEM_OBJECTS = {
    "distributed": frozenset({"LocalCluster", "Client", "SpecCluster", "SubprocessCluster"}),
    "daskbicl.clitools": frozenset({"cluster"}),
}


def is_system_item(item) -> bool:
    """True when the collected test ``item`` is a system test (its fixtures, its code, its module's mark)."""
    if item.get_closest_marker("system"):
        return True
    if SYSTEM_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return is_system_function(getattr(item, "obj", None)) or any(
        is_system_function(d.func) for name in item.fixturenames for d in defs.get(name, ()))


def is_system_function(func) -> bool:
    """True when ``func`` (a test, a fixture or a helper) starts processes or clusters, as the docstring says."""
    func = _plain(func)
    return func is not None and _reads_system(func)


def _plain(func):
    """The function whose source to read: unwrapped from methods, pytest fixtures and Hypothesis' ``given``."""
    func = getattr(func, "__func__", func)
    inner = getattr(getattr(func, "hypothesis", None), "inner_test", None)
    func = inspect.unwrap(inner or func)
    return func if isinstance(func, types.FunctionType) else None


@functools.cache
def _reads_system(func: types.FunctionType) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    _reads_system_guard.add(func)  # a helper calling itself (or a cycle) is read once
    try:
        return any(_node_is_system(node, func) for node in ast.walk(tree))
    finally:
        _reads_system_guard.discard(func)


_reads_system_guard: set = set()


def _node_is_system(node: ast.AST, func: types.FunctionType) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in SYSTEM_MODULES for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module.split(".")[0] in SYSTEM_MODULES or any(
            alias.name in names for owner, names in SYSTEM_OBJECTS.items() if module.startswith(owner)
            for alias in node.names)
    if isinstance(node, ast.Attribute):
        return node.attr in ("kill", "killpg") and isinstance(node.value, ast.Name) and node.value.id == "os"
    if isinstance(node, ast.Name):
        return _global_is_system(func.__globals__.get(node.id), func)
    return False


def _global_is_system(value, func: types.FunctionType) -> bool:
    """A module-level name of ``func``'s module: a system module or object, or a helper of the tests to read."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] in SYSTEM_MODULES
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if any(module.startswith(owner) and name in names for owner, names in SYSTEM_OBJECTS.items()):
        return True
    helper = _plain(value) if callable(value) and module.split(".")[0] == "tests" else None
    return helper is not None and helper is not func and helper not in _reads_system_guard and _reads_system(helper)
