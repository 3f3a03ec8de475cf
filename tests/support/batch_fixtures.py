"""The lab folder both batch-run test files use: a manifest over a truth and a glob of preds, the CLI in a
subprocess, the manifest committed to git, and the second night (one pred deleted, one replaced).

Imported by tests/batch/test_runs.py (co-clusterings) and tests/batch/test_mlflow_export.py (biclusterings);
shared here rather than in conftest.py, which every test module loads.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

__all__ = ["run_cli", "lab_manifest", "git", "commit_manifest", "night_two"]


def run_cli(*args, timeout: float = 240, env: dict | None = None) -> tuple[int, str, str]:
    """``python -m daskbicl ARGS`` in a subprocess: (exit status, stdout, stderr).  ``env``: variables set
    over this process's environment (a None value: the variable removed)."""
    if env is not None:
        env = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    proc = subprocess.run([sys.executable, "-m", "daskbicl", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def run_main(capsys, *args) -> tuple[int, str, str]:
    """The CLI in this process (for the pure-Python ``results`` command): (code, stdout, stderr)."""
    from daskbicl.cli import main

    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def lab_manifest(folder: Path, pairs: str, results: str = "scores.sqlite") -> Path:
    """``folder/m.toml``: truth ``sim`` = truth.zarr, preds ``runs`` = pred-*.zarr, a ``[run]`` tag, then
    ``pairs`` (the ``[[pairs]]`` tables, as TOML)."""
    path = folder / "m.toml"
    head = textwrap.dedent(f"""
        results = "{results}"

        [truth]
        sim = "truth.zarr"

        [pred]
        runs = "pred-*.zarr"

        [run]
        model = "nmf"
    """)
    path.write_text(head + "\n" + textwrap.dedent(pairs).strip() + "\n")
    return path


def git(folder: Path, *args: str) -> str:
    """``git -C folder ARGS`` (a throw-away identity), its stdout."""
    done = subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_manifest(folder: Path) -> str | None:
    """A git repository in ``folder`` with ``m.toml`` committed: the commit (None without git)."""
    if not shutil.which("git"):
        return None
    git(folder, "init", "-q")
    git(folder, "add", "m.toml")
    git(folder, "commit", "-q", "-m", "manifest")
    return git(folder, "rev-parse", "HEAD")


def night_two(folder: Path, write_pred) -> None:
    """The second night: pred-0.zarr deleted, pred-1.zarr replaced by what ``write_pred(path)`` writes."""
    shutil.rmtree(folder / "pred-0.zarr")
    shutil.rmtree(folder / "pred-1.zarr")
    write_pred(folder / "pred-1.zarr")
