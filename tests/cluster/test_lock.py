"""One emulated cluster per machine: a second user waits for the lock, and says so."""
from __future__ import annotations

import subprocess
import sys
import time

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
