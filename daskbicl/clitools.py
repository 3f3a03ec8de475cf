"""What every subcommand shares: exit codes, argument types, the cluster, JSON output.

:mod:`daskbicl.cli` (score, generate, demo, tradeoff, measures) and
:mod:`daskbicl.batch.commands` (batch, results) both build on this module, so
neither imports the other's internals.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import tempfile

from . import config
from .errors import DaskbiclError, InfrastructureError, InputError
from .kernels.micro.estimates import Estimate

__all__ = [
    "EXIT_BROKEN_PIPE", "EXIT_FAILED", "EXIT_INFRA", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE",
    "Parser", "exit_status", "check_figure_path", "choose_scheduler", "cluster",
    "jsonable", "mute_stderr", "write_output",
    "param", "add_storage_option", "storage_option", "storage_options_of",
    "positive_int", "progress_wanted", "workers_count",
    "format_table",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a process killed by SIGPIPE
EXIT_INTERRUPTED = 128 + 2  # Ctrl-C (SIGINT)
EXIT_TERMINATED = 128 + 15  # SIGTERM, after cleaning up


def exit_status(exc: DaskbiclError) -> int:
    """3 to retry later (a failure of the cluster, :class:`InfrastructureError`, or an error whose
    ``retry_later`` is true: a results file another batch holds), else 2 (the user's to fix)."""
    later = isinstance(exc, InfrastructureError) or getattr(exc, "retry_later", False)
    return EXIT_INFRA if later else EXIT_USAGE


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: same format, exit 2
        self.print_usage(sys.stderr)
        sys.stderr.write(f"daskbicl: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


#: The largest count a command-line option takes (2**53: exact in a float, far beyond any matrix).
MAX_COUNT = 2**53


def positive_int(text: str) -> int:
    """A count from 1 to :data:`MAX_COUNT`; ``1e6`` is accepted for 1,000,000."""
    try:
        value = int(float(text)) if "e" in text.lower() else int(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"{text} is too large (at most 2**53)")
    return value


def param(text: str) -> tuple[str, int | float | str]:
    """``NAME=VALUE``: the value typed as TOML and Python would type it (an integer, a number, or a word).

    Nothing is checked here: the value goes to the one validation of a
    request (:mod:`daskbicl.measures.request`) with the others, as a
    manifest's ``params`` and ``score``'s keywords do, so ``--param beta=x``
    and ``--param average_method=median`` fail there, with the same message
    as through Python and a manifest.

    Examples
    --------
    >>> param("beta=0.5"), param("clip=1"), param("normalizer=PRINTED")
    (('beta', 0.5), ('clip', 1), ('normalizer', 'PRINTED'))
    """
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    name, value = (part.strip() for part in text.split("=", 1))
    if not name or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for kind in (int, float):
        try:
            return name, kind(value)
        except ValueError:
            pass
    return name, value


def storage_option(text: str) -> tuple[str, object]:
    """``--storage-option KEY=VALUE``: one fsspec option; the value is JSON when it parses as JSON, else text.

    Examples
    --------
    >>> storage_option("anon=true"), storage_option("profile=nightly")
    (('anon', True), ('profile', 'nightly'))
    >>> storage_option('client_kwargs={"endpoint_url": "http://127.0.0.1:9000"}')
    ('client_kwargs', {'endpoint_url': 'http://127.0.0.1:9000'})
    """
    import json

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (an fsspec option, e.g. anon=true), got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def add_storage_option(p) -> None:
    """``--storage-option KEY=VALUE`` (repeatable) on a command that reads or writes URLs."""
    p.add_argument("--storage-option", dest="storage_option", action="append", type=storage_option,
                   metavar="KEY=VALUE",
                   help="an fsspec option for s3://, gs://, https://... stores (repeatable; the value is JSON when "
                   "it parses: anon=true, profile=nightly, 'client_kwargs={\"endpoint_url\": \"...\"}'); "
                   "docs: guide/object-stores")


def storage_options_of(args) -> dict | None:
    """The ``--storage-option`` values as one dict (None when none was given)."""
    given = getattr(args, "storage_option", None)
    return dict(given) if given else None


#: ``--scheduler`` words that run in this process (dask's single-machine schedulers).
LOCAL_SCHEDULERS = ("threads", "processes", "synchronous")
#: The most worker processes ``--workers`` starts on this machine.
MAX_WORKERS = 4 * (os.cpu_count() or 1)


def workers_count(text: str) -> int:
    """``--workers``: 0 (compute in this process, no cluster), or a count as :func:`positive_int` takes it."""
    try:
        if float(text) == 0:
            return 0
    except ValueError:
        pass
    return positive_int(text)


def add_cluster_args(p, default: str = "start a local cluster", in_process: bool = False) -> None:
    """``--scheduler`` and ``--workers``, the same on every command that computes; ``in_process``: the command can
    run without a cluster (``--workers 0``, dask's local schedulers)."""
    p.add_argument("--scheduler", metavar="WHERE",
                   help="an address (tcp://host:8786) of an existing Dask scheduler, 'local' (start a cluster of "
                   f"worker processes), 'threads', 'processes' or 'synchronous' (in this process); default: {default}")
    if in_process:
        p.add_argument("--workers", type=workers_count, metavar="N",
                       help="without --scheduler: 0 computes in this process, N >= 1 starts a local cluster of N "
                            "worker processes; with threads or processes: the size of dask's pool")
    else:
        p.add_argument("--workers", type=positive_int, metavar="N",
                       help="worker processes of a local cluster (default: min(CPUs, 4))")


def add_progress_arg(p, what: str = "progress bar") -> None:
    """``--progress/--no-progress``: ``what`` on stderr, by default when stderr is a terminal
    (:func:`progress_wanted`)."""
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help=f"{what} on stderr (default: when stderr is a terminal)")


def choose_scheduler(scheduler: str | None, workers: int | None = None, default: str = "local") -> str:
    """Where a command computes: an address, ``local``, or one of :data:`LOCAL_SCHEDULERS`.

    ``--scheduler`` wins.  Without it, ``--workers 0`` means this process
    (the threaded scheduler), ``--workers N`` a local cluster of N worker
    processes, and neither the command's ``default``: ``threads`` for
    ``score`` and ``tradeoff``, whatever the size of the inputs (a
    ``LocalCluster`` costs 2–3 s to start and was slower at every size
    measured, up to 10^8 labels per axis: docs/guide/cluster.md), ``local``
    for ``batch`` and ``demo``.

    Examples
    --------
    >>> choose_scheduler(None, default="threads"), choose_scheduler(None, 2, default="threads")
    ('threads', 'local')
    >>> choose_scheduler(None, 0), choose_scheduler("tcp://h:8786", 0)
    ('threads', 'tcp://h:8786')
    """
    if scheduler:
        return scheduler
    if workers == 0:
        return "threads"
    if workers:
        return "local"
    return default


def _seconds(value) -> str:
    """A Dask time-out setting (``15s``, ``1 minute``, 20) in words with its unit: ``15 s``."""
    import dask.utils

    try:
        return f"{dask.utils.parse_timedelta(value):g} s"
    except (TypeError, ValueError):
        return str(value)


@contextlib.contextmanager
def cluster(scheduler: str | None, workers: int | None = None, quiet: bool = True, *, default: str = "local"):
    """Where a command computes: yields a ``distributed.Client``, or None for an in-process scheduler.

    ``scheduler`` is an address (``tcp://host:8786``), ``local`` (a new
    LocalCluster with ``workers`` worker processes, closed on exit),
    ``threads``, ``processes`` or ``synchronous``; None chooses with
    :func:`choose_scheduler`.  For ``threads`` and ``processes``,
    ``workers`` sizes dask's pool.  ``distributed`` is imported only when
    a Client is made.
    """
    import logging

    import dask

    choice = choose_scheduler(scheduler, workers, default)
    if workers is not None and workers > MAX_WORKERS:
        raise DaskbiclError(f"--workers {workers} is more than {MAX_WORKERS} (4 per CPU) on this machine")
    if choice in LOCAL_SCHEDULERS:
        options = {"scheduler": choice}
        if workers and choice != "synchronous":
            options["num_workers"] = workers
        with dask.config.set(options):
            yield None
        return
    if choice == "local" and workers == 0:
        raise InputError("--scheduler local starts worker processes: --workers must be at least 1 "
                         "(or leave out --scheduler to compute in this process)")
    from distributed import Client, LocalCluster

    # Errors reach the user once, as daskbicl's one-line message: the
    # workers' "Compute Failed ... Traceback" logs (local cluster) and the
    # client's own records when the scheduler goes away (``distributed.batched``
    # logs "Batched Comm Closed" with a traceback, at INFO) are noise.  Set after
    # ``import distributed``, which sets these levels from dask's config.
    level = logging.CRITICAL if quiet else logging.WARNING
    for name in ("distributed", "distributed.client", "distributed.nanny", "distributed.scheduler",
                 "distributed.worker"):
        logging.getLogger(name).setLevel(level)
    if choice != "local":
        try:
            client = Client(choice, timeout=config.get("connect_timeout"))
        except (ValueError, TypeError) as exc:  # a malformed address such as "foo::bar": the user's to fix
            raise DaskbiclError(
                f"cannot connect to the Dask scheduler at {choice!r}: {exc} (--scheduler takes an address, "
                f"'local', {', '.join(repr(s) for s in LOCAL_SCHEDULERS)})"
            ) from exc
        except (OSError, TimeoutError) as exc:  # nothing answers there (now): retryable
            raise InfrastructureError(
                f"cannot connect to the Dask scheduler at {choice!r} within "
                f"{_seconds(config.get('connect_timeout'))} (daskbicl.connect_timeout; {type(exc).__name__}: {exc})"
            ) from exc
        with client:
            yield client
        return
    n = workers or min(os.cpu_count() or 1, 4)
    try:
        with LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=level
        ) as lc, Client(lc) as client:
            yield client
    except KeyboardInterrupt:  # SIGTERM (or Ctrl-C) at any moment, even while the cluster starts
        _silent_exit()
        raise


def _silent_exit() -> None:
    """After the command's one line: nothing more on stderr while the interpreter exits.

    A local cluster interrupted while it starts or stops is torn down by
    distributed's exit handlers and finalizers, which print tracebacks
    (``AssertionError: Status.init``) after daskbicl has said what happened.
    Handlers run in reverse order of registration, so this one, registered
    last, runs first and sends stderr to /dev/null for the ones after it.
    """
    import atexit

    atexit.register(mute_stderr)


def mute_stderr() -> None:
    """Send what is written to standard error from now on to /dev/null."""
    try:
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except (OSError, ValueError, AttributeError):  # stderr closed or not a file
        pass


def check_figure_path(option: str, path: str) -> None:
    """A figure path is usable: a known suffix, an existing writable folder, matplotlib installed.

    Checked before any computation, so a bad path never costs a run.
    """
    from .io.store import is_remote
    from .locations import redact

    if os.path.splitext(path)[1].lower() not in (".png", ".svg", ".pdf"):
        raise InputError(f"{option} {redact(path)}: use a .png, .svg or .pdf suffix")
    if is_remote(path):  # an object store has no folders to check; the upload says what went wrong
        _check_matplotlib(option)
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{option} {path}: folder {folder} does not exist")
    try:  # try a write now rather than fail after all the computing
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".daskbicl-write-test-"):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot write in {folder}: {exc.strerror or exc}") from None
    _check_matplotlib(option)


def _check_matplotlib(option: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise DaskbiclError(f"{option} needs matplotlib ({exc}); pip install 'daskbicl[plot]'") from exc


def write_output(path: str, write, storage_options: dict | None = None) -> None:
    """``write(tmp)`` into a temporary sibling of ``path``, then move it into place.

    A failure (no space left, permission denied, a folder that does not
    exist) is one :class:`~daskbicl.errors.StoreWriteError` naming ``path``,
    and leaves neither a partial ``path`` nor the temporary file.  A URL
    (``s3://...``) is written to a local temporary file, then uploaded in one
    request (an object appears whole or not at all), with ``storage_options``.
    """
    from .errors import store_failure
    from .io.store import is_remote

    if is_remote(path):
        _upload(path, write, storage_options)
        return

    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise store_failure(exc, doing="write", store=path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _upload(url: str, write, storage_options: dict | None) -> None:
    """``write(tmp)`` to a local temporary file, then one upload of it to ``url``."""
    from .errors import store_failure
    from .io.storage import filesystem, waiting

    suffix = os.path.splitext(url)[1]
    handle, tmp = tempfile.mkstemp(prefix=".daskbicl-output-", suffix=suffix)
    os.close(handle)
    try:
        write(tmp)
        fs, where = filesystem(url, storage_options)
        with waiting(url, "writing"):
            fs.put_file(tmp, where)
    except DaskbiclError:
        raise
    except Exception as exc:  # fsspec's and the backend's errors: named, secrets redacted
        raise store_failure(exc, doing="write", store=url) from None
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def jsonable(value):
    if isinstance(value, Estimate):  # a sampled value says so: {"value", "exact": false, "half_width", "samples"}
        return value.as_dict()
    if hasattr(value, "_asdict"):
        return {k: jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def progress_wanted(args) -> bool:
    if args.progress is not None:
        return args.progress
    return sys.stderr.isatty()


def format_table(results: dict) -> str:
    """Human-readable table of a ``score`` result."""
    from .measures import REGISTRY

    rows = []
    for name, value in results.items():
        summary = REGISTRY[name].summary if name in REGISTRY else ""
        if hasattr(value, "_asdict"):
            for field, v in value._asdict().items():
                rows.append((f"{name}.{field}", v, summary))
                summary = ""
        else:
            rows.append((name, value, summary))
    width = max(len("measure"), *(len(r[0]) for r in rows))
    texts = [_value_text(value) for _, value, _ in rows]
    vw = max(10, *(len(t) for t in texts))
    lines = [f"{'measure':<{width}}  {'value':>{vw}}  description", f"{'-' * width}  {'-' * vw}  {'-' * 11}"]
    for (name, _, summary), text in zip(rows, texts):
        lines.append(f"{name:<{width}}  {text:>{vw}}  {summary}")
    booted = [value for _, value, _ in rows if str(getattr(value, "method", "")).startswith("bootstrap")]
    levels = sorted({value.level for value in booted})
    if levels:
        kind = " bias-corrected" if any(value.method == "bootstrap-bc" for value in booted) else ""
        lines.append(f"\nv [low, high]: the value and its {', '.join(f'{x:g}' for x in levels)}{kind} bootstrap "
                     "interval over the rows and columns (docs: guide/reading-a-score)")
    if any(isinstance(value, Estimate) and not value.exact for _, value, _ in rows):
        lines.append("\n≈ v ± h: sampled estimate, 95 % interval [v - h, v + h] (method=exact insists on the exact "
                     "value; docs: measures/micro, \"Exact or sampled\")")
    return "\n".join(lines)


def _value_text(value) -> str:
    """An exact value to 6 decimals; a sampled one as "≈ 0.4312 ± 0.0008" (decimals enough for its half-width)."""
    return str(value) if isinstance(value, Estimate) else f"{value:.6f}"
