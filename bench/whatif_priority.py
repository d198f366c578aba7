"""Timing on a shared machine: this process and every process it starts run ahead of other
users' jobs.  With autogroup scheduling (Linux's default) nice counts only within a session,
and MPICH's launcher starts each rank in a session of its own, so both the session's
autogroup and each new session's are raised, as long as the measurement runs.  Root only
(lowering a nice value needs it); without root it changes nothing and says so."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

NICE = -15
_EXEMPT: set[int] = set()  # processes (and their descendants) left at the usual priority


def _set(pid: int | str) -> None:
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(NICE))
        os.setpriority(os.PRIO_PROCESS, int(pid) if pid != "self" else 0, NICE)
    except (OSError, ValueError):
        pass  # gone, or not ours to change


def _descendants(root: int) -> list[int]:
    parent = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out = []
    for pid in parent:
        p = pid
        while p in parent and p not in (0, 1) and p not in _EXEMPT:
            p = parent[p]
            if p == root:
                out.append(pid)
                break
    return out


def _watch(root: int, stop: threading.Event) -> None:
    seen: set[int] = set()
    while not stop.wait(0.05):
        for pid in _descendants(root):
            if pid not in seen:
                seen.add(pid)
                _set(pid)


def at_usual_priority(pid: int) -> None:
    """Leave ``pid`` (a child started in a session of its own) and its descendants as other jobs run."""
    _EXEMPT.add(pid)
    try:
        Path(f"/proc/{pid}/autogroup").write_text("0")
        os.setpriority(os.PRIO_PROCESS, pid, 0)
    except OSError:
        pass


def ahead_of_others() -> threading.Event:
    """Raise this process and, from now on, its descendants; set the returned event to stop."""
    stop = threading.Event()
    if os.geteuid() != 0:
        print("note: not root: the measurement runs at the machine's usual priority", file=sys.stderr)
        return stop
    _set("self")
    threading.Thread(target=_watch, args=(os.getpid(), stop), daemon=True).start()
    return stop
