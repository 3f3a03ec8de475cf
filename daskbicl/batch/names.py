"""How results rows name their stores and measures, and how ``--truth``/``--pred`` patterns find them.

A row's measure has one short *label* (:func:`label`), used alike by the
gates, ``results --wide``, ``--format metrics`` and the MLflow export: the
measure's name (``measure.field`` for a field of a record-valued measure)
with its default parameters implied and the others written compactly --
``aggregate`` as ``@VALUE``, the rest as ``[key=value,...]`` in key order::

    nce                      nce, normalizer = corrected (its default)
    fmeasure                 fmeasure with every default
    fmeasure@pred            aggregate = "pred"
    fmeasure@both[beta=2]    aggregate = "both", beta = 2
    cari[unassigned=cluster] scored with the unassigned policy "cluster"
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass

from ..io.store import is_remote

__all__ = ["Pair", "matches", "measure_matches", "label", "label_matches", "display_names"]


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


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def label(measure: str, params: str) -> str:
    """The short label of ``measure`` (a name or ``name.field``) with ``params`` (canonical JSON, see
    :func:`~daskbicl.batch.manifest.params_key`): default parameters implied, the others compact.

    >>> label("nce", '{"normalizer":"corrected"}')
    'nce'
    >>> label("fmeasure", '{"aggregate":"pred","beta":2.0,"clip":false,"drop_empty":false}')
    'fmeasure@pred[beta=2]'
    """
    from ..measures import REGISTRY

    record = REGISTRY.get(measure.split(".", 1)[0])
    defaults = {k: p.default for k, p in record.params.items()} if record is not None else {}
    try:
        given = json.loads(params) if params else {}
    except ValueError:
        given = {}
    if not isinstance(given, dict):
        return measure
    changed = {k: v for k, v in sorted(given.items()) if k not in defaults or defaults[k] != v}
    text = measure
    if "aggregate" in changed:
        text += "@" + _text(changed.pop("aggregate"))
    if changed:
        text += "[" + ",".join(f"{k}={_text(v)}" for k, v in changed.items()) + "]"
    return text


def label_matches(measure: str, params: str, wanted) -> bool:
    """``measure`` with ``params`` is selected by one of ``wanted``: a measure name (every parameter set, and
    every field of a record-valued one), a label (:func:`label`), or a label without its field."""
    if measure_matches(measure, wanted):
        return True
    base = measure.split(".", 1)[0]
    return label(measure, params) in wanted or label(base, params) in wanted


def display_names(names) -> list[str]:
    """``names`` (measure names, labels) as a sorted list without duplicates."""
    return sorted(set(names))


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
