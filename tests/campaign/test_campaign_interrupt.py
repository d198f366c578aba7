"""SIGINT and SIGTERM during `study run`: the running job is stopped with all its
ranks, its run is marked interrupted (not running), the user is told how to
resume, and re-running resumes it."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.swtest import ranks_running

from scalewise.campaign.store import store_path
from scalewise.campaign.study import load_study

SCALEWISE = Path(sys.executable).parent / "scalewise"


def _statuses(db_path: Path) -> dict[str, str]:
    if not db_path.exists():
        return {}
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT run_id, status FROM runs"))
    except sqlite3.OperationalError:
        return {}
    finally:
        db.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_campaign_marks_the_run_interrupted_and_resumes(sig, swtest_dir, write_study, tmp_path):
    # The sleep of each run is read from a file, so the resumed run can be made short without changing its ID.
    for name, seconds in (("short", "0"), ("long", "30")):
        (tmp_path / name).write_text(seconds)
    path = write_study(f"""name: stopme
applications:
  swtest:
    command: [sh, -c, 'exec {swtest_dir}/{{mpi}}/swtest --sleep $(cat {tmp_path}/{{sleep}})']
    fom: {{source: result_line}}
axes:
  ranks: [2]
  mpi: [openmpi]
  custom: {{sleep: [short, long]}}
timeout: 120
""")
    db_path = store_path(load_study(path))
    exe = str(swtest_dir / "openmpi" / "swtest")
    proc = subprocess.Popen([str(SCALEWISE), "study", "run", "--quiet", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while time.time() < deadline and not ("ok" in _statuses(db_path).values() and ranks_running(exe) == 2):
        time.sleep(0.1)
    assert ranks_running(exe) == 2, "the second run must be under way"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert ranks_running(exe) == 0, "no rank outlives the campaign"
    assert sorted(_statuses(db_path).values()) == ["interrupted", "ok"]
    interrupted = next(k for k, v in _statuses(db_path).items() if v == "interrupted")
    assert err.strip().splitlines() == [
        f"scalewise: error: interrupted by {signal.Signals(sig).name}: run {interrupted} stopped and marked "
        f"interrupted; 1 of 2 runs done; run `scalewise study run {path}` again to resume"]

    status = subprocess.run([str(SCALEWISE), "study", "status", "--json", str(path)], capture_output=True, text=True)
    assert json.loads(status.stdout)["counts"] == {"interrupted": 1, "ok": 1}
    text = subprocess.run([str(SCALEWISE), "study", "status", str(path)], capture_output=True, text=True).stdout
    assert "1 interrupted, 1 ok" in text and f"run `scalewise study run {path}` to run the rest" in text

    # Resume: only the interrupted run runs again (shortened, so the test stays quick).
    (tmp_path / "long").write_text("0")
    resumed = subprocess.run([str(SCALEWISE), "study", "run", "--quiet", "--json", str(path)],
                             capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert (summary["planned"], summary["skipped"], summary["counts"]) == (2, 1, {"ok": 1})
