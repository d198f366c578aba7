"""One emulated cluster per machine: a lock every user of it holds.

The nodes, bridge and addresses have fixed names, so two processes that
each brought a cluster up would tear down each other's.  A study on
emulated nodes (and each test that uses them) holds this lock for as long as
it uses the cluster; a second one waits, and says so once.  The lock is
reentrant within a process, so a test holding it can run a study that takes
it again.  While a process holds it, it and the processes it starts run ahead
of the host's other work (cluster/dedicated.py): the nodes stand for
dedicated ones.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scalewise.cluster.dedicated import ahead_of_others, back_to_usual
from scalewise.cluster.paths import NOT_ROOT
from scalewise.errors import ScalewiseError

_held: dict[str, list] = {}  # path -> [open file, depth, priority watcher] while this process holds it


def lock_path() -> Path:
    return Path(os.environ.get("SCALEWISE_CLUSTER_LOCK", "/run/scalewise-cluster.lock"))


def acquire() -> None:
    path = str(lock_path())
    entry = _held.get(path)
    if entry is not None:
        entry[1] += 1
        return
    if os.geteuid() != 0:
        raise ScalewiseError(NOT_ROOT)  # the lock lives in /run, like the cluster itself
    try:
        fh = open(path, "a")
    except OSError as e:
        raise ScalewiseError(f"cluster: cannot open the lock {path}: {e.strerror}") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"scalewise: waiting for the emulated cluster, in use by another process ({path})",
              file=sys.stderr, flush=True)
        fcntl.flock(fh, fcntl.LOCK_EX)
    _held[path] = [fh, 1, ahead_of_others(quiet=True)]


def release() -> None:
    path = str(lock_path())
    entry = _held.get(path)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] == 0:
        del _held[path]
        back_to_usual(entry[2])
        entry[0].close()  # closing the file drops the flock


@contextmanager
def cluster_lock() -> Iterator[None]:
    acquire()
    try:
        yield
    finally:
        release()
