"""The wall time of a launch is the launched program's lifetime, to well
under the 5 ms a figure of merit can afford, and not in the steps of a
sleeping poll loop (Popen.wait's sleeps grow to 50 ms).

The truth is the program's own account: tests/launch/programs/naps.c prints
CLOCK_MONOTONIC at the entry of main and before it returns, the clock
time.perf_counter reads, so the launcher's start and exit stamps are
compared with the program's on one clock, whatever the load delays."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scalewise.launch.process import run_command, wait_exit

PROGRAM = Path(__file__).resolve().parent / "programs" / "naps.c"
# Durations a few ms apart: a 50 ms poll would give them one or two walls.
DURATIONS_MS = (200, 203, 207, 211, 216, 224, 231, 243)
TOLERANCE = 0.005


@pytest.fixture(scope="module")
def naps(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("naps") / "naps"
    subprocess.run(["cc", "-std=c11", "-O1", "-Wall", "-Werror", str(PROGRAM), "-o", str(out)], check=True)
    return out


def _own(stdout: Path) -> tuple[float, float]:
    start, end = (int(v) / 1e9 for v in stdout.read_text().split())
    return start, end


REPEATS = 5


def _timed(naps: Path, ms: int, tmp_path: Path):
    """(the finished launch, the program's own start and end) of one launch."""
    out = tmp_path / f"{ms}.out"
    done = run_command([str(naps), str(ms)], dict(os.environ), tmp_path, out, tmp_path / "err", timeout=30)
    assert done.returncode == 0 and not done.timed_out and done.error is None
    start, end = _own(out)
    assert end - start >= ms / 1000  # nanosleep never returns early
    assert done.cpu is not None and 0 <= done.cpu < done.wall
    assert done.wall == pytest.approx(done.ended - done.started, abs=1e-9)
    return done, start, end


@pytest.mark.skipif(sys.platform != "linux", reason="CLOCK_MONOTONIC shared with perf_counter: Linux")
def test_recorded_wall_is_the_program_lifetime_within_5_ms(naps, tmp_path):
    runs = [(ms, *_timed(naps, ms, tmp_path)) for ms in DURATIONS_MS for _ in range(REPEATS)]
    # The recorded wall holds the program's whole lifetime: it starts before, ends after.
    assert all(done.started <= start and end <= done.ended for _, done, start, end in runs)
    # The end: the exit is seen when it happens (test_exit_is_seen_when_it_happens).  The start: fork and exec.  On a loaded machine a new process may wait for a core before its
    # first instruction, a delay of the launch, not of the clock: the least of the runs shows the method's.
    start_lag = sorted(start - done.started for _, done, start, _ in runs)
    assert start_lag[0] < TOLERANCE, [f"{x * 1e3:.2f} ms" for x in start_lag]
    # Together: on a machine with a core free, the recorded wall is the program's lifetime within 5 ms.
    assert min(done.wall - (end - start) for _, done, start, end in runs) < TOLERANCE


# How late the exit is seen, judged by the median of a batch of BATCH launches, in the best of TRIES
# batches.  A poll of period T misses each exit by a uniform 0-T: with T = 50 ms a batch's median is
# below 5 ms with probability 3e-5, so 1e-4 in TRIES batches.  A pidfd wakes us within a fraction of a
# millisecond once we get a core; a loaded machine may delay that wake-up in one batch, not in every one.
BATCH, TRIES = 15, 3


def _exit_seen_promptly(lag_of_one_launch) -> None:
    medians = []
    for _ in range(TRIES):
        lags = sorted(lag_of_one_launch() for _ in range(BATCH))
        assert lags[0] >= 0  # never before the program's own last instruction
        medians.append(lags[BATCH // 2])
        if medians[-1] < TOLERANCE:
            return
    pytest.fail(f"exit seen late: batch medians {[f'{m * 1e3:.2f} ms' for m in medians]}")


def test_exit_is_seen_when_it_happens(naps, tmp_path):
    def lag() -> float:
        out = tmp_path / "out"
        with open(out, "wb") as fh:
            proc = subprocess.Popen([str(naps), "37"], stdout=fh)
            ended = wait_exit(proc, timeout=30)
        assert ended is not None and ended.code == 0 and proc.returncode == 0
        assert proc.wait(timeout=0) == 0  # reaped once: Popen keeps the status
        return ended.at - _own(out)[1]

    _exit_seen_promptly(lag)


def test_run_command_sees_the_exit_when_it_happens(naps, tmp_path):
    def lag() -> float:
        out = tmp_path / "out"
        done = run_command([str(naps), "29"], dict(os.environ), tmp_path, out, tmp_path / "err", timeout=30)
        assert done.returncode == 0
        return done.ended - _own(out)[1]

    _exit_seen_promptly(lag)


def test_wait_exit_gives_up_at_the_timeout_and_leaves_the_process(tmp_path):
    proc = subprocess.Popen(["sleep", "5"])
    try:
        assert wait_exit(proc, timeout=0.05) is None and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9


def test_a_missing_program_is_a_start_error(tmp_path):
    done = run_command(["no-such-program-here"], dict(os.environ), tmp_path, tmp_path / "o", tmp_path / "e",
                       timeout=5)
    assert done.returncode is None and done.error == "cannot start no-such-program-here: No such file or directory"


def _pids_running(argv: list[str]) -> list[int]:
    want = "\0".join(argv).encode() + b"\0"
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == want:
                out.append(int(entry.name))
        except OSError:
            pass
    return out


def test_a_launch_dies_with_scalewise(naps, tmp_path):
    """Started without a preexec_fn, a launch still must not outlive a SIGKILLed
    scalewise: the guard beside it kills its group."""
    argv = [str(naps), "61234"]
    code = ("import os, sys; from pathlib import Path; from scalewise.launch.process import run_command; "
            f"run_command({argv!r}, dict(os.environ), Path({str(tmp_path)!r}), Path({str(tmp_path / 'o')!r}), "
            f"Path({str(tmp_path / 'e')!r}), timeout=120)")
    parent = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 120  # a loaded machine may take long to import scalewise
    while not _pids_running(argv) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running(argv), "the launch did not start"
    time.sleep(0.3)  # the guard starts right after the launch
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _pids_running(argv) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pids_running(argv)


def test_without_pidfd_a_waiting_thread_sees_the_exit(naps, tmp_path, monkeypatch):
    """Kernels before 5.3 have no pidfd_open: a blocking wait4 in a thread takes its place."""
    def no_pidfd(pid):
        raise OSError(38, "Function not implemented")
    monkeypatch.setattr(os, "pidfd_open", no_pidfd)

    def lag() -> float:
        out = tmp_path / "out"
        done = run_command([str(naps), "23"], dict(os.environ), tmp_path, out, tmp_path / "err", timeout=30)
        assert done.returncode == 0 and done.cpu is not None
        return done.ended - _own(out)[1]

    _exit_seen_promptly(lag)
