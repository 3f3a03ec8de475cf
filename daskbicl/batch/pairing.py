"""Pairing by name in a manifest: each pred against its own truth (see :mod:`~daskbicl.batch.manifest`).

A ``[[pairs]]`` table pairs every pred of its groups with every truth of its
groups, unless it pairs them by name: ``match = "stem"`` (a pred with the
truth of the same folder name, its suffix left out), or a placeholder such
as ``{dataset}`` in the globs of both sides (a pred with the truth whose
placeholder has the same value).
"""

from __future__ import annotations

import os
import re

from ..io.store import is_remote

__all__ = ["FIELD", "MATCHES", "capture", "paired"]

#: ``match`` values of a ``[[pairs]]`` table: how its truths and preds are paired by name.
MATCHES = ("all", "stem")
#: A placeholder in a group's path or glob (``truth/{dataset}.zarr``): pairs its stores by name.
FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _basename(store: str) -> str:
    return store.rstrip("/").replace("\\", "/").rsplit("/", 1)[-1]


def _spelled(pattern: str, base_dir: str) -> str:
    """``pattern`` spelled as its stores are (URLs as given, local paths absolute and normalised)."""
    if is_remote(pattern):
        return pattern.rstrip("/")
    local = os.path.expanduser(pattern[len("file://"):] if pattern.startswith("file://") else pattern)
    return os.path.normpath(local if os.path.isabs(local) else os.path.join(base_dir, local))


def capture(pattern: str, base_dir: str):
    """A regular expression matching the stores ``pattern`` lists, capturing its placeholders by name."""
    out, seen = [], set()
    spelled = _spelled(pattern, base_dir)
    for piece in re.split(r"(\{[A-Za-z_][A-Za-z0-9_]*\}|\*\*|\*|\?|\[[^\]]*\])", spelled):
        field = FIELD.fullmatch(piece)
        if field:
            name = field.group(1)
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^/]+?)")
            seen.add(name)
        elif piece == "**":
            out.append(".*")
        elif piece == "*":
            out.append("[^/]*")
        elif piece == "?":
            out.append("[^/]")
        elif piece.startswith("[") and piece.endswith("]") and len(piece) > 2:
            out.append("[" + ("^" + piece[2:-1] if piece[1] == "!" else piece[1:-1]) + "]")
        else:
            out.append(re.escape(piece))
    return re.compile("".join(out) + "/?")


def _stem(store: str) -> str:
    name = _basename(store)
    for suffix in (".zarr", ".nc", ".nc4", ".netcdf"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def paired(t: str, p: str, match: str, values: dict, tn: str, pn: str) -> bool:
    """Truth ``t`` of group ``tn`` and pred ``p`` of group ``pn`` are a pair of a table with ``match``: same
    stem (``"stem"``), and the same value of every placeholder both groups' globs have."""
    if match == "stem" and _stem(t) != _stem(p):
        return False
    a, b = values.get(("truth", tn, t), {}), values.get(("pred", pn, p), {})
    return all(a[k] == b[k] for k in a.keys() & b.keys())
