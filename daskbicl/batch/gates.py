"""Gates: fail a scheduled job (exit status 4) when a score is too low or fell too far.

* ``--fail-below MEASURE=VALUE``: a pair whose value of MEASURE in the run
  is below VALUE;
* ``--fail-on-drop MEASURE=DELTA``: a pair whose value of MEASURE is worse
  than its previous value (the last earlier run that had one, by manifest
  names) by more than DELTA.  Worse is lower, except for the measures whose
  perfect value is their lower bound (the errors: ``ce``, ...), where worse
  is higher.

Both are checked on the values the run stands on (scored or reused); a
missing or failed pair is exit status 1's business, not a gate's.  A
MEASURE also selects the fields of a record-valued measure (``ccs`` checks
``ccs.recovery`` and ``ccs.relevance``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from .results import ResultsDB, measure_matches
from .runlog import _key, _query

__all__ = ["Gate", "parse_gate", "check_gates"]


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
    measure, sep, value = text.partition("=")
    measure = measure.strip()
    if not sep or not measure:
        raise InputError(f"{option} takes MEASURE=VALUE (e.g. {option} cari=0.8), got {text!r}")
    if measure.split(".", 1)[0] not in REGISTRY:
        get(measure)  # raises MeasureError naming the measures
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


def check_gates(db: ResultsDB, run_id: str, gates: list[Gate]) -> list[str]:
    """One line per (gate, pair, measure) that fails in run ``run_id``; empty when every gate holds."""
    if not gates:
        return []
    rows = _query(db)
    order = list(dict.fromkeys(r["run_id"] for r in rows))
    if run_id not in order:
        return []
    mine = [r for r in rows if r["run_id"] == run_id and r["value"] is not None]
    earlier = set(order[: order.index(run_id)])
    previous: dict = {}
    for r in rows:  # run order: the last earlier value wins
        if r["run_id"] in earlier and r["value"] is not None:
            previous[_key(r)] = r["value"]
    out = []
    for gate in gates:
        for r in mine:
            if not measure_matches(r["measure"], (gate.measure,)):
                continue
            pair = f"pred {r['pred_name']} against truth {r['truth_name']}: {r['measure']}"
            if r["params"] not in ("{}", ""):
                pair += f" {r['params']}"
            if gate.kind == "below" and r["value"] < gate.limit:
                out.append(f"{gate.option}: {pair} = {r['value']:.6g}")
            elif gate.kind == "drop" and _key(r) in previous:
                before = previous[_key(r)]
                worse = (r["value"] - before) if _lower_is_better(r["measure"]) else (before - r["value"])
                if worse > gate.limit:
                    out.append(f"{gate.option}: {pair} went from {before:.6g} to {r['value']:.6g}")
    return out

