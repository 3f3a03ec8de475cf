"""``daskbicl explain TRUTH PRED``: the report of :func:`daskbicl.explain` (Markdown, JSON or CSV) and its figure."""

from __future__ import annotations

import contextlib
import sys

from .clitools import (
    EXIT_OK,
    add_cluster_args,
    add_progress_arg,
    check_figure_path,
    cluster,
    param,
    positive_int,
    progress_wanted,
)

__all__ = ["add_parser", "cmd_explain", "print_report"]

FORMATS = ("markdown", "json", "csv")


def cmd_explain(args) -> int:
    """Count once, explain, print the report; write the match matrix with ``--plot``."""
    from .measures.explain import explain

    if args.plot:
        check_figure_path("--plot", args.plot)
    params = dict(args.param or [])
    with cluster(args.scheduler, args.workers, default="threads"):
        with contextlib.redirect_stdout(sys.stderr):  # progress bars never pollute stdout
            ds = explain(args.truth, args.pred, measures=args.measure, share=args.share, threshold=args.threshold,
                         unassigned=args.unassigned, progress=progress_wanted(args), **params)
    print_report(ds, args.format, plot=args.plot, title=f"daskbicl explain: {args.pred} against {args.truth}",
                 worst=args.worst)
    return EXIT_OK


def print_report(ds, fmt: str, *, plot: str | None = None, title: str, worst: int = 10) -> None:
    """The report of an explanation on stdout in ``fmt`` (markdown, json, csv); its match matrix in ``plot``."""
    from .measures.explain_report import to_csv, to_json, to_markdown

    if plot:
        from .plot import plot_match_matrix, save

        save(plot_match_matrix(ds), plot)
    if fmt == "json":
        print(to_json(ds))
    elif fmt == "csv":
        sys.stdout.write(to_csv(ds))
    else:
        sys.stdout.write(to_markdown(ds, title=title, worst=worst))


def add_parser(sub, unassigned_arg) -> None:
    """Add ``explain`` to the subcommands (``unassigned_arg``: the option every scoring command has)."""
    from .measures.explain import SHARE, THRESHOLD

    p = sub.add_parser("explain", help="which clusters PRED matched, split, merged, missed or made up "
                                       "(docs/guide/reading-a-score.md)")
    p.add_argument("truth", help="truth store (path or URL)")
    p.add_argument("pred", help="pred store (path or URL)")
    p.add_argument("--format", type=lambda s: s.strip().lower(), choices=FORMATS, default="markdown",
                   help="markdown (a report; default), json (scores and per-cluster tables) or csv (the "
                        "per-cluster tables)")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="a measure to report (repeat; default: all that apply)")
    p.add_argument("--measures", dest="measure", action="extend", nargs="+", metavar="NAME")
    p.add_argument("--param", action="append", type=param, metavar="NAME=VALUE", help="measure parameter")
    p.add_argument("--share", default=SHARE.default, metavar="S",
                   help=f"co-clusterings: a pred cluster takes a truth cluster when it holds more than this "
                        f"share of it (default {SHARE.default})")
    p.add_argument("--threshold", default=THRESHOLD.default, metavar="J",
                   help=f"biclusterings: cell Jaccard at which a truth bicluster is recovered "
                        f"(default {THRESHOLD.default})")
    p.add_argument("--worst", type=positive_int, default=10, metavar="N",
                   help="rows of each list in the Markdown report (default 10)")
    p.add_argument("--plot", metavar="FILE", help="write the match matrix ordered by the matching (PNG, SVG, PDF)")
    add_progress_arg(p)
    unassigned_arg(p)
    add_cluster_args(p, "threads (this process)", in_process=True)
    p.set_defaults(func=cmd_explain)
