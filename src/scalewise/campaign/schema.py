"""The results database: its file name, its schema as an ordered list of migrations, and the version check.

Migration ``i`` (0-based) takes a database from version ``i`` to ``i + 1``.
Released migrations are never edited: a change is a new migration appended
here, plus a line in docs/store.md.  ``SCHEMA_VERSION`` is the number of
migrations, and a database newer than that is refused (an old scalewise must
not write to a schema it does not know).
"""

from __future__ import annotations

from pathlib import Path

from scalewise.errors import ScalewiseError

DB_NAME = "results.sqlite"

MIGRATIONS: list[str] = [
    # 1: the first schema.
    """
    CREATE TABLE study (
        key   TEXT PRIMARY KEY,
        value TEXT
    );
    CREATE TABLE sessions (
        session_id        INTEGER PRIMARY KEY AUTOINCREMENT,
        started_at        TEXT NOT NULL,
        ended_at          TEXT,
        scheduler         TEXT NOT NULL,
        study_path        TEXT NOT NULL,
        study_sha256      TEXT NOT NULL,
        scalewise_version TEXT NOT NULL,
        hostname          TEXT,
        kernel            TEXT,
        cpu_model         TEXT,
        cpu_count         INTEGER
    );
    CREATE TABLE session_provenance (
        session_id INTEGER NOT NULL REFERENCES sessions(session_id),
        key        TEXT NOT NULL,
        value      TEXT,
        PRIMARY KEY (session_id, key)
    );
    CREATE TABLE runs (
        run_id           TEXT PRIMARY KEY,
        position         INTEGER NOT NULL,
        app              TEXT NOT NULL,
        variant          TEXT NOT NULL,
        mpi              TEXT NOT NULL,
        transport        TEXT NOT NULL,
        params           TEXT NOT NULL,
        nodes            INTEGER NOT NULL,
        ranks            INTEGER NOT NULL,
        ranks_per_node   INTEGER,
        threads          INTEGER NOT NULL,
        repetition       INTEGER NOT NULL,
        status           TEXT NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'running', 'ok', 'failed', 'timeout')),
        reason           TEXT,
        exit_code        INTEGER,
        wall             REAL,
        fom              REAL,
        fom_name         TEXT,
        fom_unit         TEXT,
        higher_is_better INTEGER,
        world_size       INTEGER,
        started_at       TEXT,
        ended_at         TEXT,
        hosts            TEXT,
        stdout_path      TEXT,
        stderr_path      TEXT,
        profile_path     TEXT,
        command          TEXT,
        scheduler        TEXT,
        job_id           TEXT,
        attempts         INTEGER NOT NULL DEFAULT 0,
        session_id       INTEGER REFERENCES sessions(session_id)
    );
    CREATE INDEX runs_status ON runs(status);
    CREATE TABLE run_settings (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        name   TEXT NOT NULL,
        value,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE run_env (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        kind   TEXT NOT NULL CHECK (kind IN ('mca', 'cvar', 'env')),
        name   TEXT NOT NULL,
        value  TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, name)
    );
    CREATE TABLE run_provenance (
        run_id TEXT NOT NULL REFERENCES runs(run_id),
        key    TEXT NOT NULL,
        value  TEXT,
        PRIMARY KEY (run_id, key)
    );
    """,
    # 2: runs stopped by SIGINT/SIGTERM are 'interrupted'.  Widening a CHECK
    # leaves every stored row valid, so the table definition is edited in place
    # (SQLite's documented way; a table rebuild would trip the foreign keys).
    """
    PRAGMA writable_schema=ON;
    UPDATE sqlite_master SET sql = replace(sql, '''timeout'')', '''timeout'', ''interrupted'')')
        WHERE type = 'table' AND name = 'runs';
    PRAGMA writable_schema=RESET
    """,
    # 3: where each run's ranks sat: the cores of a node, the ranks placed on the
    # busiest node, and whether that oversubscribed it; and whether the run still
    # belongs to the study file as last run (``stale`` = its point was dropped).
    """
    ALTER TABLE runs ADD COLUMN cores_per_node INTEGER;
    ALTER TABLE runs ADD COLUMN placed_per_node INTEGER;
    ALTER TABLE runs ADD COLUMN oversubscribed INTEGER;
    ALTER TABLE runs ADD COLUMN stale INTEGER NOT NULL DEFAULT 0
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


def check_version(path: Path, found: int | None) -> None:
    """Refuse a database written by a newer scalewise (reading or writing it could misread its tables)."""
    if found is None or found > SCHEMA_VERSION:
        raise ScalewiseError(f"{path}: results database has schema version {found}, newer than this scalewise "
                             f"understands ({SCHEMA_VERSION}); upgrade scalewise")
