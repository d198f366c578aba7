"""One SQLite file per study: the plan, every run's result, and provenance.

Safety rules, because a campaign may be killed at any moment:
- WAL journal, ``synchronous=FULL``: a committed transaction survives a kill;
  an uncommitted one vanishes whole.
- Each state change of a run is one transaction (``running`` when it starts,
  its full result when it ends), so a kill loses at most the run in progress,
  which stays ``running`` and is run again on resume.
- ``run_id`` is the primary key: a run can never appear twice.
See docs/store.md for the tables.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from scalewise.campaign.expand import RunSpec
from scalewise.campaign.schema import DB_NAME, MIGRATIONS, SCHEMA_VERSION, check_version
from scalewise.campaign.study import LoadedStudy
from scalewise.launch.timeutil import utc_now as now

DONE = "ok"
FAILED = ("failed", "timeout")
INTERRUPTED = "interrupted"  # stopped by SIGINT/SIGTERM; run again on resume


@dataclass
class RunResult:
    """What one finished attempt of a run produced (paths relative to the store's folder)."""

    status: str
    reason: str | None
    exit_code: int | None
    wall: float | None
    started_at: str
    ended_at: str
    fom: float | None = None
    fom_name: str | None = None
    fom_unit: str | None = None
    higher_is_better: bool | None = None
    world_size: int | None = None
    hosts: list[str] | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    profile_path: str | None = None
    command: list[str] | None = None
    scheduler: str | None = None
    job_id: str | None = None
    cores_per_node: int | None = None  # cores available on each node the run used
    placed_per_node: int | None = None  # ranks placed on the busiest node
    oversubscribed: bool | None = None  # placed ranks x threads above the node's cores
    provenance: dict[str, str] | None = None


def store_path(loaded: LoadedStudy) -> Path:
    """The results database of a study: ``results.sqlite`` in its output folder."""
    return loaded.output / DB_NAME


class Store:
    """The results database of one study."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: transactions are explicit (BEGIN IMMEDIATE ... COMMIT).
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All statements inside commit together or not at all."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def version(self) -> int:
        has = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'").fetchone()
        if not has:
            return 0
        row = self.db.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        found = self.version()
        check_version(self.path, found)
        for version in range(found, SCHEMA_VERSION):
            with self.transaction() as db:
                if version == 0:
                    db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                    db.execute("INSERT INTO schema_version VALUES (0)")
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("UPDATE schema_version SET version = ?", (version + 1,))

    # -- sessions and the plan ------------------------------------------------

    def set_study_info(self, info: dict[str, str]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT INTO study(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                           sorted(info.items()))

    def begin_session(self, columns: dict[str, object], provenance: dict[str, str]) -> int:
        """Record one ``study run`` invocation and the machine it ran on."""
        names = ", ".join(columns)
        with self.transaction() as db:
            cur = db.execute(f"INSERT INTO sessions({names}) VALUES ({', '.join('?' * len(columns))})",
                             list(columns.values()))
            session = int(cur.lastrowid)
            db.executemany("INSERT INTO session_provenance VALUES (?, ?, ?)",
                           [(session, k, v) for k, v in sorted(provenance.items())])
        return session

    def end_session(self, session: int) -> None:
        with self.transaction() as db:
            db.execute("UPDATE sessions SET ended_at=? WHERE session_id=?", (now(), session))

    def add_plan(self, runs: list[RunSpec]) -> int:
        """Insert the runs not yet known (as ``pending``); returns how many were new."""
        known = {r[0] for r in self.db.execute("SELECT run_id FROM runs")}
        new = [r for r in runs if r.run_id not in known]
        with self.transaction() as db:
            # Runs of points no longer in the file stay, marked stale; positions follow the current file.
            db.execute("UPDATE runs SET stale=1")
            for run in runs:
                db.execute("UPDATE runs SET position=?, stale=0 WHERE run_id=?", (run.position, run.run_id))
            for run in new:
                db.execute("INSERT INTO runs(run_id, position, app, variant, mpi, transport, params, nodes, ranks, "
                           "ranks_per_node, threads, repetition) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                           (run.run_id, run.position, run.app, run.variant, run.mpi, run.transport, run.params,
                            run.nodes, run.ranks, run.ranks_per_node, run.threads, run.repetition))
                db.executemany("INSERT INTO run_settings VALUES (?, ?, ?)",
                               [(run.run_id, k, v) for k, v in run.settings().items() if v is not None])
                db.executemany("INSERT OR REPLACE INTO run_env VALUES (?, ?, ?, ?)",
                               [(run.run_id, kind, name, value) for kind, name, value in run.applied])
        return len(new)

    # -- run state -------------------------------------------------------------

    def statuses(self) -> dict[str, str]:
        return {r["run_id"]: r["status"] for r in self.db.execute("SELECT run_id, status FROM runs")}

    def mark_running(self, run_id: str, session: int, scheduler: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE runs SET status='running', reason=NULL, started_at=?, ended_at=NULL, "
                       "session_id=?, scheduler=?, attempts=attempts+1 WHERE run_id=?",
                       (now(), session, scheduler, run_id))

    def mark_interrupted(self, run_id: str, reason: str) -> None:
        with self.transaction() as db:
            db.execute("UPDATE runs SET status=?, reason=?, ended_at=? WHERE run_id=?",
                       (INTERRUPTED, reason, now(), run_id))

    def record(self, run_id: str, result: RunResult) -> None:
        """Store a finished attempt: the row and its provenance in one transaction."""
        values = dict(result.__dict__)
        provenance = values.pop("provenance") or {}
        values["hosts"] = ",".join(result.hosts) if result.hosts else None
        values["command"] = json.dumps(result.command) if result.command is not None else None
        for flag in ("higher_is_better", "oversubscribed"):
            if values[flag] is not None:
                values[flag] = int(values[flag])
        assignments = ", ".join(f"{k}=?" for k in values)
        with self.transaction() as db:
            db.execute(f"UPDATE runs SET {assignments} WHERE run_id=?", [*values.values(), run_id])
            db.execute("DELETE FROM run_provenance WHERE run_id=?", (run_id,))
            db.executemany("INSERT INTO run_provenance VALUES (?, ?, ?)",
                           [(run_id, k, v) for k, v in sorted(provenance.items())])

    def runs(self) -> list[sqlite3.Row]:
        return list(self.db.execute("SELECT * FROM runs ORDER BY position"))

    def integrity(self) -> str:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0]
