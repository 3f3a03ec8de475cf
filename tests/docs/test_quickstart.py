"""docs/quickstart.md runs as written: every block, in order, from an empty folder.

The blocks are copied out of the page (```python and ```bash fences), Python
blocks run as scripts and shell blocks with bash, all in one temporary folder,
with ``daskbicl`` on PATH meaning this checkout's CLI.  The install block
(``pip install``) is the only one not run; the test checks there is exactly one.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "quickstart.md"
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```$", re.M | re.S)


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8"))]


def _shim(folder: Path) -> dict:
    """An environment whose ``daskbicl`` is ``python -m daskbicl`` of this checkout."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    script = bin_dir / "daskbicl"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m daskbicl "$@"\n')
    script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "120"
    return env


def _run(lang: str, body: str, k: int, folder: Path, env: dict) -> str:
    if lang == "python":
        path = folder / f".step{k}.py"
        path.write_text(body, encoding="utf-8")
        cmd = [sys.executable, str(path)]
    else:
        path = folder / f".step{k}.sh"
        path.write_text("set -euo pipefail\n" + body.replace("python3 ", f'"{sys.executable}" '), encoding="utf-8")
        cmd = ["bash", str(path)]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"block {k} ({lang}) failed:\n{body}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    return done.stdout


def test_the_page_has_the_steps_it_promises():
    found = blocks()
    installs = [b for lang, b in found if "pip install" in b]
    assert len(installs) == 1 and len(installs[0].strip().splitlines()) == 1, "one install line, nothing else"
    text = "".join(b for _, b in found)
    for step in ("daskbicl.score(", "daskbicl.save(", "daskbicl score ", "daskbicl convert ", "daskbicl batch ",
                 "daskbicl results ", ".plot(", "daskbicl tradeoff "):
        assert step in text, f"the quickstart lost its step {step!r}"


def test_quickstart_runs_from_an_empty_folder(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    env = _shim(tmp_path)
    outputs = [_run(lang, body, k, tmp_path, env)
               for k, (lang, body) in enumerate(blocks()) if "pip install" not in body]
    everything = "\n".join(outputs)

    # step 2: the printed CARI is the ARI of the 40 cell labels (brute force, scikit-learn)
    z, w = np.array([0, 0, 0, 1, 1, 1, 2, 2]), np.array([0, 0, 1, 1, 1])
    z2, w2 = np.array([0, 0, 0, 0, 1, 1, 2, 2]), np.array([5, 5, 7, 7, 7])
    cells = adjusted_rand_score((z[:, None] * 10 + w[None, :]).ravel(), (z2[:, None] * 10 + w2[None, :]).ravel())
    assert f"CARI alone: {round(cells, 3)}" in outputs[0]
    assert re.search(rf"^cari\s+{cells:.3f}$", outputs[0], re.M)

    # step 3: the CLI prints the same number, and the store made from files scores like the Python truth
    assert re.search(rf"^cari\s+{cells:.6f}", outputs[1], re.M)
    assert re.search(rf"^cari\s+{cells:.6f}", outputs[2], re.M)

    # step 4: two pairs scored once, nothing the second time; the CSV export has their CARI
    with sqlite3.connect(tmp_path / "scores.sqlite") as db:
        rows = db.execute("SELECT pred, measure, value FROM scores ORDER BY pred, measure").fetchall()
    assert [(Path(p).name, m) for p, m, _ in rows] == [
        ("pred-a.zarr", "cari"), ("pred-a.zarr", "nce"), ("pred-b.zarr", "cari"), ("pred-b.zarr", "nce")]
    assert rows[0][2] == pytest.approx(cells, abs=1e-12)
    assert "2 scored" in outputs[3] and "2 already scored" in outputs[3]
    exported = list(csv.DictReader(io.StringIO(outputs[3][outputs[3].index("truth,"):])))
    assert sorted(Path(r["pred"]).name for r in exported) == ["pred-a.zarr", "pred-b.zarr"]

    # step 5: the figures exist and are real PNGs; the intervals table was printed
    for name in ("tradeoff.png", "pr-space.png", "tradeoff-cli.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name
    # the printed winners are the argmax of the weighted F-measure, computed here from the index sets
    target = {(i, j) for i in range(20) for j in range(10)}
    names, sizes = ["t=0.9", "t=0.7", "t=0.5", "t=0.3"], [(8, 5), (16, 9), (24, 12), (40, 20)]
    pr = []
    for n_rows, n_cols in sizes:
        cells_k = {(i, j) for i in range(n_rows) for j in range(n_cols)}
        pr.append((len(cells_k & target) / len(cells_k), len(cells_k & target) / len(target)))
    table = outputs[4]
    assert "winner" in table
    for lam in (0.05, 0.95):
        best = max(range(4), key=lambda k: pr[k][0] * pr[k][1] / (lam * pr[k][0] + (1 - lam) * pr[k][1]))
        line = next(row for row in table.splitlines()[1:]
                    if float(row.split()[1]) <= lam <= float(row.split()[2]))
        assert line.split()[3] == names[best], (lam, table)
    assert "figure (--plot): tradeoff-cli.png" in everything


def test_index_snippet_runs(tmp_path):
    """The Python block of docs/index.md defines everything it uses and runs."""
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    found = [body for lang, body in FENCE.findall(text) if lang == "python"]
    assert found, "docs/index.md lost its Python snippet"
    env = _shim(tmp_path)
    for k, body in enumerate(found):
        _run("python", body + "\nprint(daskbicl.score(truth, pred, measures=['cari']))\n", k, tmp_path, env)


PYCON = re.compile(r"^```python\n(>>> .*?)^```$", re.M | re.S)


@pytest.mark.parametrize("page", ["guide/choosing.md", "guide/from-algorithms.md"])
def test_guide_examples_print_what_the_page_says(page, tmp_path, monkeypatch):
    """The ``>>>`` examples of a guide run in order in an empty folder and print what the page shows;
    then its shell blocks run in the same folder (they read the files the examples wrote)."""
    import doctest

    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    examples = PYCON.findall(text)
    assert examples, f"{page} has no >>> examples"
    monkeypatch.chdir(tmp_path)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = parser.get_doctest("\n".join(examples), {}, page, page, 0)
    report: list[str] = []
    result = runner.run(test, out=report.append)
    assert result.attempted > 5 and result.failed == 0, "".join(report)
    env = _shim(tmp_path)
    shell = [body for lang, body in FENCE.findall(text) if lang == "bash"]
    for k, body in enumerate(shell):
        _run("bash", body, k, tmp_path, env)
    for name in re.findall(r"[\w-]+\.png", text):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG", name
