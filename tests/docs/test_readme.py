"""The README's and the docs' examples run as printed: a line that fails is a failing test.

Every fenced block of README.md and of the documentation pages (docs/**/*.md)
is extracted, whatever the files say today:

* shell blocks (``bash``, ``sh``, ``shell``, ``console``): the whole block runs
  through ``bash -e`` with ``daskbicl`` meaning this checkout's CLI, and must
  exit 0; ``pip install`` and ``pytest`` lines are left out, and an example
  scheduler address (``tcp://...``) is the test session's LocalCluster;
* Python blocks: executed in order, one namespace per page (``>>>`` blocks
  through :mod:`doctest`).

Each page runs in its own temporary folder in which small data is made first:
``truth.zarr`` and ``pred.zarr`` (a 200 x 50 co-clustering and a noisy copy).
Blocks of a page run in order in that folder, so a command may use what an
earlier one wrote; when the suite runs on several processes (pytest-xdist)
and a page's earlier blocks ran in another one, they are run again here
first.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import daskbicl

ROOT = Path(__file__).resolve().parents[2]
SHELL = {"bash", "sh", "shell", "console"}
#: An opening fence: its language, or a MyST directive with its argument (```` ```{include} path ````).
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\s`]*)(?:\s+[^`]*)?$")


#: Pages whose blocks tests/docs/test_quickstart.py runs in order, with its own checks of what they print.
OWN_RUNNER = {"quickstart.md", "guide/choosing.md", "guide/from-algorithms.md", "index.md"}


def pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md")
                  if not {"_build", "reference", "gallery"} & set(p.relative_to(ROOT / "docs").parts)
                  and p.relative_to(ROOT / "docs").as_posix() not in OWN_RUNNER)
    return [p for p in [ROOT / "README.md", *docs] if p.exists()]


def blocks(text: str) -> list[tuple[int, str, str]]:
    """``(line, language, code)`` of every fenced block (MyST directives such as ``{toctree}`` included)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = len(m["indent"]), m["lang"].lower(), i + 1
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        code = "\n".join(line[indent:] for line in lines[start:i])
        out.append((start, lang, code))
        i += 1
    return out


def test_block_extraction():
    text = "x\n```bash\ndaskbicl measures  # list\n```\n  ```python\n  a = 1\n  ```\n```{toctree}\nx\n```\n"
    assert blocks(text) == [(2, "bash", "daskbicl measures  # list"), (5, "python", "a = 1"), (8, "{toctree}", "x")]  # line of the fence
    # a directive with an argument opens a block of its own: the blocks after it are paired as written
    text = "```{literalinclude} ../x.toml\n:language: toml\n```\n```bash\ndaskbicl measures\n```\n"
    assert blocks(text) == [(1, "{literalinclude}", ":language: toml"), (4, "bash", "daskbicl measures")]


#: Documentation blocks that do not run as printed today (fragments that assume names defined elsewhere,
#: files the page never makes), keyed by page and first line of code. Each is an expected failure that
#: must keep failing (strict): fix the block, and the test tells you to take it off this list. README.md
#: has no such list: a README line that fails is a failing test.
KNOWN_BROKEN_DOCS = {
}


def _known_broken(page: Path, code: str) -> str | None:
    rel = str(page.relative_to(ROOT))
    first = code.strip().splitlines()[0] if code.strip() else ""
    for (where, start), why in KNOWN_BROKEN_DOCS.items():
        if rel == where and first.startswith(start):
            return why
    return None


#: A page's blocks are one xdist group (pyproject's ``--dist loadgroup``): they run in one test process, in
#: order, so no block is run again because its page's earlier blocks ran in the other process.
CASES = [
    pytest.param(page, line, lang, code, id=f"{page.relative_to(ROOT)}:{line}",
                 marks=[pytest.mark.xdist_group(name=page.relative_to(ROOT).as_posix()),
                        *([pytest.mark.xfail(strict=True, reason=why)] if (why := _known_broken(page, code)) else [])])
    for page in pages() for line, lang, code in blocks(page.read_text()) if lang in SHELL | {"python", "py"}
]
_FOLDERS: dict[Path, Path] = {}
_NAMESPACES: dict[Path, dict] = {}
#: Each page's blocks in order (line, language, code, known broken): a block may use what an earlier one made.
_PAGE_BLOCKS: dict[Path, list[tuple[int, str, str, bool]]] = {}
for _case in CASES:
    _PAGE_BLOCKS.setdefault(_case.values[0], []).append(
        (*_case.values[1:], any(mark.name == "xfail" for mark in _case.marks)))  # (every case has its group mark)
#: How many of a page's blocks this test process has run (pytest-xdist may run a page's blocks in two).
_DONE: dict[Path, int] = {}


def _folder(page: Path, factory) -> Path:
    """The page's temporary folder, with the small data made first."""
    if page not in _FOLDERS:
        folder = factory.mktemp(page.stem)
        import numpy as np

        rng = np.random.default_rng(0)
        z, w = rng.integers(0, 4, 200), rng.integers(0, 3, 50)
        truth = daskbicl.partition(z, w)
        noisy = np.where(rng.random(200) < 0.1, rng.integers(0, 4, 200), z)
        daskbicl.save(truth, folder / "truth.zarr")
        daskbicl.save(daskbicl.partition(noisy, w), folder / "pred.zarr")
        _FOLDERS[page] = folder
    return _FOLDERS[page]


def _runnable(code: str, address: str) -> str:
    """The block as bash runs it here: installs and the test suite left out, example addresses replaced."""
    out = []
    for line in code.splitlines():
        line = re.sub(r"python3? -m pip install \S+( \S+)*? && ", "", line)  # "pip install ... && daskbicl demo"
        if re.match(r"\s*(\$ )?(python3? -m )?(pip install|pytest)\b", line):
            continue
        out.append(re.sub(r"tcp://[\w.:-]+", address, line.replace("$ ", "", 1) if line.startswith("$ ") else line))
    return "\n".join(out) + "\n"


def test_runnable_leaves_out_installs_and_replaces_addresses():
    code = "python3 -m pip install -e \".[test]\" && daskbicl demo\npython3 -m pytest -q\ndaskbicl score a b --scheduler tcp://x:8786\n"
    assert _runnable(code, "tcp://127.0.0.1:1") == "daskbicl demo\ndaskbicl score a b --scheduler tcp://127.0.0.1:1\n"


def _run_shell(code: str, folder: Path, address: str) -> None:
    """The whole block through ``bash -e``, ``daskbicl`` being this checkout's CLI (heredocs, ``cat``, ``ls`` run too)."""
    shim = folder / ".bin"
    shim.mkdir(exist_ok=True)
    script = shim / "daskbicl"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m daskbicl "$@"\n')
    script.chmod(0o755)
    tmp = folder / ".tmp"  # what a command keeps in the temporary directory (the demo's stores) stays here
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}", "TMPDIR": str(tmp),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", _runnable(code, address)], cwd=folder,
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"the block exited {proc.returncode}: {proc.stderr.strip()[-2000:]}"


def _close_clients(namespace: dict) -> None:
    """A Client an example opened would stay the default client of every later test: close it."""
    from distributed import Client

    for name, value in list(namespace.items()):
        if isinstance(value, Client):
            value.close()
            del namespace[name]


def _run_python(code: str, namespace: dict, name: str, address: str) -> None:
    code = re.sub(r"tcp://[\w.:-]+", address, code)  # an example scheduler address: the session's LocalCluster
    if ">>>" in code:
        test = doctest.DocTestParser().get_doctest(code, namespace, name, name, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, clear_globs=False)
        assert runner.failures == 0, f"{runner.failures} doctest example(s) of {name} failed (output above)"
    else:
        exec(compile(code, name, "exec"), namespace)


@pytest.mark.slow
@pytest.mark.parametrize("page, line, lang, code", CASES)
def test_example_runs_as_printed(page, line, lang, code, tmp_path_factory, monkeypatch, local_cluster):
    folder = _folder(page, tmp_path_factory)
    monkeypatch.chdir(folder)
    blocks = _PAGE_BLOCKS[page]
    index = [block[0] for block in blocks].index(line)
    for earlier, earlier_lang, earlier_code, broken in blocks[_DONE.get(page, 0):index]:
        if not broken:  # it ran in the other test process: what it made is not here, so run it here first
            _run_block(page, earlier, earlier_lang, earlier_code, folder, local_cluster.scheduler_address)
    _DONE[page] = max(_DONE.get(page, 0), index + 1)
    _run_block(page, line, lang, code, folder, local_cluster.scheduler_address)


def _run_block(page: Path, line: int, lang: str, code: str, folder: Path, address: str) -> None:
    if lang in SHELL:
        _run_shell(code, folder, address)
        return
    namespace = _NAMESPACES.setdefault(page, {"__name__": "__readme__"})
    try:
        _run_python(code, namespace, f"{page.relative_to(ROOT)}:{line}", address)
    finally:
        _close_clients(namespace)


def test_every_page_with_examples_is_collected():
    """The README's blocks are found, whatever it says (the lead may rewrite it)."""
    readme = [case for case in CASES if case.values[0].name == "README.md"]
    assert readme, "no shell or Python block found in README.md"


def test_contributing_worked_example_is_the_code():
    """CONTRIBUTING.md's worked example (homogeneity_rows) says what the code says.

    The kernel block is the kernel's source, verbatim; the record block, run
    with ``register`` capturing its argument, gives the registered record's
    fields and the same value on a table.
    """
    from daskbicl.kernels.coclustering import homogeneity
    from daskbicl.kernels.coclustering.contingency import Table
    from daskbicl.measures import REGISTRY, Measure

    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Adding a measure"):text.index("## Adding a counting pass")]
    kernel, record = [code for _, lang, code in blocks(section) if lang == "python"][:2]
    assert kernel.strip() in (ROOT / "daskbicl/kernels/coclustering/homogeneity.py").read_text()
    captured: list = []
    exec(compile(record, "CONTRIBUTING.md", "exec"), {"register": captured.append, "Measure": Measure,
                                                       "homogeneity": homogeneity})
    (shown,) = captured
    real = REGISTRY[shown.name]
    for field in ("name", "summary", "family", "provider", "symmetric", "bounds", "perfect", "default", "params"):
        assert getattr(shown, field) == getattr(real, field), field
    rng = __import__("numpy").random.default_rng(0)
    for _ in range(20):
        tables = tuple(Table.from_labels(rng.integers(0, 4, 30), rng.integers(0, 5, 30)) for _ in range(2))
        assert shown.finalize(tables) == real.finalize(tables)


def test_contributing_names_the_machinery_the_registry_does_not_import():
    """CONTRIBUTING.md's list of the modules of daskbicl/measures/ that hold no records is the package's own."""
    from daskbicl import measures

    text = (ROOT / "CONTRIBUTING.md").read_text()
    listed = re.search(r"except the machinery\s*\(([^)]*)\)", text)
    assert listed, "CONTRIBUTING.md no longer says which modules are machinery"
    assert set(re.findall(r"`(\w+)`", listed[1])) == set(measures._MACHINERY)
