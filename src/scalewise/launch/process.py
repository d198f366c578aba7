"""Run one command to completion with a timeout, killing its whole process tree on expiry."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    # Own process group, so a timeout can kill mpirun and everything it started;
    # and die with the campaign: a SIGKILLed campaign must not leave a launch
    # behind that keeps writing into the run folder the resumed campaign reuses.
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


@dataclass
class Finished:
    """Exit status (negative: killed by that signal), duration, and whether time ran out."""

    returncode: int | None
    wall: float
    timed_out: bool
    error: str | None = None


def run_command(argv: list[str], env: dict[str, str], cwd: Path, stdout: Path, stderr: Path,
                timeout: float, grace: float = 5.0) -> Finished:
    """Run ``argv`` (never through a shell), output to files, at most ``timeout`` seconds."""
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    preexec_fn=_child_setup)
        except OSError as exc:
            return Finished(None, 0.0, False, f"cannot start {argv[0]}: {exc.strerror or exc}")
        try:
            code = proc.wait(timeout=timeout)
            return Finished(code, time.perf_counter() - start, False)
        except subprocess.TimeoutExpired:
            wall = time.perf_counter() - start
            _kill_group(proc, grace)
            return Finished(proc.returncode, wall, True)


def _kill_group(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM the group (mpirun forwards it to ranks), then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
