"""``daskbicl batch`` and ``daskbicl results`` (registered by :mod:`daskbicl.cli`).

Exit codes a scheduler can act on: 0 every pair scored (or already scored;
a pair whose store disappeared is reported ``missing`` once, then listed
``gone``, and a glob that matches nothing is a warning: none of these is a
failure), 1 some pairs failed to score (each recorded with its reason; the
others scored), 2 something to fix: a bad manifest or usage, a gate that
would check nothing (its measure matches no row), a results file that
cannot be used (unwritable, corrupt, disk full, another program's): the
message names the manifest line or the file; 3 retry later: the cluster
failed (the scheduler unreachable or lost, no worker) or another batch
holds the results file; 4 a gate failed (``--fail-below``,
``--fail-on-drop``, ``--fail-on-significant-drop``, ``--fail-on-missing``; the offending pairs are
printed), after everything was scored and recorded.  4 wins over 1.  The
results file is opened and locked before any cluster is started.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import sys

from ..clitools import (
    add_cluster_args,
    add_progress_arg,
    add_storage_option,
    check_figure_path,
    cluster,
    progress_wanted,
    storage_options_of,
    write_output,
)
from ..errors import DaskbiclError, InputError
from ..locations import redact, redact_text

__all__ = ["add_parsers", "cmd_batch", "cmd_results"]

FORMATS = ("table", "csv", "json", "parquet", "metrics", "markdown")
EXIT_GATE = 4
_TABLE_SCORES = ("truth", "pred", "measure", "params", "value", "scored_at")
_TABLE_FAILURES = ("truth", "pred", "measures", "reason", "failed_at")


def _quiet_worker_logs() -> None:
    """On a local cluster's workers: a failed task is reported once, by the batch, not with a traceback."""
    import logging

    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _connect(args):
    """The cluster of ``--scheduler`` (or a new local one), entered only when there is work; the workers'
    compiles said on stderr, and with ``--warm`` every kernel compiled first."""
    from ..warmup import compile_notices

    with cluster(args.scheduler, args.workers) as client:
        if not args.scheduler:
            client.run(_quiet_worker_logs)
        with compile_notices(client, warm=args.warm):
            yield client


def _dry_run(manifest, results: str, force: bool) -> int:
    """Print what a run would do; write nothing.  1 when some pair would fail."""
    from .results import ResultsDB
    from .runner import plan, survey

    stores = survey(manifest)
    path, create = (results, False) if os.path.exists(results) else (":memory:", True)
    with ResultsDB(path, create=create) as db:
        the_plan = plan(manifest, db, force=force, stores=stores)
    print(the_plan.describe(), file=sys.stderr)
    for job in the_plan.jobs:
        state = "score" if job.work else (job.absent or ("fail" if job.errors else "skip"))
        detail = "; ".join(dict.fromkeys(reason for _, reason in job.errors))
        print(redact_text(f"{state}\t{job.truth}\t{job.pred}" + (f"\t{detail}" if detail else "")))
    for line in the_plan.warnings():
        print(f"daskbicl: warning: {redact_text(line)}", file=sys.stderr)
    return 1 if any(job.errors and not job.absent for job in the_plan.jobs) else 0


def cmd_batch(args) -> int:
    from ..clitools import LOCAL_SCHEDULERS
    from .manifest import load_manifest
    from .runner import run_batch

    if args.scheduler in LOCAL_SCHEDULERS:  # batch streams pairs through futures: it needs distributed
        raise InputError(f"batch runs on a Dask cluster: --scheduler takes an address (tcp://host:8786) or "
                         f"'local' (a local cluster of worker processes), not {args.scheduler!r}")
    manifest = load_manifest(args.manifest, storage_options_of(args))  # every manifest error, before any work
    results = args.results or manifest.results
    if args.dry_run:
        return _dry_run(manifest, results, args.force)
    gates = _gates(args)
    tags = dict(_tag(t) for t in args.tag or ())
    # a cluster given by address: its workers hash the stores (where the chunks will be read); the local
    # default hashes in this process's threads (same machine) and starts no cluster on a night with nothing new
    on_cluster = bool(args.scheduler) and args.scheduler != "local"
    report = run_batch(manifest, results, connect=lambda: _connect(args), force=args.force,
                       progress=progress_wanted(args), out=sys.stderr, tags=tags, hash_on_cluster=on_cluster,
                       gates=gates)
    for line in report.warnings:
        print(redact_text(f"daskbicl: warning: {line}"), file=sys.stderr)
    for truth, pred, reason in report.absent:
        print(redact_text(f"daskbicl: missing: pred {pred} against truth {truth}: {reason}"), file=sys.stderr)
    for truth, pred, reason in report.failures:
        print(redact_text(f"daskbicl: failed: pred {pred} against truth {truth}: {reason}"), file=sys.stderr)
    if args.json:
        print(json.dumps({
            "pairs": report.pairs, "scored": report.scored, "skipped": report.skipped,
            "failed": report.failed, "missing": report.missing, "gone": report.gone, "rows": report.rows,
            "seconds": round(report.seconds, 3), "results": report.results, "run_id": report.run_id,
            "failures": [{"truth": redact(t), "pred": redact(p), "reason": redact_text(r)}
                         for t, p, r in report.failures],
            "absent": [{"truth": redact(t), "pred": redact(p), "reason": redact_text(r)}
                       for t, p, r in report.absent],
            "unavailable": [{"truth": redact(t), "pred": redact(p), "reason": redact_text(r)}
                            for t, p, r in report.unavailable],
            "warnings": [redact_text(w) for w in report.warnings],
        }))
    else:
        print(report.summary())
    if (gates or args.fail_on_missing) and report.run_id:
        from .results import ResultsDB

        with ResultsDB(report.results, create=False) as db:
            if _report_gates(db, report.run_id, gates, missing=args.fail_on_missing):
                return EXIT_GATE
    return report.exit_code


def _tag(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise InputError(f"--tag takes KEY=VALUE (e.g. --tag model=nmf-2.1), got {text!r}")
    return key.strip(), value


def _gates(args) -> list:
    from .gates import parse_gate

    return ([parse_gate(t, "below") for t in args.fail_below or ()]
            + [parse_gate(t, "drop") for t in args.fail_on_drop or ()]
            + [parse_gate(t, "noise") for t in args.fail_on_significant_drop or ()])


def _report_gates(db, run_id: str, gates: list, *, missing: bool = False, filters: dict | None = None) -> bool:
    """Check ``gates`` (and, with ``missing``, ``--fail-on-missing``) on run ``run_id``; print each offending
    pair on stderr.  True when a gate failed."""
    from .gates import check_gates, check_missing

    notes: list[str] = []
    failed = check_gates(db, run_id, gates, notes=notes, **(filters or {}))
    for line in notes:
        print(f"daskbicl: note: {line}", file=sys.stderr)
    if missing:
        failed += check_missing(db, run_id, **(filters or {}))
    for line in failed:
        print(f"daskbicl: gate failed: {line}", file=sys.stderr)
    if failed:
        print(f"daskbicl: {len(failed)} gate failure{'s' * (len(failed) > 1)} in run {run_id} (exit status 4)",
              file=sys.stderr)
    return bool(failed)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):  # --diff's beyond_noise
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6f}" if math.isfinite(value) else str(value)
    return str(value)


def _table(rows: list[dict], columns) -> str:
    text = [[_cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in text)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(t.ljust(w) for t, w in zip(row, widths)).rstrip() for row in text]
    return "\n".join(lines) + "\n"


def _json_value(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def _write_parquet(rows: list[dict], columns, output: str, storage_options: dict | None = None) -> None:
    """Parquet with typed columns: timestamps as UTC datetimes, ``params`` as a struct."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DaskbiclError(
            "parquet export needs pyarrow, which is not installed: pip install 'daskbicl[parquet]' "
            "(or use --format csv)"
        ) from None
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(columns))
    for column in frame.columns:
        if column.endswith("_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    if "params" in frame.columns:
        frame["params"] = [_params(p) or None for p in frame["params"]]
    write_output(output, lambda tmp: frame.to_parquet(tmp, index=False), storage_options)


def _params(text):
    """A ``params`` cell as a dict (``{}`` for none; the list of a failure with several parameter sets as is)."""
    if not isinstance(text, str) or not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {"sets": value}


def short_params(text) -> str:
    """``{"beta":0.5,"clip":false}`` as ``beta=0.5, clip=false`` (empty for none).

    >>> short_params('{"beta":0.5,"clip":false,"normalizer":"corrected"}')
    'beta=0.5, clip=false, normalizer=corrected'
    """
    return ", ".join(f"{k}={_short(v)}" for k, v in _params(text).items() if k != "sets")


def _short(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _check_measures(names, db) -> None:
    """Every ``--measure`` is a known measure (or a field of one, or a name in the file)."""
    from ..measures import REGISTRY, get

    stored = db.measures()
    for name in names:
        if name not in stored and name.split(".", 1)[0] not in REGISTRY:
            get(name)  # raises MeasureError naming the available measures


#: Columns of the ``table`` format, per view.
_TABLE = {
    "scores": _TABLE_SCORES,
    "failures": _TABLE_FAILURES,
    "latest": ("truth_name", "pred_name", "measure", "params", "value", "status", "last_run"),
    "run": ("truth_name", "pred_name", "measure", "params", "status", "value"),
    "diff": ("truth_name", "pred_name", "measure", "params", "before", "after", "change", "beyond_noise",
             "status_after"),
    "runs": ("run_id", "started_at", "finished_at", "status", "pairs", "scored", "skipped", "failed", "missing",
             "gone", "tags", "git_commit"),
}


def _view(args, db) -> tuple[str, list[dict], tuple]:
    """(view name, rows, columns) that ``results`` was asked for."""
    from .results import FAILURE_COLUMNS, RUN_VIEW, SCORE_COLUMNS
    from .runlog import (
        DIFF_ROW,
        LATEST_ROW,
        RUN_ROW,
        diff_rows,
        last_runs,
        latest_rows,
        resolve_run,
        run_rows,
    )

    filters = dict(truth=args.truth or (), pred=args.pred or (), measure=args.measure or ())
    if args.changed and args.diff is None:
        raise InputError("--changed keeps the rows of --diff that moved: use it with --diff")
    if args.runs:
        return "runs", db.runs(), RUN_VIEW
    if args.diff is not None:
        if len(args.diff) > 2:
            raise InputError("--diff takes at most two runs: --diff [BEFORE [AFTER]]")
        if len(args.diff) == 2:
            before, after = (resolve_run(db, x) for x in args.diff)
        else:
            ids = last_runs(db, 2)
            if args.diff:  # that run against the one before it
                every, after = last_runs(db, 1 << 62), resolve_run(db, args.diff[0])
                ids = every[max(0, every.index(after) - 1): every.index(after) + 1] if after in every else []
            if len(ids) < 2:
                raise DaskbiclError(f"--diff needs two runs that recorded pairs; {db.path} has {len(ids)}")
            before, after = ids
        print(f"changes from run {before} to run {after}", file=sys.stderr)
        return "diff", diff_rows(db, before, after, **filters, changed=args.changed), DIFF_ROW
    if args.run:
        return "run", run_rows(db, resolve_run(db, args.run), **filters), RUN_ROW
    if args.failures:
        return "failures", db.failures(**filters), FAILURE_COLUMNS
    if args.latest or args.wide or args.format == "metrics":
        return "latest", latest_rows(db, **filters), LATEST_ROW
    return "scores", db.scores(**filters), SCORE_COLUMNS + ("truth_name", "pred_name")


#: The statuses whose values ``--wide`` and ``--format metrics`` export: values that are current.
_CURRENT = ("current", "stale", "scored", "reused")


def _current(rows: list[dict]) -> list[dict]:
    """The rows whose value is current (``--wide``, ``--format metrics``): a pair missing, gone or failed is
    left out, said once on stderr, so a reader of the export never takes a last value for a current one."""
    kept = [r for r in rows if r["measure"] != "*" and r["status"] in _CURRENT]
    left: dict = {}
    for r in rows:
        if r["status"] not in _CURRENT:
            left.setdefault(r["status"], set()).add((r["truth_name"], r["pred_name"]))
    if left:
        listed = ", ".join(f"{len(pairs)} {status}" for status, pairs in sorted(left.items()))
        print(f"daskbicl: pairs left out of the export ({listed}): their values are not current; --latest or "
              "--run lists them with their status", file=sys.stderr)
    return kept


def _wide(rows: list[dict], view: str) -> tuple[list[dict], tuple]:
    """One row per (truth, pred), one column per measure label (:func:`~daskbicl.batch.names.label`), current
    values only."""
    from .names import label

    if view not in ("latest", "run"):
        raise InputError("--wide pivots one value per pair and measure: use it with --latest (the default for "
                         "--wide) or --run ID")
    table: dict = {}
    columns: dict = {}
    for r in _current(rows):
        name = label(r["measure"], r["params"])
        columns[name] = None
        table.setdefault((r["truth_name"], r["pred_name"]), {})[name] = r["value"]
    names = ("truth_name", "pred_name", *sorted(columns))
    return [{"truth_name": t, "pred_name": p, **{c: v.get(c) for c in columns}}
            for (t, p), v in sorted(table.items())], names


def _metrics(rows: list[dict]) -> dict:
    """DVC-style metrics: ``{truth name: {pred name: {label: value}}}``, current values only."""
    from .names import label

    out: dict = {}
    for r in _current(rows):
        out.setdefault(r["truth_name"], {}).setdefault(r["pred_name"], {})[label(r["measure"], r["params"])] = \
            _json_value(r["value"])
    return out


def _flat_params(rows: list[dict], columns) -> tuple[list[dict], tuple]:
    """Rows with one ``param_<name>`` column per parameter (CSV, Parquet: parameters as columns)."""
    if "params" not in columns:
        return rows, tuple(columns)
    names = sorted({k for r in rows for k in _params(r["params"])})
    extra = tuple(f"param_{k}" for k in names)
    out = [{**r, **{f"param_{k}": _params(r["params"]).get(k) for k in names}} for r in rows]
    return out, tuple(columns) + extra


def _render(rows: list[dict], columns, args, view: str) -> str:
    if args.format == "table":
        shown = columns if args.wide else _TABLE[view]
        cells = [{**r, "params": short_params(r["params"])} if "params" in r else r for r in rows]
        if view == "runs":
            cells = [{**r, "tags": ",".join(f"{k}={v}" for k, v in r["tags"].items()),
                      "git_commit": (r["git_commit"] or "")[:10]} for r in cells]
        return _table(cells, shown) if rows else ""
    if args.format == "metrics":
        return json.dumps(_metrics(rows), indent=1, sort_keys=True) + "\n"
    if args.format == "csv":
        flat, names = _flat_params(rows, columns)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(names), lineterminator="\n")
        writer.writeheader()
        writer.writerows([{k: (json.dumps(v, sort_keys=True) if isinstance(v, dict) else v) for k, v in r.items()}
                          for r in flat])
        return buf.getvalue()
    records = [{k: (_params(v) if k == "params" else _json_value(v)) for k, v in r.items()} for r in rows]
    return json.dumps(records, indent=1) + "\n"


def cmd_results(args) -> int:
    from .results import ResultsDB

    if args.explain is not None:
        return _explain(args)
    if args.format == "markdown":
        raise InputError("--format markdown is the report of --explain PAIR; the tables are table, csv, json, "
                         "parquet or metrics")
    if args.plot is not None:
        return _plot_results(args)
    if args.to_mlflow is not None:
        return _to_mlflow(args)
    if args.format == "parquet" and not args.output:
        raise DaskbiclError("parquet is a binary format: pass --output FILE.parquet")
    gates = _gates(args)
    with ResultsDB(args.file, create=False) as db:
        _check_measures(args.measure or (), db)
        view, rows, columns = _view(args, db)
        if args.wide:
            rows, columns = _wide(rows, view)
        gate_failed = False
        if gates or args.fail_on_missing:
            from .runlog import resolve_run

            gate_failed = _report_gates(db, resolve_run(db, args.run or "last"), gates, missing=args.fail_on_missing,
                                        filters=dict(truth=args.truth or (), pred=args.pred or (),
                                                     measure=args.measure or ()))
    if args.format == "parquet":
        flat, names = (rows, columns) if args.wide else _flat_params(rows, columns)
        _write_parquet(flat, names, args.output, storage_options_of(args))
        print(f"{len(rows)} rows written to {redact(args.output)}", file=sys.stderr)
        return EXIT_GATE if gate_failed else 0
    text = _render(rows, columns, args, view)
    if args.output:
        def write(tmp):
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(text)

        write_output(args.output, write, storage_options_of(args))
        print(f"{len(rows)} rows written to {redact(args.output)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if not rows:
        print("no matching rows", file=sys.stderr)
    return EXIT_GATE if gate_failed else 0


def _explain(args) -> int:
    """``results FILE --explain PAIR``: the report of ``daskbicl explain`` for the pair, re-counted from its stores
    as the batch recorded them (:mod:`~daskbicl.batch.explain_pair`)."""
    from ..explain_command import print_report
    from .explain_pair import explain_pair, find_pair
    from .results import ResultsDB

    other = [flag for flag, given in (
        ("--latest", args.latest), ("--diff", args.diff is not None), ("--runs", args.runs),
        ("--failures", args.failures), ("--wide", args.wide), ("--output", args.output),
        ("--measure", args.measure), ("--pred", args.pred), ("--changed", args.changed),
        ("--fail-below", args.fail_below), ("--fail-on-drop", args.fail_on_drop),
        ("--fail-on-significant-drop", args.fail_on_significant_drop), ("--fail-on-missing", args.fail_on_missing),
        ("--to-mlflow", args.to_mlflow is not None),
    ) if given]
    if other:
        raise InputError(f"--explain PAIR prints one pair's report (the pair by its pred, --truth and --run to "
                         f"choose among several); it does not take {', '.join(other)}")
    if args.format not in ("table", "markdown", "json", "csv"):
        raise InputError(f"--explain prints markdown (the default), json or csv, not {args.format}")
    if args.plot == "":
        raise InputError("--explain --plot needs a file: --plot FILE (.png, .svg or .pdf)")
    if args.plot:
        check_figure_path("--plot", args.plot)
    with ResultsDB(args.file, create=False) as db:
        from .runlog import resolve_run

        run = resolve_run(db, args.run) if args.run else None
        source = find_pair(db, args.explain, truth=args.truth or (), run=run)
    if source.dropped:
        print(f"daskbicl: note: {source.name} was scored with several values of {', '.join(source.dropped)}; the "
              "report uses the measures' defaults for them", file=sys.stderr)
    print(redact_text(f"explaining {source.name} as run {source.run_id} scored it"), file=sys.stderr)
    with cluster(args.scheduler, args.workers, default="threads"):
        with contextlib.redirect_stdout(sys.stderr):
            ds = explain_pair(source, storage_options=storage_options_of(args), progress=progress_wanted(args))
    print_report(ds, "markdown" if args.format == "table" else args.format, plot=args.plot,
                 title=f"daskbicl explain: pred {source.pred_name} against truth {source.truth_name} "
                       f"(run {source.run_id})")
    return 0


def _to_mlflow(args) -> int:
    """``results FILE --to-mlflow URI [--run ID]``: one MLflow run per batch run, none twice."""
    from .mlflow_export import export_mlflow

    other = [flag for flag, given in (
        ("--latest", args.latest), ("--diff", args.diff is not None), ("--runs", args.runs),
        ("--failures", args.failures), ("--wide", args.wide), ("--output", args.output),
        ("--format", args.format != "table"), ("--truth", args.truth), ("--pred", args.pred),
        ("--measure", args.measure), ("--fail-below", args.fail_below), ("--fail-on-drop", args.fail_on_drop),
        ("--fail-on-significant-drop", args.fail_on_significant_drop), ("--fail-on-missing", args.fail_on_missing), ("--changed", args.changed),
    ) if given]
    if other:
        raise InputError(f"--to-mlflow exports whole batch runs (all of them, or --run ID); it does not take "
                         f"{', '.join(other)}")
    if not args.to_mlflow.strip():
        raise InputError("--to-mlflow needs an MLflow tracking URI (file:/path/mlruns, sqlite:///mlflow.db, "
                         "http://host:5000)")
    done = export_mlflow(args.file, args.to_mlflow, experiment=args.mlflow_experiment,
                         runs=[args.run] if args.run else None)
    print(done.summary())
    return 0


def _plot_results(args) -> int:
    """``results FILE --plot OUT``: the history figure, checked writable before reading anything."""
    from .history_plot import plot_results

    if args.plot and args.output and os.path.abspath(args.plot) != os.path.abspath(args.output):
        raise InputError(f"--plot {args.plot} and -o {args.output} name two files: give one")
    target = args.plot or args.output
    if not target:
        raise InputError("--plot needs a file to draw in: --plot FILE or --plot -o FILE (.png, .svg or .pdf)")
    check_figure_path("--plot", target)
    if args.failures or args.latest or args.run or args.diff is not None or args.runs or args.wide:
        raise DaskbiclError("--plot draws every scored row over time; it does not take --latest, --failures, "
                            "--run, --diff, --runs or --wide")
    options = storage_options_of(args)
    if options is None and "://" not in target:
        plot_results(args.file, target, truth=args.truth or (), pred=args.pred or (), measures=args.measure or ())
    else:  # a URL: drawn here, uploaded whole
        fig = plot_results(args.file, truth=args.truth or (), pred=args.pred or (), measures=args.measure or ())
        write_output(target, lambda tmp: fig.savefig(tmp, format=os.path.splitext(target)[1][1:].lower(), dpi=150),
                     options)
    print(f"figure: {target}")
    return 0


def _gate_options(p) -> None:
    p.add_argument("--fail-below", action="append", metavar="MEASURE=VALUE",
                   help="exit 4 when a pair's MEASURE is below VALUE in the run (repeatable)")
    p.add_argument("--fail-on-drop", action="append", metavar="MEASURE=DELTA",
                   help="exit 4 when a pair's MEASURE is worse than its previous value by more than DELTA "
                   "(repeatable)")
    p.add_argument("--fail-on-significant-drop", action="append", metavar="MEASURE",
                   help="exit 4 when a pair's MEASURE is worse than its previous value and the two runs' "
                   "intervals (value ± half-width, the manifest's ci) do not overlap; a value without an "
                   "interval is an error, exit 2 (repeatable)")
    p.add_argument("--fail-on-missing", action="store_true",
                   help="exit 4 when a pair of the run is missing (a store that disappeared, the run it goes)")


def add_parsers(sub) -> None:
    """Add ``batch`` and ``results`` to the ``daskbicl`` subcommands."""
    p = sub.add_parser(
        "batch",
        help="score every pair a TOML manifest names, in one Dask computation; record results in SQLite",
        description="Score every (truth, pred) pair of MANIFEST. Pairs already scored at the same input "
        "fingerprints and parameters are skipped. Exit status: 0 all scored, 1 some pairs failed "
        "(recorded with their reason), 2 fix something: bad manifest or usage, or the results file cannot be "
        "used (unwritable, corrupt, full disk), 3 retry later: the cluster failed (scheduler unreachable or "
        "lost, no workers) or another batch holds the results file, 4 a gate failed (--fail-below, "
        "--fail-on-drop, --fail-on-significant-drop, --fail-on-missing).",
    )
    p.add_argument("manifest", help="TOML manifest (see examples/batch/manifest.toml)")
    p.add_argument("--results", metavar="FILE",
                   help="SQLite results file (default: the manifest's 'results', else MANIFEST.sqlite)")
    p.add_argument("--force", action="store_true", help="rescore pairs already scored")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be scored, skipped or fail, compute and write nothing; "
                   "exit 1 when some pair would fail")
    p.add_argument("--json", action="store_true", help="print the run summary as one JSON object")
    add_progress_arg(p, "progress bar (pairs and tasks done)")
    p.add_argument("--tag", action="append", metavar="KEY=VALUE",
                   help="a tag recorded with this run (over the manifest's [run] table; repeatable)")
    p.add_argument("--warm", action="store_true",
                   help="compile (or load) every numba kernel on every worker before scoring (daskbicl warm, on "
                   "the cluster); without it, workers that compile say so on stderr")
    _gate_options(p)
    add_storage_option(p)
    add_cluster_args(p)
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser("results", help="export the scores recorded by 'daskbicl batch'")
    p.add_argument("file", help="SQLite results file")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    p.add_argument("--truth", action="append", metavar="PATTERN",
                   help="only truth stores whose manifest name (group/folder), folder name or path matches this "
                   "shell pattern (paths relative to the current folder; '*' also matches '/'; repeatable)")
    p.add_argument("--pred", action="append", metavar="PATTERN",
                   help="only pred stores whose manifest name (group/folder), folder name or path matches "
                   "(repeatable)")
    p.add_argument("--measure", action="append", metavar="NAME", help="only this measure (repeatable)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--latest", action="store_true",
                       help="per pair (by manifest names), measure and params: the last value, and its status "
                       "in the last run that named it (current, missing, gone, failed, stale)")
    which.add_argument("--run", metavar="ID",
                       help="what run ID saw of every pair (an id, a unique prefix, 'last' or -N: N runs before "
                       "the last)")
    which.add_argument("--diff", nargs="*", metavar="RUN",
                       help="per pair and measure: the value before, after and the change between two runs "
                       "(default: the last two; one RUN: that run against the one before it)")
    p.add_argument("--changed", action="store_true",
                   help="with --diff: only the rows that moved (a value changed, or a status)")
    which.add_argument("--runs", action="store_true", help="list the runs (time, status, counts, tags, commit)")
    which.add_argument("--failures", action="store_true",
                       help="export the recorded failures (every failed attempt) instead of scores")
    p.add_argument("--wide", action="store_true",
                   help="one row per pair, one column per measure (with --latest, the default, or --run)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout (required for parquet); "
                   "a URL (s3://...) is uploaded, with --storage-option")
    add_storage_option(p)
    _gate_options(p)
    p.add_argument("--to-mlflow", metavar="URI",
                   help="export every batch run (or --run ID) as one MLflow run to the tracking URI "
                   "(needs the 'mlflow' extra); runs exported before are skipped")
    p.add_argument("--mlflow-experiment", metavar="NAME", default="daskbicl",
                   help="the MLflow experiment of --to-mlflow (default: daskbicl; created when missing)")
    p.add_argument("--plot", metavar="FILE", nargs="?", const="",
                   help="draw each measure of each pred across runs in FILE, or in -o FILE (PNG, SVG or PDF by "
                   "suffix), instead of a table; with --explain: the pair's match matrix, as 'daskbicl explain "
                   "--plot'")
    p.add_argument("--explain", metavar="PAIR",
                   help="the report of 'daskbicl explain' (--format markdown, the default, json or csv) for the "
                   "pair whose pred PAIR names (manifest name, folder name or path, as --pred; --truth and --run "
                   "to choose), re-counted from its stores as the batch recorded them; a store gone or changed "
                   "since is an error")
    add_progress_arg(p)
    add_cluster_args(p, "threads (this process; --explain only)", in_process=True)
    p.set_defaults(func=cmd_results)
