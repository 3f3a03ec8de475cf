"""Plan a batch (what to score, what to skip) and execute it on a Dask cluster.

:func:`survey` fingerprints every store and reads each store's kind from
its metadata; a measure the manifest asks for that does not apply to the
kinds of the stores it pairs (``cari`` on biclusterings) is a
:class:`~daskbicl.batch.ManifestError` naming the manifest line, raised
before anything is written or computed.  When :func:`run_batch` has a
Client from the start, :func:`survey` only lists the stores and reads their
kinds, and the workers hash and open them
(:mod:`~daskbicl.batch.cluster_fingerprints`) while the client builds the
pairs whose stores have arrived (:class:`_EarlyBuild`).  :func:`plan` needs no cluster: it
resolves each pair's measures and parameters and asks the results file
which of them are already scored at these fingerprints.  A nightly run with
nothing new stops there (it still records that those inputs were seen, for
``--latest``).

:func:`execute` opens each store once (one Dataset object per store, shared
by every pair it is in), builds each pair's counting graphs with
:meth:`daskbicl.measures.plan.ScorePlan.build`, and submits them: the first pair
(:data:`FIRST_WAVE`) as soon as it is built, so the cluster starts while the
client opens the other stores, then the others in waves twice as large each
time.  The graphs share the stores' chunk-reading tasks, and the chunks of
stores that several pairs use are held until the last wave is submitted, so
the scheduler reads each chunk once whatever the number of pairs.  Pairs are
collected by :func:`daskbicl.batch.collect.run_pairs` as they complete: the
stores are fingerprinted again (a store changed during the run records
nothing), each measure is finalized and committed as soon as its pair is
done (the measures that succeed are kept when another fails), so a killed
run loses at most the pairs in flight, and a failing pair (corrupt chunk,
bad labels, misaligned inputs) is recorded with its reason, once per pair,
while the others go on.  A cluster is started (``connect``) only when some
pair needs computing, after the results file is open, locked and the run
recorded.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

from ..errors import DaskbiclError, MeasureError
from ..io.store import is_remote, open_store
from ..locations import redact
from ..measures import PROVIDERS, REGISTRY, ScorePlan
from ..measures.bootstrap import resampling_plan
from ..measures.plan import plan_graphs
from ..scheduling import active_client
from .cluster_fingerprints import fingerprint_on_cluster
from .collect import State, Submitted, run_pairs
from .fingerprint import StoreInfo, fingerprint_stores
from .manifest import Manifest, ManifestError, Request, load_manifest, params_key
from .results import Pair, ResultsDB

__all__ = ["PairJob", "Plan", "BatchReport", "survey", "plan", "execute", "run_batch", "expected_keys"]


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
    truth_name: str = ""
    pred_name: str = ""
    #: ids of the score rows this run stands on without scoring (the inputs' content was scored before)
    reused: list[int] = field(default_factory=list)
    #: a store of the pair does not exist: ``"missing"`` the run it goes, ``"gone"`` after (else empty)
    absent: str = ""

    @property
    def pair(self) -> Pair:
        return Pair(self.truth, self.pred, self.truth_fp, self.pred_fp, self.truth_name or self.truth,
                    self.pred_name or self.pred)


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

    def absent(self, status: str) -> list[PairJob]:
        """The pairs whose store is ``status`` (``"missing"``, ``"gone"``)."""
        return [j for j in self.jobs if j.absent == status]

    def describe(self) -> str:
        n_fail = sum(1 for j in self.jobs if j.errors and not j.work and not j.absent)
        absent = "".join(f", {len(self.absent(s))} {s}" for s in ("missing", "gone") if self.absent(s))
        return (
            f"{len(self.jobs)} pairs over {len(self.stores)} stores: {len(self.to_score)} to score, "
            f"{len(self.skipped)} already scored" + absent + (f", {n_fail} cannot run" if n_fail else "")
        )

    def warnings(self) -> list[str]:
        """A line per glob that matches nothing, unless its group has pairs reported missing or gone (a store
        deleted is reported once, as its pairs)."""
        reported = {("truth", j.truth_name.split("/", 1)[0]) for j in self.jobs if j.absent}
        reported |= {("pred", j.pred_name.split("/", 1)[0]) for j in self.jobs if j.absent}
        return [f"{message} (its group has no store this run)" for key, found in self.manifest.empty.items()
                if key not in reported for message in found]


@dataclass
class BatchReport:
    """Outcome of a batch run; ``exit_code`` is 0 when every pair was scored (or already was), 1 when some
    pair failed, 3 when some pair was not scored because a storage did not answer.

    A pair whose store disappeared is ``missing`` (the run it goes: listed
    in ``absent``), then ``gone``; neither is a failure.  A pair whose
    store's storage did not answer (unreachable, hung past the time-outs,
    throttling) is not scored this run and not a failure either: it is
    listed in ``unavailable`` and recorded with the status
    ``unavailable`` (no value); the run exits 3 (retry later), the other
    pairs scored as usual.
    """

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
    missing: int = 0
    gone: int = 0
    absent: list[tuple[str, str, str]] = field(default_factory=list)  # missing this run: (truth, pred, reason)
    warnings: list[str] = field(default_factory=list)
    #: pairs not scored because a storage did not answer: (truth, pred, reason)
    unavailable: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """3 (retry later) when a storage did not answer, else 1 when a pair failed, else 0."""
        return 3 if self.unavailable else 1 if self.failed else 0

    def summary(self) -> str:
        absent = "".join(f", {n} {s}" for s, n in (("missing", self.missing), ("gone", self.gone)) if n)
        if self.unavailable:
            absent += f", {len(self.unavailable)} not scored (the storage did not answer: retry later)"
        return (
            f"{self.pairs} pairs: {self.scored} scored, {self.skipped} already scored, "
            f"{self.failed} failed{absent}; {self.rows} rows written to {self.results} in {self.seconds:.1f} s"
        )


def _absent(path: str) -> bool:
    """A local store that does not exist (a remote one is never said missing: it may be unreachable)."""
    if is_remote(path):
        return False
    return not os.path.exists(path[len("file://"):] if path.startswith("file://") else path)


def _known_kinds() -> set[str]:
    return {kind for provider in PROVIDERS.values() for kind in provider.kinds}


def survey(manifest: Manifest, *, threads: int = 16, contents: bool = True) -> dict[str, StoreInfo]:
    """Fingerprint every store of ``manifest`` and check its measures apply to the stores' kinds.

    A store that is missing or unreadable is not an error here (its pairs
    fail, each with the reason).  Nothing is written or computed.  With
    ``contents=False`` the stores are listed and their kinds read, but no
    byte is hashed (the fingerprints are None): the cluster's workers hash
    them (:func:`~daskbicl.batch.cluster_fingerprints.fingerprint_on_cluster`).

    Raises
    ------
    ManifestError
        When a ``[[pairs]]`` table asks for a measure that does not apply to
        the kind of a store it pairs (``cari`` needs co-clusterings), naming
        the table's line and the stores.
    """
    stores = fingerprint_stores(manifest.stores, manifest.storage_options, threads=threads, contents=contents)
    known = _known_kinds()
    problems: dict[tuple[int, str], list[tuple[str, str]]] = {}
    for (truth, pred), requests in manifest.pairs.items():
        t, p = stores[truth], stores[pred]
        if t.error or p.error or t.kind not in known or p.kind not in known:
            continue  # a bad store: that pair fails with its reason
        for request in requests:
            try:
                request.resolve(t.kind, p.kind)
            except MeasureError as exc:
                problems.setdefault((request.line, str(exc)), []).append((truth, pred))
    if problems:
        lines = []
        for (line, message), pairs in sorted(problems.items()):
            (truth, pred), more = pairs[0], len(pairs) - 1
            others = f" and {more} other pair{'s' * (more > 1)}" if more else ""
            lines.append(f"{manifest.source}, line {line}: {message} (truth {truth}, pred {pred}{others})")
        head = "" if len(lines) == 1 else f"{len(lines)} problems in the manifest:\n"
        raise ManifestError(head + "\n".join(lines))
    return stores


def plan(manifest: Manifest, db: ResultsDB, *, force: bool = False, threads: int = 16,
         stores: dict[str, StoreInfo] | None = None) -> Plan:
    """Decide, per pair, what is left to score.

    ``stores`` is what :func:`survey` returned (surveyed here when not
    given).  Nothing is computed and no cluster is needed.  With ``force``
    every measure is rescored.
    """
    if stores is None:
        stores = survey(manifest, threads=threads)
    jobs = []
    versions = {name: m.version for name, m in REGISTRY.items()}
    known = db.known_pairs()
    for (truth, pred), requests in manifest.pairs.items():
        t, p = stores[truth], stores[pred]
        job = PairJob(truth, pred, t.fingerprint, p.fingerprint, truth_name=manifest.name(truth, "truth"),
                      pred_name=manifest.name(pred, "pred"))
        jobs.append(job)
        problems = [f"{role}: {info.error}" for role, info in (("truth", t), ("pred", p)) if info.error]
        if problems:
            job.errors = [(r, "; ".join(problems)) for r in requests]
            before = known.get((job.truth_name, job.pred_name))
            if before is not None and any(_absent(path) for path in (truth, pred)):  # a store that went; one
                # no run ever saw (a path mistyped in the manifest) fails
                job.absent = "gone" if before[2] in ("missing", "gone") else "missing"
            continue
        done = {} if force else db.reusable(t.fingerprint, p.fingerprint, versions)
        for request in requests:
            try:
                resolved = request.resolve(t.kind, p.kind)
            except MeasureError as exc:  # an unknown kind: the store is bad (opening it says why)
                job.errors.append((request, str(exc)))
                continue
            todo = [(m, prm) for m, prm in resolved if (m.name, params_key(prm)) not in done]
            job.done += len(resolved) - len(todo)
            job.reused.extend(i for m, prm in resolved for i in done.get((m.name, params_key(prm)), ()))
            if todo:
                job.work.append((request, todo))
    jobs.extend(_gone(manifest, known, jobs))
    return Plan(manifest, stores, jobs, force)


def _gone(manifest: Manifest, known: dict, jobs: list[PairJob]) -> list[PairJob]:
    """Pairs of this manifest's groups that a run saw and this manifest no longer names: missing, then gone.

    A pred deleted from a folder a glob lists is not named by the manifest
    any more (a store taken out of the manifest by hand is not missing: no
    glob of its group would list it); the first run that does not find it
    reports it ``missing``, every later run lists it as ``gone`` (with its
    last value; never as current, never as failed).  A pair whose content
    this run finds under other names was renamed, not lost.  ``known`` is
    :meth:`ResultsDB.known_pairs`.
    """
    groups: dict[str, set[str]] = {"truth": set(), "pred": set()}
    for role, group in manifest.globs:
        groups[role].add(group)
    # the results file holds names redacted (daskbicl.locations): compare them so
    present = {(role, redact(name)) for (role, _), name in manifest.names.items()}
    named = {(redact(j.truth_name), redact(j.pred_name)) for j in jobs}
    contents = {(j.truth_fp, j.pred_fp) for j in jobs if j.truth_fp and j.pred_fp}
    out = []
    for (t, p), (truth, pred, status, content) in known.items():
        if (t, p) in named or t.split("/", 1)[0] not in groups["truth"] or p.split("/", 1)[0] not in groups["pred"]:
            continue
        if status in ("missing", "gone"):  # reported: listed as gone while its group still globs for it
            absent = [(role, name) for role, name in (("truth", t), ("pred", p)) if (role, name) not in present]
            if absent and all(manifest.globbed(role, name) for role, name in absent):
                job = PairJob(truth, pred, None, None, truth_name=t, pred_name=p, absent="gone")
                job.errors = [(Request(None), "gone: " + _gone_what(t, p, truth, pred, present))]
                out.append(job)
            continue
        if content in contents:  # renamed: the same content under another name is here
            continue
        absent = [(role, name) for role, name in (("truth", t), ("pred", p)) if (role, name) not in present]
        if not all(manifest.globbed(role, name) for role, name in absent):
            continue  # taken out of the manifest by hand, not lost
        job = PairJob(truth, pred, None, None, truth_name=t, pred_name=p, absent="missing")
        job.errors = [(Request(None), f"{_gone_what(t, p, truth, pred, present)} is gone: the manifest no longer "
                                      "names it (deleted, or its glob matches it no more)")]
        out.append(job)
    return out


def _gone_what(t: str, p: str, truth: str, pred: str, present: set) -> str:
    gone = [f"{role} {name} ({path})" for role, name, path in (("truth", t, truth), ("pred", p, pred))
            if (role, name) not in present]
    return " and ".join(gone) or "the pair"


# --------------------------------------------------------------------------- execution


class _PairProgress:
    """``[####    ] pairs done/total (F failed) | elapsed`` on ``out``, updated as each pair completes.

    Driven by the ``distributed.as_completed`` loop that collects the pairs,
    so it counts this run's pairs only and needs no thread and no scheduler
    internals.  On a terminal the line is redrawn; in a log a line is written
    at most every ``every`` seconds, and always at the end.
    """

    def __init__(self, pairs: int, out, every: float = 5.0, width: int = 24):
        self.pairs, self.done, self.failed = pairs, 0, 0
        self.out, self.every, self.width = out, every, width
        self.started = time.perf_counter()
        self.tty = hasattr(out, "isatty") and out.isatty()
        self.last: float | None = None

    def line(self) -> str:
        frac = self.done / self.pairs if self.pairs else 1.0
        bar = "#" * int(round(frac * self.width))
        failed = f" ({self.failed} failed)" if self.failed else ""
        return (f"[{bar:<{self.width}}] pairs {self.done}/{self.pairs}{failed} | "
                f"{time.perf_counter() - self.started:.1f} s")

    def update(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += bool(failed)
        self._draw(final=False)

    def close(self) -> None:
        self._draw(final=True)

    def _draw(self, final: bool) -> None:
        now = time.perf_counter()
        if self.tty:
            self.out.write("\r" + self.line() + ("\n" if final else ""))
        elif final or self.last is None or now - self.last >= self.every:
            self.out.write(self.line() + "\n")
            self.last = now
        self.out.flush()


def _waves(built, size: int):
    """The pairs of ``built`` in lists of ``size``, ``2 size``, ``4 size``...: each list is sent as soon as it
    is built, few enough that the held shared chunks and the scheduler's work stay small."""
    while wave := list(itertools.islice(built, size)):
        yield wave
        size *= 2


#: Re-check a completed pair's local stores by ``stat`` first (bytes hashed only when that proves nothing).
RECHECK_BY_STAT = True


def _stat_signatures(plan: Plan) -> dict:
    return {path: info.stat for path, info in plan.stores.items() if info.stat is not None}


#: Pairs sent to the cluster before the client opens the other stores and builds their graphs (0: all at
#: once); the others follow in waves twice as large each time (see :func:`_waves`).  The cluster starts
#: reading while the client works; the chunks of stores shared with later pairs (the truth) are held until
#: every wave is sent, so they are read once.
FIRST_WAVE = 1


def _open_once(jobs: list[PairJob], storage_options: dict, opened: dict | None = None):
    """One Dataset per store (so pairs share its read tasks), or the error opening it."""
    opened = {} if opened is None else opened
    for job in jobs:
        for path, role in ((job.truth, "truth"), (job.pred, "pred")):
            if path not in opened:
                try:
                    opened[path] = open_store(path, role, storage_options=storage_options or None)
                except DaskbiclError as exc:
                    opened[path] = exc
    return opened


def _built(jobs: list[PairJob], storage_options: dict, state: State, shared: set, opened: dict | None = None,
           prebuilt: dict | None = None):
    """Each pair's :class:`Submitted` graphs, its stores opened when first needed (unless in ``opened``); pairs
    that cannot be built are recorded as failed.  The task keys of the stores that several pairs use are added
    to ``shared``.  ``prebuilt`` holds pairs built ahead (:class:`_EarlyBuild`), used when their work is the
    plan's."""
    opened = {} if opened is None else opened
    uses: dict[str, int] = {}
    for job in jobs:
        for path in {job.truth, job.pred}:
            uses[path] = uses.get(path, 0) + 1
    seen: set[str] = set()
    for job in jobs:
        fresh = [p for p in dict.fromkeys((job.truth, job.pred)) if p not in seen]
        seen.update(fresh)
        _open_once([job], storage_options, opened)
        for path in fresh:
            if uses[path] > 1 and hasattr(opened[path], "__dask_graph__"):
                shared.update(opened[path].__dask_graph__().keys())  # type: ignore[union-attr]
        early = (prebuilt or {}).pop((job.truth, job.pred), None)
        if early is not None and early[0] == _work_of(job):
            graph, prepared, errors = early[1]  # built while the workers hashed: the plan asks for the same
        else:
            graph, prepared, errors = _build(job, opened)
        for request, reason in errors:
            state.fail(job, request, reason)
        if graph is None:
            state.settle(job)
        else:
            yield Submitted(job, graph, prepared)


def _work_of(job: PairJob) -> list:
    """What a pair's graphs compute: ``[(request, ((measure, params), ...))]``."""
    return [(request, tuple((m.name, params_key(prm)) for m, prm in todo)) for request, todo in job.work]


class _EarlyBuild:
    """Builds each pair's graphs as soon as the workers have sent both its stores, before the plan.

    Called with each store's path as it arrives
    (:func:`~daskbicl.batch.cluster_fingerprints.fingerprint_on_cluster`), so
    the client builds while the workers hash the other stores.  Each pair is
    built for every measure its requests ask for; :func:`_built` uses it
    only when the plan leaves the pair exactly that work (a first run), and
    builds it again otherwise.
    """

    def __init__(self, manifest: Manifest, stores: dict[str, StoreInfo], opened: dict):
        self.manifest, self.stores, self.opened = manifest, stores, opened
        self.built: dict[tuple[str, str], tuple[list, tuple]] = {}
        self.waiting: dict[str, list[tuple[str, str]]] = {}
        for truth, pred in manifest.pairs:
            for path in {truth, pred}:
                self.waiting.setdefault(path, []).append((truth, pred))

    def __call__(self, path: str) -> None:
        for truth, pred in self.waiting.pop(path, ()):
            if truth in self.opened and pred in self.opened and (truth, pred) not in self.built:
                self._one(truth, pred)

    def _one(self, truth: str, pred: str) -> None:
        t, p = self.stores[truth], self.stores[pred]
        job = PairJob(truth, pred, None, None)
        try:
            job.work = [(r, r.resolve(t.kind, p.kind)) for r in self.manifest.pairs[(truth, pred)]]
        except MeasureError:
            return  # planned and reported as usual
        self.built[(truth, pred)] = (_work_of(job), _build(job, self.opened))


def _build(job: PairJob, datasets: dict):
    """``({(i, key): delayed table}, [(request, plan)], [(request, reason)])`` for one pair."""
    truth, pred = datasets[job.truth], datasets[job.pred]
    broken = [f"{role}: {x}" if not str(x).startswith(role) else str(x)
              for role, x in (("truth", truth), ("pred", pred)) if isinstance(x, Exception)]
    if broken:
        return None, [], [(req, "; ".join(broken)) for req, _ in job.work]
    prepared, errors = [], []
    for request, todo in job.work:
        try:
            plan = ScorePlan.build(truth, pred, [m.name for m, _ in todo], unassigned=request.unassigned,
                                   **dict(request.params))
            plan = resampling_plan(plan) if request.ci is not None else plan  # the manifest's ci
        except DaskbiclError as exc:
            errors.append((request, str(exc)))
            continue
        prepared.append((request, plan))
    if not prepared:
        return None, [], errors
    graphs = plan_graphs([plan for _, plan in prepared])  # the pair's plans share its counting passes
    return graphs, prepared, errors


def execute(plan: Plan, db: ResultsDB, client=None, *, connect=None, run_id: str | None = None,
            progress: bool = False, progress_every: float = 5.0, out=None, opened: dict | None = None,
            prebuilt: dict | None = None) -> BatchReport:
    """Score every pair of ``plan`` that has work left, recording each as it completes.

    Parameters
    ----------
    plan : Plan
        From :func:`plan`.
    db : ResultsDB
        Where rows and failures go.  The run takes its lock
        (:meth:`ResultsDB.start_run`) unless ``run_id`` is given.
    client : distributed.Client, optional
        The cluster to compute on.
    connect : callable, optional
        Without ``client``: ``connect()`` returns a context manager yielding
        a Client, entered only when some pair needs computing.  Without
        either: the active Client, else a temporary in-process cluster.
    run_id : str, optional
        A run already started with :meth:`ResultsDB.start_run`.
    progress : bool
        Progress (pairs and tasks done) on ``out`` (default stderr).
    progress_every : float
        Seconds between two progress lines when ``out`` is not a terminal.
    opened : dict, optional
        Stores already opened (``{path: Dataset or the error opening it}``),
        used instead of opening them again.
    prebuilt : dict, optional
        Pairs already built (see :class:`_EarlyBuild`).
    """
    out = out or sys.stderr
    started = time.perf_counter()
    if run_id is None:
        run_id = db.start_run(plan.manifest.path, len(plan.jobs))
    state = State(db, run_id)
    status = "interrupted"
    todo = plan.to_score
    try:
        # These inputs are as scored before: this run stands on their rows (for --latest, --run, --diff).
        for job in plan.jobs:
            if job.reused:
                db.reuse(job.pair, list(dict.fromkeys(job.reused)), run_id=run_id)
        for job in plan.jobs:
            for request, reason in job.errors:
                state.fail(job, request, reason, status=job.absent or "failed")
            if not job.work:
                state.settle(job)

        shared: set = set()
        built = _built(todo, plan.manifest.storage_options, state, shared, opened, prebuilt)
        first = list(itertools.islice(built, FIRST_WAVE)) if FIRST_WAVE else list(built)
        if first:
            bar = _PairProgress(len(first), out, every=progress_every) if progress else None
            with _client(client, connect) as active:
                run_pairs(active, first, state, storage_options=plan.manifest.storage_options, progress=bar,
                          stat=_stat_signatures(plan) if RECHECK_BY_STAT else None,
                          more=_waves(built, 2 * FIRST_WAVE) if FIRST_WAVE else None, shared=shared)
        status = "failed" if state.failed_pairs else "unavailable" if state.unavailable else "ok"
    finally:
        scored = sum(1 for job in todo if (job.truth, job.pred) in state.committed
                     and (job.truth, job.pred) not in state.failed_pairs)
        counts = dict(pairs=len(plan.jobs), scored=scored, skipped=len(plan.skipped), failed=len(state.failed_pairs))
        if status == "interrupted":  # already failing: that error is the one to report
            with contextlib.suppress(DaskbiclError):
                db.finish_run(run_id, **counts, status=status)
        else:
            db.finish_run(run_id, **counts, status=status)
    return BatchReport(
        pairs=len(plan.jobs), scored=scored, skipped=len(plan.skipped), failed=len(state.failed_pairs),
        rows=state.rows, tasks=state.tasks, seconds=time.perf_counter() - started, run_id=run_id,
        results=db.path, failures=state.failures, missing=len(plan.absent("missing")), gone=len(plan.absent("gone")),
        absent=state.absent, unavailable=state.unavailable,
        warnings=plan.warnings() + [f"not scored: pred {p} against truth {t}: {why}" for t, p, why in state.unavailable],
    )


@contextlib.contextmanager
def _client(client, connect):
    """The Client to compute on (see :func:`execute`)."""
    if client is not None:
        yield client
        return
    if connect is not None:
        with connect() as client:
            yield client
        return
    client = active_client()
    if client is not None:
        yield client
        return
    from distributed import Client

    with Client(processes=False, dashboard_address=None) as client:
        yield client


def git_commit(folder: str | None) -> str | None:
    """The commit checked out in the git repository holding ``folder`` (None outside one, or without git)."""
    if not folder:
        return None
    try:
        done = subprocess.run(["git", "-C", folder, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None


def expected_keys(manifest: Manifest, stores: dict[str, StoreInfo]) -> set[tuple[str, str]]:
    """The ``(measure, params)`` rows (a record's fields as ``name.field``) the pairs of ``manifest`` whose
    stores' kinds are known would have: what a gate may check (see :func:`~daskbicl.batch.gates.check_applies`)."""
    known = _known_kinds()
    keys: set[tuple[str, str]] = set()
    for (truth, pred), requests in manifest.pairs.items():
        t, p = stores[truth], stores[pred]
        if t.error or p.error or t.kind not in known or p.kind not in known:
            continue
        for request in requests:
            with contextlib.suppress(MeasureError):
                for m, prm in request.resolve(t.kind, p.kind):
                    names = [f"{m.name}.{f}" for f in m.fields] or [m.name]
                    keys.update((n, params_key(prm)) for n in names)
    return keys


def run_batch(manifest, results=None, *, client=None, connect=None, force: bool = False,
              progress: bool = False, progress_every: float = 5.0, out=None, tags: dict | None = None,
              hash_on_cluster: bool = False, gates=()) -> BatchReport:
    """Load ``manifest`` (a path or a :class:`Manifest`), survey, plan and execute it.

    ``results`` defaults to the manifest's ``results`` key, else
    ``<manifest>.sqlite`` beside it.  In order: the stores are surveyed (a
    measure that does not apply is a :class:`ManifestError`, and nothing is
    written); the results file is opened, locked and the run recorded (a
    concurrent run on the same file raises
    :class:`~daskbicl.batch.results.ResultsBusyError`, an unusable file
    :class:`~daskbicl.batch.results.ResultsFileError`); the plan is made
    (and written to ``out`` when given); a cluster is used (``client``, or
    entered from ``connect``, see :func:`execute`) only when some pair needs
    computing.  With a Client at hand from the start (``client``, or an
    active one, and no ``connect``) the stores' bytes are hashed by its
    workers while the client opens the stores
    (:mod:`~daskbicl.batch.cluster_fingerprints`); otherwise in the client.
    ``hash_on_cluster`` (with ``connect``): enter ``connect`` as soon as the
    run is recorded, before planning, so its workers hash the stores too
    (the command line's ``--scheduler ADDRESS``: the bytes are read where
    they will be counted; a run then needs its cluster even when nothing is
    new).  The run records ``tags`` over the manifest's ``[run]``
    table, and the git commit of the manifest's folder when it is in a
    repository.  ``gates`` (:class:`~daskbicl.batch.gates.Gate`): one that
    selects no row the manifest's pairs would have is a
    :class:`~daskbicl.batch.gates.GateError` before anything is written.
    """
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    path = results or manifest.results
    if path is None:
        raise DaskbiclError("no results file: pass results=... or set 'results' in the manifest")
    live = _live_client(client, connect) if FINGERPRINTS_ON_CLUSTER else None
    connect_first = FINGERPRINTS_ON_CLUSTER and hash_on_cluster and live is None and connect is not None
    stores = survey(manifest, contents=live is None and not connect_first)
    if gates:
        from .gates import check_applies

        keys = expected_keys(manifest, stores)
        if keys:  # else no store could be read yet: the gates are checked on the run's rows
            check_applies(list(gates), keys, f"manifest {manifest.source}")
    opened: dict = {}
    with ResultsDB(os.fspath(path)) as db, contextlib.ExitStack() as entered:
        commit = git_commit(os.path.dirname(manifest.path)) if manifest.path else None
        run_id = db.start_run(manifest.path, len(manifest.pairs), tags={**manifest.tags, **(tags or {})},
                              git_commit=commit)  # takes the lock: before planning
        try:
            early = None
            if connect_first:  # after the lock and the run record: a busy or unusable results file asks no cluster
                live = entered.enter_context(connect())
            if live is not None:
                early = _EarlyBuild(manifest, stores, opened) if EARLY_BUILD else None
                stores = fingerprint_on_cluster(live, manifest, stores, opened, arrived=early)
            the_plan = plan(manifest, db, force=force, stores=stores)
        except BaseException:
            with contextlib.suppress(DaskbiclError):
                db.finish_run(run_id, scored=0, skipped=0, failed=0, status="interrupted")
            raise
        if out is not None:
            print(the_plan.describe(), file=out)
        return execute(the_plan, db, live or client, connect=connect, run_id=run_id, progress=progress,
                       progress_every=progress_every, out=out, opened=opened,
                       prebuilt=early.built if early is not None else None)


#: With a cluster at hand before planning (a Client given, or an active one), its workers hash the stores while
#: the client opens them (see :mod:`daskbicl.batch.cluster_fingerprints`); False: hashed in the client.
FINGERPRINTS_ON_CLUSTER = True

#: With the stores hashed by the workers, build each pair's graphs as soon as its stores arrive (see
#: :class:`_EarlyBuild`); False: after the plan.
EARLY_BUILD = True


def _live_client(client, connect):
    """The Client already at hand: ``client``, else (without ``connect``) the active one; None otherwise.

    ``connect`` (the command line's ``--scheduler`` or local cluster) is
    entered only when some pair needs computing, so its runs hash in the
    client: a run with nothing new still needs no cluster.
    """
    if client is not None:
        return client
    return active_client() if connect is None else None
