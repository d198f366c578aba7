"""The emulated nodes stand for a cluster's dedicated nodes: while a process uses them, it and
every process it starts run ahead of the host's other work.

Without this, the host's other jobs enter every timing on the nodes: sem's MPI share at
100 Mbit/s measured 67-74% at load 11 on 2 cores, against about 30% on an idle host, because
ranks that wait by polling lose the cores to other work.  A what-if prediction or a study on
the emulated cluster compares against nodes nobody else uses, as a cluster's are.

With autogroup scheduling (Linux's default) nice counts only within a session, and MPICH's
launcher starts each rank in a session of its own, so both the session's autogroup and each
new session's are raised, as long as the cluster is held (cluster/lock.py).  Root only
(lowering a nice value needs it), as the emulated cluster itself is."""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

NICE = -15
_EXEMPT: set[int] = set()  # processes (and their descendants) left at the usual priority


def _set(pid: int | str) -> bool:
    """Raise ``pid`` and its autogroup; False when that did not take (tried again on the next scan)."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(NICE))
        os.setpriority(os.PRIO_PROCESS, int(pid) if pid != "self" else 0, NICE)
        return _autogroup_nice(pid) == NICE
    except ProcessLookupError:
        return True  # gone
    except (OSError, ValueError, IndexError):
        return False  # not ours to change, or mid-way through a fork or setsid


def _descendants(root: int) -> list[tuple[int, int]]:
    """(pid, session) of every process under ``root``."""
    parent, session = {}, {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
                parent[int(entry.name)], session[int(entry.name)] = int(fields[1]), int(fields[3])
            except (OSError, ValueError, IndexError):
                continue
    out = []
    for pid in parent:
        p = pid
        while p in parent and p not in (0, 1) and p not in _EXEMPT:
            p = parent[p]
            if p == root:
                out.append((pid, session[pid]))
                break
    return out


def _watch(root: int, stop: threading.Event) -> None:
    # Keyed by session too: a child seen between its fork and its setsid() was raised in its
    # parent's autogroup, and its own new one (nice 0) must be raised when it appears.
    seen: set[tuple[int, int]] = set()
    while not stop.wait(0.05):
        for key in _descendants(root):
            if stop.is_set():
                return
            if key not in seen and _set(key[0]):
                seen.add(key)


def at_usual_priority(pid: int) -> None:
    """Leave ``pid`` (a child started in a session of its own) and its descendants as other jobs run."""
    _EXEMPT.add(pid)
    try:
        Path(f"/proc/{pid}/autogroup").write_text("0")
        os.setpriority(os.PRIO_PROCESS, pid, 0)
    except OSError:
        pass


@dataclass
class Raised:
    """A raise in force: its watcher's stop event and this process's values before it."""

    stop: threading.Event
    autogroup: int | None = None
    nice: int | None = None
    watcher: threading.Thread | None = None


def _autogroup_nice(pid: int | str = "self") -> int:
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])  # "/autogroup-12 nice 0"


def ahead_of_others(quiet: bool = False) -> Raised:
    """Raise this process and, from now on, its descendants (until ``back_to_usual``)."""
    raised = Raised(threading.Event())
    if os.geteuid() != 0:
        if not quiet:
            print("note: not root: the measurement runs at the machine's usual priority", file=sys.stderr)
        return raised
    try:
        raised.autogroup, raised.nice = _autogroup_nice(), os.getpriority(os.PRIO_PROCESS, 0)
    except (OSError, ValueError, IndexError):
        pass  # a kernel without autogroups: nice alone then
    _set("self")
    raised.watcher = threading.Thread(target=_watch, args=(os.getpid(), raised.stop), daemon=True)
    raised.watcher.start()
    return raised


def back_to_usual(raised: Raised) -> None:
    """Stop raising this process's new descendants and give this process its values back
    (processes already raised keep theirs until they end)."""
    raised.stop.set()
    if raised.watcher is not None:
        # A scan under way when stop was set could still raise a process started after this
        # returns (seen on a loaded machine, where one scan of /proc takes longer than a round).
        raised.watcher.join()
    try:
        if raised.autogroup is not None:
            Path("/proc/self/autogroup").write_text(str(raised.autogroup))
        if raised.nice is not None:
            os.setpriority(os.PRIO_PROCESS, 0, raised.nice)
    except OSError:
        pass
