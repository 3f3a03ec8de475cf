"""Gates: fail a scheduled job (exit status 4) when a score is too low or fell too far.

* ``--fail-below MEASURE=VALUE``: a pair whose value of MEASURE in the run
  is below VALUE;
* ``--fail-on-drop MEASURE=DELTA``: a pair whose value of MEASURE is worse
  than its previous value (the last earlier run that had one, by manifest
  names) by more than DELTA.  Worse is lower, except for the measures whose
  perfect value is their lower bound (the errors: ``ce``, ...), where worse
  is higher.
* ``--fail-on-significant-drop MEASURE``: a pair whose value of MEASURE is
  worse than its previous value (the same pair, measure and parameters,
  the ``ci`` level included, in the last earlier run that had one) *and*
  whose interval does not overlap the previous one: with the half-widths
  the batch stores (``value ± half_width`` holds each bootstrap interval),
  ``|value - previous| > half_width + previous half_width``.  A move that
  stays within the noise of the items passes.  It needs intervals: a row of
  the run scored without the manifest's ``ci`` key is a :class:`GateError`
  (exit status 2) that says to add it -- the gate never passes for want of
  an interval.  A pair with no earlier value to compare (a new pair, or the
  first night with ``ci``) is not checked, as with ``--fail-on-drop``, and
  is counted on stderr.

Each is checked on the values the run stands on (scored or reused); a
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
from .runlog import _filtered, _key, _query, beyond_noise

__all__ = ["Gate", "GateError", "parse_gate", "check_gates", "check_applies", "check_missing"]

#: Statuses whose value a gate checks: the values the run stands on.
_STANDS_ON = ("scored", "reused")


class GateError(InputError):
    """A gate that would check nothing: its measure matches no row of the run (exit status 2)."""


@dataclass(frozen=True)
class Gate:
    """One gate: ``kind`` is ``"below"``, ``"drop"`` or ``"noise"`` (``--fail-on-significant-drop``, no limit)."""

    kind: str
    measure: str
    limit: float = 0.0

    @property
    def option(self) -> str:
        if self.kind == "noise":
            return f"{NOISE_OPTION} {self.measure}"
        return f"--fail-{'below' if self.kind == 'below' else 'on-drop'} {self.measure}={self.limit:g}"


#: The option of the gate that tolerates the noise of the items.
NOISE_OPTION = "--fail-on-significant-drop"


def parse_gate(text: str, kind: str) -> Gate:
    """``MEASURE=VALUE`` (``kind`` ``"below"`` or ``"drop"``) or ``MEASURE`` (``"noise"``) as a :class:`Gate`;
    the measure must be a known one (or a field of one)."""
    option = {"below": "--fail-below", "drop": "--fail-on-drop", "noise": NOISE_OPTION}[kind]
    if kind == "noise":
        measure = text.strip()
        if not measure or "=" in re.sub(r"\[[^\]]*\]", "", measure):  # a label's [key=value] is a name
            raise InputError(f"{option} takes a MEASURE (e.g. {option} cari): the noise is each run's interval, "
                             f"not a number (--fail-on-drop MEASURE=DELTA takes one), got {text!r}")
        _check_measure(measure, option, text)
        return Gate(kind, measure)
    measure, sep, value = text.rpartition("=")
    measure = measure.strip()
    if not sep or not measure:
        raise InputError(f"{option} takes MEASURE=VALUE (e.g. {option} cari=0.8), got {text!r}")
    _check_measure(measure, option, text)
    try:
        limit = float(value)
    except ValueError:
        raise InputError(f"{option} {text}: {value!r} is not a number") from None
    if not math.isfinite(limit) or (kind == "drop" and limit < 0):
        raise InputError(f"{option} {text}: the {'delta' if kind == 'drop' else 'value'} must be a finite "
                         f"number{' >= 0' if kind == 'drop' else ''}")
    return Gate(kind, measure, limit)


def _check_measure(measure: str, option: str, text: str) -> None:
    """``measure`` (a label such as ``fmeasure@pred[beta=2]``) names a known measure, or a field of one."""
    from ..measures import REGISTRY, get

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
        if gate.kind == "noise":
            bare = sorted({label(m, p) for m, p in keys
                           if label_matches(m, p, (gate.measure,)) and "ci" not in _params(p)})
            if bare:
                raise GateError(f"{gate.option} compares intervals, and {where} scores "
                                f"{', '.join(bare[:6])}{', ...' if len(bare) > 6 else ''} without one: add "
                                "ci = 0.95 to its [[pairs]] table (the manifest key ci: bootstrap intervals, "
                                "docs/guide/batch.md), or gate on --fail-on-drop MEASURE=DELTA")


def _params(text) -> dict:
    import json

    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def check_gates(db: ResultsDB, run_id: str, gates: list[Gate], *, truth=(), pred=(), measure=(),
                notes: list | None = None) -> list[str]:
    """One line per (gate, pair, measure) that fails in run ``run_id``; empty when every gate holds.

    ``notes`` (a list) receives one line per noise gate that had values it
    could not compare (no earlier value with an interval).  Only the rows ``truth``, ``pred`` and ``measure`` select are checked (see
    :func:`~daskbicl.batch.runlog.run_rows`).

    Raises
    ------
    GateError
        When a gate's measure matches no row of the run so selected, or a
        noise gate's matches a value scored without an interval.
    """
    notes = [] if notes is None else notes
    if not gates:
        return []
    rows = _query(db, half_width=True)
    order = list(dict.fromkeys(r["run_id"] for r in rows))
    selected = _filtered([r for r in rows if r["run_id"] == run_id and r["measure"] != "*"], truth, pred, measure)
    filters = " selected by --truth/--pred/--measure" if truth or pred or measure else ""
    check_applies(gates, [(r["measure"], r["params"]) for r in selected], f"run {run_id}{filters}")
    check_applies([g for g in gates if g.kind == "noise"],
                  [(r["measure"], r["params"]) for r in selected if r["status"] in _STANDS_ON],
                  f"run {run_id}{filters}")  # every value a noise gate checks has an interval
    mine = [r for r in selected if r["status"] in _STANDS_ON and r["value"] is not None]
    earlier = set(order[: order.index(run_id)])
    previous: dict = {}
    for r in rows:  # run order: the last earlier value wins
        if r["run_id"] in earlier and r["status"] in _STANDS_ON and r["value"] is not None:
            previous[_key(r)] = r
    out = []
    for gate in gates:
        unchecked = 0
        for r in mine:
            if not label_matches(r["measure"], r["params"], (gate.measure,)):
                continue
            pair = f"pred {r['pred_name']} against truth {r['truth_name']}: {label(r['measure'], r['params'])}"
            before = previous.get(_key(r))
            if gate.kind == "below":
                if r["value"] < gate.limit:
                    out.append(f"{gate.option}: {pair} = {r['value']:.6g}")
                continue
            if before is None:
                unchecked += 1
                continue
            worse = (r["value"] - before["value"]) if _lower_is_better(r["measure"]) else (before["value"] - r["value"])
            if gate.kind == "drop" and worse > gate.limit:
                out.append(f"{gate.option}: {pair} went from {before['value']:.6g} to {r['value']:.6g}")
            elif gate.kind == "noise" and worse > 0 and beyond_noise(before["value"], r["value"],
                                                                    before["half_width"], r["half_width"]):
                out.append(f"{gate.option}: {pair} went from {_interval(before)} to {_interval(r)}: the intervals "
                           f"do not overlap")
            elif gate.kind == "noise" and (before["half_width"] is None or r["half_width"] is None):
                unchecked += 1  # a value whose bootstrap gave no interval (a NaN replicate): said, not passed
        if gate.kind == "noise" and unchecked:
            notes.append(f"{gate.option}: {unchecked} value{'s' * (unchecked > 1)} of run {run_id} had no earlier "
                         "value with an interval to compare with (a new pair, the first run with ci, or an interval "
                         "that could not be computed)")
    return out


def _interval(row: dict) -> str:
    return f"{row['value']:.6g} ± {row['half_width']:.3g}"



def check_missing(db: ResultsDB, run_id: str, *, truth=(), pred=(), measure=()) -> list[str]:
    """``--fail-on-missing``: one line per pair of run ``run_id`` found ``missing`` (the run its store went; a
    pair already ``gone`` before does not fail again)."""
    rows = _filtered([r for r in _query(db, "WHERE o.run_id = ?", [run_id])], truth, pred, measure)
    seen = dict.fromkeys((r["truth_name"], r["pred_name"], r["reason"]) for r in rows if r["status"] == "missing")
    return [f"--fail-on-missing: pred {p} against truth {t} is missing: {reason}" for t, p, reason in seen]
