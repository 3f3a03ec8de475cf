"""The results file: one SQLite database (standard library), safe to kill at any moment.

Schema (``PRAGMA user_version`` = 1)::

    scores(id, truth, pred, measure, params, truth_fp, pred_fp, value,
           version, scored_at, run_id,
           UNIQUE (truth, pred, measure, params, truth_fp, pred_fp))
    failures(id, truth, pred, measures, params, truth_fp, pred_fp, reason,
             version, failed_at, run_id)
    runs(run_id, manifest, started_at, finished_at, pairs, scored, skipped,
         failed, status)

* ``truth``/``pred`` are absolute local paths or URLs; ``params`` is the
  canonical JSON of the measure's full parameter set (defaults included,
  see :func:`~daskbicl.batch.manifest.params_key`); ``truth_fp``/``pred_fp``
  are store fingerprints (:mod:`~daskbicl.batch.fingerprint`); ``value`` is a
  float (NULL for NaN); a record-valued measure gets one row per field,
  named ``measure.field``; timestamps are ISO 8601 UTC.
* All rows of one pair are written in one transaction, and inserts are
  upserts on the UNIQUE key: a process killed at any point leaves each pair
  either complete or absent, and a rerun never duplicates a row.  The
  database is in WAL mode with a 60 s busy timeout, so readers (``daskbicl
  results``) and an overlapping cron run do not fail on a lock.
* A changed input has a new fingerprint, so its scores are new rows: the
  file keeps the history of every input version scored.
* Failures are history too: each failed attempt is one row with its reason;
  a later success does not delete it.
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

__all__ = ["ResultsDB", "SCORE_COLUMNS", "FAILURE_COLUMNS", "now"]

SCHEMA_VERSION = 1

SCORE_COLUMNS = ("truth", "pred", "measure", "params", "value", "truth_fp", "pred_fp", "version", "scored_at", "run_id")
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
"""

_UPSERT = """
INSERT INTO scores (truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (truth, pred, measure, params, truth_fp, pred_fp) DO UPDATE SET
    value = excluded.value, version = excluded.version,
    scored_at = excluded.scored_at, run_id = excluded.run_id
"""


def now() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _value(v):
    v = float(v)
    return None if math.isnan(v) else v


def flatten(name: str, value) -> list[tuple[str, float | None]]:
    """``[(measure, value)]``: one item, or one per field of a record-valued measure."""
    if hasattr(value, "_asdict"):
        return [(f"{name}.{k}", _value(v)) for k, v in value._asdict().items()]
    return [(name, _value(value))]


def _matches(text: str, patterns) -> bool:
    for p in patterns:
        if fnmatch.fnmatchcase(text, p) or text == p:
            return True
        if not is_remote(p) and not any(c in p for c in "*?[") and text == os.path.abspath(os.path.expanduser(p)):
            return True
    return False


class ResultsDB:
    """An SQLite results file (created on first use).

    Parameters
    ----------
    path : str or os.PathLike
        A local file.
    create : bool
        Create the file and schema when missing (``daskbicl results`` opens
        with ``create=False`` and reports a missing file).
    """

    def __init__(self, path, *, create: bool = True):
        self.path = os.fspath(path)
        if is_remote(self.path):
            raise DaskbiclError(f"the results file must be a local file, got {self.path}")
        if not create and not os.path.isfile(self.path):
            raise DaskbiclError(f"no such results file: {self.path}")
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            raise DaskbiclError(f"cannot create the results file {self.path}: folder {folder} does not exist")
        try:
            self.conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout = 60000")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise DaskbiclError(
                    f"{self.path} was written by a newer daskbicl (schema {version} > {SCHEMA_VERSION}); upgrade daskbicl"
                )
            if create:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                if version < SCHEMA_VERSION:  # every statement is IF NOT EXISTS: racing creators agree
                    self.conn.executescript(_SCHEMA)
                    self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            else:
                tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "scores" not in tables:
                    raise DaskbiclError(f"{self.path} is not a daskbicl results file (no scores table)")
        except sqlite3.DatabaseError as exc:
            raise DaskbiclError(f"{self.path} is not a usable SQLite results file: {exc}") from exc

    # ----------------------------------------------------------------- writing

    @contextlib.contextmanager
    def _transaction(self):
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def start_run(self, manifest: str | None, pairs: int) -> str:
        run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]
        with self._transaction():
            self.conn.execute(
                "INSERT INTO runs (run_id, manifest, started_at, pairs, status) VALUES (?, ?, ?, ?, 'running')",
                (run_id, manifest, now(), pairs),
            )
        return run_id

    def finish_run(self, run_id: str, *, scored: int, skipped: int, failed: int, status: str) -> None:
        with self._transaction():
            self.conn.execute(
                "UPDATE runs SET finished_at = ?, scored = ?, skipped = ?, failed = ?, status = ? WHERE run_id = ?",
                (now(), scored, skipped, failed, status, run_id),
            )

    def record_pair(self, truth: str, pred: str, truth_fp: str, pred_fp: str,
                    rows: list[tuple[str, str, float | None]], *, run_id: str | None = None) -> int:
        """Write every ``(measure, params, value)`` row of one pair in one transaction."""
        stamp = now()
        with self._transaction():
            self.conn.executemany(
                _UPSERT,
                [(truth, pred, m, p, truth_fp, pred_fp, v, __version__, stamp, run_id) for m, p, v in rows],
            )
        return len(rows)

    def record_failure(self, truth: str, pred: str, truth_fp: str | None, pred_fp: str | None,
                       measures: str, params: str, reason: str, *, run_id: str | None = None) -> None:
        with self._transaction():
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
        rows = self.conn.execute(
            "SELECT DISTINCT measure, params FROM scores WHERE truth = ? AND pred = ? AND truth_fp = ? AND pred_fp = ?",
            (truth, pred, truth_fp, pred_fp),
        )
        return {(m.split(".", 1)[0], p) for m, p in rows}

    def scores(self, *, truth=(), pred=(), measure=(), latest: bool = False) -> list[dict]:
        """Score rows as dicts (columns :data:`SCORE_COLUMNS`), filtered.

        ``truth``/``pred`` are shell patterns (or paths) matched against the
        stored location; ``measure`` names match the measure or its fields;
        ``latest`` keeps, per (truth, pred, measure, params), the most
        recently scored row.
        """
        cur = self.conn.execute(f"SELECT {', '.join(SCORE_COLUMNS)} FROM scores ORDER BY id")
        rows = [dict(zip(SCORE_COLUMNS, r)) for r in cur]
        rows = self._filter(rows, truth, pred)
        if measure:
            wanted = set(measure)
            rows = [r for r in rows if r["measure"] in wanted or r["measure"].split(".", 1)[0] in wanted]
        if latest:
            last: dict = {}
            for r in rows:
                key = (r["truth"], r["pred"], r["measure"], r["params"])
                if key not in last or r["scored_at"] >= last[key]["scored_at"]:
                    last[key] = r
            keep = {id(r) for r in last.values()}
            rows = [r for r in rows if id(r) in keep]
        return rows

    def failures(self, *, truth=(), pred=(), measure=()) -> list[dict]:
        cur = self.conn.execute(f"SELECT {', '.join(FAILURE_COLUMNS)} FROM failures ORDER BY id")
        rows = self._filter([dict(zip(FAILURE_COLUMNS, r)) for r in cur], truth, pred)
        if measure:
            wanted = set(measure)
            rows = [r for r in rows if r["measures"] == "*" or wanted & set(r["measures"].split(","))]
        return rows

    def runs(self) -> list[dict]:
        cols = ("run_id", "manifest", "started_at", "finished_at", "pairs", "scored", "skipped", "failed", "status")
        return [dict(zip(cols, r)) for r in self.conn.execute(f"SELECT {', '.join(cols)} FROM runs ORDER BY started_at")]

    @staticmethod
    def _filter(rows: list[dict], truth, pred) -> list[dict]:
        if truth:
            rows = [r for r in rows if _matches(r["truth"], truth)]
        if pred:
            rows = [r for r in rows if _matches(r["pred"], pred)]
        return rows
