"""A campaign killed with SIGKILL loses at most the run in progress, and resumes cleanly."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from scalewise.campaign.runner import run_study, store_path
from scalewise.campaign.study import load_study

RUN_CLI = "from scalewise.cli.study import study; study()"


def _ok_rows(db_path):
    if not db_path.exists():
        return {}
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return {r[0]: r[1:] for r in db.execute(
            "SELECT run_id, status, wall, fom, started_at, ended_at, attempts FROM runs WHERE status='ok'")}
    except sqlite3.OperationalError:
        return {}
    finally:
        db.close()


def test_sigkill_then_resume(swtest_dir, write_study):
    text = f"""name: killme
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest", --sleep, "0.3"]
    fom: {{source: result_line}}
axes:
  ranks: [1, 2]
  mpi: [openmpi, mpich]
repetitions: 3
timeout: 60
"""
    path = write_study(text)
    loaded = load_study(path)
    db_path = store_path(loaded)
    proc = subprocess.Popen([sys.executable, "-c", RUN_CLI, "run", "--quiet", str(path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len(_ok_rows(db_path)) < 4:
        time.sleep(0.05)
    time.sleep(0.25)  # land inside a run, not between two
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    survivors = _ok_rows(db_path)
    assert 4 <= len(survivors) < 12, "the campaign must be killed part-way"

    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM runs WHERE status='running'").fetchone()[0] <= 1
    db.close()

    summary = run_study(loaded, "local")
    assert summary.skipped == len(survivors)
    db = sqlite3.connect(db_path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM runs").fetchone() == (12, 12)
        assert db.execute("SELECT status, COUNT(*) FROM runs GROUP BY status").fetchall() == [("ok", 12)]
    finally:
        db.close()
    after = _ok_rows(db_path)
    assert all(after[run_id] == row for run_id, row in survivors.items()), "completed runs must stay untouched"
