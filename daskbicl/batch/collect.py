"""Collect a batch's computed tables and record them: per measure, under the fingerprints of what was read.

:func:`run_pairs` submits every table of every pair in one ``client.compute``
call (the pairs share the stores' chunk-reading tasks) and collects them as
they complete.  When all the tables of a pair are in:

* the pair's stores are **fingerprinted again** (each store once for all the
  pairs that completed together; a local store whose ``stat`` listing
  proves it unchanged is not hashed again, see :func:`_changed`); a store whose fingerprint differs from
  the one taken when the run was planned changed while it was being read, so
  nothing of that pair is recorded: it is a failure saying so, and the next
  run scores the new content.  A result is never filed under the
  fingerprint of other bytes;
* each **measure** is finalized from the tables it needs; the measures that
  succeed are committed in one transaction even when another measure of the
  pair fails (a failed table, a worker killed for memory, a finalize
  error), and the failed ones are recorded as one failure row naming them;
* the cluster is **watched** (:func:`daskbicl.scheduling.wait_watched`): a
  lost scheduler, or no worker for ``daskbicl.worker_timeout``, ends the run
  with an :class:`~daskbicl.errors.InfrastructureError` (exit status 3) and
  the pairs in flight are *not* recorded as failures (they were not tried
  to the end); committed pairs stay.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from ..errors import DaskbiclError, InfrastructureError, WorkerKilledError
from ..measures.bootstrap import REPLICATES, SEED, with_intervals
from ..scheduling import infrastructure_failure, wait_watched, worker_memory
from .fingerprint import StoreInfo, fingerprint_stores, unchanged_since
from .manifest import Request, params_key, stored_params
from .results import ResultsDB, flatten

__all__ = ["State", "Submitted", "run_pairs"]


@dataclass
class Submitted:
    """One pair's graphs: ``graphs[(i, key)]`` is table ``key`` of ``prepared[i]``'s plan."""

    job: object  # runner.PairJob
    graphs: dict
    prepared: list  # [(Request, ScorePlan)]


@dataclass(frozen=True)
class _Failed:
    """A table that could not be computed, and why."""

    reason: str


def reason_of(exc: BaseException) -> str:
    """The one-line reason recorded for a failure."""
    from ..errors import one_line

    if isinstance(exc, DaskbiclError):
        return one_line(exc)
    return f"{type(exc).__name__}: {one_line(exc) or repr(exc)}"


#: The words of every :class:`~daskbicl.errors.StorageUnavailableError` (``errors.store_failure``, the
#: manifest's globs, the fingerprints): a pair's reason that has them is the storage's, not the pair's.
UNANSWERED = "the storage did not answer"


def unanswered(reason: str) -> bool:
    """Whether a recorded reason says a storage did not answer (unreachable, hung, throttling)."""
    return UNANSWERED in reason


def _failure_reason(exc: BaseException, job) -> str:
    """The reason a table failed; a read error raised by a store's chunk reader names the pair's side."""
    text = reason_of(exc)
    for role, path in (("truth", job.truth), ("pred", job.pred)):
        prefix = f"cannot read {path} "
        if text.startswith(prefix):
            return f"cannot read {role} {path} " + text[len(prefix):]
    return text


class State:
    """What a run has recorded so far.

    A pair's failures are gathered (:meth:`fail`) until the pair is done
    with (:meth:`settle`), then recorded and reported once, whatever the
    number of ``[[pairs]]`` tables that asked for it.
    """

    def __init__(self, db: ResultsDB, run_id: str):
        self.db, self.run_id = db, run_id
        self.pending: dict[tuple[str, str], list[tuple[Request, str, tuple[str, ...] | None, str, list]]] = {}
        self.failures: list[tuple[str, str, str]] = []
        self.failed_pairs: set[tuple[str, str]] = set()
        #: pairs found missing by this run (not failures): (truth, pred, reason)
        self.absent: list[tuple[str, str, str]] = []
        #: pairs not scored because a storage did not answer (exit status 3: retry later): (truth, pred, reason)
        self.unavailable: list[tuple[str, str, str]] = []
        self.committed: set[tuple[str, str]] = set()
        self.rows = self.tasks = 0

    def fail(self, job, request: Request, reason: str, measures: tuple[str, ...] | None = None, *,
             status: str = "failed", keys: list | None = None) -> None:
        """Note a failure of ``measures`` of ``request`` (None: all of them) for ``job``'s pair.

        ``status`` is what the run saw (``failed``, ``missing``, ``gone``, ``changed``);
        ``keys`` the ``(measure, params)`` that failed (default: all of the
        request's work left, see :func:`work_keys`).
        """
        if keys is None:
            keys = work_keys(job, request)
        self.pending.setdefault((job.truth, job.pred), []).append((request, reason, measures, status, keys))

    def settle(self, job) -> None:
        """Record the pair's failures, if any, as one failure (reasons joined); a pair whose store is missing or
        gone is recorded as such, not as a failure."""
        problems = self.pending.pop((job.truth, job.pred), None)
        if not problems:
            return
        reason = "; ".join(dict.fromkeys(p[1] for p in problems))
        absent = next((p[3] for p in problems if p[3] in ("missing", "gone")), None)
        if absent is not None:
            self.db.record_absent(job.pair, absent, reason, run_id=self.run_id)
            if absent == "missing":
                self.absent.append((job.truth, job.pred, reason))
            return
        requests = list(dict.fromkeys(p[0] for p in problems))
        if any(names is None and r.measures is None for r, _, names, _, _ in problems):
            measures = "*"
        else:
            names = [m for r, _, failed, _, _ in problems for m in (failed if failed is not None else r.measures)]
            measures = ",".join(dict.fromkeys(names))
        params = list(dict.fromkeys(params_key(stored_params(dict(r.params), r.unassigned, r.ci, r.ci_method))
                                    for r in requests))
        params_text = params[0] if len(params) == 1 else "[" + ",".join(params) + "]"
        statuses = {p[3] for p in problems}
        if all(unanswered(p[1]) for p in problems):
            status = "unavailable"  # the storage did not answer: not scored this run, not a failure of the pair
        else:
            status = "changed" if "changed" in statuses else "failed"
        keys = list(dict.fromkeys(k for p in problems for k in p[4]))
        self.db.record_failure(job.pair, measures, params_text, reason, run_id=self.run_id, status=status,
                               observed=keys)
        if status == "unavailable":
            self.unavailable.append((job.truth, job.pred, reason))
            return
        self.failures.append((job.truth, job.pred, reason))
        self.failed_pairs.add((job.truth, job.pred))

    def commit(self, job, rows: list) -> None:
        """Write the pair's scored rows (one transaction)."""
        if rows:
            self.rows += self.db.record_pair(job.pair, rows, run_id=self.run_id)
            self.committed.add((job.truth, job.pred))


def work_keys(job, request: Request) -> list[tuple[str, str]]:
    """The ``(measure, params)`` of ``request`` still to score for ``job``'s pair."""
    return [(m.name, params_key(prm)) for r, todo in job.work if r == request for m, prm in todo]


def _finalize(plan, measures: list, tables: dict) -> tuple[dict, list[tuple[tuple[str, ...], str]]]:
    """``({name: value}, [(names, reason)])``: every measure that can be finalized, and why the others cannot.

    All together first (shared computations once); if that fails, one by one,
    so one failing measure does not take the others with it.
    """
    if not measures:
        return {}, []
    try:
        return dataclasses.replace(plan, measures=tuple(measures)).finalize(tables), []
    except Exception:
        if len(measures) == 1:
            raise
    values, failed = {}, []
    for m in measures:
        try:
            values.update(dataclasses.replace(plan, measures=(m,)).finalize(tables))
        except Exception as exc:
            failed.append(((m.name,), reason_of(exc)))
    return values, failed


def _finish(state: State, sub: Submitted, tables: dict) -> None:
    """Finalize every measure of a computed pair; commit those that succeed, record the others."""
    job, rows = sub.job, []
    for i, (request, plan) in enumerate(sub.prepared):
        mine = {key: value for (j, key), value in tables.items() if j == i}
        broken = {key: value.reason for key, value in mine.items() if isinstance(value, _Failed)}
        usable, by_reason = [], {}
        for m in plan.measures:
            key = plan.keys.get(m.provider)
            needs = [key] if key is not None else list(mine)  # an empty pred: the one table it has
            reasons = [broken[k] for k in needs if k in broken]
            if reasons:
                by_reason.setdefault(reasons[0], []).append(m.name)
            else:
                usable.append(m)
        try:
            values, failed = _finalize(plan, usable, mine)
            if request.ci is not None and values:  # the manifest's ci: intervals from the same tables
                done = tuple(m for m in usable if m.name in values)
                values = with_intervals(dataclasses.replace(plan, measures=done), mine, values, ci=request.ci,
                                        replicates=REPLICATES.default, seed=SEED.default, method=request.ci_method)
        except Exception as exc:
            values, failed = {}, [(tuple(m.name for m in usable), reason_of(exc))]
        for reason, names in by_reason.items():
            failed.append((tuple(names), reason))
        version = {m.name: m.version for m in plan.measures}
        for names, reason in failed:
            whole = set(names) == {m.name for m in plan.measures}
            keys = [(n, params_key(stored_params(plan.params[n], request.unassigned, request.ci, request.ci_method)))
                    for n in names]
            state.fail(job, request, reason, None if whole else names, keys=keys)
        for name, value in values.items():
            key = params_key(stored_params(plan.params[name], request.unassigned, request.ci,
                                                request.ci_method))
            rows.extend((m, key, v, version[name]) for m, v in flatten(name, value))
    state.commit(job, rows)
    state.settle(job)


def _changed(subs: list[Submitted], storage_options: dict, stat: dict | None = None) -> dict[int, str]:
    """Index of each pair whose store changed since it was planned -> the reason (each store hashed once).

    A local store whose ``stat`` listing (``stat[path]``, taken when it was
    fingerprinted) is provably the same is not hashed again
    (:func:`~daskbicl.batch.fingerprint.unchanged_since`): the shared truth of
    a batch is not re-read each time a pair completes.  The others are
    fingerprinted again, which reads no chunk of a store whose write record
    or object listing vouches for it.
    """
    stat = stat or {}
    paths = list(dict.fromkeys(p for s in subs for p in (s.job.truth, s.job.pred)))
    same = {p for p in paths if unchanged_since(stat.get(p), p)}
    now = fingerprint_stores([p for p in paths if p not in same], storage_options or None, kinds=False)
    fps = {s.job.truth: s.job.truth_fp for s in subs} | {s.job.pred: s.job.pred_fp for s in subs}
    now.update({p: StoreInfo(p, fps[p]) for p in same})
    out = {}
    for n, s in enumerate(subs):
        problems = []
        for role, path, before in (("truth", s.job.truth, s.job.truth_fp), ("pred", s.job.pred, s.job.pred_fp)):
            info = now[path]
            if info.error:
                problems.append(f"{role} {path} was changed or removed while it was being scored ({info.error})")
            elif info.fingerprint != before:
                problems.append(f"{role} {path} changed while it was being scored (fingerprint {before} when the "
                                f"run started, {info.fingerprint} after)")
        if problems:
            out[n] = "; ".join(problems) + "; nothing was recorded for this pair: run again to score what it holds now"
    return out


def _one(graph):
    import dask

    return graph if dask.is_dask_collection(graph) else dask.delayed(graph, traverse=True)


def run_pairs(client, submitted: list[Submitted], state: State, *, storage_options: dict | None = None,
              progress=None, stat: dict | None = None, more=None, shared: set | None = None) -> None:
    """Compute every submitted pair's tables on ``client`` and record each pair as it completes.

    ``progress`` (optional) has ``update(failed: bool)`` and ``close()``;
    ``stat`` maps a store to its stat signature when it was fingerprinted
    (see :func:`_changed`).  ``more`` (optional) yields the run's other
    pairs in waves, each sent as soon as it is built: the cluster works on
    the first pairs while the client builds the others.  Until the last
    wave is sent, the results of the tasks whose keys are in ``shared`` (the
    chunk reads of stores that several pairs use, filled in as the waves are
    built) are held, so later waves use them instead of reading them again.

    Raises
    ------
    InfrastructureError
        The scheduler was lost or had no worker for too long; the pairs in
        flight are not recorded (see the module docstring).
    """
    flight = _Flight(client)
    started, limit = time.time(), worker_memory(client)
    hold = shared if more is not None else None
    try:
        flight.submit(submitted, hold=hold)
        for wave in more or ():
            flight.submit(wave, hold=hold)
        flight.unhold()  # every graph is in: the shared chunks are wanted by the pairs that use them
        if more is not None:
            if progress is not None and hasattr(progress, "pairs"):
                progress.pairs = len(flight.subs)
        state.tasks = len(flight.keys)
        _collect(client, flight, state, storage_options, progress, stat, started, limit)
    finally:
        if progress is not None:
            progress.close()
        flight.unhold()
        for f in flight.futures:
            f.release()


class _Flight:
    """The pairs submitted so far: their futures, which table of which pair each future is, what is left."""

    def __init__(self, client):
        self.client = client
        self.subs: list[Submitted] = []
        self.futures: list = []
        self.owner: dict = {}
        self.remaining: dict[int, set] = {}
        self.tables: dict[int, dict] = {}
        self.pending: dict = {}
        self.keys: set = set()
        self.held: list = []

    def submit(self, subs: list[Submitted], hold: set | None = None) -> None:
        """Send ``subs`` to the cluster.  ``hold``: keep the results of the graphs' tasks whose keys are in it
        (futures on them) until :meth:`unhold`, so pairs sent later reuse those chunks instead of reading them
        again."""
        if not subs:
            return
        base = len(self.subs)
        self.subs.extend(subs)
        slots = [(base + n, key) for n, sub in enumerate(subs) for key in sub.graphs]
        # a table may be a tuple of Delayed (several arrays): one Delayed each, so one future per table
        graphs = [_one(self.subs[n].graphs[key]) for n, key in slots]
        for g in graphs:  # the stores' read tasks are shared: count each key once
            self.keys.update(g.__dask_graph__().keys())
        inner = _inner_keys(graphs, hold) if hold else []
        try:
            futures = self.client.compute(graphs + inner, optimize_graph=False)  # one call: nothing released between
        except Exception as exc:  # noqa: BLE001 - a connection lost while sending is the cluster's failure
            error = infrastructure_failure(self.client, exc, time.time())
            if error is exc:
                raise
            raise error from None
        futures, self.held = futures[: len(graphs)], self.held + futures[len(graphs):]
        self.futures.extend(futures)
        for future, slot in zip(futures, slots):
            self.owner.setdefault(future.key, []).append(slot)
            self.pending[future.key] = future
        for n, sub in enumerate(subs, start=base):
            self.remaining[n] = set(sub.graphs)
            self.tables[n] = {}


    def unhold(self) -> None:
        for future in self.held:
            future.release()
        self.held = []


def _inner_keys(graphs: list, keys: set) -> list:
    """A Delayed for every key of ``graphs`` that is in ``keys`` and is not one of their outputs."""
    from dask.delayed import Delayed

    outputs = {g.key for g in graphs}
    tasks: dict = {}
    for g in graphs:
        tasks.update(dict(g.__dask_graph__()))
    return [Delayed(key, tasks) for key in tasks if key in keys and key not in outputs]


def _collect(client, flight: _Flight, state: State, storage_options, progress, stat, started, limit) -> None:
    """Record each pair of ``flight`` as its last table arrives (see :func:`run_pairs`)."""
    while flight.pending:
        done, _ = wait_watched(client, list(flight.pending.values()), return_when="FIRST_COMPLETED")
        complete = []
        for future in done:
            flight.pending.pop(future.key, None)
            try:
                value = future.result()
            except BaseException as exc:  # the table's graph failed
                error = infrastructure_failure(client, exc, started, limit)
                if isinstance(error, InfrastructureError) and not isinstance(error, WorkerKilledError):
                    raise error from None  # the cluster, not this pair: end the run
                if not isinstance(error, Exception):
                    raise
                value = None
                failed = error
            else:
                failed = None
            for n, key in flight.owner[future.key]:
                sub = flight.subs[n]
                flight.tables[n][key] = _Failed(_failure_reason(failed, sub.job)) if failed is not None else value
                flight.remaining[n].discard(key)
                if not flight.remaining[n]:
                    complete.append(n)
            future.release()
        if not complete:
            continue
        subs = [flight.subs[n] for n in complete]
        changed = _changed(subs, storage_options or {}, stat)
        for k, n in enumerate(complete):
            sub = flight.subs[n]
            if k in changed:
                for request, _ in sub.prepared:
                    state.fail(sub.job, request, changed[k], status="changed")
                state.settle(sub.job)
            else:
                _finish(state, sub, flight.tables.pop(n))
            if progress is not None:
                progress.update(failed=(sub.job.truth, sub.job.pred) in state.failed_pairs)
