"""The README's and the docs' examples run as printed: a line that fails is a failing test.

Every fenced block of README.md and of the documentation pages (docs/**/*.md)
is extracted, whatever the files say today:

* shell blocks (``bash``, ``sh``, ``shell``, ``console``): every ``daskbicl``
  command (also after ``&&``, ``$ `` prompts and trailing comments removed)
  runs as ``python -m daskbicl ...`` in a subprocess and must exit 0; other
  commands (``pip install``, ``pytest``) are not run here;
* Python blocks: executed in order, one namespace per page (``>>>`` blocks
  through :mod:`doctest`).

Each page runs in its own temporary folder in which small data is made first:
``truth.zarr`` and ``pred.zarr`` (a 200 x 50 co-clustering and a noisy copy).
Blocks of a page run in order in that folder, so a command may use what an
earlier one wrote.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import daskbicl

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\s`]*)\s*$")


def pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md")
                  if not {"_build", "reference", "gallery"} & set(p.relative_to(ROOT / "docs").parts))
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


def shell_commands(code: str) -> list[list[str]]:
    """The ``daskbicl`` commands of a shell block, as argument lists."""
    out = []
    for line in code.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", ";", "||"):
                if command[:1] == ["daskbicl"]:
                    out.append(command[1:])
                elif command[:3] == ["python3", "-m", "daskbicl"] or command[:3] == ["python", "-m", "daskbicl"]:
                    out.append(command[3:])
                command = []
            else:
                command.append(word)
    return out


def test_shell_command_extraction():
    code = "python3 -m pip install -e . && daskbicl demo   # comment\n$ daskbicl score a.zarr 'b c.zarr' --json\n"
    assert shell_commands(code) == [["demo"], ["score", "a.zarr", "b c.zarr", "--json"]]


#: Documentation blocks that do not run as printed today (fragments that assume names defined elsewhere,
#: files the page never makes), keyed by page and first line of code. Each is an expected failure that
#: must keep failing (strict): fix the block, and the test tells you to take it off this list. README.md
#: has no such list: a README line that fails is a failing test.
KNOWN_BROKEN_DOCS = {
    ("docs/guide/batch.md", "daskbicl batch nightly.toml"): "the page never writes nightly.toml",
    ("docs/guide/cluster.md", "daskbicl score truth.zarr pred.zarr "): (
        "--scheduler ADDRESS with relative store paths: the workers resolve them in their own folder "
        "(pred.zarr/col_labels does not exist); the CLI should make local paths absolute"),
    ("docs/guide/cluster.md", "from distributed import Client, LocalCluster"): "fragment: no import daskbicl",
    ("docs/guide/cluster.md", "import dask"): "fragment: no import daskbicl",
    ("docs/guide/data-model.md", "daskbicl.save(ds,"): "fragment: no import, ds undefined",
    ("docs/guide/inputs.md", "from sklearn.cluster import SpectralBiclustering"): "fragment: no import daskbicl",
    ("docs/guide/inputs.md", "from sklearn.cluster import SpectralCoclustering"): "fragment: no import daskbicl",
    ("docs/guide/inputs.md", "truth = ([\"T-cell\""): "fragment: no import daskbicl",
    ("docs/guide/inputs.md", "daskbicl.biclustering_from_indices("): "fragment: rows0, cols0 undefined",
    ("docs/guide/inputs.md", "daskbicl convert truth.zarr --rows labels.csv"): "labels.csv is never written",
    ("docs/guide/inputs.md", "tables = daskbicl.contingency("): "fragment: no import daskbicl",
    ("docs/index.md", "import daskbicl"): "z, w undefined",
    ("docs/measures/more.md", "r = daskbicl.null("): "fragment: no import daskbicl",
}


def _known_broken(page: Path, code: str) -> str | None:
    rel = str(page.relative_to(ROOT))
    first = code.strip().splitlines()[0] if code.strip() else ""
    for (where, start), why in KNOWN_BROKEN_DOCS.items():
        if rel == where and first.startswith(start):
            return why
    return None


CASES = [
    pytest.param(page, line, lang, code, id=f"{page.relative_to(ROOT)}:{line}",
                 marks=[pytest.mark.xfail(strict=True, reason=why)] if (why := _known_broken(page, code)) else [])
    for page in pages() for line, lang, code in blocks(page.read_text()) if lang in SHELL | {"python", "py"}
]
_FOLDERS: dict[Path, Path] = {}
_NAMESPACES: dict[Path, dict] = {}


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


def _run_shell(code: str, folder: Path, address: str) -> None:
    """Each command in order; an example scheduler address (``tcp://...``) is the session's LocalCluster."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for args in shell_commands(code):
        args = [address if a.startswith("tcp://") else a for a in args]
        proc = subprocess.run([sys.executable, "-m", "daskbicl", *args], cwd=folder, capture_output=True,
                              text=True, timeout=600, env=env)
        assert proc.returncode == 0, f"daskbicl {shlex.join(args)} exited {proc.returncode}: {proc.stderr.strip()}"


def _run_python(code: str, namespace: dict, name: str) -> None:
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
    if lang in SHELL:
        _run_shell(code, folder, local_cluster.scheduler_address)
    else:
        namespace = _NAMESPACES.setdefault(page, {"__name__": "__readme__"})
        _run_python(code, namespace, f"{page.relative_to(ROOT)}:{line}")


def test_every_page_with_examples_is_collected():
    """The README's blocks are found, whatever it says (the lead may rewrite it)."""
    readme = [case for case in CASES if case.values[0].name == "README.md"]
    assert readme, "no shell or Python block found in README.md"
