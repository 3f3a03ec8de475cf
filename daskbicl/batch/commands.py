"""``daskbicl batch`` and ``daskbicl results`` (registered by :mod:`daskbicl.cli`).

Exit codes a scheduler can act on: 0 every pair scored (or already scored),
1 some pairs failed (each recorded with its reason; the others scored),
2 bad manifest or usage, a results file that cannot be used (locked by
another batch, unwritable, corrupt, disk full, another program's): the
message names the manifest line or the file; 3 the cluster failed (the
scheduler unreachable or lost, no worker): retry later.  The results file
is opened and locked before any cluster is started.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import sys

from ..clitools import check_figure_path, cluster, progress_wanted, write_output
from ..errors import DaskbiclError, InputError

__all__ = ["add_parsers", "cmd_batch", "cmd_results"]

FORMATS = ("table", "csv", "json", "parquet")
_TABLE_SCORES = ("truth", "pred", "measure", "params", "value", "scored_at")
_TABLE_FAILURES = ("truth", "pred", "measures", "reason", "failed_at")


def _quiet_worker_logs() -> None:
    """On a local cluster's workers: a failed task is reported once, by the batch, not with a traceback."""
    import logging

    logging.getLogger("distributed.worker").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def _connect(args):
    """The cluster of ``--scheduler`` (or a new local one), entered only when there is work."""
    with cluster(args.scheduler, args.workers) as client:
        if not args.scheduler:
            client.run(_quiet_worker_logs)
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
        state = "score" if job.work else ("fail" if job.errors else "skip")
        detail = "; ".join(dict.fromkeys(reason for _, reason in job.errors))
        print(f"{state}\t{job.truth}\t{job.pred}" + (f"\t{detail}" if detail else ""))
    return 1 if any(job.errors for job in the_plan.jobs) else 0


def cmd_batch(args) -> int:
    from ..clitools import LOCAL_SCHEDULERS
    from .manifest import load_manifest
    from .runner import run_batch

    if args.scheduler in LOCAL_SCHEDULERS:  # batch streams pairs through futures: it needs distributed
        raise InputError(f"batch runs on a Dask cluster: --scheduler takes an address (tcp://host:8786) or "
                         f"'local' (a local cluster of worker processes), not {args.scheduler!r}")
    manifest = load_manifest(args.manifest)  # every manifest error, before any work
    results = args.results or manifest.results
    if args.dry_run:
        return _dry_run(manifest, results, args.force)
    report = run_batch(manifest, results, connect=lambda: _connect(args), force=args.force,
                       progress=progress_wanted(args), out=sys.stderr)
    for truth, pred, reason in report.failures:
        print(f"daskbicl: failed: pred {pred} against truth {truth}: {reason}", file=sys.stderr)
    if args.json:
        print(json.dumps({
            "pairs": report.pairs, "scored": report.scored, "skipped": report.skipped,
            "failed": report.failed, "rows": report.rows, "seconds": round(report.seconds, 3),
            "results": report.results, "run_id": report.run_id,
            "failures": [{"truth": t, "pred": p, "reason": r} for t, p, r in report.failures],
        }))
    else:
        print(report.summary())
    return report.exit_code


def _cell(value) -> str:
    if value is None:
        return ""
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


def _write_parquet(rows: list[dict], columns, output: str) -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise DaskbiclError(
            "parquet export needs pyarrow, which is not installed: pip install 'daskbicl[parquet]' "
            "(or use --format csv)"
        ) from None
    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(columns))
    write_output(output, lambda tmp: frame.to_parquet(tmp, index=False))


def _check_measures(names, db) -> None:
    """Every ``--measure`` is a known measure (or a field of one, or a name in the file)."""
    from ..measures import REGISTRY, get

    stored = db.measures()
    for name in names:
        if name not in stored and name.split(".", 1)[0] not in REGISTRY:
            get(name)  # raises MeasureError naming the available measures


def cmd_results(args) -> int:
    from .results import FAILURE_COLUMNS, SCORE_COLUMNS, ResultsDB

    if args.plot:
        return _plot_results(args)
    if args.format == "parquet" and not args.output:
        raise DaskbiclError("parquet is a binary format: pass --output FILE.parquet")
    filters = dict(truth=args.truth or (), pred=args.pred or (), measure=args.measure or ())
    with ResultsDB(args.file, create=False) as db:
        _check_measures(args.measure or (), db)
        if args.failures:
            rows, columns, table_columns = db.failures(**filters), FAILURE_COLUMNS, _TABLE_FAILURES
        else:
            rows, columns, table_columns = db.scores(**filters, latest=args.latest), SCORE_COLUMNS, _TABLE_SCORES
    if args.format == "parquet":
        _write_parquet(rows, columns, args.output)
        print(f"{len(rows)} rows written to {args.output}", file=sys.stderr)
        return 0
    if args.format == "table":
        text = _table(rows, table_columns) if rows else ""
    elif args.format == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buf.getvalue()
    else:
        text = json.dumps([{k: _json_value(v) for k, v in r.items()} for r in rows], indent=1) + "\n"
    if args.output:
        def write(tmp):
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(text)

        write_output(args.output, write)
        print(f"{len(rows)} rows written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if not rows:
        print("no matching rows", file=sys.stderr)
    return 0


def _plot_results(args) -> int:
    """``results FILE --plot OUT``: the history figure, checked writable before reading anything."""
    from .history_plot import plot_results

    check_figure_path("--plot", args.plot)
    if args.failures or args.latest:
        raise DaskbiclError("--plot draws every scored row over time; it does not take --latest or --failures")
    plot_results(args.file, args.plot, truth=args.truth or (), pred=args.pred or (), measures=args.measure or ())
    print(f"figure: {args.plot}")
    return 0


def add_parsers(sub, common) -> None:
    """Add ``batch`` and ``results`` to the ``daskbicl`` subcommands."""
    p = sub.add_parser(
        "batch",
        help="score every pair a TOML manifest names, in one Dask computation; record results in SQLite",
        description="Score every (truth, pred) pair of MANIFEST. Pairs already scored at the same input "
        "fingerprints and parameters are skipped. Exit status: 0 all scored, 1 some pairs failed "
        "(recorded with their reason), 2 bad manifest or usage, or the results file cannot be used "
        "(another batch is using it, unwritable, corrupt), 3 the cluster failed (scheduler unreachable or "
        "lost, no workers): retry later.",
    )
    p.add_argument("manifest", help="TOML manifest (see examples/batch/manifest.toml)")
    p.add_argument("--results", metavar="FILE",
                   help="SQLite results file (default: the manifest's 'results', else MANIFEST.sqlite)")
    p.add_argument("--force", action="store_true", help="rescore pairs already scored")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be scored, skipped or fail, compute and write nothing; "
                   "exit 1 when some pair would fail")
    p.add_argument("--json", action="store_true", help="print the run summary as one JSON object")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (pairs and tasks done) on stderr (default: when stderr is a terminal)")
    common(p)
    p.set_defaults(func=cmd_batch)

    p = sub.add_parser("results", help="export the scores recorded by 'daskbicl batch'")
    p.add_argument("file", help="SQLite results file")
    p.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    p.add_argument("--truth", action="append", metavar="PATTERN",
                   help="only truth stores matching this path or shell pattern, relative to the current "
                   "folder like a path ('*' also matches '/'; repeat for several)")
    p.add_argument("--pred", action="append", metavar="PATTERN", help="only pred stores matching (repeatable)")
    p.add_argument("--measure", action="append", metavar="NAME", help="only this measure (repeatable)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--latest", action="store_true",
                       help="per (truth, pred, measure, params), only the score of the inputs a batch run "
                       "saw last (what they are now)")
    which.add_argument("--failures", action="store_true",
                       help="export the recorded failures (every failed attempt) instead of scores")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout (required for parquet)")
    p.add_argument("--plot", metavar="FILE",
                   help="draw each measure of each pred across runs (PNG, SVG or PDF by suffix) instead of a table")
    p.set_defaults(func=cmd_results)
