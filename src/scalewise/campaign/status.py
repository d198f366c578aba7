"""Where a study stands: its planned runs counted by status, and the ones that failed."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from scalewise.campaign.expand import expand
from scalewise.campaign.store import FAILED, Store, store_path
from scalewise.campaign.study import LoadedStudy


@dataclass
class StudyStatus:
    planned: int
    started: bool  # False until the results database exists
    counts: dict[str, int] = field(default_factory=dict)  # planned runs by status; never-recorded ones are pending
    failed: list[sqlite3.Row] = field(default_factory=list)  # failed and timed-out runs, in plan order
    stale: int = 0  # runs in the store whose points the file no longer plans (kept, not counted)


def study_status(loaded: LoadedStudy) -> StudyStatus:
    """Count the runs the current study file plans (rows of runs dropped from the file are left out)."""
    planned = {r.run_id for r in expand(loaded)}
    if not store_path(loaded).exists():
        return StudyStatus(len(planned), started=False)
    store = Store(store_path(loaded))
    try:
        stored = store.runs()
        rows = [r for r in stored if r["run_id"] in planned]
    finally:
        store.close()
    status = StudyStatus(len(planned), started=True, stale=len(stored) - len(rows))
    for row in rows:
        status.counts[row["status"]] = status.counts.get(row["status"], 0) + 1
    if missing := len(planned) - len(rows):
        status.counts["pending"] = status.counts.get("pending", 0) + missing
    status.failed = [r for r in rows if r["status"] in FAILED]
    return status
