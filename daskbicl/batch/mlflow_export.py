"""Batch runs exported to MLflow: one MLflow run per batch run (the optional ``mlflow`` extra).

What one MLflow run holds (see docs/guide/batch.md, "MLflow"):

* **metrics** ``TRUTH/PRED/MEASURE`` (manifest names of the stores, the
  measure or ``measure.field``, then the parameters that differ from the
  measure's defaults, ``fmeasure beta-2``), the value the batch run stands
  on (scored by it or reused), timestamped when that value was scored;
  a sampled value also has ``KEY.half_width`` (its 95 % half-width) and
  a tag ``daskbicl.sampled/KEY`` saying it is a sampled estimate;
* **params** ``params/MEASURE_LABEL``: the full parameter set of each
  measure label as canonical JSON, ``version/MEASURE``: its definition's
  version;
* **tags** ``daskbicl.run_id`` (the batch run), ``daskbicl.status``, the
  manifest, the run's own tags (``[run]``, ``--tag``) under their keys, the
  git commit (also as MLflow's ``mlflow.source.git.commit``), per store
  ``daskbicl.fingerprint/NAME`` and ``daskbicl.path/NAME``, per pair
  ``daskbicl.pair/TRUTH/PRED``: what the run saw (scored, reused, missing,
  failed, changed, with the reason);
* start and end times of the batch run; status FINISHED (``ok``), FAILED
  (some pairs failed) or KILLED (interrupted, killed).

Exporting again never duplicates a run: a batch run already exported in
full (tag ``daskbicl.export`` = ``complete``, written last) is skipped; one
exported in part (the export was interrupted) is deleted and exported
again.  Runs still ``running`` are left for a later export.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import DaskbiclError
from ..locations import redact_text
from .results import ResultsDB

__all__ = ["MlflowExport", "MlflowExportError", "export_mlflow", "metric_label"]

#: Characters MLflow accepts in metric, parameter and tag keys (on every platform).
_BAD_KEY = re.compile(r"[^\w.\- /]")
_MAX_KEY = 250
_MAX_VALUE = 5000
_STATUS = {"ok": "FINISHED", "failed": "FAILED", "interrupted": "KILLED", "killed": "KILLED"}
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


def _short(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def metric_label(measure: str, params: str) -> str:
    """``measure`` and the parameters of ``params`` (canonical JSON) that differ from the measure's defaults.

    >>> metric_label("fmeasure", '{"aggregate":"truth","beta":2.0,"clip":false,"drop_empty":false}')
    'fmeasure beta-2'
    >>> metric_label("fmeasure.precision", '{"aggregate":"truth","beta":1.0,"clip":false,"drop_empty":false}')
    'fmeasure.precision'
    """
    from ..measures import REGISTRY

    record = REGISTRY.get(measure.split(".", 1)[0])
    defaults = {k: p.default for k, p in record.params.items()} if record is not None else {}
    given = json.loads(params) if params else {}
    if not isinstance(given, dict):
        return measure
    changed = [f"{k}-{_short(v)}" for k, v in sorted(given.items()) if k not in defaults or defaults[k] != v]
    return " ".join([measure, *changed])


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


def _entities(run: dict, rows: list[dict]) -> tuple[list, dict, dict]:
    """(metrics as (key, value, timestamp ms), params, tags) of one batch run."""
    # no secret of a location (a password, a signed URL's token) leaves for the tracking server
    rows = [{k: redact_text(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]
    run = {**run, "manifest": run["manifest"] and redact_text(run["manifest"])}
    keys = _Keys()
    metrics, params, tags = [], {}, {}
    pairs: dict[tuple, list] = {}
    sampled = 0
    for r in rows:
        pairs.setdefault((r["truth_name"], r["pred_name"]), []).append(r)
        for role in ("truth", "pred"):
            if r[f"{role}_fp"]:
                tags[_key(f"daskbicl.fingerprint/{r[f'{role}_name']}")] = r[f"{role}_fp"]
            tags[_key(f"daskbicl.path/{r[f'{role}_name']}")] = r[role]
        if r["measure"] == "*" or r["status"] not in ("scored", "reused"):
            continue
        base = r["measure"].split(".", 1)[0]
        params[_key("params/" + metric_label(base, r["params"]))] = r["params"]
        params[_key(f"version/{base}")] = str(r["measure_version"])
        label = metric_label(r["measure"], r["params"])
        key = keys(f"{r['truth_name']}/{r['pred_name']}/{label}", (r["truth_name"], r["pred_name"], r["measure"],
                                                                    r["params"]))
        value = float("nan") if r["value"] is None else r["value"]
        metrics.append((key, value, _ms(r["scored_at"])))
        if not r["exact"]:
            sampled += 1
            metrics.append((_key(key + ".half_width"), r["half_width"], _ms(r["scored_at"])))
            tags[_key(f"daskbicl.sampled/{key}")] = (
                f"sampled estimate: {value:.6g} ± {r['half_width']:.3g} (95 % interval), not an exact value")
    for (truth_name, pred_name), seen in pairs.items():
        statuses = sorted({r["status"] for r in seen})
        reasons = sorted({r["reason"] for r in seen if r["reason"]})
        tags[_key(f"daskbicl.pair/{truth_name}/{pred_name}")] = (
            ", ".join(statuses) + (": " + "; ".join(reasons) if reasons else ""))[:_MAX_VALUE]
    tags.update(_run_tags(run, sampled))
    return metrics, params, tags


def _run_tags(run: dict, sampled: int) -> dict:
    tags = {_key(k): str(v)[:_MAX_VALUE] for k, v in (run["tags"] or {}).items()}
    tags.update({"daskbicl.run_id": run["run_id"], "daskbicl.status": run["status"],
                 "daskbicl.sampled_values": str(sampled)})
    if run["manifest"]:
        tags["daskbicl.manifest"] = run["manifest"]
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
        with self.errors("search"):
            return self.client.search_runs([self.experiment_id], f"tags.`daskbicl.run_id` = '{run_id}'",
                                           run_view_type=self.ViewType.ACTIVE_ONLY)

    def write(self, run: dict, rows: list[dict]) -> str:
        metrics, params, tags = _entities(run, rows)
        with self.errors("write to"):
            made = self.client.create_run(self.experiment_id, start_time=_ms(run["started_at"]),
                                          run_name=run["run_id"], tags={"daskbicl.run_id": run["run_id"]})
            mlflow_id = made.info.run_id
            for part in _chunks([self.Metric(k, v, t, 0) for k, v, t in metrics], 1000):
                self.client.log_batch(mlflow_id, metrics=part)
            for part in _chunks([self.Param(k, v) for k, v in sorted(params.items())], 100):
                self.client.log_batch(mlflow_id, params=part)
            for part in _chunks([self.RunTag(k, v) for k, v in sorted(tags.items())], 100):
                self.client.log_batch(mlflow_id, tags=part)
            self.client.set_terminated(mlflow_id, status=_STATUS.get(run["status"], "FINISHED"),
                                       end_time=_ms(run["finished_at"]))
            self.client.set_tag(mlflow_id, "daskbicl.export", COMPLETE)  # last: the export is whole
        return mlflow_id


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
        Which runs were exported (with their MLflow run ids), skipped as
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
            found = exporter.existing(run["run_id"])
            if any(r.data.tags.get("daskbicl.export") == COMPLETE for r in found):
                done.skipped.append(run["run_id"])
                continue
            for partial in found:
                with exporter.errors("replace a partial export in"):
                    exporter.client.delete_run(partial.info.run_id)
            if found:
                done.replaced.append(run["run_id"])
            done.exported[run["run_id"]] = exporter.write(run, _run_rows(db, run["run_id"]))
    return done
