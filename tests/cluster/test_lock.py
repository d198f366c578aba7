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


# Run in a session of its own (start_new_session): pytest's workers share one session, and so one
# autogroup, which another worker's hold of the lock would raise under this test.
PRIORITY = r"""
import os, subprocess, sys, time
from scalewise.cluster import lock

def field(pid, i):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[i])

def autogroup(pid):
    with open(f"/proc/{pid}/autogroup") as f:  # "/autogroup-123 nice -15"
        return int(f.read().split()[-1])

def state(pid):  # (own session, autogroup nice, nice)
    return field(pid, 3) == pid, autogroup(pid), field(pid, 16)

me = os.getpid()
before = autogroup(me), field(me, 16)
with lock.cluster_lock():
    assert autogroup(me) == -15
    # MPICH starts each rank in a session (and so an autogroup) of its own
    child = subprocess.Popen(["setsid", "sleep", "30"])
    for _ in range(100):  # before its setsid() the child shares this process's autogroup
        if state(child.pid) == (True, -15, -15):
            break
        time.sleep(0.05)
    assert state(child.pid) == (True, -15, -15), state(child.pid)
    child.kill()
assert (autogroup(me), field(me, 16)) == before, "given back"
after = subprocess.Popen(["setsid", "sleep", "30"])
for _ in range(100):
    if field(after.pid, 3) == after.pid:
        break
    time.sleep(0.05)
time.sleep(0.3)  # six rounds of the watcher, were it still running
assert state(after.pid) == (True, 0, before[1]), state(after.pid)  # a new session's autogroup, not raised
after.kill()
"""


def test_the_holder_and_the_sessions_it_starts_run_ahead_of_other_work(tmp_path):
    # The emulated nodes stand for dedicated ones (cluster/dedicated.py); root lowers nice values.
    if os.geteuid() != 0:
        pytest.skip("only root can raise a priority")
    env = {**os.environ, "SCALEWISE_CLUSTER_LOCK": str(tmp_path / "cluster.lock")}
    done = subprocess.run([sys.executable, "-c", PRIORITY], env=env, capture_output=True, text=True,
                          timeout=120, start_new_session=True)
    assert done.returncode == 0, done.stderr
