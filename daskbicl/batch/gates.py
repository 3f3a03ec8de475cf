"""Gates: fail a scheduled job (exit status 4) when a score is too low or fell too far.

* ``--fail-below MEASURE=VALUE``: a pair whose value of MEASURE in the run
  is below VALUE;
* ``--fail-on-drop MEASURE=DELTA``: a pair whose value of MEASURE is worse
  than its previous value (the last earlier run that had one, by manifest
  names) by more than DELTA.  Worse is lower, except for the measures whose
  perfect value is their lower bound (the errors: ``ce``, ...), where worse
  is higher.

Both are checked on the values the run stands on (scored or reused); a
failed pair is exit status 1's business, not a gate's, and a pair that
disappeared is ``--fail-on-missing``'s.  A MEASURE also selects the fields
of a record-valued measure (``ccs`` checks ``ccs.recovery`` and
``ccs.relevance``).

A gate cannot pass by accident: a MEASURE that names no field of its
measure (``mocice_bcubed.f2``) is refused when the gate is parsed, and one
that matches no row of the run (never scored, not asked for by the
manifest, filtered away by ``--truth``/``--pred``/``--measure``) is a
:class:`GateError` (exit status 2) naming the closest names the run has --
on ``batch`` before any work when the manifest and the stores' kinds
already show it (:func:`check_applies`), else once the run is recorded.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from ..errors import InputError
from .names import display_names, label, label_matches
from .results import ResultsDB
from .runlog import _filtered, _key, _query

__all__ = ["Gate", "GateError", "parse_gate", "check_gates", "check_applies", "check_missing"]

#: Statuses whose value a gate checks: the values the run stands on.
_STANDS_ON = ("scored", "reused")


class GateError(InputError):
    """A gate that would check nothing: its measure matches no row of the run (exit status 2)."""


@dataclass(frozen=True)
class Gate:
    """One gate: ``kind`` is ``"below"`` or ``"drop"``."""

    kind: str
    measure: str
    limit: float

    @property
    def option(self) -> str:
        return f"--fail-{'below' if self.kind == 'below' else 'on-drop'} {self.measure}={self.limit:g}"


def parse_gate(text: str, kind: str) -> Gate:
    """``MEASURE=VALUE`` as a :class:`Gate`; the measure must be a known one (or a field of one)."""
    from ..measures import REGISTRY, get

    option = "--fail-below" if kind == "below" else "--fail-on-drop"
    measure, sep, value = text.rpartition("=")
    measure = measure.strip()
    if not sep or not measure:
        raise InputError(f"{option} takes MEASURE=VALUE (e.g. {option} cari=0.8), got {text!r}")
    name = re.split(r"[@\[]", measure, maxsplit=1)[0]  # a label: fmeasure@pred[beta=2]
    base, dot, field = name.partition(".")
    if base not in REGISTRY:
        get(base)  # raises MeasureError naming the measures
    if dot:
        fields = REGISTRY[base].fields
        if field not in fields:
            what = (f"{base} has the fields {', '.join(fields)}" if fields else f"{base} is one value, not a record")
            close = _closest(field, fields, prefix=f"{base}.")
            raise GateError(f"{option} {text}: {name!r} is not a measure field ({what}{close})")
    try:
        limit = float(value)
    except ValueError:
        raise InputError(f"{option} {text}: {value!r} is not a number") from None
    if not math.isfinite(limit) or (kind == "drop" and limit < 0):
        raise InputError(f"{option} {text}: the {'delta' if kind == 'drop' else 'value'} must be a finite "
                         f"number{' >= 0' if kind == 'drop' else ''}")
    return Gate(kind, measure, limit)


def _lower_is_better(measure: str) -> bool:
    from ..measures import REGISTRY

    m = REGISTRY.get(measure.split(".", 1)[0])
    return m is not None and m.perfect == m.bounds[0]


def _closest(name: str, names, prefix: str = "") -> str:
    """``; did you mean 'x' or 'y'?`` naming the names of ``names`` closest to ``name`` (empty when none is),
    each after ``prefix``."""
    close = difflib.get_close_matches(name, sorted(set(names)), n=3, cutoff=0.5)
    return f"; did you mean {' or '.join(repr(prefix + c) for c in close)}?" if close else ""


def check_applies(gates: list[Gate], keys, where: str) -> None:
    """Raise :class:`GateError` for the first gate that selects none of ``keys`` (``(measure, params)``, a
    field as ``name.field``) -- what ``where`` (a run, a manifest) has."""
    keys = set(keys)
    names = display_names([label(m, p) for m, p in keys])
    for gate in gates:
        if not any(label_matches(m, p, (gate.measure,)) for m, p in keys):
            listed = ", ".join(names) if len(names) <= 12 else ", ".join(names[:12]) + ", ..."
            close = _closest(gate.measure, names + sorted({m for m, _ in keys}))
            raise GateError(f"{gate.option} checks nothing: {where} has no {gate.measure!r} "
                            f"(it has: {listed or 'no measure'}{close})")


def check_gates(db: ResultsDB, run_id: str, gates: list[Gate], *, truth=(), pred=(), measure=()) -> list[str]:
    """One line per (gate, pair, measure) that fails in run ``run_id``; empty when every gate holds.

    Only the rows ``truth``, ``pred`` and ``measure`` select are checked (see
    :func:`~daskbicl.batch.runlog.run_rows`).

    Raises
    ------
    GateError
        When a gate's measure matches no row of the run so selected.
    """
    if not gates:
        return []
    rows = _query(db)
    order = list(dict.fromkeys(r["run_id"] for r in rows))
    selected = _filtered([r for r in rows if r["run_id"] == run_id and r["measure"] != "*"], truth, pred, measure)
    filters = " selected by --truth/--pred/--measure" if truth or pred or measure else ""
    check_applies(gates, [(r["measure"], r["params"]) for r in selected], f"run {run_id}{filters}")
    mine = [r for r in selected if r["status"] in _STANDS_ON and r["value"] is not None]
    earlier = set(order[: order.index(run_id)])
    previous: dict = {}
    for r in rows:  # run order: the last earlier value wins
        if r["run_id"] in earlier and r["status"] in _STANDS_ON and r["value"] is not None:
            previous[_key(r)] = r["value"]
    out = []
    for gate in gates:
        for r in mine:
            if not label_matches(r["measure"], r["params"], (gate.measure,)):
                continue
            pair = f"pred {r['pred_name']} against truth {r['truth_name']}: {label(r['measure'], r['params'])}"
            if gate.kind == "below" and r["value"] < gate.limit:
                out.append(f"{gate.option}: {pair} = {r['value']:.6g}")
            elif gate.kind == "drop" and _key(r) in previous:
                before = previous[_key(r)]
                worse = (r["value"] - before) if _lower_is_better(r["measure"]) else (before - r["value"])
                if worse > gate.limit:
                    out.append(f"{gate.option}: {pair} went from {before:.6g} to {r['value']:.6g}")
    return out



def check_missing(db: ResultsDB, run_id: str, *, truth=(), pred=(), measure=()) -> list[str]:
    """``--fail-on-missing``: one line per pair of run ``run_id`` found ``missing`` (the run its store went; a
    pair already ``gone`` before does not fail again)."""
    rows = _filtered([r for r in _query(db, "WHERE o.run_id = ?", [run_id])], truth, pred, measure)
    seen = dict.fromkeys((r["truth_name"], r["pred_name"], r["reason"]) for r in rows if r["status"] == "missing")
    return [f"--fail-on-missing: pred {p} against truth {t} is missing: {reason}" for t, p, reason in seen]
