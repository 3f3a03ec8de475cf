"""What the runs saw: one run's scores, two runs compared, the latest state of every pair.

Every batch run records, for every (truth, pred, measure, parameters) its
manifest names, an *observation* (table ``observations`` of the results
file): its status and, when it has one, the score row it stands on.

========  ==============================================================
status    meaning
========  ==============================================================
scored    computed by this run
reused    the inputs' content was scored before (by fingerprint): that row
missing   a store of the pair disappeared: this run is the first not to
          find it (deleted, or its glob matches it no more); the row is
          the pair's last score, listed with this status, never as current
gone      a store of the pair was found missing by an earlier run and is
          still absent: listed with its last score and this status
failed    the pair, or this measure of it, could not be scored
changed   a store changed while it was being read; nothing was recorded
========  ==============================================================

One status model for presence, used by every view and export: a pair
that disappears is ``missing`` once (the run it goes; ``batch
--fail-on-missing`` fails that night), then ``gone``; neither counts as
failed (exit status 1 is for pairs that failed to score), neither is ever
shown as current, and only the values the run stands on (``scored``,
``reused``) are compared by ``--diff`` or checked by a gate.

Pairs are known by the manifest names of their stores (``group/folder``,
see :mod:`~daskbicl.batch.manifest`), so one pair keeps one history when
the data folder moves.
"""

from __future__ import annotations

from ..errors import DaskbiclError
from .results import ResultsDB, matches, measure_matches

__all__ = ["STANDS_ON", "noise", "beyond_noise", "RUN_ROW", "DIFF_ROW", "LATEST_ROW", "resolve_run", "last_runs", "run_rows", "diff_rows", "latest_rows"]

#: Columns of :func:`run_rows`.
RUN_ROW = ("run_id", "truth_name", "pred_name", "measure", "params", "status", "value", "measure_version",
           "truth", "pred", "truth_fp", "pred_fp", "scored_at", "reason")
#: Columns of :func:`diff_rows`.
DIFF_ROW = ("truth_name", "pred_name", "measure", "params", "before", "after", "change", "noise", "beyond_noise",
            "status_before", "status_after")
#: Columns of :func:`latest_rows`.
LATEST_ROW = ("truth_name", "pred_name", "measure", "params", "value", "status", "last_run", "scored_at",
              "measure_version", "truth", "pred", "truth_fp", "pred_fp", "reason")

_QUERY = """
SELECT o.run_id, o.truth_name, o.pred_name, o.measure, o.params, o.status, s.value, s.measure_version,
       o.truth, o.pred, o.truth_fp, o.pred_fp, s.scored_at, o.reason, s.half_width
FROM observations o LEFT JOIN scores s ON s.id = o.score_id LEFT JOIN runs r ON r.run_id = o.run_id
{where}
ORDER BY r.started_at, o.run_id, o.truth_name, o.pred_name, o.measure, o.params, o.id
"""


def _query(db: ResultsDB, where: str = "", args=(), *, half_width: bool = False) -> list[dict]:
    """The observations (columns :data:`RUN_ROW`; with ``half_width`` also the half-width of the interval of
    the score each stands on, None for a value without one)."""
    with db._sqlite("read"):
        rows = db.conn.execute(_QUERY.format(where=where), list(args)).fetchall()
    columns = RUN_ROW + ("half_width",)
    return [dict(zip(columns if half_width else RUN_ROW, r)) for r in rows]


def _filtered(rows: list[dict], truth=(), pred=(), measure=()) -> list[dict]:
    if truth:
        rows = [r for r in rows if matches(r, "truth", truth)]
    if pred:
        rows = [r for r in rows if matches(r, "pred", pred)]
    if measure:
        rows = [r for r in rows if measure_matches(r["measure"], measure)]
    return rows


def resolve_run(db: ResultsDB, spec: str) -> str:
    """The run id ``spec`` names: an id, a unique prefix of one, ``last`` or ``-N`` (N runs before the last)."""
    ids = [r["run_id"] for r in db.runs()]
    if not ids:
        raise DaskbiclError(f"{db.path} records no batch run yet")
    if spec == "last":
        return ids[-1]
    if spec.startswith("-") and spec[1:].isdigit():
        back = int(spec[1:])
        if back >= len(ids):
            raise DaskbiclError(f"run {spec}: {db.path} records only {len(ids)} runs")
        return ids[-1 - back]
    found = [i for i in ids if i == spec] or [i for i in ids if i.startswith(spec)]
    if len(found) != 1:
        listed = ", ".join(ids[-5:])
        what = "no run" if not found else f"{len(found)} runs"
        raise DaskbiclError(f"{what} of {db.path} match {spec!r} (the last runs: {listed}; "
                            "'daskbicl results FILE --runs' lists them all)")
    return found[0]


def last_runs(db: ResultsDB, n: int) -> list[str]:
    """The ids of the last ``n`` runs that recorded observations, oldest first."""
    with db._sqlite("read"):
        rows = db.conn.execute(
            "SELECT r.run_id FROM runs r WHERE EXISTS (SELECT 1 FROM observations o WHERE o.run_id = r.run_id) "
            "ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?", (n,)).fetchall()
    return [r[0] for r in reversed(rows)]


def run_rows(db: ResultsDB, run_id: str, *, truth=(), pred=(), measure=(), half_width: bool = False) -> list[dict]:
    """What run ``run_id`` saw of every pair its manifest named (columns :data:`RUN_ROW`, and ``half_width``
    with ``half_width``).

    ``value`` is the score it stands on (scored or reused), None when the
    pair was missing or failed.
    """
    return _filtered(_query(db, "WHERE o.run_id = ?", [run_id], half_width=half_width), truth, pred, measure)


#: Statuses whose value a run stands on (compared, checked, exported as a current value).
STANDS_ON = ("scored", "reused")


def _key(row: dict) -> tuple:
    return row["truth_name"], row["pred_name"], row["measure"], row["params"]


def noise(half_width_before: float | None, half_width_after: float | None) -> float | None:
    """How far two values may lie apart with their intervals still overlapping: the sum of the half-widths
    (None unless both values have an interval).

    A stored half-width is the larger distance from the value to an end of
    its interval (:mod:`~daskbicl.batch.results`), so ``value ± half_width``
    holds the interval and two such spans that do not overlap mean the two
    intervals do not overlap either.
    """
    if half_width_before is None or half_width_after is None:
        return None
    return float(half_width_before) + float(half_width_after)


def beyond_noise(before: float | None, after: float | None, half_width_before: float | None,
                 half_width_after: float | None) -> bool | None:
    """The move from ``before`` to ``after`` is beyond the noise of the items: the two values' intervals
    (``value ± half_width``) do not overlap, ``|after - before| > half_width_before + half_width_after``.
    None when a value or an interval is missing.

    >>> beyond_noise(0.63, 0.61, 0.015, 0.012), beyond_noise(0.63, 0.55, 0.015, 0.012)
    (False, True)
    """
    limit = noise(half_width_before, half_width_after)
    if before is None or after is None or limit is None:
        return None
    return abs(after - before) > limit


def diff_rows(db: ResultsDB, before: str, after: str, *, truth=(), pred=(), measure=(),
              changed: bool = False) -> list[dict]:
    """Per pair and measure named by either run: the value before, after, and the change (columns :data:`DIFF_ROW`).

    ``before``/``after`` are the values each run stands on (scored or
    reused; None for a pair missing, gone or failed in it); ``change`` is
    ``after - before`` when both runs have one, else None (the statuses say
    why).  ``changed``: only the rows that moved (a change other than 0, or
    another status; scored and reused count as one status there, both being
    a value the run stands on).  Rows are sorted by pair, measure, parameters.

    ``noise`` and ``beyond_noise`` need both values scored with intervals
    (the manifest's ``ci``; else None): ``noise`` is the sum of the two
    half-widths, ``beyond_noise`` says whether ``|change|`` exceeds it, that
    is whether the two runs' intervals do not overlap (:func:`beyond_noise`).
    """
    a = {_key(r): r for r in run_rows(db, before, truth=truth, pred=pred, measure=measure, half_width=True)
         if r["measure"] != "*"}
    b = {_key(r): r for r in run_rows(db, after, truth=truth, pred=pred, measure=measure, half_width=True)
         if r["measure"] != "*"}
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, {}), b.get(key, {})
        vx = x.get("value") if x.get("status") in STANDS_ON else None
        vy = y.get("value") if y.get("status") in STANDS_ON else None
        hx = x.get("half_width") if vx is not None else None
        hy = y.get("half_width") if vy is not None else None
        row = dict(zip(DIFF_ROW, (*key, vx, vy, None if vx is None or vy is None else vy - vx,
                                  noise(hx, hy) if vx is not None and vy is not None else None,
                                  beyond_noise(vx, vy, hx, hy), x.get("status", "absent"),
                                  y.get("status", "absent"))))
        same = row["status_before"] == row["status_after"] or (vx is not None and vy is not None)
        if changed and same and (row["change"] == 0 or (vx is None and vy is None)):
            continue
        out.append(row)
    return out


def latest_rows(db: ResultsDB, *, truth=(), pred=(), measure=()) -> list[dict]:
    """Per pair (by manifest names), measure and parameters: the last value and what the last run saw.

    ``status`` (columns :data:`LATEST_ROW`):

    * ``current``: the last run that named it scored or reused it;
    * ``missing`` / ``gone``: the last run found a store missing (the run it
      went) or still gone; ``value`` is the last value it had;
    * ``failed``: the last run could not score it (also when a store changed
      while read); ``value`` is the last value it had, if any;
    * ``stale``: its value was scored with another version of the measure's
      definition than this daskbicl's (a run rescores it).
    """
    from ..measures import REGISTRY

    last: dict = {}
    valued: dict = {}
    for r in _filtered(_query(db), truth, pred, measure):
        if r["measure"] == "*":
            continue
        last[_key(r)] = r
        if r["status"] in STANDS_ON:
            valued[_key(r)] = r
    out = []
    for key in sorted(last):
        seen, had = last[key], valued.get(key, {})
        if seen["status"] in ("scored", "reused"):
            current = REGISTRY.get(key[2].split(".", 1)[0])
            status = "stale" if current is not None and seen["measure_version"] != current.version else "current"
        else:
            status = seen["status"] if seen["status"] in ("missing", "gone") else "failed"
        out.append(dict(
            truth_name=key[0], pred_name=key[1], measure=key[2], params=key[3], value=had.get("value"), status=status,
            last_run=seen["run_id"], scored_at=had.get("scored_at"), measure_version=had.get("measure_version"),
            truth=seen["truth"], pred=seen["pred"], truth_fp=had.get("truth_fp", seen["truth_fp"]),
            pred_fp=had.get("pred_fp", seen["pred_fp"]), reason=seen["reason"],
        ))
    return out
