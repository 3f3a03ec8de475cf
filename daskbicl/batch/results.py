"""The results file: one SQLite database (standard library), safe to kill at any moment.

Schema (``PRAGMA user_version`` = 3)::

    scores(id, truth, pred, measure, params, truth_fp, pred_fp, value,
           version, scored_at, run_id, seen_at, seen_run, measure_version,
           exact, half_width,
           UNIQUE (truth, pred, measure, params, truth_fp, pred_fp, measure_version))
    failures(id, truth, pred, measures, params, truth_fp, pred_fp, reason,
             version, failed_at, run_id)
    runs(run_id, manifest, started_at, finished_at, pairs, scored, skipped,
         failed, status, tags, git_commit)
    observations(id, run_id, truth_name, pred_name, truth, pred, truth_fp,
                 pred_fp, measure, params, status, score_id, reason)

* ``truth``/``pred`` are absolute local paths or URLs; ``params`` is the
  canonical JSON of the measure's full parameter set (defaults included,
  see :func:`~daskbicl.batch.manifest.params_key`), plus ``"unassigned"``
  when the pair was scored with an unassigned policy other than the default
  ``"error"`` (:func:`~daskbicl.batch.manifest.stored_params`); ``truth_fp``/``pred_fp``
  are store fingerprints (:mod:`~daskbicl.batch.fingerprint`); ``value`` is a
  float (NULL for NaN); a record-valued measure gets one row per field,
  named ``measure.field``; timestamps are ISO 8601 UTC.
* ``measure_version`` is the version of the measure's definition
  (``Measure.version``): a row of another version is never reused.
* ``exact`` is 1 for an exact value and 0 for a sampled one (a
  :class:`~daskbicl.Estimate`, MOCICE-BCubed's ``method``), whose 95 %
  half-width is ``half_width`` (NULL for exact values, but for a value
  scored with the manifest's ``ci``: the half-width of its bootstrap
  interval, the larger distance from the value to an end, so
  ``value ± half_width`` holds the interval; its ``params`` carry ``ci``).
* ``observations`` holds, per run, what it saw of every pair and measure its
  manifest named (``scored``, ``reused``, ``missing``, ``gone``,
  ``failed``, ``changed``) and the score row it stands on (for ``missing``
  and ``gone``: the pair's last score, shown with that status): any run's
  scores can be listed and two runs compared.
* ``seen_at``/``seen_run`` say when a batch run last found the inputs at
  these fingerprints: set when the row is scored, and again by every later
  run that skips the pair because it is already scored.  ``--latest`` picks,
  per (truth, pred, measure, params), the row seen most recently: the score
  of the inputs as they are now, even when they went back to an older
  version (A, then B, then A again: A's row is the latest).
* All rows of one pair are written in one transaction, and inserts are
  upserts on the UNIQUE key: a process killed at any point leaves each pair
  either complete or absent, and a rerun never duplicates a row.  The
  database is in WAL mode with a 60 s busy timeout, so readers (``daskbicl
  results``) never wait for a batch.
* One batch run at a time per results file: :meth:`ResultsDB.lock` takes an
  advisory lock (``flock``) on ``<results>.lock`` beside the file's real
  path (symbolic links resolved, so two paths to one file share the lock) for
  as long as the file is open, and a second run fails at once naming the file.  The lock dies with
  its process, so a run left ``running`` in ``runs`` when the next one starts
  was killed: it is marked ``killed``.
* A changed input has a new fingerprint, so its scores are new rows: the
  file keeps the history of every input version scored.
* Failures are history too: each failed attempt of a pair is one row with
  its reason (the reasons of its requests joined by ``; ``), the measures it
  was to score (``*``: every measure that applies) and their parameters
  (one parameter set, or a JSON list of them when the pair's requests had
  several); a later success does not delete it.
* Every SQLite error (locked, disk full, unwritable, corrupt) is raised as
  :class:`ResultsFileError`, which names the file.  A database that daskbicl
  did not write (``PRAGMA application_id`` is not daskbicl's, or it holds
  other tables) is refused, never adopted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import pathlib
import shutil
import sqlite3
import uuid
from datetime import datetime, timezone

from .._version import __version__
from ..errors import DaskbiclError
from ..io.store import is_remote
from ..kernels.micro.estimates import Estimate
from ..locations import redact, redact_text
from .names import Pair, matches, measure_matches
from .results_schema import (  # noqa: F401 - the schema, re-exported where it always was
    APPLICATION_ID,
    FAILURE_COLUMNS,
    MIGRATE_1,
    MIGRATE_2,
    OBSERVATION_COLUMNS,
    OBSERVATIONS_FROM_SCORES,
    OBSERVE,
    RUN_COLUMNS,
    RUN_VIEW,
    SCHEMA,
    SCHEMA_VERSION,
    SCORE_COLUMNS,
    SCORES_COLUMNS,
    SEEN,
    UPSERT,
)

__all__ = ["ResultsDB", "ResultsFileError", "ResultsBusyError", "Pair", "SCORE_COLUMNS", "FAILURE_COLUMNS",
           "OBSERVATION_COLUMNS", "RUN_COLUMNS", "RUN_VIEW", "matches", "measure_matches", "now"]

class ResultsFileError(DaskbiclError, OSError):
    """The results file cannot be read or written (locked, disk full, unwritable, corrupt); names the file."""


class ResultsBusyError(ResultsFileError):
    """Another batch run holds the results file's lock: run again later (exit status 3)."""

    retry_later = True



def _shown(pair: Pair) -> Pair:
    """``pair`` as the file records it: its locations and names without secrets (:func:`~daskbicl.locations.redact`).

    The redacted text is stable (a signed URL's signature, which changes, becomes ``***``), so a pair keeps
    its identity from night to night; the secret is never written.
    """
    return dataclasses.replace(pair, truth=redact(pair.truth), pred=redact(pair.pred),
                               truth_name=redact(pair.truth_name), pred_name=redact(pair.pred_name))


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _value(v):
    if isinstance(v, Estimate):  # kept whole: record_pair stores its half-width
        return v
    v = float(v)
    return None if math.isnan(v) else v


def _interval(v) -> tuple[float | None, int, float | None]:
    """(value, exact, half_width) of one stored value (a bootstrapped value: exact, with its interval's half-width)."""
    if isinstance(v, Estimate):
        return float(v), int(bool(v.exact)), v.half_width
    return v, 1, None


def flatten(name: str, value) -> list[tuple[str, float | None]]:
    """``[(measure, value)]``: one item, or one per field of a record-valued measure."""
    if hasattr(value, "_asdict"):
        return [(f"{name}.{k}", _value(v)) for k, v in value._asdict().items()]
    return [(name, _value(value))]


def _disk_hint(path: str) -> str:
    """`` (the disk is full: ...)`` when the file system holding ``path`` has (almost) no space left."""
    try:
        free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    except OSError:
        return ""
    if free < 1 << 20:
        return f" (the disk holding it is full: {free} bytes free; free some space and run again)"
    return ""


class ResultsDB:
    """An SQLite results file (created on first use).

    Parameters
    ----------
    path : str or os.PathLike
        A local file (or ``":memory:"``).
    create : bool
        Create the file and schema when missing, and bring an older schema
        up to date.  ``create=False`` (``daskbicl results``, ``--dry-run``)
        only reads: it reports a missing file and writes nothing.
    """

    def __init__(self, path, *, create: bool = True):
        self.path = os.fspath(path)
        self._lock = None
        self.conn = None
        if is_remote(self.path):
            raise DaskbiclError(f"the results file must be a local file, got {self.path}")
        if os.path.isdir(self.path):
            raise ResultsFileError(f"the results file {self.path} is a folder; give the path of a file")
        if not create and not os.path.isfile(self.path):
            raise DaskbiclError(f"no such results file: {self.path}")
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            raise DaskbiclError(f"cannot create the results file {self.path}: folder {folder} does not exist")
        try:
            self.conn = self._connect(create)
            self.conn.execute("PRAGMA busy_timeout = 60000")
            self.schema = self.conn.execute("PRAGMA user_version").fetchone()[0]
            self._check_ours()
            if self.schema > SCHEMA_VERSION:
                raise ResultsFileError(
                    f"{self.path} was written by a newer daskbicl (schema {self.schema} > {SCHEMA_VERSION}); "
                    "upgrade daskbicl"
                )
            if create:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                if self.schema < SCHEMA_VERSION or not self._marked:
                    self._upgrade()
            else:
                tables = self._tables()
                if "scores" not in tables:
                    raise ResultsFileError(f"{self.path} is not a daskbicl results file (no scores table)")
                if self.schema < SCHEMA_VERSION:  # read an older file as it would be migrated; leave it as is
                    memory = sqlite3.connect(":memory:", isolation_level=None)
                    self.conn.backup(memory)
                    self.conn.close()
                    self.conn = memory
                    self._upgrade()
        except sqlite3.DatabaseError as exc:
            self.close()
            full = _disk_hint(self.path) if "full" in str(exc) or "disk I/O" in str(exc) else ""
            if full:  # not the file's fault: even reading it needs room for SQLite's side files
                raise ResultsFileError(f"cannot open the results file {self.path}: {exc}{full}") from exc
            raise ResultsFileError(f"{self.path} is not a usable SQLite results file: {exc}") from exc
        except BaseException:
            self.close()
            raise

    def _connect(self, create: bool) -> sqlite3.Connection:
        """A connection; to read only, one that writes nothing, even on read-only storage.

        A reader opens the file read-only; when the file or its folder is not
        writable (a read-only mount, an archive), SQLite cannot make the side
        files of WAL mode, so the file is opened as immutable: read as it is
        on disk, without locks (nothing may be writing it there).
        """
        if create or self.path == ":memory:":
            return sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        real = os.path.abspath(self.path)
        writable = os.access(real, os.W_OK) and os.access(os.path.dirname(real), os.W_OK)
        if writable:
            # an ordinary connection that refuses writes: when it closes, SQLite removes the WAL side
            # files it made (a mode=ro connection would leave -wal/-shm behind a mere reader)
            conn = sqlite3.connect(real, timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA query_only = ON")
            return conn
        uri = pathlib.Path(real).as_uri() + "?immutable=1"
        return sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)

    def _tables(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _check_ours(self) -> None:
        """Refuse an SQLite database that daskbicl did not write (never add tables to someone else's data).

        Ours: marked with :data:`APPLICATION_ID`, or (files from before the
        mark) holding the scores, failures and runs tables; a new, empty
        database is made ours.
        """
        app = self.conn.execute("PRAGMA application_id").fetchone()[0]
        self._marked = app == APPLICATION_ID
        if self._marked:
            return
        tables = {t for t in self._tables() if not t.startswith("sqlite_")}
        if app == 0 and (not tables or {"scores", "failures", "runs"} <= tables):
            return
        owner = f"application id {app:#x}" if app else f"tables {', '.join(sorted(tables)[:5])}"
        raise ResultsFileError(
            f"{self.path} is an SQLite database that daskbicl did not write ({owner}); daskbicl records "
            "results only in a new file or in its own results file: choose another results path"
        )

    def _upgrade(self) -> None:
        with self._transaction():  # racing creators: the second one finds the work done
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            old = "scores" in tables and version < SCHEMA_VERSION
            if version == 1 and old:
                for statement in filter(str.strip, MIGRATE_1.split(";")):
                    self.conn.execute(statement)
            if version in (1, 2) and old:
                for statement in filter(str.strip, MIGRATE_2.split(";")):
                    self.conn.execute(statement)
            if version < SCHEMA_VERSION:
                for statement in filter(str.strip, SCHEMA.split(";")):  # every statement is IF NOT EXISTS
                    self.conn.execute(statement)
                if old:
                    self.conn.execute(OBSERVATIONS_FROM_SCORES)
                self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        self.schema = SCHEMA_VERSION
        self._marked = True

    @contextlib.contextmanager
    def _sqlite(self, doing: str):
        """Raise every SQLite error as a :class:`ResultsFileError` naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            hint = ""
            if "locked" in str(exc) or "busy" in str(exc):
                hint = " (another process held a write lock on it for more than 60 s)"
            elif "full" in str(exc) or "disk I/O" in str(exc):
                hint = _disk_hint(self.path)
            raise ResultsFileError(f"cannot {doing} the results file {self.path}: {exc}{hint}") from exc

    # ----------------------------------------------------------------- writing

    @contextlib.contextmanager
    def _transaction(self):
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # a failed COMMIT may have ended it already
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        """Close the database and release the run lock."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._lock is not None:
            # Removed while still held: a process that opened it before is sent to a fresh one (see lock).
            with contextlib.suppress(OSError):
                os.unlink(self._lock.name)
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def lock(self) -> None:
        """Take the file's run lock (``flock`` on ``<path>.lock``) until :meth:`close`.

        A batch run holds it from before it plans until it ends, so two runs
        on one file never do the same work twice.  The lock file is removed
        when the run ends (a process killed with SIGKILL leaves it: the lock
        itself dies with the process, and the next run takes it).  Removing
        it cannot let two runs in: a lock taken on a file that is no longer
        the one at the path (removed, or replaced, by the run that ends) is
        dropped and taken again on the file now there.

        Raises
        ------
        ResultsBusyError
            When another process (or another :class:`ResultsDB`) holds it.
        """
        if self._lock is not None or self.path == ":memory:":
            return
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: runs are not kept apart
            return
        # The lock follows the file, not the path: a symbolic link, a relative path or '..' reach the
        # same lock file as the file's real path.
        lock_path = os.path.realpath(self.path) + ".lock"
        while self._lock is None:
            try:
                handle = open(lock_path, "a")
            except OSError as exc:
                raise ResultsFileError(f"cannot create the lock file {lock_path}: {exc.strerror or exc}") from exc
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                raise ResultsBusyError(
                    f"another daskbicl batch is using {self.path} (it holds {lock_path}); "
                    "run again when it has finished"
                ) from None
            except OSError as exc:
                handle.close()
                raise ResultsFileError(f"cannot lock {lock_path}: {exc.strerror or exc}") from exc
            try:
                current = os.stat(lock_path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                current = False
            if current:
                self._lock = handle
            else:  # the run that held it removed it meanwhile: take the lock on the file now at the path
                handle.close()

    def start_run(self, manifest: str | None, pairs: int, *, tags: dict | None = None,
                  git_commit: str | None = None) -> str:
        """Take the run lock, mark runs left ``running`` by a killed process as ``killed``, record a new run."""
        self.lock()
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]
        stamp = now()
        with self._sqlite("write to"), self._transaction():
            # We hold the lock, and every run holds it while it runs: a 'running' run is a dead one.
            self.conn.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
            self.conn.execute(
                "INSERT INTO runs (run_id, manifest, started_at, pairs, status, tags, git_commit) "
                "VALUES (?, ?, ?, ?, 'running', ?, ?)",
                (run_id, None if manifest is None else redact(manifest), stamp, pairs,
                 json.dumps(tags or {}, sort_keys=True), git_commit),
            )
        return run_id

    def finish_run(self, run_id: str, *, scored: int, skipped: int, failed: int, status: str,
                   pairs: int | None = None) -> None:
        """Record the run's end, its counts and (when given) its number of pairs, those listed missing or gone
        included."""
        with self._sqlite("write to"), self._transaction():
            self.conn.execute(
                "UPDATE runs SET finished_at = ?, scored = ?, skipped = ?, failed = ?, status = ?, "
                "pairs = coalesce(?, pairs) WHERE run_id = ?",
                (now(), scored, skipped, failed, status, pairs, run_id),
            )

    def reuse(self, pair: Pair, score_ids, *, run_id: str) -> None:
        """Record that this run found ``pair``'s inputs as already scored: the rows ``score_ids`` (one transaction).

        Each row gets ``seen_at`` = now and an observation ``reused`` of this run.
        """
        stamp, pair = now(), _shown(pair)
        with self._sqlite("write to"), self._transaction():
            self.conn.executemany(SEEN, [(stamp, run_id, i) for i in score_ids])
            found = self.conn.execute(
                f"SELECT id, measure, params FROM scores WHERE id IN ({', '.join('?' * len(score_ids))})",
                list(score_ids)).fetchall()
            self.conn.executemany(OBSERVE, [pair.observation(run_id, m, p, "reused", i) for i, m, p in found])

    def record_pair(self, pair: Pair, rows: list[tuple[str, str, float | None, int]], *,
                    run_id: str | None = None) -> int:
        """Write every ``(measure, params, value, measure version)`` row of one pair in one transaction.

        Each row is also this run's observation ``scored`` of the pair.
        """
        stamp, pair = now(), _shown(pair)
        with self._sqlite("write to"), self._transaction():
            for m, p, v, mv in rows:
                value, exact, half_width = _interval(v)
                self.conn.execute(UPSERT, (pair.truth, pair.pred, m, p, pair.truth_fp, pair.pred_fp, value,
                                            __version__, stamp, run_id, stamp, run_id, mv, exact, half_width))
                (score_id,) = self.conn.execute(
                    "SELECT id FROM scores WHERE truth = ? AND pred = ? AND measure = ? AND params = ? "
                    "AND truth_fp = ? AND pred_fp = ? AND measure_version = ?",
                    (pair.truth, pair.pred, m, p, pair.truth_fp, pair.pred_fp, mv)).fetchone()
                if run_id is not None:
                    self.conn.execute(OBSERVE, pair.observation(run_id, m, p, "scored", score_id))
        return len(rows)

    def record_failure(self, pair: Pair, measures: str, params: str, reason: str, *, run_id: str | None = None,
                       status: str = "failed", observed: list[tuple[str, str]] = ()) -> None:
        """One failure row; and, for a run, an observation ``status`` per ``(measure, params)`` of ``observed``.

        ``observed`` empty: the measures and parameters this pair's name last
        had a score for (a pred now missing is missing for each of them), or
        one observation ``*`` when it never had one.
        """
        pair, reason = _shown(pair), redact_text(reason)
        with self._sqlite("write to"), self._transaction():
            self.conn.execute(
                "INSERT INTO failures (truth, pred, measures, params, truth_fp, pred_fp, reason, version, "
                "failed_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (pair.truth, pair.pred, measures, params, pair.truth_fp, pair.pred_fp, reason, __version__, now(),
                 run_id),
            )
            if run_id is None:
                return
            keys = list(observed) or [tuple(r) for r in self.conn.execute(
                "SELECT DISTINCT measure, params FROM observations "
                "WHERE truth_name = ? AND pred_name = ? AND score_id IS NOT NULL ORDER BY measure, params",
                (pair.truth_name, pair.pred_name))] or [("*", params)]
            self.conn.executemany(OBSERVE, [pair.observation(run_id, m, p, status, None, reason) for m, p in keys])

    def record_absent(self, pair: Pair, status: str, reason: str, *, run_id: str) -> None:
        """A store of ``pair`` is ``status`` (``missing``, then ``gone``): an observation per ``(measure, params)``
        its names had a score for, on the last one (``*`` when none).  Not a failure (none is written)."""
        with self._sqlite("write to"), self._transaction():
            last = {(m, p): i for m, p, i in self.conn.execute(
                "SELECT measure, params, score_id FROM observations WHERE truth_name = ? AND pred_name = ? "
                "AND score_id IS NOT NULL ORDER BY id", (pair.truth_name, pair.pred_name))}
            rows = [pair.observation(run_id, m, p, status, i, reason) for (m, p), i in sorted(last.items())]
            self.conn.executemany(OBSERVE, rows or [pair.observation(run_id, "*", "{}", status, None, reason)])

    # ----------------------------------------------------------------- reading

    def reusable(self, truth_fp: str, pred_fp: str, versions: dict[str, int]) -> dict[tuple[str, str], list[int]]:
        """``{(measure, params): [score ids]}`` already scored for inputs of this content, wherever they were.

        Identity is by content: the stores' fingerprints, not their paths (a
        moved folder is not rescored).  Rows of a measure version other than
        ``versions[measure]`` (the registry's, 1 when absent) are not
        reusable.  A record-valued measure counts by its name (its rows are
        ``name.field``), with every field's row.
        """
        with self._sqlite("read"):
            rows = self.conn.execute(
                "SELECT max(id), measure, params, measure_version FROM scores "
                "WHERE truth_fp = ? AND pred_fp = ? GROUP BY measure, params, measure_version",
                (truth_fp, pred_fp),
            ).fetchall()
        out: dict[tuple[str, str], list[int]] = {}
        for score_id, m, p, mv in rows:
            base = m.split(".", 1)[0]
            if mv == versions.get(base, 1):
                out.setdefault((base, p), []).append(score_id)
        return out

    def known_pairs(self) -> dict[tuple[str, str], tuple]:
        """``{(truth name, pred name): (truth, pred, status, (truth_fp, pred_fp))}``: every pair any run saw,
        as the last run to see it did."""
        with self._sqlite("read"):
            rows = self.conn.execute(
                "SELECT o.truth_name, o.pred_name, o.truth, o.pred, o.status, o.truth_fp, o.pred_fp "
                "FROM observations o LEFT JOIN runs r ON r.run_id = o.run_id ORDER BY r.started_at, o.id").fetchall()
        return {(t, p): (tp, pp, status, (tf, pf)) for t, p, tp, pp, status, tf, pf in rows}

    def measures(self) -> set[str]:
        """Every measure name in the scores (record fields as ``name.field``)."""
        with self._sqlite("read"):
            return {r[0] for r in self.conn.execute("SELECT DISTINCT measure FROM scores")}

    def scores(self, *, truth=(), pred=(), measure=(), latest: bool = False) -> list[dict]:
        """Score rows as dicts (columns :data:`SCORE_COLUMNS`, ``truth_name``, ``pred_name``), filtered, in a
        stable order.

        ``truth``/``pred`` are names, paths or shell patterns (see
        :func:`matches`); ``measure`` names match the measure or its fields;
        ``latest`` keeps, per (truth, pred, measure, params), the row whose
        inputs a batch run saw most recently (``seen_at``).  Rows are ordered
        by truth, pred, measure, parameters, then time scored.
        """
        columns = ", ".join(f"s.{c}" for c in SCORE_COLUMNS)
        names = ("truth_name", "pred_name")  # the names of the run that scored the row
        with self._sqlite("read"):
            rows = [dict(zip(SCORE_COLUMNS + names, r)) for r in self.conn.execute(
                f"SELECT {columns}, o.truth_name, o.pred_name FROM scores s LEFT JOIN observations o "
                "ON o.id = (SELECT min(id) FROM observations WHERE score_id = s.id) "
                "ORDER BY s.truth, s.pred, s.measure, s.params, s.scored_at, s.id").fetchall()]
        rows = self._filter(rows, truth, pred)
        if measure:
            rows = [r for r in rows if measure_matches(r["measure"], measure)]
        if latest:
            last: dict = {}
            for r in rows:  # in time order: on equal seen_at the later row wins
                key = (r["truth"], r["pred"], r["measure"], r["params"])
                seen = r["seen_at"] or r["scored_at"]
                if key not in last or seen >= (last[key]["seen_at"] or last[key]["scored_at"]):
                    last[key] = r
            keep = {id(r) for r in last.values()}
            rows = [r for r in rows if id(r) in keep]
        return rows

    def failures(self, *, truth=(), pred=(), measure=()) -> list[dict]:
        with self._sqlite("read"):
            cur = self.conn.execute(f"SELECT {', '.join(FAILURE_COLUMNS)} FROM failures ORDER BY id").fetchall()
        rows = self._filter([dict(zip(FAILURE_COLUMNS, r)) for r in cur], truth, pred)
        if measure:
            wanted = set(measure)
            rows = [r for r in rows if r["measures"] == "*" or wanted & set(r["measures"].split(","))]
        return rows

    def runs(self) -> list[dict]:
        """Every run, oldest first (columns :data:`RUN_VIEW`); ``tags`` as a dict; ``missing`` and ``gone``: its
        pairs listed so (counted from its observations, as the run's summary counts them)."""
        with self._sqlite("read"):
            cur = self.conn.execute(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY started_at, rowid").fetchall()
            absent = {(run_id, status): n for run_id, status, n in self.conn.execute(
                "SELECT run_id, status, count(DISTINCT truth_name || char(0) || pred_name) FROM observations "
                "WHERE status IN ('missing', 'gone') GROUP BY run_id, status")}
        out = [dict(zip(RUN_COLUMNS, r)) for r in cur]
        for r in out:
            r["tags"] = json.loads(r["tags"]) if r["tags"] else {}
            r["missing"], r["gone"] = (absent.get((r["run_id"], s), 0) for s in ("missing", "gone"))
        return [{c: r[c] for c in RUN_VIEW} for r in out]

    def observations(self, run_ids=None) -> list[dict]:
        """Observations (columns :data:`OBSERVATION_COLUMNS` + ``value``, ``measure_version``, ``started_at``),
        of the runs ``run_ids`` (all when None), oldest run first."""
        where, args = "", []
        if run_ids is not None:
            run_ids = list(run_ids)
            where, args = f"WHERE o.run_id IN ({', '.join('?' * len(run_ids))})", run_ids
        cols = ", ".join(f"o.{c}" for c in OBSERVATION_COLUMNS)
        names = OBSERVATION_COLUMNS + ("value", "measure_version", "started_at")
        with self._sqlite("read"):
            cur = self.conn.execute(
                f"SELECT {cols}, s.value, s.measure_version, r.started_at FROM observations o "
                "LEFT JOIN scores s ON s.id = o.score_id LEFT JOIN runs r ON r.run_id = o.run_id "
                f"{where} ORDER BY r.started_at, o.run_id, o.truth_name, o.pred_name, o.measure, o.params, o.id",
                args).fetchall()
        return [dict(zip(names, r)) for r in cur]

    @staticmethod
    def _filter(rows: list[dict], truth, pred) -> list[dict]:
        if truth:
            rows = [r for r in rows if matches(r, "truth", truth)]
        if pred:
            rows = [r for r in rows if matches(r, "pred", pred)]
        return rows
