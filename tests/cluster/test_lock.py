"""One emulated cluster per machine: a second user waits for the lock, and says so."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from scalewise.cluster import lock

WAITER = """
from scalewise.cluster.lock import cluster_lock
with cluster_lock():
    print("got it", flush=True)
"""


def test_a_second_process_waits_until_the_first_lets_go(tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEWISE_CLUSTER_LOCK", str(tmp_path / "cluster.lock"))
    with lock.cluster_lock():
        with lock.cluster_lock():  # reentrant: a test holding it can run a study that takes it again
            waiter = subprocess.Popen([sys.executable, "-c", WAITER], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            said = waiter.stderr.readline()  # returns once the waiter found the lock taken
            assert said == ("scalewise: waiting for the emulated cluster, in use by another process "
                            f"({tmp_path}/cluster.lock)\n")
            time.sleep(0.5)
            assert waiter.poll() is None  # still waiting while this process holds the lock
        assert waiter.poll() is None  # the inner release keeps the outer hold
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0 and out == "got it\n" and err == ""


def _autogroup_nice(pid: int) -> int:
    # "/autogroup-123 nice -15"
    with open(f"/proc/{pid}/autogroup") as f:
        return int(f.read().split()[-1])


def _os_nice(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def test_the_holder_and_the_sessions_it_starts_run_ahead_of_other_work(tmp_path, monkeypatch):
    # The emulated nodes stand for dedicated ones (cluster/dedicated.py); root lowers nice values.
    if os.geteuid() != 0:
        pytest.skip("only root can raise a priority")
    monkeypatch.setenv("SCALEWISE_CLUSTER_LOCK", str(tmp_path / "cluster.lock"))
    before = _autogroup_nice(os.getpid()), _os_nice(os.getpid())
    with lock.cluster_lock():
        assert _autogroup_nice(os.getpid()) == -15
        # MPICH starts each rank in a session (and so an autogroup) of its own
        child = subprocess.Popen(["setsid", "sleep", "30"])
        try:
            for _ in range(100):
                if _autogroup_nice(child.pid) == -15 and _os_nice(child.pid) == -15:
                    break
                time.sleep(0.05)
            assert (_autogroup_nice(child.pid), _os_nice(child.pid)) == (-15, -15)
        finally:
            child.kill()
            child.wait()
    assert (_autogroup_nice(os.getpid()), _os_nice(os.getpid())) == before  # given back
    after = subprocess.Popen(["setsid", "sleep", "30"])
    try:
        time.sleep(0.3)  # six rounds of the watcher, were it still running
        assert _autogroup_nice(after.pid) == 0  # a new session's autogroup, not raised
    finally:
        after.kill()
        after.wait()
