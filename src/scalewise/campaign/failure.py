"""Why a run failed, in the words that say it: the MPI's own error, the signal, the aborting rank.

A bare "exit code 15" sends the user digging through run folders; the job's
stderr usually names the cause (``Invalid MPIR_CVAR_..._ALGORITHM value
(ring)``), and an aborted job's partial profile log names the rank that called
MPI_Abort and its code.  The reason is one line: how the launch ended, then
the cause.
"""

from __future__ import annotations

import re
from pathlib import Path

from scalewise.errors import ScalewiseError, describe_exit, signal_name
from scalewise.logfile.reader import read_profile

# A line worth quoting names a failure; the rest of stderr is launcher boilerplate or output.
_TELLING = re.compile(r"error|abort|fatal|invalid|fail|segmentation|signal|killed|cannot|unable|not found|"
                      r"no such|denied|terminat", re.IGNORECASE)
# Open MPI's boxed notices that only restate the exit status (their text is split over lines).
_BOX_RULE = re.compile(r"^-{20,}$", re.MULTILINE)
_RESTATING_BOX = re.compile(r"Primary job +terminated|mpirun\S* detected that one or more processes exited|"
                            r"MPI_ABORT was invoked")
_OMPI_ABORT = re.compile(r"MPI_ABORT was invoked on rank (\d+)\D.*?with errorcode (-?\d+)", re.DOTALL)
_MPICH_ABORT = re.compile(r"application called MPI_Abort\([^,]*, (-?\d+)\) - process (\d+)")
_BACKTRACE = re.compile(r"^(\d+\s+\S*(/|\+0x)|=+ backtrace|\[\w+:\d+:\d+\]\s+\d+\s)")
_SIGNAL = re.compile(r"signal (\d+)")
_MPICH_PREFIX = re.compile(r"^Abort\(\d+\)( on node \d+ \([^)]*\))?: ")
LONGEST = 240


def aborting_rank(stderr: str, profile_path: Path | None) -> tuple[int, int] | None:
    """(rank, error code) of an MPI_Abort, from the partial profile log or the launcher's message."""
    if profile_path is not None and profile_path.is_file():
        try:
            meta = read_profile(profile_path).meta
        except (ScalewiseError, OSError):
            meta = {}
        if meta.get("aborted_by_rank") is not None:
            return int(meta["aborted_by_rank"]), int(meta.get("abort_errorcode") or 0)
    if m := _OMPI_ABORT.search(stderr):
        return int(m.group(1)), int(m.group(2))
    if m := _MPICH_ABORT.search(stderr):
        return int(m.group(2)), int(m.group(1))
    return None


def telling_line(stderr: str) -> str | None:
    """The last stderr line that names a failure, without MPICH's ``Abort(N):`` prefix."""
    kept = "\n".join(part for part in _BOX_RULE.split(stderr) if not _RESTATING_BOX.search(part))
    for line in reversed(kept.splitlines()):
        line = line.strip()
        if not _TELLING.search(line) or _BACKTRACE.match(line):
            continue
        line = _MPICH_PREFIX.sub("", line)
        return line if len(line) <= LONGEST else line[:LONGEST - 3] + "..."
    return None


def failure_reason(code: int | None, stderr: str, profile_path: Path | None) -> str:
    """``rank 1 called MPI_Abort with error code 3 (exited with code 3)``, ``exited with code 15: Invalid ...``."""
    if code is None:
        return "the launch did not report an exit status"
    ended = describe_exit(code)
    if aborted := aborting_rank(stderr, profile_path):
        return f"rank {aborted[0]} called MPI_Abort with error code {aborted[1]} ({ended})"
    line = telling_line(stderr)
    if line and (m := _SIGNAL.search(line)) and "SIG" not in ended:
        ended = f"{ended}, a rank killed by {signal_name(int(m.group(1)))}"
    return f"{ended}: {line}" if line else ended
