"""Batch manifests for the tests, written from Python values instead of TOML pasted into each test.

A manifest names its truth and pred stores (a path, a glob or a list of paths per name) and its pairs; each pair
is a ``dict`` of the keys a manifest's ``[[pairs]]`` table takes (``truth``, ``pred``, ``measures``, ``params``,
...). :func:`write_manifest` writes it as the TOML a user would write, so the tests read like the docs' examples.
"""
from __future__ import annotations

import json
from pathlib import Path

import tomllib

Value = str | int | float | bool | list | dict


def _toml(value: Value) -> str:
    """One TOML value: strings and numbers as JSON writes them (valid TOML), lists and inline tables."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Path):
        value = str(value)
    return json.dumps(value)


def manifest_text(truth: dict[str, Value], pred: dict[str, Value], pairs: list[dict[str, Value]], *,
                  results: str | None = None) -> str:
    """The TOML text of a manifest with these ``[truth]``, ``[pred]`` and ``[[pairs]]`` tables (and its
    ``results`` file, when given)."""
    lines = [f"results = {_toml(results)}", ""] if results is not None else []
    lines += ["[truth]", *(f"{name} = {_toml(where)}" for name, where in truth.items()),
             "", "[pred]", *(f"{name} = {_toml(where)}" for name, where in pred.items())]
    for pair in pairs:
        lines += ["", "[[pairs]]", *(f"{key} = {_toml(value)}" for key, value in pair.items())]
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a helper that wrote invalid TOML would make every test using it fail for the wrong reason
    return text


def write_manifest(path: Path, truth: dict[str, Value], pred: dict[str, Value],
                   pairs: list[dict[str, Value]], *, results: str | None = None) -> Path:
    """Write :func:`manifest_text` to ``path`` and return the path."""
    path.write_text(manifest_text(truth, pred, pairs, results=results))
    return path


def one_pair(root: Path, measures: list[str], params: dict[str, Value] | None = None, *,
             truth: str = "t.zarr", pred: str = "p.zarr") -> Path:
    """``root/m.toml``: one pair (``t``, ``p``) of the stores ``root/truth`` and ``root/pred`` with these measures."""
    pair: dict[str, Value] = {"truth": "t", "pred": "p", "measures": measures}
    if params:
        pair["params"] = params
    return write_manifest(root / "m.toml", {"t": truth}, {"p": pred}, [pair])


def batch_command(manifest: Path, results: Path, *options: str, timeout: float = 300):
    """``python -m daskbicl batch MANIFEST --results RESULTS --workers 1 [options]`` in a new process, finished."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "daskbicl", "batch", str(manifest), "--results", str(results),
                           "--workers", "1", *options], capture_output=True, text=True, timeout=timeout)
