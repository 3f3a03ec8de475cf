"""How results rows name their stores, and how ``--truth``/``--pred`` patterns find them."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass

from ..io.store import is_remote

__all__ = ["Pair", "matches", "measure_matches"]


def _located(pattern: str) -> str:
    """A path or shell pattern spelled as stores are stored: URLs as given, local paths absolute.

    Relative patterns are relative to the current folder, globs and
    literals alike (``--pred 'runs/nmf-*.zarr'`` from the folder holding
    ``runs``).  In a pattern ``*`` also matches ``/``.
    """
    if is_remote(pattern):
        return pattern
    local = pattern[len("file://") :] if pattern.startswith("file://") else pattern
    return os.path.abspath(os.path.expanduser(local))


def _like(text: str, pattern: str) -> bool:
    return text == pattern or fnmatch.fnmatchcase(text, pattern)


def matches(row: dict, role: str, patterns) -> bool:
    """``row``'s ``role`` store matches one of ``patterns``: by manifest name, folder name or path.

    A pattern matches the store's manifest name (``nmf/nmf-3.zarr``, when
    the row has one), its folder name (``nmf-3.zarr``), or its location as a
    path relative to the current folder (``runs/nmf-*.zarr``) or absolute.
    """
    where = row[role]
    names = [where.rstrip("/").rsplit("/", 1)[-1]]
    if row.get(f"{role}_name"):
        names.append(row[f"{role}_name"])
    return any(_like(n, p) for p in patterns for n in names) or any(_like(where, _located(p)) for p in patterns)


def measure_matches(name: str, wanted) -> bool:
    """``name`` is one of ``wanted`` or a field of one (``ccs.recovery`` for ``ccs``)."""
    return name in wanted or name.split(".", 1)[0] in wanted


@dataclass(frozen=True)
class Pair:
    """One (truth, pred) pair as the results know it: manifest names, locations, fingerprints."""

    truth: str
    pred: str
    truth_fp: str | None
    pred_fp: str | None
    truth_name: str
    pred_name: str

    def observation(self, run_id, measure, params, status, score_id, reason=None) -> tuple:
        return (run_id, self.truth_name, self.pred_name, self.truth, self.pred, self.truth_fp, self.pred_fp,
                measure, params, status, score_id, reason)
