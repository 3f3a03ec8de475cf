"""Command line: ``daskbicl score | explain | generate | demo | convert | tradeoff | measures | warm | batch | results``.

Errors a user can cause are printed as one line on stderr and exit with
status 2 (no traceback); ``--debug`` shows the traceback instead.  Output
piped into a command that stops reading early (``daskbicl measures | head``)
ends quietly with status 141, like a process killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from ._version import __version__
from .batch import commands as batch_cli
from .clitools import (
    EXIT_BROKEN_PIPE,
    EXIT_INFRA,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Parser,
    add_cluster_args,
    add_progress_arg,
    add_storage_option,
    check_figure_path,
    cluster,
    exit_status,
    format_table,
    jsonable,
    mute_stderr,
    param,
    positive_int,
    progress_wanted,
    storage_options_of,
)
from .datacommands import cmd_convert, cmd_demo, cmd_generate
from .errors import DaskbiclError, InputError
from .explain_command import add_parser as add_explain_parser
from .io.store import DEFAULT_CHUNK
from .kernels.coclustering.contingency import POLICIES
from .locations import redact_text
from .measures.weighted_indices import DEFAULT_INDEX, INDICES

# --------------------------------------------------------------------------- cluster


# --------------------------------------------------------------------------- output


# --------------------------------------------------------------------------- commands


def cmd_score(args) -> int:
    from .io.inputs import opened
    from .measures import ScorePlan, check_request
    from .measures.bootstrap import compute_with_intervals

    # The request (measures, parameters, options) is checked before any store is opened, the inputs
    # before any cluster is started.
    params = dict(args.param or [])
    null_options = {"n": args.null, "seed": args.seed} if args.null is not None else {}
    check_request(args.measure, params, unassigned=args.unassigned, **null_options)
    interval = _interval(args)
    options = storage_options_of(args)

    def build() -> ScorePlan:
        truth, pred = opened(args.truth, "truth", options), opened(args.pred, "pred", options)
        return ScorePlan.build(truth, pred, args.measure, unassigned=args.unassigned, **params)

    plan = build()
    if args.null is not None:
        return _score_null(args, plan, build)
    with _score_cluster(args) as client:
        if client is not None:  # opened again, its read tasks sized to this cluster's threads and memory
            plan = build()
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):  # progress bars never pollute stdout
            if interval is None:
                results = plan.compute(progress=progress_wanted(args))
            else:
                results = compute_with_intervals(plan, progress=progress_wanted(args), **interval)
        elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(jsonable(results)))
    else:
        print(format_table(results))
        print(f"\nscored in {elapsed:.2f} s", file=sys.stderr)
    return EXIT_OK


def _interval(args) -> dict | None:
    """``--ci LEVEL`` (with ``--replicates``, ``--seed``, ``--ci-method``) checked, or None."""
    from .measures.bootstrap import check_interval, check_method

    if args.ci is None:
        return None
    if args.null is not None:
        raise InputError("--ci and --null answer different questions: ask one at a time")
    ci, replicates, seed = check_interval(args.ci, args.replicates, 0 if args.seed is None else args.seed)
    return {"ci": ci, "replicates": replicates, "seed": seed, "method": check_method(args.ci_method)}


def _show_compiles() -> None:
    """A compile announced while the command runs (a ``CompileWarning``): one plain line on stderr."""
    import warnings

    from .kernels.compiled import CompileWarning

    default = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, CompileWarning):
            print(message, file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show


@contextlib.contextmanager
def _score_cluster(args):
    """Where ``score`` computes (:func:`~daskbicl.clitools.cluster`); on a Dask cluster its workers' compiles are
    said on stderr, once per worker, and at the end for how long (an in-process compile says itself)."""
    with cluster(args.scheduler, args.workers, default="threads") as client:
        if client is None:
            yield None
            return
        from .warmup import compile_notices

        with compile_notices(client):
            yield client


def cmd_warm(args) -> int:
    """``daskbicl warm``: compile (or load) every numba kernel now (or the groups of ``--kernels``), one line per
    group; with ``--scheduler`` on every worker of that cluster (and on workers joining it later), one line
    per worker."""
    from .warmup import kernel_groups

    groups = kernel_groups(args.kernels)
    started = time.perf_counter()
    if args.scheduler is not None:
        from .clitools import LOCAL_SCHEDULERS
        from .warmup import warm_workers

        if args.scheduler.strip().lower() in ("local", *LOCAL_SCHEDULERS):
            raise InputError(f"warm --scheduler takes the address of a running Dask scheduler (tcp://host:8786), "
                             f"not {args.scheduler!r}: without --scheduler, warm compiles in this process")
        with cluster(args.scheduler) as client:
            done = warm_workers(client, groups=groups)
        compiled = sum(bool(d["compiled"]) for d in done.values())
        print(f"daskbicl: {len(done)} worker{'s' * (len(done) != 1)} ready in {time.perf_counter() - started:.1f} s "
              f"({compiled} compiled)", file=sys.stderr)
        return EXIT_OK
    from .warmup import warm

    warm(report=lambda line: print(f"daskbicl: {line}"), groups=groups)
    print(f"kernels ready in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return EXIT_OK


def _score_null(args, plan, build) -> int:
    """``daskbicl score --null N``: each measure against its permutation null (``build()``: the plan again,
    once a cluster is connected, so that the stores' read tasks are sized to it)."""
    from .measures.null import null

    names = args.measure or [m.name for m in plan.measures]
    with _score_cluster(args) as client:
        if client is not None:
            plan = build()
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            results = null(plan.truth, plan.pred, measures=names, n=args.null, seed=args.seed,
                           model=args.null_model, one_sided=not args.two_sided,
                           unassigned=args.unassigned, progress=progress_wanted(args), **dict(args.param or []))
        elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(jsonable({k: v._asdict() for k, v in results.items()})))
        return EXIT_OK
    width = max(len(k) for k in results)
    print(f"{'measure':<{width}}  {'observed':>10}  {'null mean':>10}  {'null sd':>10}  {'p':>8}")
    for name, r in results.items():
        print(f"{name:<{width}}  {r.observed:>10.6f}  {r.mean:>10.6f}  {r.std:>10.6f}  {r.p_value:>8.4g}")
    model = {"perm": "the permutation null (margins fixed", "num": "the 'num' null (uniform partitions, numbers of "
             "clusters fixed", "all": "the 'all' null (uniform partitions"}[args.null_model]
    sides = "truth and pred random" if args.two_sided else "truth fixed"
    print(f"\n{args.null} draws under {model}, {sides}; p counts draws at least as good, +1), in {elapsed:.2f} s; "
          "--json adds the chance-adjusted value and its 95 % interval", file=sys.stderr)
    return EXIT_OK


def _figure_paths(args) -> dict[str, str]:
    """The requested figures, checked before any computation."""
    wanted = {"--plot": args.plot, "--pr-plot": args.pr_plot, "--corrected-pr-plot": args.corrected_pr_plot}
    wanted = {opt: path for opt, path in wanted.items() if path}
    for opt, path in wanted.items():
        check_figure_path(opt, path)
    return wanted


def _print_tradeoff(result) -> None:
    from .tradeoffs.space import constraint_text

    def fmt(x):
        return f"{x:.6f}"

    print(f"tradeoff space, index = {result.index}, |B| = {result.truth_size:,}, |D| = {result.n_cells:,}")
    for alg, ids in result.dropped.items():
        print(f"{alg}: ignored {len(ids)} empty result(s): {', '.join(map(str, ids))}")
    for alg, t in result.optimal.items():
        print(f"\n{alg}: AUC of the optimal curve = {t.auc:.6f}")
        print(t.intervals.to_string(index=False, float_format=fmt))
        if len(t.excluded):
            print(f"excluded by the constraints: {', '.join(map(str, t.excluded))}")
    if result.excluded:
        text = constraint_text(result.pre_min, result.rec_min)
        print(f"\nexcluded algorithms (no result satisfies {text}): {', '.join(map(str, result.excluded))}")
    if result.comparison is not None:
        print("\nbest algorithm by interval of lambda:")
        print(result.comparison.intervals.to_string(index=False, float_format=fmt))


def cmd_tradeoff(args) -> int:
    from .tradeoffs.sweep import tradeoff

    indices = list(dict.fromkeys(args.index or [DEFAULT_INDEX]))
    if not 0.0 <= args.lam <= 1.0:
        raise InputError(f"--lam must be in [0, 1], got {args.lam:g}")
    figures = _figure_paths(args)
    with cluster(args.scheduler, args.workers, default="threads"):
        with contextlib.redirect_stdout(sys.stderr):
            result = tradeoff(
                args.truth, *args.sweeps, index=indices[0], names=args.name,
                truth_bicluster=args.truth_bicluster, pre_min=args.pre_min, rec_min=args.rec_min,
                drop_empty=args.drop_empty, progress=progress_wanted(args), unassigned=args.unassigned,
            )
    per_index = [result.for_index(idx) for idx in indices]
    if args.plot:
        result.plot(args.plot, indices=indices)
    if args.pr_plot:
        result.plot_pr(args.pr_plot, lam=args.lam)
    if args.corrected_pr_plot:
        result.plot_corrected_pr(args.corrected_pr_plot, lam=args.lam)
    if args.json:
        if len(per_index) == 1:
            out = result.summary()
        else:
            out = {"indices": {r.index: r.summary() for r in per_index}}
        print(json.dumps(jsonable(out), default=str))
        return EXIT_OK
    for k, r in enumerate(per_index):
        if k:
            print("\n" + "=" * 72 + "\n")
        _print_tradeoff(r)
    if figures:
        print()
    for opt, path in figures.items():
        print(f"figure ({opt}): {path}")
    return EXIT_OK


def cmd_measures(args) -> int:
    """Every measure, from its record: one line each, or ``--json`` the whole record (parameters, bounds, ...)."""
    from .measures import catalogue

    rows = catalogue()
    if args.json:
        print(json.dumps(jsonable(rows), default=str))
        return EXIT_OK
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        defaults = ", ".join(f"{k}={p['default']}" for k, p in r["params"].items())
        params = f" [{defaults}]" if defaults else ""
        print(f"{r['name']:<{width}}  {r['family']:<9}  {r['summary']}{params}")
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _word(text: str) -> str:
    """A word option as Python takes it: case and surrounding spaces ignored (then checked against the choices)."""
    return text.strip().lower()


def _add_unassigned_arg(p):
    p.add_argument("--unassigned", type=_word, choices=POLICIES, default=None,
                   help="what unassigned labels (NaN, empty, negative integers) mean: error (default), "
                        "cluster (one extra cluster per side and axis) or singleton (a cluster each)")


def _add_generate_args(p, rows, cols):
    p.add_argument("--rows", type=positive_int, default=rows, help=f"rows (default {rows:,})")
    p.add_argument("--cols", type=positive_int, default=cols, help=f"columns (default {cols:,})")
    p.add_argument("--row-clusters", type=positive_int, default=10)
    p.add_argument("--col-clusters", type=positive_int, default=5)
    p.add_argument("--noise", type=float, default=0.1, help="fraction of labels redrawn at random in pred")
    p.add_argument("--seed", type=int, default=0)


def _add_score_parser(sub) -> None:
    """``daskbicl score``: one pair, any measures, optionally against a null model."""
    p = sub.add_parser("score", help="score PRED against TRUTH (Zarr stores)")
    p.add_argument("truth", help="truth store (path or URL)")
    p.add_argument("pred", help="pred store (path or URL)")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="a measure to compute (repeat; default: all that apply)")
    p.add_argument("--measures", dest="measure", action="extend", nargs="+", metavar="NAME",
                   help="several measures at once (--measures cari nce)")
    p.add_argument("--param", action="append", type=param, metavar="NAME=VALUE", help="measure parameter, e.g. beta=0.5")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--null", type=positive_int, metavar="N",
                   help="also draw N random co-clusterings with the same cluster sizes (permutation null) and "
                        "print each measure's null mean, sd and p-value")
    p.add_argument("--null-model", choices=("perm", "num", "all"), default="perm",
                   help="random model of --null (Gates & Ahn 2017): perm (cluster sizes fixed, default), num "
                        "(uniform partitions with the same number of clusters), all (uniform partitions)")
    p.add_argument("--two-sided", action="store_true",
                   help="--null draws truth from the model too (default: truth fixed, pred random)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the --null draws (default: fresh) and of the --ci replicates (default 0)")
    p.add_argument("--ci", metavar="LEVEL",
                   help="bootstrap interval at this level (e.g. 0.95) for every measure of the contingency and "
                        "bicluster overlap tables: rows and columns resampled from the counted tables "
                        "(docs/guide/reading-a-score.md)")
    p.add_argument("--replicates", default=999, metavar="N", help="bootstrap replicates of --ci (default 999)")
    p.add_argument("--ci-method", choices=("bc", "percentile"), default="bc",
                   help="interval of --ci from the replicates: bc, bias-corrected (default; for biased "
                        "plug-in measures such as NMI and CARI), or percentile")
    add_progress_arg(p)
    _add_unassigned_arg(p)
    add_storage_option(p)
    add_cluster_args(p, "threads (this process; see docs/guide/cluster.md)", in_process=True)
    p.set_defaults(func=cmd_score)


def _add_generate_parser(sub) -> None:
    """``daskbicl generate``: synthetic stores."""
    p = sub.add_parser("generate", help="write a synthetic co-clustering (or biclustering) and perturbed copies to Zarr")
    p.add_argument("out", help="output folder (truth.zarr, pred.zarr or pred-NNN.zarr)")
    _add_generate_args(p, 1_000_000, 10_000)
    p.add_argument("--kind", choices=["partition", "biclustering"], default="partition",
                   help="partition (a co-clustering; default) or biclustering (overlapping biclusters)")
    p.add_argument("--biclusters", type=positive_int, default=5, help="biclustering: number of biclusters (default 5)")
    p.add_argument("--density", type=float, default=0.1,
                   help="biclustering: share of rows and of columns in each bicluster (default 0.1)")
    p.add_argument("--layout", choices=["random", "blocks"], default="random",
                   help="biclustering: random subsets (overlapping at random; default) or contiguous blocks")
    p.add_argument("--overlap", type=float, default=0.0,
                   help="biclustering, blocks layout: each block extends this share of its length into the next")
    p.add_argument("--preds", type=positive_int, default=1, help="number of perturbed copies")
    p.add_argument("--chunk", type=positive_int, default=DEFAULT_CHUNK, help=f"chunk length in labels (default {DEFAULT_CHUNK:,})")
    p.add_argument("--overwrite", action="store_true", help="replace existing stores")
    p.add_argument("--cluster", action="store_true", help="generate on a Dask cluster (default: local threads)")
    add_storage_option(p)
    add_progress_arg(p)
    add_cluster_args(p, "with --cluster, start a local cluster", in_process=True)
    p.set_defaults(func=cmd_generate)


def _add_convert_parser(sub) -> None:
    """``daskbicl convert``: label or bicluster files to a store."""
    p = sub.add_parser(
        "convert", help="write label or bicluster files (.npy, .txt, .csv, .tsv, .parquet, JSON) as a Zarr store",
        description="Write a co-clustering (--rows/--cols) or a biclustering (--row-mask/--col-mask, or "
        "--biclusters JSON) as a Zarr store that score, tradeoff and batch read. FILE may be FILE:COLUMN for "
        ".csv/.tsv/.parquet tables.",
    )
    p.add_argument("out", help="the store to write (path or URL)")
    p.add_argument("--rows", metavar="FILE[:COLUMN]", help="row cluster labels, one per row")
    p.add_argument("--cols", metavar="FILE[:COLUMN]", help="column cluster labels, one per column")
    p.add_argument("--row-mask", metavar="FILE", help="(K, I) boolean or 0/1 matrix: .npy, or headerless .csv/.tsv")
    p.add_argument("--col-mask", metavar="FILE", help="(K, J) boolean or 0/1 matrix")
    p.add_argument("--biclusters", metavar="FILE.json", help='JSON list of {"rows": [...], "cols": [...]}')
    p.add_argument("--shape", type=positive_int, nargs=2, metavar=("I", "J"),
                   help="matrix shape for --biclusters (not needed with --row-coords and --col-coords)")
    p.add_argument("--row-coords", metavar="FILE[:COLUMN]", help="row coordinate labels (gene ids, ...)")
    p.add_argument("--col-coords", metavar="FILE[:COLUMN]", help="column coordinate labels (sample ids, ...)")
    p.add_argument("--keep-na", action="store_true",
                   help='in .csv/.tsv label files, read "NA", "N/A", "null", "NaN"... as labels; only empty '
                   "cells are missing (default: pandas's missing-value markers are unassigned labels)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing daskbicl store")
    add_storage_option(p)
    p.set_defaults(func=cmd_convert)


def _add_tradeoff_parser(sub) -> None:
    """``daskbicl tradeoff``: the tradeoff space of parameter sweeps."""
    p = sub.add_parser("tradeoff", help="precision-recall tradeoff space of parameter sweeps (docs/measures/tradeoff.md)")
    p.add_argument("truth", help="biclustering store with the target bicluster")
    p.add_argument("sweeps", nargs="+", metavar="SWEEP", help="biclustering stores: one algorithm's results each")
    p.add_argument(
        "--index", action="append", type=_word, choices=INDICES,
        help=f"weighted index (repeat for one report and one figure panel per index; default {DEFAULT_INDEX}; "
        "with several, --json prints {\"indices\": {NAME: report}})",
    )
    p.add_argument("--name", action="append", metavar="NAME", help="algorithm name per sweep (repeat; default: paths)")
    p.add_argument("--truth-bicluster", metavar="LABEL", help="target bicluster when the truth has several: its label, or its position when the truth has no bicluster labels")
    p.add_argument("--pre-min", help="keep results with precision >= this (a number from 0 to 1)")
    p.add_argument("--rec-min", help="keep results with recall >= this (a number from 0 to 1)")
    p.add_argument("--drop-empty", action="store_true", help="ignore results with no row or no column (default: error)")
    p.add_argument("--plot", metavar="FILE", help="write the tradeoff-space figure (PNG, SVG or PDF by suffix)")
    p.add_argument("--pr-plot", metavar="FILE", help="write the precision-recall space figure")
    p.add_argument("--corrected-pr-plot", metavar="FILE", help="write the corrected precision-recall space figure")
    p.add_argument("--lam", type=float, default=0.5, help="lambda of the index isolines in the PR figures (default 0.5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_unassigned_arg(p)
    add_progress_arg(p)
    add_cluster_args(p, "threads (this process)", in_process=True)
    p.set_defaults(func=cmd_tradeoff)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="daskbicl", description="Score co-clusterings and biclusterings against a reference.")
    parser.add_argument("--version", action="version", version=f"daskbicl {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    _add_score_parser(sub)
    add_explain_parser(sub, _add_unassigned_arg)
    _add_generate_parser(sub)
    _add_convert_parser(sub)

    p = sub.add_parser("demo", help="generate a co-clustering and a perturbed copy, score them on a local cluster")
    _add_generate_args(p, 2_000_000, 200_000)
    p.add_argument("--out", help="folder for the stores (default: a new temporary folder)")
    add_progress_arg(p)
    add_cluster_args(p, in_process=True)
    p.set_defaults(func=cmd_demo)

    _add_tradeoff_parser(sub)

    p = sub.add_parser("measures", help="list the measures")
    p.add_argument("--json", action="store_true",
                   help="print every measure's record (family, inputs, parameters with defaults and constraints, "
                        "bounds, symmetry, compiled kernels) as one JSON list")
    p.set_defaults(func=cmd_measures)

    p = sub.add_parser("warm", help="compile (or load from the cache) every numba kernel now, "
                                    "e.g. when building a worker image (docs/guide/cluster.md)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="warm every worker of the Dask cluster at ADDRESS (tcp://host:8786) instead of this process; "
                        "workers joining it later warm when they start")
    p.add_argument("--kernels", metavar="WORD", action="append",
                   help="only the kernel groups whose name holds WORD (repeatable: byte, spread, string, mask, "
                        "overlap, micro); default: every group")
    p.set_defaults(func=cmd_warm)

    batch_cli.add_parsers(sub)  # batch and results are defined next to their feature
    return parser


def _stdout_to_devnull() -> None:
    """After a broken pipe: send what is left of stdout nowhere (no error at exit)."""
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a file (e.g. captured)
        pass


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so every cleanup (temporary stores, the batch run's record) runs.

    A KeyboardInterrupt, so code that cleans up after Ctrl-C cleans up after
    ``kill`` (a workflow scheduler's timeout) too.
    """


TERMINATED = "daskbicl: terminated (SIGTERM); nothing half-written was left"
#: True while the ``daskbicl`` command runs as its own process (:func:`script`), not a call of :func:`main`.
_PROCESS_ENDS = False


def _on_sigterm(signum, frame):
    raise Terminated()


def _on_sigterm_at_exit(signum, frame):
    """SIGTERM once the command is done (the local cluster closing, the interpreter ending): all is written."""
    print(TERMINATED, file=sys.stderr, flush=True)
    os._exit(EXIT_TERMINATED)


@contextlib.contextmanager
def _sigterm_cleans_up(process_ends: bool = False):
    """While the command runs, SIGTERM raises :class:`Terminated` (default: die without cleaning up).

    With ``process_ends`` (the ``daskbicl`` command itself, not a call of
    :func:`main` from Python) a SIGTERM after the command is done still says
    the one line and exits 143, instead of numba's or the interpreter's
    default death by signal while the local cluster shuts down.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, _on_sigterm_at_exit if process_ends else previous)


def main(argv=None, *, process_ends: bool = False) -> int:
    """The ``daskbicl`` command: its exit status (``argv``: the arguments, default ``sys.argv[1:]``)."""
    if sys.stdout is None:  # started with stdout closed (daskbicl measures >&-)
        if sys.stderr is not None:
            print("daskbicl: error: standard output is closed; nothing can be printed", file=sys.stderr)
        return EXIT_USAGE
    global _PROCESS_ENDS
    _PROCESS_ENDS = process_ends
    try:
        with _sigterm_cleans_up(process_ends=process_ends):
            code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except Terminated:  # between the command's end and the handler's change
        print(TERMINATED, file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        _stdout_to_devnull()
        return EXIT_BROKEN_PIPE


def _redacted_excepthook(kind, exc, tb) -> None:
    from .locations import redacted_traceback

    print(redacted_traceback(exc.with_traceback(tb)), file=sys.stderr, end="")


def script() -> None:
    """The process of the ``daskbicl`` command (console script and ``python -m daskbicl``).

    Runs :func:`main`, then the interpreter's exit work (``atexit``: the
    local cluster's last cleanup, temporary folders) while SIGTERM still says
    its one line, and ends the process.  Python's own finalisation resets the
    SIGTERM handler to the default, so a signal landing in it would end the
    process silently, killed by the signal (status -15), after a finished run.
    """
    import atexit

    sys.excepthook = _redacted_excepthook  # --debug: the traceback of an error names no secret of a location
    code = main(process_ends=True)
    if code == EXIT_TERMINATED:
        # The one line is said.  Exit work still running into the interrupted
        # write (Zarr's I/O thread busy with a chunk when its exit handler
        # closes its event loop) prints tracebacks that say nothing more.
        mute_stderr()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code)


def _only_critical(record) -> bool:
    import logging

    return record.levelno >= logging.CRITICAL


def _quiet_client_logs() -> None:
    """A lost scheduler is reported once, by daskbicl; distributed's client logs its reconnection
    attempts and the tracebacks of closing with ERROR records."""
    import logging

    # A filter, not a level: distributed sets its loggers' levels when it is imported (later).
    logging.getLogger("distributed.client").addFilter(_only_critical)  # added once however often called


def _main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.debug:
        _quiet_client_logs()
    _show_compiles()
    try:
        return args.func(args)
    except DaskbiclError as exc:
        if args.debug:
            raise
        print(f"daskbicl: error: {redact_text(exc.shell_message())}", file=sys.stderr)
        return exit_status(exc)
    except Terminated:
        print(TERMINATED, file=sys.stderr)
        if _PROCESS_ENDS:
            # The one line is said.  Freeing the interrupted frames now can print more (an event loop or a
            # coroutine of Zarr's collected mid-call: "Exception ignored in ..."), which says nothing more.
            mute_stderr()
        return EXIT_TERMINATED
    except MemoryError:
        if args.debug:
            raise
        print("daskbicl: error: this process ran out of memory; score on a cluster (--scheduler local, or an "
              "address with workers of enough memory) or free memory", file=sys.stderr)
        return EXIT_INFRA
    except KeyboardInterrupt:
        print("daskbicl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
