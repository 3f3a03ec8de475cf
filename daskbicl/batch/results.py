"""The results file: one SQLite database (standard library), safe to kill at any moment.

Schema (``PRAGMA user_version`` = 3)::

    scores(id, truth, pred, measure, params, truth_fp, pred_fp, value,
           version, scored_at, run_id, seen_at, seen_run, exact, half_width,
           UNIQUE (truth, pred, measure, params, truth_fp, pred_fp))
    failures(id, truth, pred, measures, params, truth_fp, pred_fp, reason,
             version, failed_at, run_id)
    runs(run_id, manifest, started_at, finished_at, pairs, scored, skipped,
         failed, status)

* ``truth``/``pred`` are absolute local paths or URLs; ``params`` is the
  canonical JSON of the measure's full parameter set (defaults included,
  see :func:`~daskbicl.batch.manifest.params_key`), plus ``"unassigned"``
  when the pair was scored with an unassigned policy other than the default
  ``"error"`` (:func:`~daskbicl.batch.manifest.stored_params`); ``truth_fp``/``pred_fp``
  are store fingerprints (:mod:`~daskbicl.batch.fingerprint`); ``value`` is a
  float (NULL for NaN); a record-valued measure gets one row per field,
  named ``measure.field``; timestamps are ISO 8601 UTC.
* ``exact`` is 1 for an exact value and 0 for a sampled one (a
  :class:`~daskbicl.Estimate`, MOCICE-BCubed's ``method``), whose 95 %
  half-width is ``half_width`` (NULL for exact values).  Files of schema 2
  gain the two columns on their first write (existing rows: exact).
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
import fnmatch
import math
import os
import sqlite3
import uuid
from datetime import datetime, timezone

from .._version import __version__
from ..errors import DaskbiclError
from ..io.store import is_remote
from ..kernels.micro.estimates import Estimate

__all__ = ["ResultsDB", "ResultsFileError", "ResultsBusyError", "SCORE_COLUMNS", "FAILURE_COLUMNS", "now"]

SCHEMA_VERSION = 3
#: ``PRAGMA application_id`` of a daskbicl results file ("DBCL"): another program's database is refused.
APPLICATION_ID = 0x4442434C

SCORE_COLUMNS = ("truth", "pred", "measure", "params", "value", "exact", "half_width", "truth_fp", "pred_fp",
                 "version", "scored_at", "run_id", "seen_at", "seen_run")
FAILURE_COLUMNS = ("truth", "pred", "measures", "params", "reason", "truth_fp", "pred_fp", "version", "failed_at", "run_id")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    id        INTEGER PRIMARY KEY,
    truth     TEXT NOT NULL,
    pred      TEXT NOT NULL,
    measure   TEXT NOT NULL,
    params    TEXT NOT NULL,
    truth_fp  TEXT NOT NULL,
    pred_fp   TEXT NOT NULL,
    value     REAL,
    version   TEXT NOT NULL,
    scored_at TEXT NOT NULL,
    run_id    TEXT,
    seen_at   TEXT,
    seen_run  TEXT,
    exact     INTEGER NOT NULL DEFAULT 1,
    half_width REAL,
    UNIQUE (truth, pred, measure, params, truth_fp, pred_fp)
);
CREATE TABLE IF NOT EXISTS failures (
    id        INTEGER PRIMARY KEY,
    truth     TEXT NOT NULL,
    pred      TEXT NOT NULL,
    measures  TEXT NOT NULL,
    params    TEXT NOT NULL,
    truth_fp  TEXT,
    pred_fp   TEXT,
    reason    TEXT NOT NULL,
    version   TEXT NOT NULL,
    failed_at TEXT NOT NULL,
    run_id    TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    manifest    TEXT,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    pairs       INTEGER,
    scored      INTEGER,
    skipped     INTEGER,
    failed      INTEGER,
    status      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS failures_pair ON failures (truth, pred);
CREATE INDEX IF NOT EXISTS scores_inputs ON scores (truth, pred, truth_fp, pred_fp);
"""

#: From schema 1: scores gain seen_at/seen_run (a row was seen when it was scored).
_MIGRATE_1 = """
ALTER TABLE scores ADD COLUMN seen_at TEXT;
ALTER TABLE scores ADD COLUMN seen_run TEXT;
UPDATE scores SET seen_at = scored_at, seen_run = run_id;
CREATE INDEX IF NOT EXISTS scores_inputs ON scores (truth, pred, truth_fp, pred_fp);
"""

#: From schema 2: scores gain exact/half_width (sampled values, MOCICE-BCubed's method).
_MIGRATE_2 = """
ALTER TABLE scores ADD COLUMN exact INTEGER NOT NULL DEFAULT 1;
ALTER TABLE scores ADD COLUMN half_width REAL
"""

_UPSERT = """
INSERT INTO scores (truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id,
                    seen_at, seen_run, exact, half_width)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (truth, pred, measure, params, truth_fp, pred_fp) DO UPDATE SET
    value = excluded.value, exact = excluded.exact, half_width = excluded.half_width, version = excluded.version,
    scored_at = excluded.scored_at, run_id = excluded.run_id,
    seen_at = excluded.seen_at, seen_run = excluded.seen_run
"""

_SEEN = "UPDATE scores SET seen_at = ?, seen_run = ? WHERE truth = ? AND pred = ? AND truth_fp = ? AND pred_fp = ?"


class ResultsFileError(DaskbiclError, OSError):
    """The results file cannot be read or written (locked, disk full, unwritable, corrupt); names the file."""


class ResultsBusyError(ResultsFileError):
    """Another batch run holds the results file's lock."""



def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _value(v):
    if isinstance(v, Estimate):  # kept whole: record_pair stores its half-width
        return v
    v = float(v)
    return None if math.isnan(v) else v


def _interval(v) -> tuple[float | None, int, float | None]:
    """(value, exact, half_width) of one stored value."""
    if isinstance(v, Estimate):
        return float(v), 0, v.half_width
    return v, 1, None


def flatten(name: str, value) -> list[tuple[str, float | None]]:
    """``[(measure, value)]``: one item, or one per field of a record-valued measure."""
    if hasattr(value, "_asdict"):
        return [(f"{name}.{k}", _value(v)) for k, v in value._asdict().items()]
    return [(name, _value(value))]


def _located(pattern: str) -> str:
    """A path or shell pattern spelled as stores are stored: URLs as given, local paths absolute.

    Relative patterns are relative to the current folder, globs and
    literals alike (``--pred 'runs/nmf-*.zarr'`` from the folder holding
    ``runs``).  In a pattern ``*`` also matches ``/``.
    """
    if is_remote(pattern):
        return pattern
    local = pattern[len("file://") :] if pattern.startswith("file://") else pattern
    return os.path.abspath(os.path.expanduser(local))


def _matches(text: str, patterns) -> bool:
    return any(text == p or fnmatch.fnmatchcase(text, p) for p in map(_located, patterns))


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
            self.conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
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
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ResultsFileError(f"{self.path} is not a usable SQLite results file: {exc}") from exc
        except BaseException:
            self.close()
            raise

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
            if version == 1 and "scores" in tables:
                for statement in filter(str.strip, _MIGRATE_1.split(";")):
                    self.conn.execute(statement)
            if version in (1, 2) and "scores" in tables:
                for statement in filter(str.strip, _MIGRATE_2.split(";")):
                    self.conn.execute(statement)
            if version < SCHEMA_VERSION:
                for statement in filter(str.strip, _SCHEMA.split(";")):  # every statement is IF NOT EXISTS
                    self.conn.execute(statement)
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
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def lock(self) -> None:
        """Take the file's run lock (``flock`` on ``<path>.lock``) until :meth:`close`.

        A batch run holds it from before it plans until it ends, so two runs
        on one file never do the same work twice.  The lock file is left in
        place (removing it would race); the lock itself dies with the
        process, however it ends.

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
        self._lock = handle

    def start_run(self, manifest: str | None, pairs: int) -> str:
        """Take the run lock, mark runs left ``running`` by a killed process as ``killed``, record a new run."""
        self.lock()
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]
        stamp = now()
        with self._sqlite("write to"), self._transaction():
            # We hold the lock, and every run holds it while it runs: a 'running' run is a dead one.
            self.conn.execute("UPDATE runs SET status = 'killed' WHERE status = 'running'")
            self.conn.execute(
                "INSERT INTO runs (run_id, manifest, started_at, pairs, status) VALUES (?, ?, ?, ?, 'running')",
                (run_id, manifest, stamp, pairs),
            )
        return run_id

    def finish_run(self, run_id: str, *, scored: int, skipped: int, failed: int, status: str) -> None:
        with self._sqlite("write to"), self._transaction():
            self.conn.execute(
                "UPDATE runs SET finished_at = ?, scored = ?, skipped = ?, failed = ?, status = ? WHERE run_id = ?",
                (now(), scored, skipped, failed, status, run_id),
            )

    def mark_seen(self, inputs, *, run_id: str | None = None) -> None:
        """Record that this run found each ``(truth, pred, truth_fp, pred_fp)`` of ``inputs`` (one transaction).

        Every score row of those inputs gets ``seen_at`` = now: they are the
        scores of the inputs as they are now (see ``latest`` in :meth:`scores`).
        """
        stamp = now()
        with self._sqlite("write to"), self._transaction():
            self.conn.executemany(_SEEN, [(stamp, run_id, *key) for key in inputs])

    def record_pair(self, truth: str, pred: str, truth_fp: str, pred_fp: str,
                    rows: list[tuple[str, str, float | None]], *, run_id: str | None = None) -> int:
        """Write every ``(measure, params, value)`` row of one pair in one transaction."""
        stamp = now()
        with self._sqlite("write to"), self._transaction():
            self.conn.executemany(
                _UPSERT,
                [(truth, pred, m, p, truth_fp, pred_fp, value, __version__, stamp, run_id, stamp, run_id, exact, hw)
                 for m, p, v in rows for value, exact, hw in [_interval(v)]],
            )
        return len(rows)

    def record_failure(self, truth: str, pred: str, truth_fp: str | None, pred_fp: str | None,
                       measures: str, params: str, reason: str, *, run_id: str | None = None) -> None:
        with self._sqlite("write to"), self._transaction():
            self.conn.execute(
                "INSERT INTO failures (truth, pred, measures, params, truth_fp, pred_fp, reason, version, "
                "failed_at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (truth, pred, measures, params, truth_fp, pred_fp, reason, __version__, now(), run_id),
            )

    # ----------------------------------------------------------------- reading

    def scored(self, truth: str, pred: str, truth_fp: str, pred_fp: str) -> set[tuple[str, str]]:
        """``{(measure, params)}`` already scored for this pair at these fingerprints.

        A record-valued measure counts by its name (its rows are ``name.field``).
        """
        with self._sqlite("read"):
            rows = self.conn.execute(
                "SELECT DISTINCT measure, params FROM scores "
                "WHERE truth = ? AND pred = ? AND truth_fp = ? AND pred_fp = ?",
                (truth, pred, truth_fp, pred_fp),
            ).fetchall()
        return {(m.split(".", 1)[0], p) for m, p in rows}

    def measures(self) -> set[str]:
        """Every measure name in the scores (record fields as ``name.field``)."""
        with self._sqlite("read"):
            return {r[0] for r in self.conn.execute("SELECT DISTINCT measure FROM scores")}

    def scores(self, *, truth=(), pred=(), measure=(), latest: bool = False) -> list[dict]:
        """Score rows as dicts (columns :data:`SCORE_COLUMNS`), filtered.

        ``truth``/``pred`` are paths or shell patterns matched against the
        stored location (relative ones are relative to the current folder);
        ``measure`` names match the measure or its fields; ``latest`` keeps,
        per (truth, pred, measure, params), the row whose inputs a batch run
        saw most recently (``seen_at``): the score of the inputs as they are.
        """
        # A schema-1 file opened read-only has no seen_* columns: a row was seen when it was scored.
        old = {"seen_at": "scored_at", "seen_run": "run_id"} if self.schema < 2 else {}
        if self.schema < 3:  # read-only older file: every value exact
            old.update({"exact": "1", "half_width": "NULL"})
        columns = ", ".join(old.get(c, c) for c in SCORE_COLUMNS)
        with self._sqlite("read"):
            rows = [dict(zip(SCORE_COLUMNS, r))
                    for r in self.conn.execute(f"SELECT {columns} FROM scores ORDER BY id").fetchall()]
        rows = self._filter(rows, truth, pred)
        if measure:
            wanted = set(measure)
            rows = [r for r in rows if r["measure"] in wanted or r["measure"].split(".", 1)[0] in wanted]
        if latest:
            last: dict = {}
            for r in rows:  # in id order: on equal seen_at the later row wins
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
        cols = ("run_id", "manifest", "started_at", "finished_at", "pairs", "scored", "skipped", "failed", "status")
        with self._sqlite("read"):
            cur = self.conn.execute(f"SELECT {', '.join(cols)} FROM runs ORDER BY started_at").fetchall()
        return [dict(zip(cols, r)) for r in cur]

    @staticmethod
    def _filter(rows: list[dict], truth, pred) -> list[dict]:
        if truth:
            rows = [r for r in rows if _matches(r["truth"], truth)]
        if pred:
            rows = [r for r in rows if _matches(r["pred"], pred)]
        return rows
