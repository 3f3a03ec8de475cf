"""Plan a batch (what to score, what to skip) and execute it on a Dask cluster.

:func:`plan` needs no cluster: it fingerprints every store, reads each
store's kind from its metadata, resolves each pair's measures and
parameters, and asks the results file which of them are already scored at
these fingerprints.  A nightly run with nothing new stops there.

:func:`execute` opens each store once (one Dataset object per store, shared
by every pair it is in), builds each pair's counting graphs with
:func:`daskbicl.measures.prepare`, and submits all pairs in one
``client.compute`` call: the graphs share the stores' chunk-reading tasks, so
the scheduler reads each chunk once whatever the number of pairs.  Pairs are
collected with :func:`distributed.as_completed`; each one is finalized
(:func:`daskbicl.measures.finalize`) and committed as soon as it is done, so
a killed run loses at most the pairs in flight, and a failing pair (corrupt
chunk, bad labels, misaligned inputs) is recorded with its reason while the
others go on.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

from ..errors import DaskbiclError
from .fingerprint import StoreInfo, fingerprint_stores
from .manifest import Manifest, Request, params_key
from .results import ResultsDB, flatten

__all__ = ["PairJob", "Plan", "BatchReport", "plan", "execute", "run_batch"]


@dataclass
class PairJob:
    """One (truth, pred) pair: what to compute, or why it cannot be."""

    truth: str
    pred: str
    truth_fp: str | None
    pred_fp: str | None
    #: (request, [(measure, params)] still to score) for each request with work left
    work: list[tuple[Request, list[tuple[object, dict]]]] = field(default_factory=list)
    #: (request, reason) for requests that cannot run (missing store, measure not applicable)
    errors: list[tuple[Request, str]] = field(default_factory=list)
    #: number of (measure, params) already in the results file
    done: int = 0


@dataclass
class Plan:
    """What a batch run will do; see :func:`plan`."""

    manifest: Manifest
    stores: dict[str, StoreInfo]
    jobs: list[PairJob]
    force: bool = False

    @property
    def to_score(self) -> list[PairJob]:
        return [j for j in self.jobs if j.work]

    @property
    def skipped(self) -> list[PairJob]:
        return [j for j in self.jobs if not j.work and not j.errors]

    def describe(self) -> str:
        n_fail = sum(1 for j in self.jobs if j.errors and not j.work)
        return (
            f"{len(self.jobs)} pairs over {len(self.stores)} stores: {len(self.to_score)} to score, "
            f"{len(self.skipped)} already scored" + (f", {n_fail} cannot run" if n_fail else "")
        )


@dataclass
class BatchReport:
    """Outcome of a batch run; ``exit_code`` is 0 when no pair failed, else 1."""

    pairs: int
    scored: int
    skipped: int
    failed: int
    rows: int
    tasks: int
    seconds: float
    run_id: str | None
    results: str
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (truth, pred, reason)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def summary(self) -> str:
        text = (
            f"{self.pairs} pairs: {self.scored} scored, {self.skipped} already scored, "
            f"{self.failed} failed; {self.rows} rows written to {self.results} in {self.seconds:.1f} s"
        )
        return text


def _measures_text(request: Request) -> str:
    return ",".join(request.measures) if request.measures else "*"


def plan(manifest: Manifest, db: ResultsDB, *, force: bool = False, threads: int = 16) -> Plan:
    """Fingerprint the stores and decide, per pair, what is left to score.

    Nothing is computed and no cluster is needed.  With ``force`` every
    measure is rescored.
    """
    from ..errors import MeasureError

    stores = fingerprint_stores(manifest.stores, manifest.storage_options, threads=threads)
    jobs = []
    for (truth, pred), requests in manifest.pairs.items():
        t, p = stores[truth], stores[pred]
        job = PairJob(truth, pred, t.fingerprint, p.fingerprint)
        jobs.append(job)
        problems = [f"{role}: {info.error}" for role, info in (("truth", t), ("pred", p)) if info.error]
        if problems:
            job.errors = [(r, "; ".join(problems)) for r in requests]
            continue
        done = set() if force else db.scored(truth, pred, t.fingerprint, p.fingerprint)
        for request in requests:
            try:
                resolved = request.resolve(t.kind, p.kind)
            except MeasureError as exc:
                job.errors.append((request, str(exc)))
                continue
            todo = [(m, prm) for m, prm in resolved if (m.name, params_key(prm)) not in done]
            job.done += len(resolved) - len(todo)
            if todo:
                job.work.append((request, todo))
    return Plan(manifest, stores, jobs, force)


# --------------------------------------------------------------------------- execution


def _collect(names, tables):
    return dict(zip(names, tables))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, DaskbiclError):
        return str(exc)
    text = str(exc).strip() or repr(exc)
    return f"{type(exc).__name__}: {text}"


def _blamed_key(client, key):
    """The key of the task whose error failed ``key`` (best effort: None when unknown)."""

    def blame(dask_scheduler, key=key):  # runs on the scheduler; pickled by value
        ts = dask_scheduler.tasks.get(key)
        culprit = getattr(ts, "exception_blame", None) if ts is not None else None
        return None if culprit is None else culprit.key

    try:
        return client.run_on_scheduler(blame)
    except Exception:
        return None


def _failure_reason(exc: BaseException, job: PairJob, blamed, arrays: dict) -> str:
    """Say which store, variable and chunk a read error comes from, when the failed task is a read."""
    text = _reason(exc)
    if isinstance(exc, DaskbiclError) or blamed is None:
        return text
    name = blamed[0] if isinstance(blamed, (tuple, list)) else blamed
    name = name[len("original-") :] if isinstance(name, str) and name.startswith("original-") else name
    if name not in arrays:
        return text
    path, var = arrays[name]
    role = "truth" if path == job.truth else "pred"
    chunk = f" chunk {tuple(blamed[1:]) if len(blamed) > 2 else blamed[1]}" if isinstance(blamed, (tuple, list)) else ""
    return f"cannot read {role} {path} (variable {var}{chunk}): {text}"


def _norm_key(key):
    return tuple(_norm_key(k) for k in key) if isinstance(key, (list, tuple)) else key


class _Progress(threading.Thread):
    """``pairs done/total | tasks done/total`` on ``out``, redrawn twice a second.

    Tasks done are read from the scheduler's task stream
    (:meth:`distributed.Client.get_task_stream`), restricted to this batch's keys.
    """

    def __init__(self, client, keys, pairs: int, out, interval: float = 0.5):
        super().__init__(daemon=True, name="daskbicl-batch-progress")
        self.client, self.keys, self.out = client, {_norm_key(k) for k in keys}, out
        self.pairs, self.pairs_done, self.failed = pairs, 0, 0
        self.tasks_done: set = set()
        self.since = None
        self.started = time.perf_counter()
        self.interval = interval
        self.tty = hasattr(out, "isatty") and out.isatty()
        self.last_line = 0.0
        self._halt = threading.Event()

    def _poll(self) -> None:
        try:
            records = self.client.get_task_stream(start=self.since)
        except Exception:  # progress is best effort; the batch goes on
            return
        latest = None
        for r in records:
            key = _norm_key(r.get("key"))
            if key in self.keys:
                self.tasks_done.add(key)
            stops = [s.get("stop", 0) for s in r.get("startstops", ())]
            if stops:
                latest = max(latest or 0, max(stops))
        if latest is not None:
            self.since = latest - 2.0  # overlap: records arrive out of order across workers

    def line(self) -> str:
        width = 24
        frac = self.pairs_done / self.pairs if self.pairs else 1.0
        bar = "#" * int(round(frac * width))
        failed = f" ({self.failed} failed)" if self.failed else ""
        return (
            f"[{bar:<{width}}] pairs {self.pairs_done}/{self.pairs}{failed} | "
            f"tasks {len(self.tasks_done)}/{len(self.keys)} | {time.perf_counter() - self.started:.1f} s"
        )

    def draw(self, final: bool = False) -> None:
        if self.tty:
            self.out.write("\r" + self.line() + ("\n" if final else ""))
        elif final or time.perf_counter() - self.last_line >= 5.0:
            self.out.write(self.line() + "\n")
            self.last_line = time.perf_counter()
        self.out.flush()

    def run(self) -> None:
        while not self._halt.wait(self.interval):
            self._poll()
            self.draw()

    def stop(self) -> None:
        self._halt.set()
        self.join()
        self._poll()
        if self.pairs_done == self.pairs and not self.failed:
            self.tasks_done = set(self.keys)  # every task ran (some records may have rotated out)
        self.draw(final=True)


def _open_once(jobs: list[PairJob], storage_options: dict):
    """One Dataset per store (so pairs share its read tasks), or the error opening it."""
    from ..io.store import open_store

    opened: dict[str, object] = {}
    for job in jobs:
        for path, role in ((job.truth, "truth"), (job.pred, "pred")):
            if path not in opened:
                try:
                    opened[path] = open_store(path, role, storage_options=storage_options or None)
                except DaskbiclError as exc:
                    opened[path] = exc
    return opened


def _build(job: PairJob, datasets: dict):
    """``(delayed tables dict, [(request, selected, per_measure)], [(request, reason)])`` for one pair."""
    import dask

    from ..measures import prepare

    truth, pred = datasets[job.truth], datasets[job.pred]
    broken = [f"{role}: {x}" if not str(x).startswith(role) else str(x)
              for role, x in (("truth", truth), ("pred", pred)) if isinstance(x, Exception)]
    if broken:
        return None, [], [(req, "; ".join(broken)) for req, _ in job.work]
    graphs: dict = {}
    prepared, errors = [], []
    for request, todo in job.work:
        try:
            selected, per_measure, g = prepare(truth, pred, [m.name for m, _ in todo], **dict(request.params))
        except DaskbiclError as exc:
            errors.append((request, str(exc)))
            continue
        for name, graph in g.items():
            graphs.setdefault(name, graph)
        prepared.append((request, selected, per_measure))
    if not prepared:
        return None, [], errors
    names = list(graphs)
    return dask.delayed(_collect, pure=False)(names, [graphs[n] for n in names]), prepared, errors


def execute(plan: Plan, db: ResultsDB, client=None, *, progress: bool = False, out=None) -> BatchReport:
    """Score every pair of ``plan`` that has work left, recording each as it completes.

    Parameters
    ----------
    plan : Plan
        From :func:`plan`.
    db : ResultsDB
        Where rows and failures go.
    client : distributed.Client, optional
        Default: the active Client; without one, a temporary in-process cluster.
    progress : bool
        Progress bar (pairs and tasks done) on ``out`` (default stderr).
    """
    out = out or sys.stderr
    started = time.perf_counter()
    run_id = db.start_run(plan.manifest.path, len(plan.jobs))
    state = _State(db, run_id)
    for job in plan.jobs:
        for request, reason in job.errors:
            state.fail(job, request, reason)

    todo = plan.to_score
    datasets = _open_once(todo, plan.manifest.storage_options)
    submitted = []
    for job in todo:
        graph, prepared, errors = _build(job, datasets)
        for request, reason in errors:
            state.fail(job, request, reason)
        if graph is not None:
            submitted.append((job, graph, prepared))

    status = "interrupted"
    try:
        if submitted:
            owned = None
            if client is None:
                from ..engine.core import active_client

                client = active_client()
            if client is None:
                from distributed import Client

                client = owned = Client(processes=False, dashboard_address=None)
            try:
                _run(client, submitted, state, progress, out, _arrays(datasets))
            finally:
                if owned is not None:
                    owned.close()
        status = "failed" if state.failed_pairs else "ok"
    finally:
        scored = sum(1 for job in todo if (job.truth, job.pred) in state.committed
                     and (job.truth, job.pred) not in state.failed_pairs)
        db.finish_run(run_id, scored=scored, skipped=len(plan.skipped), failed=len(state.failed_pairs),
                      status=status)
    return BatchReport(
        pairs=len(plan.jobs), scored=scored, skipped=len(plan.skipped), failed=len(state.failed_pairs),
        rows=state.rows, tasks=state.tasks, seconds=time.perf_counter() - started, run_id=run_id,
        results=db.path, failures=state.failures,
    )


class _State:
    """What a run has recorded so far."""

    def __init__(self, db: ResultsDB, run_id: str):
        self.db, self.run_id = db, run_id
        self.failures: list[tuple[str, str, str]] = []
        self.failed_pairs: set[tuple[str, str]] = set()
        self.committed: set[tuple[str, str]] = set()
        self.rows = self.tasks = 0

    def fail(self, job: PairJob, request: Request, reason: str) -> None:
        self.db.record_failure(job.truth, job.pred, job.truth_fp, job.pred_fp, _measures_text(request),
                               params_key(dict(request.params)), reason, run_id=self.run_id)
        self.failures.append((job.truth, job.pred, reason))
        self.failed_pairs.add((job.truth, job.pred))

    def finish(self, job: PairJob, prepared, tables) -> None:
        """Finalize every request of a computed pair and commit its rows in one transaction."""
        from ..measures import finalize

        rows = []
        for request, selected, per_measure in prepared:
            try:
                values = finalize(selected, per_measure, tables)
            except Exception as exc:
                self.fail(job, request, _reason(exc))
                continue
            for name, value in values.items():
                key = params_key(per_measure[name])
                rows.extend((m, key, v) for m, v in flatten(name, value))
        if rows:
            self.rows += self.db.record_pair(job.truth, job.pred, job.truth_fp, job.pred_fp, rows,
                                             run_id=self.run_id)
            self.committed.add((job.truth, job.pred))


def _arrays(datasets: dict) -> dict:
    """Dask array name -> (store, variable), to name the store a failed read comes from."""
    out = {}
    for path, ds in datasets.items():
        if isinstance(ds, Exception):
            continue
        for var in ds.variables:
            name = getattr(ds[var].data, "name", None)
            if isinstance(name, str):
                out[name] = (path, var)
    return out


def _run(client, submitted, state: _State, progress: bool, out, arrays: dict) -> None:
    from distributed import as_completed

    graphs = [g for _, g, _ in submitted]
    keys = set()
    for g in graphs:  # the stores' read tasks are shared: count each key once
        keys.update(g.__dask_graph__().keys())
    state.tasks = len(keys)
    futures = client.compute(graphs, optimize_graph=False)
    by_key = {f.key: (job, prepared) for f, (job, _, prepared) in zip(futures, submitted)}
    bar = _Progress(client, keys, len(submitted), out) if progress else None
    if bar is not None:
        bar.start()
    try:
        for future in as_completed(futures):
            job, prepared = by_key[future.key]
            try:
                tables = future.result()
            except Exception as exc:  # the pair's graph failed: a corrupt chunk, bad labels, a lost worker...
                reason = _failure_reason(exc, job, _blamed_key(client, future.key), arrays)
                for request, _, _ in prepared:
                    state.fail(job, request, reason)
            else:
                state.finish(job, prepared, tables)
            future.release()
            if bar is not None:
                bar.pairs_done += 1
                bar.failed += (job.truth, job.pred) in state.failed_pairs
    finally:
        if bar is not None:
            bar.stop()
        for f in futures:
            f.release()


def run_batch(manifest, results=None, *, client=None, force: bool = False, progress: bool = False) -> BatchReport:
    """Load ``manifest`` (a path or a :class:`Manifest`), plan and execute it.

    ``results`` defaults to the manifest's ``results`` key, else
    ``<manifest>.sqlite`` beside it.
    """
    from .manifest import load_manifest

    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    path = results or manifest.results
    if path is None:
        raise DaskbiclError("no results file: pass results=... or set 'results' in the manifest")
    with ResultsDB(os.fspath(path)) as db:
        return execute(plan(manifest, db, force=force), db, client, progress=progress)
