"""The data commands of the command line: ``daskbicl generate``, ``demo`` and ``convert``.

Split from :mod:`daskbicl.cli` (the parser and the scoring commands) so each
module reads in one sitting; the parser in ``cli`` dispatches here.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
import time

from ._version import __version__
from .clitools import EXIT_OK, choose_scheduler, cluster, format_table, progress_wanted, storage_options_of
from .errors import InputError, StoreError
from .io.store import is_remote
from .locations import redact


def _join(folder: str, name: str) -> str:
    """``folder/name`` for a local folder or a URL (a URL is never joined as a local path)."""
    return f"{folder.rstrip('/')}/{name}" if is_remote(folder) else os.path.join(folder, name)


def _store_names(preds: int) -> list[str]:
    return ["truth.zarr"] + (["pred.zarr"] if preds == 1 else [f"pred-{k:03d}.zarr" for k in range(preds)])


#: ``generate`` refuses to build a graph of more chunks than this (it would take minutes to plan).
MAX_GENERATE_CHUNKS = 200_000


def _check_size(rows: int, cols: int, chunk: int, preds: int) -> None:
    chunks = (-(-rows // chunk) + -(-cols // chunk)) * (1 + preds)
    if chunks > MAX_GENERATE_CHUNKS:
        need = -(-(rows + cols) * (1 + preds) // MAX_GENERATE_CHUNKS)
        raise InputError(
            f"{rows:,} rows and {cols:,} columns in chunks of {chunk:,} make {chunks:,} chunks "
            f"(at most {MAX_GENERATE_CHUNKS:,}); pass --chunk {need:,} or more"
        )


def _exists(path: str, storage_options: dict | None) -> bool:
    from .io.publish import store_exists

    return store_exists(path, storage_options) if is_remote(path) else os.path.exists(path)


def _check_generate(out_dir: str, noise: float, seed: int, preds: int, overwrite: bool,
                    storage_options: dict | None = None) -> None:
    """Validate every ``generate`` argument before anything is written or started."""
    from .io.store import is_remote

    if not (math.isfinite(noise) and 0.0 <= noise <= 1.0):
        raise InputError(f"--noise is the fraction of labels redrawn: it must be in [0, 1], got {noise:g}")
    if seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed}")
    if not is_remote(out_dir) and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError(f"output folder {out_dir} exists and is not a folder")
    if not overwrite:
        existing = [_join(out_dir, n) for n in _store_names(preds) if _exists(_join(out_dir, n), storage_options)]
        if existing:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise StoreError(f"{existing[0]}{more} already exists; pass --overwrite to replace")


@contextlib.contextmanager
def _output_folder(out_dir: str):
    """Create ``out_dir`` (and missing parents); if what follows fails, remove the folders created that stayed empty.

    Stores that were completed stay (each store is written atomically);
    a failed ``generate`` never leaves an empty output folder behind.  An
    fsspec URL needs no folder (an object store has none): nothing is created.
    """
    if is_remote(out_dir):  # no folder to create on an object store (and never a local folder named after a URL)
        yield
        return
    created = []
    folder = os.path.abspath(out_dir)
    while not os.path.isdir(folder):
        created.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(created):
        try:
            os.mkdir(path)
        except FileExistsError:
            pass
        except OSError as exc:
            _remove_empty(created)
            raise InputError(f"cannot create output folder {redact(out_dir)}: {exc.strerror or exc}") from None
    try:
        yield
    except BaseException:
        _remove_empty(created)
        raise


def _remove_empty(folders: list[str]) -> None:
    for path in folders:  # deepest first
        with contextlib.suppress(OSError):
            os.rmdir(path)  # only if empty


def _generate(out_dir: str, rows: int, cols: int, row_clusters: int, col_clusters: int,
              noise: float, seed: int, preds: int, overwrite: bool, chunk: int,
              progress: bool = False, storage_options: dict | None = None) -> tuple[str, list[str]]:
    from .io.store import open_store, save
    from .io.synthetic import perturb, random_partition

    _check_generate(out_dir, noise, seed, preds, overwrite, storage_options)
    where = {"overwrite": overwrite, "progress": progress, "storage_options": storage_options}
    with _output_folder(out_dir):
        truth = random_partition(rows, cols, row_clusters, col_clusters, seed=seed, chunk=chunk)
        names = _store_names(preds)
        truth_path = save(truth, _join(out_dir, names[0]), **where)
        # perturb what was written, read back lazily
        truth = open_store(truth_path, "truth", storage_options=storage_options)
        pred_paths = []
        for k, name in enumerate(names[1:]):
            pred = perturb(truth, noise, seed=seed + 1 + k)
            pred_paths.append(save(pred, _join(out_dir, name), **where))
    return truth_path, pred_paths


def _generate_biclustering(args, progress: bool) -> tuple[str, list[str]]:
    """``generate --kind biclustering``: a synthetic overlapping biclustering and noisy copies."""
    from .io.store import save
    from .io.synthetic_biclustering import perturb_biclustering, random_biclustering

    truth = random_biclustering(args.rows, args.cols, args.biclusters, density=args.density, layout=args.layout,
                                overlap=args.overlap, seed=args.seed, chunk=args.chunk)
    names = _store_names(args.preds)
    where = {"overwrite": args.overwrite, "progress": progress, "storage_options": storage_options_of(args)}
    with _output_folder(args.out):
        truth_path = save(truth, _join(args.out, names[0]), **where)
        preds = [
            save(perturb_biclustering(truth, args.noise, density=args.density, seed=args.seed + 1 + k),
                 _join(args.out, name), **where)
            for k, name in enumerate(names[1:])
        ]
    return truth_path, preds


def _check_generate_biclustering(args) -> None:
    from .io.synthetic_biclustering import LAYOUTS

    if not 0.0 < args.density <= 1.0:
        raise InputError(f"--density is the share of rows and of columns in a bicluster: it must be in (0, 1], got {args.density:g}")
    if not 0.0 <= args.overlap <= 1.0:
        raise InputError(f"--overlap must be in [0, 1], got {args.overlap:g}")
    if args.layout not in LAYOUTS:  # argparse checks choices; this guards the Python call
        raise InputError(f"--layout must be one of {', '.join(LAYOUTS)}")


def cmd_generate(args) -> int:
    _check_generate(args.out, args.noise, args.seed, args.preds, args.overwrite, storage_options_of(args))
    _check_size(args.rows, args.cols, args.chunk, args.preds)
    if args.kind == "biclustering":
        _check_generate_biclustering(args)
    with cluster(args.scheduler, args.workers) if args.cluster else contextlib.nullcontext():
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            if args.kind == "biclustering":
                truth, preds = _generate_biclustering(args, progress_wanted(args))
            else:
                truth, preds = _generate(
                    args.out, args.rows, args.cols, args.row_clusters, args.col_clusters,
                    args.noise, args.seed, args.preds, args.overwrite, args.chunk, progress_wanted(args),
                    storage_options_of(args),
                )
    print(f"truth: {redact(truth)}")
    for p in preds:
        print(f"pred:  {redact(p)}")
    print(f"generated in {time.perf_counter() - started:.2f} s", file=sys.stderr)
    return EXIT_OK


def cmd_demo(args) -> int:
    from .measures import score

    _check_generate(args.out or tempfile.gettempdir(), args.noise, args.seed, 1, True)
    out = args.out or tempfile.mkdtemp(prefix="daskbicl-demo-")
    print(
        f"daskbicl {__version__} demo: a {args.rows:,} x {args.cols:,} co-clustering "
        f"({args.row_clusters} x {args.col_clusters} clusters) and a copy with "
        f"{args.noise:.0%} of its labels redrawn"
    )
    with cluster(args.scheduler, args.workers, default="local") as client:
        if client is not None:
            print(f"dask cluster: {len(client.scheduler_info()['workers'])} worker processes at "
                  f"{client.scheduler.address}")
        else:
            print(f"dask scheduler: {choose_scheduler(args.scheduler, args.workers)} (in this process)")
        started = time.perf_counter()
        truth, preds = _generate(
            out, args.rows, args.cols, args.row_clusters, args.col_clusters,
            args.noise, args.seed, 1, True, 1 << 20,
        )
        print(f"wrote {truth}\n      {preds[0]}  ({time.perf_counter() - started:.1f} s)")
        started = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            results = score(truth, preds[0], progress=progress_wanted(args))
        elapsed = time.perf_counter() - started
    print()
    print(format_table(results))
    print(f"\nscored {args.rows + args.cols:,} labels per store in {elapsed:.2f} s")
    print(f"stores kept in {out}  (try: daskbicl score {truth} {preds[0]} --json)")
    return EXIT_OK


def _read_labels(spec: str, keep_na: bool):
    """Labels of a file; says on stderr how many were read as missing (they become unassigned)."""
    from .io.inputs import count_missing, read_labels

    values = read_labels(spec, keep_na=keep_na)
    missing = count_missing(values)
    if missing:
        hint = ("only empty cells are missing with --keep-na" if keep_na else
                'empty cells and markers such as "NA", "N/A", "null" are missing; --keep-na keeps such text '
                "as labels")
        print(f"note: {spec}: {missing:,} of {len(values):,} labels read as missing, stored as unassigned "
              f"({hint})", file=sys.stderr)
    return values


def _convert_dataset(args):
    """The Dataset ``daskbicl convert`` writes, from the files its arguments name."""
    from .io.inputs import biclustering_from_indices, read_biclusters_json, read_mask
    from .io.validate import as_dataset

    row = _read_labels(args.row_coords, args.keep_na) if args.row_coords else None
    col = _read_labels(args.col_coords, args.keep_na) if args.col_coords else None
    forms = [bool(args.rows or args.cols), bool(args.row_mask or args.col_mask), bool(args.biclusters)]
    if sum(forms) != 1:
        raise InputError("convert needs exactly one of: --rows and --cols (a co-clustering), "
                         "--row-mask and --col-mask, or --biclusters FILE.json (a biclustering)")
    if forms[0]:
        if not (args.rows and args.cols):
            raise InputError("a co-clustering needs both --rows FILE and --cols FILE")
        from . import partition

        return partition(_read_labels(args.rows, args.keep_na), _read_labels(args.cols, args.keep_na),
                         row=row, col=col)
    if forms[1]:
        if not (args.row_mask and args.col_mask):
            raise InputError("a biclustering from masks needs both --row-mask FILE and --col-mask FILE")
        from . import biclustering

        return biclustering(read_mask(args.row_mask), read_mask(args.col_mask), row=row, col=col)
    shape = tuple(args.shape) if args.shape else None
    ds = biclustering_from_indices(read_biclusters_json(args.biclusters), shape, row=row, col=col)
    return as_dataset(ds, "convert")


def cmd_convert(args) -> int:
    from .io.store import save

    ds = _convert_dataset(args)  # every file read and checked before anything is written
    path = save(ds, args.out, overwrite=args.overwrite, storage_options=storage_options_of(args))
    sizes = ", ".join(f"{n:,} {d}s" for d, n in ds.sizes.items())
    print(f"{ds.attrs['daskbicl_kind']}: {redact(path)} ({sizes})")
    return EXIT_OK
