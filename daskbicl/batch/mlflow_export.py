"""Batch runs exported to MLflow: one parent run per batch run, one nested child run per pair (the ``mlflow`` extra).

What MLflow receives (see docs/guide/batch.md, "MLflow"):

* a **parent run** per batch run, named by its id: its status, times and
  tags (``daskbicl.run_id``, ``daskbicl.status``, the manifest, the git
  commit, the run's own tags from ``[run]`` and ``--tag``, pair counts);
* a **child run** per (truth, pred) pair the batch run saw, nested under
  the parent (``mlflow.parentRunId``) and named ``PRED vs TRUTH``; the pair
  is said in its params ``truth`` and ``pred`` (manifest names) and tags
  (``daskbicl.truth``, ``daskbicl.pred``, their paths, fingerprints, and
  ``daskbicl.pair_status``: scored, reused, missing, gone, failed, with the
  reason); its **metrics are named by the measure label alone**
  (:func:`~daskbicl.batch.names.label`, as in the gates, ``--wide`` and
  ``--format metrics``, spelled in MLflow's key characters by
  :func:`metric_key`), so ``nce`` of one algorithm sits beside ``nce`` of
  another in MLflow's run comparison; a sampled value also has
  ``KEY.half_width`` and a tag ``daskbicl.sampled/KEY``; params
  ``params/KEY`` (the full parameter set, JSON) and ``version/MEASURE``.

Exporting again never duplicates a run: a batch run already exported in
full (tag ``daskbicl.export`` = ``complete`` on its parent, written last)
is skipped; one exported in part (the export was interrupted) has its
parent and children deleted and is exported again.  Runs still
``running`` are left for a later export.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import DaskbiclError
from ..locations import redact_text
from .names import label
from .results import ResultsDB

__all__ = ["MlflowExport", "MlflowExportError", "export_mlflow", "metric_key"]

#: Characters MLflow accepts in metric, parameter and tag keys (on every platform).
_BAD_KEY = re.compile(r"[^\w.\- /]")
_MAX_KEY = 250
_MAX_VALUE = 5000
_STATUS = {"ok": "FINISHED", "failed": "FAILED", "unavailable": "FAILED", "interrupted": "KILLED", "killed": "KILLED"}
COMPLETE = "complete"


class MlflowExportError(DaskbiclError):
    """MLflow is missing, or refused the export (the message says why and names the tracking URI)."""


@dataclass
class MlflowExport:
    """What :func:`export_mlflow` did: batch run ids per outcome, and the MLflow run id of each exported one."""

    experiment: str
    experiment_id: str
    exported: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{len(self.exported)} run{'s' * (len(self.exported) != 1)} exported"]
        if self.replaced:
            parts.append(f"{len(self.replaced)} of them replacing a partial export")
        if self.skipped:
            parts.append(f"{len(self.skipped)} already exported (skipped)")
        if self.pending:
            parts.append(f"{len(self.pending)} still running (not exported: {', '.join(self.pending)})")
        return ", ".join(parts) + f" to MLflow experiment {self.experiment!r} (id {self.experiment_id})"


def _mlflow():
    """The parts of mlflow the export uses; a clear error when the extra is not installed."""
    try:
        from mlflow.entities import Metric, Param, RunTag, ViewType
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise MlflowExportError(
            "the MLflow export needs mlflow, which is not installed: pip install 'daskbicl[mlflow]' "
            "(it installs mlflow-skinny, the client without the server)"
        ) from None
    return MlflowClient, Metric, Param, RunTag, ViewType, MlflowException


def _key(text: str) -> str:
    """``text`` as an MLflow key: allowed characters only, no empty or dot path parts, at most 250 characters."""
    parts = [p for p in _BAD_KEY.sub("_", text).split("/") if p]
    key = "/".join("_" if p in (".", "..") else p for p in parts) or "_"
    if len(key) > _MAX_KEY:
        key = key[: _MAX_KEY - 9] + "~" + hashlib.sha1(text.encode()).hexdigest()[:8]
        key = _BAD_KEY.sub("_", key)
    return key


#: How a label's characters MLflow refuses in a key are spelled: ``fmeasure@pred[beta=2]`` as
#: ``fmeasure at pred beta-2``.
_SPELL = str.maketrans({"@": " at ", "[": " ", ",": " ", "=": "-", "]": None})


def metric_key(label: str) -> str:
    """The MLflow key of a measure label (:func:`~daskbicl.batch.names.label`): the label itself when MLflow
    accepts its characters, else ``@`` spelled `` at ``, ``[`` and ``,`` as a space, ``=`` as ``-``, ``]`` dropped.

    >>> metric_key("nce"), metric_key("mocice_bcubed.f1")
    ('nce', 'mocice_bcubed.f1')
    >>> metric_key("fmeasure@pred[beta=2]"), metric_key("nce[normalizer=per_axis]")
    ('fmeasure at pred beta-2', 'nce normalizer-per_axis')
    """
    return _key(" ".join(label.translate(_SPELL).split()))


def _ms(stamp: str | None) -> int | None:
    return None if stamp is None else int(datetime.fromisoformat(stamp).timestamp() * 1000)


_ROWS = """
SELECT o.truth_name, o.pred_name, o.truth, o.pred, o.truth_fp, o.pred_fp, o.measure, o.params, o.status,
       o.reason, s.value, s.exact, s.half_width, s.scored_at, s.measure_version
FROM observations o LEFT JOIN scores s ON s.id = o.score_id
WHERE o.run_id = ? ORDER BY o.truth_name, o.pred_name, o.measure, o.params, o.id
"""
_ROW = ("truth_name", "pred_name", "truth", "pred", "truth_fp", "pred_fp", "measure", "params", "status", "reason",
        "value", "exact", "half_width", "scored_at", "measure_version")


def _run_rows(db: ResultsDB, run_id: str) -> list[dict]:
    with db._sqlite("read"):
        return [dict(zip(_ROW, r)) for r in db.conn.execute(_ROWS, (run_id,)).fetchall()]


class _Keys:
    """Distinct keys for distinct (pair, measure, parameters): a clash after cleaning gets a hash suffix."""

    def __init__(self):
        self.owner: dict[str, tuple] = {}

    def __call__(self, text: str, identity: tuple) -> str:
        key = _key(text)
        if self.owner.setdefault(key, identity) != identity:
            key = _key(text[: _MAX_KEY - 12] + " " + hashlib.sha1(repr(identity).encode()).hexdigest()[:8])
            self.owner.setdefault(key, identity)
        return key


@dataclass
class _Pair:
    """What one child run holds: its name, metrics as (key, value, timestamp ms), params, tags, MLflow status."""

    name: str
    metrics: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    tags: dict = field(default_factory=dict)
    status: str = "FINISHED"


def _pair(run: dict, rows: list[dict], shared: dict) -> _Pair:
    """The child run of one pair from its rows (redacted) in the batch run ``run``."""
    first = rows[0]
    truth, pred = first["truth_name"], first["pred_name"]
    out = _Pair(f"{pred} vs {truth}"[:_MAX_VALUE], params={"truth": truth, "pred": pred})
    statuses = sorted({r["status"] for r in rows})
    reasons = sorted({r["reason"] for r in rows if r["reason"]})
    out.tags.update(shared)
    out.tags.update({"daskbicl.run_id": run["run_id"], "daskbicl.role": "pair", "daskbicl.truth": truth,
                     "daskbicl.pred": pred, "daskbicl.truth_path": first["truth"], "daskbicl.pred_path": first["pred"],
                     "daskbicl.pair_status": (", ".join(statuses)
                                              + (": " + "; ".join(reasons) if reasons else ""))[:_MAX_VALUE]})
    for role in ("truth", "pred"):
        if first[f"{role}_fp"]:
            out.tags[f"daskbicl.{role}_fingerprint"] = first[f"{role}_fp"]
    if "failed" in statuses:
        out.status = "FAILED"
    elif run["status"] in ("interrupted", "killed"):
        out.status = "KILLED"
    keys = _Keys()
    for r in rows:
        if r["measure"] == "*" or r["status"] not in ("scored", "reused"):
            continue  # a missing, gone or failed pair has no metric: its last value is never sent as current
        base = r["measure"].split(".", 1)[0]
        out.params[_key("params/" + metric_key(label(base, r["params"])))] = r["params"]
        out.params[_key(f"version/{base}")] = str(r["measure_version"])
        key = keys(metric_key(label(r["measure"], r["params"])), (r["measure"], r["params"]))
        value = float("nan") if r["value"] is None else r["value"]
        out.metrics.append((key, value, _ms(r["scored_at"])))
        if not r["exact"]:
            out.metrics.append((_key(key + ".half_width"), r["half_width"], _ms(r["scored_at"])))
            out.tags[_key(f"daskbicl.sampled/{key}")] = (
                f"sampled estimate: {value:.6g} ± {r['half_width']:.3g} (95 % interval), not an exact value")
    return out


def _entities(run: dict, rows: list[dict]) -> tuple[dict, list[_Pair]]:
    """(tags of the parent run, the child run of each pair) of one batch run."""
    # no secret of a location (a password, a signed URL's token) leaves for the tracking server
    rows = [{k: redact_text(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]
    run = {**run, "manifest": run["manifest"] and redact_text(run["manifest"])}
    grouped: dict[tuple, list] = {}
    for r in rows:
        grouped.setdefault((r["truth_name"], r["pred_name"]), []).append(r)
    shared = _shared_tags(run)
    pairs = [_pair(run, seen, shared) for seen in grouped.values()]
    sampled = sum(k.startswith("daskbicl.sampled/") for p in pairs for k in p.tags)
    tags = {**shared, "daskbicl.run_id": run["run_id"], "daskbicl.role": "batch", "daskbicl.status": run["status"],
            "daskbicl.sampled_values": str(sampled), "daskbicl.pairs": str(len(pairs))}
    if run["manifest"]:
        tags["daskbicl.manifest"] = run["manifest"]
    return tags, pairs


def _shared_tags(run: dict) -> dict:
    """Tags of the parent and of every child: the run's own tags and its git commit."""
    tags = {_key(k): str(v)[:_MAX_VALUE] for k, v in (run["tags"] or {}).items()}
    if run["git_commit"]:
        tags["daskbicl.git_commit"] = tags["mlflow.source.git.commit"] = run["git_commit"]
    return tags


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start: start + size]


class _Exporter:
    def __init__(self, uri: str, experiment: str):
        (self.Client, self.Metric, self.Param, self.RunTag, self.ViewType, self.MlflowException) = _mlflow()
        self.uri = uri
        with self.errors("connect to"):
            self.client = self.Client(tracking_uri=uri)
            found = self.client.get_experiment_by_name(experiment)
            if found is not None and found.lifecycle_stage != "active":
                raise MlflowExportError(f"MLflow experiment {experiment!r} at {uri} is deleted: restore it or "
                                        "export to another experiment")
            self.experiment_id = found.experiment_id if found else self.client.create_experiment(experiment)

    @contextlib.contextmanager
    def errors(self, doing: str):
        """MLflow's own errors as one :class:`MlflowExportError` naming the tracking URI."""
        try:
            yield
        except self.MlflowException as exc:
            text = " ".join(str(getattr(exc, "message", exc)).split())
            raise MlflowExportError(f"cannot {doing} MLflow at {self.uri}: {text}") from exc

    def existing(self, run_id: str) -> list:
        """The MLflow runs (a parent and its children) carrying the batch run ``run_id``, every page of them."""
        found, token = [], None
        with self.errors("search"):
            while True:
                page = self.client.search_runs([self.experiment_id], f"tags.`daskbicl.run_id` = '{run_id}'",
                                               run_view_type=self.ViewType.ACTIVE_ONLY, page_token=token)
                found += list(page)
                token = page.token
                if not token:
                    return found

    def write(self, run: dict, rows: list[dict]) -> str:
        tags, pairs = _entities(run, rows)
        start, end = _ms(run["started_at"]), _ms(run["finished_at"])
        with self.errors("write to"):
            parent = self.client.create_run(self.experiment_id, start_time=start, run_name=run["run_id"],
                                            tags={"daskbicl.run_id": run["run_id"]}).info.run_id
            self.log(parent, [], {}, tags)
            for pair in pairs:
                child = self.client.create_run(self.experiment_id, start_time=start, run_name=pair.name,
                                               tags={"daskbicl.run_id": run["run_id"],
                                                     "mlflow.parentRunId": parent}).info.run_id
                self.log(child, pair.metrics, pair.params, pair.tags)
                self.client.set_terminated(child, status=pair.status, end_time=end)
            self.client.set_terminated(parent, status=_STATUS.get(run["status"], "FINISHED"), end_time=end)
            self.client.set_tag(parent, "daskbicl.export", COMPLETE)  # last: the export is whole
        return parent

    def log(self, mlflow_id: str, metrics: list, params: dict, tags: dict) -> None:
        for part in _chunks([self.Metric(k, v, t, 0) for k, v, t in metrics], 1000):
            self.client.log_batch(mlflow_id, metrics=part)
        for part in _chunks([self.Param(k, v) for k, v in sorted(params.items())], 100):
            self.client.log_batch(mlflow_id, params=part)
        for part in _chunks([self.RunTag(k, v) for k, v in sorted(tags.items())], 100):
            self.client.log_batch(mlflow_id, tags=part)


def export_mlflow(results, uri: str, *, experiment: str = "daskbicl", runs=None) -> MlflowExport:
    """Export the batch runs of the results file ``results`` to the MLflow tracking server or store ``uri``.

    Parameters
    ----------
    results : str or os.PathLike
        A results file written by ``daskbicl batch``.
    uri : str
        An MLflow tracking URI: ``http://host:5000``, ``sqlite:///mlflow.db``,
        ``file:/path/mlruns`` (recent MLflow versions need
        ``MLFLOW_ALLOW_FILE_STORE=true`` for a file store), ``databricks``...
    experiment : str
        The MLflow experiment (created when missing).
    runs : iterable of str, optional
        Batch runs to export (ids, unique prefixes, ``last``, ``-N``); all by default.

    Returns
    -------
    MlflowExport
        Which runs were exported (with the MLflow run id of each one's parent run), skipped as
        already exported, exported again over a partial export, or left
        because they are still running.
    """
    from .runlog import resolve_run

    exporter = _Exporter(os.fspath(uri), experiment)
    done = MlflowExport(experiment, exporter.experiment_id)
    with ResultsDB(results, create=False) as db:
        every = db.runs()
        wanted = None if runs is None else {resolve_run(db, r) for r in runs}
        for run in every:
            if wanted is not None and run["run_id"] not in wanted:
                continue
            if run["status"] == "running":
                done.pending.append(run["run_id"])
                continue
            found = exporter.existing(run["run_id"])  # the parent and its children
            if any(r.data.tags.get("daskbicl.export") == COMPLETE for r in found):
                done.skipped.append(run["run_id"])
                continue
            for partial in found:
                with exporter.errors("replace a partial export in"):
                    exporter.client.delete_run(partial.info.run_id)
            if found:  # an export cut short: parent and children deleted, then exported again
                done.replaced.append(run["run_id"])
            done.exported[run["run_id"]] = exporter.write(run, _run_rows(db, run["run_id"]))
    return done
