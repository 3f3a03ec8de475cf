"""The results file's schema: its tables and columns, the statements that write them, its version.

Kept apart from :class:`daskbicl.batch.results.ResultsDB` (the file's access: locking, transactions,
upgrades, queries), which imports everything here.
"""

from __future__ import annotations

SCHEMA_VERSION = 3
#: ``PRAGMA application_id`` of a daskbicl results file ("DBCL"): another program's database is refused.
APPLICATION_ID = 0x4442434C

SCORE_COLUMNS = ("truth", "pred", "measure", "params", "value", "exact", "half_width", "truth_fp", "pred_fp",
                 "version", "scored_at", "run_id", "seen_at", "seen_run", "measure_version")
#: One row per (run, pair, measure, parameters) the run's manifest named: what the run saw.
OBSERVATION_COLUMNS = ("run_id", "truth_name", "pred_name", "truth", "pred", "truth_fp", "pred_fp", "measure",
                       "params", "status", "score_id", "reason")
RUN_COLUMNS = ("run_id", "manifest", "started_at", "finished_at", "pairs", "scored", "skipped", "failed", "status",
               "tags", "git_commit")
#: Columns of :meth:`ResultsDB.runs`: the runs table's, with the pairs each run listed missing or gone.
RUN_VIEW = RUN_COLUMNS[:8] + ("missing", "gone") + RUN_COLUMNS[8:]
FAILURE_COLUMNS = ("truth", "pred", "measures", "params", "reason", "truth_fp", "pred_fp", "version", "failed_at", "run_id")

#: The columns of the scores table, once: the schema and the migration from schema 2 both use them.
SCORES_COLUMNS = """
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
    measure_version INTEGER NOT NULL DEFAULT 1,
    exact     INTEGER NOT NULL DEFAULT 1,
    half_width REAL,
    UNIQUE (truth, pred, measure, params, truth_fp, pred_fp, measure_version)
"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS scores ({SCORES_COLUMNS});
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
    status      TEXT NOT NULL,
    tags        TEXT,
    git_commit  TEXT
);
CREATE TABLE IF NOT EXISTS observations (
    id         INTEGER PRIMARY KEY,
    run_id     TEXT NOT NULL,
    truth_name TEXT NOT NULL,
    pred_name  TEXT NOT NULL,
    truth      TEXT NOT NULL,
    pred       TEXT NOT NULL,
    truth_fp   TEXT,
    pred_fp    TEXT,
    measure    TEXT NOT NULL,
    params     TEXT NOT NULL,
    status     TEXT NOT NULL,
    score_id   INTEGER,
    reason     TEXT
);
CREATE INDEX IF NOT EXISTS observations_run ON observations (run_id);
CREATE INDEX IF NOT EXISTS observations_pair ON observations (truth_name, pred_name, measure, params);
CREATE INDEX IF NOT EXISTS scores_content ON scores (truth_fp, pred_fp);
CREATE INDEX IF NOT EXISTS failures_pair ON failures (truth, pred);
CREATE INDEX IF NOT EXISTS scores_inputs ON scores (truth, pred, truth_fp, pred_fp);
"""

#: From schema 1: scores gain seen_at/seen_run (a row was seen when it was scored).
MIGRATE_1 = """
ALTER TABLE scores ADD COLUMN seen_at TEXT;
ALTER TABLE scores ADD COLUMN seen_run TEXT;
UPDATE scores SET seen_at = scored_at, seen_run = run_id;
CREATE INDEX IF NOT EXISTS scores_inputs ON scores (truth, pred, truth_fp, pred_fp);
"""

#: From schema 2: scores gain measure_version (all rows so far: version 1) and a UNIQUE key with it (the
#: table is rebuilt), and exact/half_width (a sampled value, MOCICE-BCubed's ``method``; all rows so far exact);
#: runs gain tags and git_commit; each score row becomes the observations of the runs
#: that scored it and last saw it (the runs between are not known: schema 2 kept only the last).
MIGRATE_2 = f"""
CREATE TABLE scores_v3 ({SCORES_COLUMNS});
INSERT INTO scores_v3 (id, truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id,
                       seen_at, seen_run, measure_version)
    SELECT id, truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id,
           seen_at, seen_run, 1 FROM scores;
DROP TABLE scores;
ALTER TABLE scores_v3 RENAME TO scores;
CREATE INDEX IF NOT EXISTS scores_inputs ON scores (truth, pred, truth_fp, pred_fp);
ALTER TABLE runs ADD COLUMN tags TEXT;
ALTER TABLE runs ADD COLUMN git_commit TEXT
"""

OBSERVATIONS_FROM_SCORES = """
INSERT INTO observations (run_id, truth_name, pred_name, truth, pred, truth_fp, pred_fp, measure, params, status,
                          score_id)
    SELECT run_id, truth, pred, truth, pred, truth_fp, pred_fp, measure, params, 'scored', id
    FROM scores WHERE run_id IS NOT NULL
    UNION ALL
    SELECT seen_run, truth, pred, truth, pred, truth_fp, pred_fp, measure, params, 'reused', id
    FROM scores WHERE seen_run IS NOT NULL AND seen_run IS NOT run_id
"""

UPSERT = """
INSERT INTO scores (truth, pred, measure, params, truth_fp, pred_fp, value, version, scored_at, run_id,
                    seen_at, seen_run, measure_version, exact, half_width)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (truth, pred, measure, params, truth_fp, pred_fp, measure_version) DO UPDATE SET
    value = excluded.value, exact = excluded.exact, half_width = excluded.half_width, version = excluded.version,
    scored_at = excluded.scored_at, run_id = excluded.run_id,
    seen_at = excluded.seen_at, seen_run = excluded.seen_run
"""

SEEN = "UPDATE scores SET seen_at = ?, seen_run = ? WHERE id = ?"

OBSERVE = f"""
INSERT INTO observations ({", ".join(OBSERVATION_COLUMNS)}) VALUES ({", ".join("?" * len(OBSERVATION_COLUMNS))})
"""
