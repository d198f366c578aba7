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


# Each duration is run this many times and its best run judged: on a loaded
# machine a launch may wait for a core before it starts, a delay that is no
# error of the clock; a 50 ms poll would miss by 0-50 ms on every repeat.
REPEATS = 5


def _timed(naps: Path, ms: int, tmp_path: Path) -> tuple[float, float]:
    """(recorded wall, the program's own lifetime) of one launch."""
    out = tmp_path / f"{ms}.out"
    done = run_command([str(naps), str(ms)], dict(os.environ), tmp_path, out, tmp_path / "err", timeout=30)
    assert done.returncode == 0 and not done.timed_out and done.error is None
    start, end = _own(out)
    assert end - start >= ms / 1000  # nanosleep never returns early
    assert done.cpu is not None and 0 <= done.cpu < done.wall
    return done.wall, end - start


@pytest.mark.skipif(sys.platform != "linux", reason="CLOCK_MONOTONIC shared with perf_counter: Linux")
def test_recorded_wall_is_the_program_lifetime_within_5_ms(naps, tmp_path):
    best = {}
    for ms in DURATIONS_MS:
        runs = [_timed(naps, ms, tmp_path) for _ in range(REPEATS)]
        # The recorded wall holds the program's whole lifetime: it starts before, ends after.
        assert all(wall >= own for wall, own in runs), runs
        best[ms] = min(runs, key=lambda r: r[0] - r[1])
    errors = {ms: wall - own for ms, (wall, own) in best.items()}
    # Not quantised either: a poll of period T misses each exit by a uniform 0-T, so with T = 50 ms the
    # best of 5 repeats lands within 5 ms with probability 1 - 0.9^5 = 0.41, for all 8 durations 0.0008.
    assert all(e < TOLERANCE for e in errors.values()), {ms: f"{e * 1e3:.2f} ms" for ms, e in errors.items()}


def test_exit_is_seen_when_it_happens(naps, tmp_path):
    out = tmp_path / "out"
    with open(out, "wb") as fh:
        proc = subprocess.Popen([str(naps), "37"], stdout=fh)
        ended = wait_exit(proc, timeout=30)
    assert ended is not None and ended.code == 0 and proc.returncode == 0
    _, end = _own(out)
    assert 0 <= ended.at - end < TOLERANCE  # one run: the wake-up of a pidfd, not a poll period
    assert proc.wait(timeout=0) == 0  # reaped once: Popen keeps the status


def test_wait_exit_gives_up_at_the_timeout_and_leaves_the_process(tmp_path):
    proc = subprocess.Popen(["sleep", "5"])
    try:
        assert wait_exit(proc, timeout=0.05) is None and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -9


def test_a_coreutils_sleep_is_timed_within_5_ms(tmp_path):
    for seconds in ("0.203", "0.207"):
        walls = []
        for _ in range(REPEATS):
            done = run_command(["sleep", seconds], dict(os.environ), tmp_path, tmp_path / "o", tmp_path / "e",
                               timeout=30)
            assert done.returncode == 0 and done.wall >= float(seconds)
            walls.append(done.wall)
        assert min(walls) - float(seconds) < TOLERANCE, walls


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
    deadline = time.monotonic() + 30
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
