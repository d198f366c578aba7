"""Run commands in their own process group, so that a timeout or a Ctrl-C stops
mpirun and everything it started, never leaving ranks behind."""

from __future__ import annotations

import ctypes
import math
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from scalewise.errors import Interrupted, ScalewiseError

_PR_SET_PDEATHSIG = 1
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _die_with_parent() -> None:
    # A SIGKILLed scalewise must not leave a launch behind that keeps writing
    # into the folder a resumed campaign or the next `scalewise run` reuses.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _child_setup() -> None:
    os.setsid()  # own session and group: a timeout kills mpirun and all it started
    _die_with_parent()


# A launch is started by vfork and exec alone (start_new_session, no
# preexec_fn): a preexec_fn forces a full fork of this interpreter and runs
# Python in the child, 10-20 ms before the launcher starts that the recorded
# wall would carry.  The parent-death signal is then set on a guard beside
# the launch instead, off the clock: setpriv (util-linux) gives the guard
# SIGTERM when we die, and its trap kills the launch's whole group.
_SETPRIV = shutil.which("setpriv")
_GUARD = 'trap "kill -KILL -$1 0 2>/dev/null; exit 0" TERM; while :; do sleep 3600 & wait $!; done'


def _spawn(argv: list[str], env: dict[str, str], cwd: Path, out, err) -> subprocess.Popen:
    """Start ``argv`` in its own session and process group."""
    if _SETPRIV is None:  # no guard possible: the child sets its own parent-death signal
        return subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                preexec_fn=_child_setup)
    return subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                            start_new_session=True)


def _guard(pgid: int) -> subprocess.Popen | None:
    """A process that kills group ``pgid`` if we die first (see _GUARD)."""
    if _SETPRIV is None:
        return None
    try:
        return subprocess.Popen([_SETPRIV, "--pdeathsig", "TERM", "--", "/bin/sh", "-c", _GUARD, "guard", str(pgid)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError:
        return None


def _end_guard(guard: subprocess.Popen | None) -> None:
    if guard is not None:
        try:
            os.killpg(guard.pid, signal.SIGKILL)  # the guard and its sleep; SIGKILL: the trap must not run now
        except ProcessLookupError:
            pass
        guard.wait()


class _StopRequests:
    """SIGINT/SIGTERM as a request to stop.  While a job is being waited for the
    signal raises :class:`Interrupted` there (the wait then stops the job);
    elsewhere it is only remembered, so no database write is ever cut in half."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.waiting = 0

    def handler(self, signum, frame) -> None:
        self.signum = signum
        if self.waiting:
            raise Interrupted(signum)

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)


STOP = _StopRequests()


@contextmanager
def stop_on_signals() -> Iterator[_StopRequests]:
    """Turn SIGINT and SIGTERM into stop requests (``STOP``) for the duration."""
    STOP.signum, STOP.waiting = None, 0
    if threading.current_thread() is not threading.main_thread():  # only the main thread receives signals
        yield STOP
        return
    old = {sig: signal.signal(sig, STOP.handler) for sig in STOP_SIGNALS}
    try:
        yield STOP
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


@contextmanager
def interruptible() -> Iterator[None]:
    """A wait that a stop request may cut short (by raising :class:`Interrupted`)."""
    STOP.check()
    STOP.waiting += 1
    try:
        yield
    finally:
        STOP.waiting -= 1


@dataclass
class Finished:
    """Exit status (negative: killed by that signal), duration, and whether time ran out.

    ``cpu``: user + system seconds of the process and every descendant it
    waited for (mpirun's local ranks, Hydra's proxies and theirs), from
    wait4; None when the process was not reaped here (timeout, no start).
    ``started``, ``ended``: the time.perf_counter() readings the wall runs
    between (the monotonic clock: comparable with the program's own)."""

    returncode: int | None
    wall: float
    timed_out: bool
    error: str | None = None
    cpu: float | None = None
    started: float | None = None
    ended: float | None = None


@dataclass
class _Exit:
    code: int
    at: float  # time.perf_counter() when the exit was seen
    cpu: float


def _reap(pid: int) -> tuple[int, float]:
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def _wait_pidfd(fd: int, pid: int, timeout: float) -> _Exit | None:
    """The exit of ``pid`` seen the moment it happens (its pidfd ``fd`` turns
    readable), or None after ``timeout`` seconds: no sleeping poll loop, no 50 ms steps."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            if poller.poll(math.ceil(left * 1000)):
                at = time.perf_counter()
                code, cpu = _reap(pid)
                return _Exit(code, at, cpu)
    finally:
        os.close(fd)


def _wait_thread(pid: int, timeout: float) -> _Exit | None:
    """As _wait_pidfd, for kernels without pidfd (before Linux 5.3): a blocking
    wait4 in a thread, the timeout kept by the waiting side."""
    seen: list[_Exit] = []
    done = threading.Event()

    def wait() -> None:
        code, cpu = _reap(pid)
        seen.append(_Exit(code, time.perf_counter(), cpu))
        done.set()

    threading.Thread(target=wait, daemon=True).start()
    return seen[0] if done.wait(timeout) else None


def wait_exit(proc: subprocess.Popen, timeout: float) -> _Exit | None:
    """Wait at most ``timeout`` seconds for ``proc`` to exit and reap it (its
    returncode is then set); None when time ran out (the process still runs)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no os.pidfd_open, or ENOSYS
        fd = None
    ended = _wait_thread(proc.pid, timeout) if fd is None else _wait_pidfd(fd, proc.pid, timeout)
    if ended is not None:
        proc.returncode = ended.code
    return ended


def run_command(argv: list[str], env: dict[str, str], cwd: Path, stdout: Path, stderr: Path,
                timeout: float, grace: float = 5.0) -> Finished:
    """Run ``argv`` (never through a shell), output to files, at most ``timeout`` seconds.

    The wall time runs from just before the fork to the moment the exit is
    seen (a pidfd turns readable), both on the monotonic high-resolution
    clock: the launcher's lifetime plus its vfork and exec, under a
    millisecond on an idle machine (tests/launch/test_wall_clock.py)."""
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        start = time.perf_counter()
        try:
            proc = _spawn(argv, env, cwd, out, err)
        except OSError as exc:
            return Finished(None, 0.0, False, f"cannot start {argv[0]}: {exc.strerror or exc}")
        guard = _guard(proc.pid)
        try:
            with interruptible():
                ended = wait_exit(proc, timeout)
            if ended is not None:
                return Finished(ended.code, ended.at - start, False, cpu=ended.cpu, started=start, ended=ended.at)
            wall = time.perf_counter() - start
            kill_group(proc, grace)
            return Finished(proc.returncode, wall, True)
        except BaseException:
            kill_group(proc, grace)
            raise
        finally:
            _end_guard(guard)


def kill_group(proc: subprocess.Popen, grace: float, first: int = signal.SIGTERM) -> None:
    """Signal the group (mpirun forwards it to ranks), then SIGKILL what is left."""
    for sig, wait in ((first, grace), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGKILL:
                return
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher is gone: nothing of its group may outlive it
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def run_foreground(argv: list[str], env: dict[str, str], grace: float = 10.0,
                   stdout: int | None = None, on_start: Callable[[], object] | None = None) -> tuple[int, int | None]:
    """Run a user's launch line in its own process group, sharing our terminal.

    SIGINT and SIGTERM sent to scalewise are forwarded to the whole group; the
    job then gets ``grace`` seconds to end before the group is killed.  When
    stdin is our terminal the group is made its foreground, so that Ctrl-C and
    terminal input reach the job as they would without scalewise.  ``stdout``: a
    file descriptor for the job's standard output (default: ours); ``on_start``:
    called once the job is started (work to overlap with it).  Returns
    (exit status, the stop signal received or None).
    """
    received: list[int] = []
    received_at: list[float] = []
    group: list[int] = []

    def forward(signum, frame):
        received.append(signum)
        received_at.append(time.monotonic())
        if group:
            try:
                os.killpg(group[0], signum)
            except ProcessLookupError:
                pass

    old = {sig: signal.signal(sig, forward) for sig in STOP_SIGNALS}
    terminal = False
    try:
        try:
            proc = subprocess.Popen(argv, env=env, stdout=stdout, process_group=0, preexec_fn=_die_with_parent)
        except OSError as exc:
            raise ScalewiseError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        group.append(proc.pid)
        terminal = _hand_terminal(proc.pid)
        if received:  # stopped while starting
            os.killpg(proc.pid, received[0])
        if on_start is not None:
            on_start()
        while True:
            ended = wait_exit(proc, 0.5)  # woken by the exit itself: Popen.wait(timeout) sleeps in steps of up to 50 ms
            if ended is not None:
                code = ended.code
                break
            if received and time.monotonic() - received_at[0] > grace:
                kill_group(proc, 0.0, first=signal.SIGKILL)
        if received:
            kill_group(proc, 0.0, first=signal.SIGKILL)  # ranks the launcher left behind
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if terminal:
            _take_terminal_back()
    return code, (received[0] if received else None)


def _hand_terminal(pgid: int) -> bool:
    try:
        if not os.isatty(0) or os.tcgetpgrp(0) != os.getpgrp():
            return False
        try:
            os.setpgid(pgid, pgid)  # also from this side: the child may not have run yet
        except OSError:
            pass
        os.tcsetpgrp(0, pgid)
        return True
    except OSError:
        return False


def _take_terminal_back() -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background group may not set the terminal otherwise
    try:
        os.tcsetpgrp(0, os.getpgrp())
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)
