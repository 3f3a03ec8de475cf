"""``results FILE --explain PAIR``: the report of ``daskbicl explain`` for a pair of the results file.

The pair is re-counted from its stores, as the batch recorded them: the
locations, the measures and their parameters (the unassigned policy
included) of its last scored values (or of run ``--run ID``).  A location
the file keeps without its secret (``https://***@host/...``, a signed URL)
and the storage options come from the run's manifest, read again (with
``--storage-option`` over its table, as ``batch`` reads it).  The stores'
fingerprints are checked against the recorded ones first: a store gone or
changed since the run is an error that says so, never a report of other
data than the score's.
"""

from __future__ import annotations

import difflib
import json
import os

from ..errors import DaskbiclError, InputError
from ..locations import MASK, redact
from .names import matches
from .results import ResultsDB
from .runlog import STANDS_ON, _query

__all__ = ["PairSource", "ExplainPairError", "find_pair", "explain_pair", "explain_results"]

#: Keys of a stored ``params`` that are not measure parameters.
_NOT_MEASURE = ("unassigned", "ci", "ci_method")


class ExplainPairError(DaskbiclError):
    """The pair cannot be explained as recorded: unknown, ambiguous, or its stores are gone or changed."""


class PairSource:
    """What the batch recorded of one pair: names, locations, fingerprints, measures and parameters, its run."""

    def __init__(self, rows: list[dict], manifest: str | None):
        first = rows[-1]
        self.truth_name, self.pred_name = first["truth_name"], first["pred_name"]
        self.truth, self.pred = first["truth"], first["pred"]
        self.truth_fp, self.pred_fp = first["truth_fp"], first["pred_fp"]
        self.run_id = first["run_id"]
        self.manifest = manifest
        self.measures = list(dict.fromkeys(r["measure"].split(".", 1)[0] for r in rows))
        self.unassigned, self.params, self.dropped = _params_of(rows)

    @property
    def name(self) -> str:
        return f"pred {self.pred_name} against truth {self.truth_name}"


def _params_of(rows: list[dict]) -> tuple[str, dict, list[str]]:
    """The unassigned policy, the measure parameters the rows agree on, and the names of those they do not."""
    policies, given = set(), {}
    conflicting: set[str] = set()
    for r in rows:
        params = json.loads(r["params"]) if r["params"] else {}
        policies.add(params.get("unassigned", "error"))
        for k, v in params.items():
            if k in _NOT_MEASURE:
                continue
            if k in given and given[k] != v:
                conflicting.add(k)
            given.setdefault(k, v)
    if len(policies) > 1:
        raise ExplainPairError(f"the pair was scored with several unassigned policies ({', '.join(sorted(policies))})"
                               ": select one with --measure")
    return policies.pop(), {k: v for k, v in given.items() if k not in conflicting}, sorted(conflicting)


def find_pair(db: ResultsDB, pattern: str, *, truth=(), run: str | None = None) -> PairSource:
    """The pair whose pred (manifest name, folder name or path, as ``--pred`` matches) is ``pattern`` (and whose
    truth ``truth`` selects): its last scored values, or those of run ``run``."""
    rows = [r for r in _query(db) if r["measure"] != "*" and r["status"] in STANDS_ON and r["value"] is not None]
    if run is not None:
        rows = [r for r in rows if r["run_id"] == run]
    chosen = [r for r in rows if matches(r, "pred", (pattern,)) and (not truth or matches(r, "truth", truth))]
    pairs = list(dict.fromkeys((r["truth_name"], r["pred_name"]) for r in chosen))
    where = f"run {run} of {db.path}" if run else str(db.path)
    if not pairs:
        names = sorted({r["pred_name"] for r in rows} | {r["pred"].rstrip("/").rsplit("/", 1)[-1] for r in rows})
        close = difflib.get_close_matches(pattern, names, n=3, cutoff=0.4)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        raise ExplainPairError(f"--explain {pattern}: no scored pair of {where} has this pred "
                               f"(preds: {listed or 'none'}{hint})")
    if len(pairs) > 1:
        listed = "; ".join(f"pred {p} against truth {t}" for t, p in pairs[:6])
        raise ExplainPairError(f"--explain {pattern} names {len(pairs)} pairs ({listed}): give the pred's manifest "
                               "name, or --truth NAME")
    mine = [r for r in chosen if (r["truth_name"], r["pred_name"]) == pairs[0]]
    last = mine[-1]["run_id"]
    mine = [r for r in mine if r["run_id"] == last]  # one run's values: one version of the stores
    with db._sqlite("read"):
        found = db.conn.execute("SELECT manifest FROM runs WHERE run_id = ?", (last,)).fetchone()
    return PairSource(mine, found[0] if found else None)


def _located(source: PairSource, storage_options: dict | None) -> tuple[str, str, dict | None]:
    """The pair's real locations and storage options: the recorded locations, or, where the file keeps them
    without their secrets or the stores need the manifest's options, the run's manifest read again."""
    from .manifest import load_manifest

    redacted = [loc for loc in (source.truth, source.pred) if MASK in loc]
    remote = any("://" in loc for loc in (source.truth, source.pred))
    manifest = None
    if source.manifest and (redacted or remote):
        try:
            manifest = load_manifest(source.manifest, storage_options)
        except DaskbiclError as exc:
            if redacted:
                raise ExplainPairError(
                    f"{source.name}: the results file keeps {redacted[0]} without its secret, and the manifest "
                    f"of run {source.run_id} cannot be read to find it: {exc}") from None
    if manifest is None:
        if redacted:
            raise ExplainPairError(f"{source.name}: the results file keeps {redacted[0]} without its secret, and "
                                   f"run {source.run_id} recorded no manifest to find it in")
        return source.truth, source.pred, storage_options
    real = {}
    for (role, location), name in manifest.names.items():
        real.setdefault((role, redact(name)), location)
    locations = []
    for role, recorded, name in (("truth", source.truth, source.truth_name), ("pred", source.pred, source.pred_name)):
        location = real.get((role, name))
        if location is None or redact(location) != recorded:
            if MASK in recorded:
                raise ExplainPairError(f"{source.name}: the manifest {source.manifest} no longer lists {role} "
                                       f"{name} at {recorded}: the store is gone since run {source.run_id}")
            location = recorded
        locations.append(location)
    return locations[0], locations[1], {**manifest.storage_options, **(storage_options or {})} or None


def check_unchanged(source: PairSource, truth: str, pred: str, storage_options: dict | None) -> None:
    """Raise :class:`ExplainPairError` when a store of the pair is gone or its content changed since the run."""
    from .fingerprint import fingerprint_stores

    found = fingerprint_stores([truth, pred], storage_options)
    for role, location, recorded in (("truth", truth, source.truth_fp), ("pred", pred, source.pred_fp)):
        info = found[os.fspath(location)]
        shown = redact(location)
        if info.error:
            raise ExplainPairError(f"{source.name}: {role} {shown} cannot be read now, so the score of run "
                                   f"{source.run_id} cannot be explained: {info.error}")
        if recorded and info.fingerprint != recorded:
            raise ExplainPairError(
                f"{source.name}: {role} {shown} changed since run {source.run_id} scored it (fingerprint "
                f"{recorded[:12]}... then, {str(info.fingerprint)[:12]}... now): a report now would explain other "
                "labels than the recorded score; run the batch again, then explain")


def explain_pair(source: PairSource, *, storage_options: dict | None = None, progress: bool = False, **options):
    """``daskbicl.explain`` of the pair as recorded (``options``: ``share``, ``threshold``), after checking its
    stores are the ones the run scored."""
    from ..measures.explain import explain

    truth, pred, storage_options = _located(source, storage_options)
    check_unchanged(source, truth, pred, storage_options)
    if not source.measures:
        raise InputError(f"{source.name}: no scored measure to explain")
    return explain(truth, pred, measures=source.measures, unassigned=source.unassigned, progress=progress,
                   storage_options=storage_options, **options, **source.params)


def explain_results(results, pred: str, *, truth=(), run: str | None = None, storage_options: dict | None = None,
                    progress: bool = False, **options):
    """``daskbicl.explain`` of the pair of the results file ``results`` whose pred ``pred`` names (as
    ``results --explain PRED``; ``truth``: patterns to choose among several truths, ``run``: a run as ``--run``
    takes it), re-counted from its stores as the batch recorded them; an :class:`xarray.Dataset`.

    Raises
    ------
    ExplainPairError
        When no pair or several match, or a store is gone or changed since the run.
    """
    from .runlog import resolve_run

    truth = (truth,) if isinstance(truth, str) else tuple(truth)
    with ResultsDB(os.fspath(results), create=False) as db:
        source = find_pair(db, pred, truth=truth, run=resolve_run(db, run) if run else None)
    return explain_pair(source, storage_options=storage_options, progress=progress, **options)
