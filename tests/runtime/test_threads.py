"""Four threads calling MPI at once under MPI_THREAD_MULTIPLE: exact totals
summed over threads, and MPI time (a union of intervals) never above wall."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import function_differences, recorded_p2p, threads
from support.mpijob import FLAVOURS

ITERS = 60
SIZES = [1, 100, 4096, 70000]  # one per thread: bins 1, 7, 13 and 17
NRANKS = 2


@pytest.fixture(params=FLAVOURS)
def run(request, program, mpi_job):
    flavour = request.param
    exe = program("threads.c", flavour)
    job = mpi_job(f"threads-{flavour}", flavour, NRANKS, [exe, ITERS, *SIZES])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), threads(NRANKS, ITERS, SIZES)


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_totals_are_exact_across_threads(run, what):
    profile, expected = run
    diffs = function_differences(profile, expected, what)
    assert not diffs, "\n".join(diffs)


def test_p2p_rows_merge_every_thread(run):
    profile, expected = run
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))


def test_mpi_time_never_exceeds_wall(run):
    profile, _ = run
    assert profile.meta["thread_level"] == "MPI_THREAD_MULTIPLE"
    for row in profile.ranks.itertuples():
        # The main thread and the four workers all called MPI.
        assert row.nthreads == len(SIZES) + 1
        # Under MPI_THREAD_MULTIPLE mpi_time is the union of the intervals
        # when some thread is inside MPI, so overlapping calls cannot push it
        # past wall, while the per-function times (summed over threads) can.
        assert 0 < row.mpi_time <= row.wall
        assert abs(row.mpi_time + row.profiler_time + row.compute_time - row.wall) <= 1e-6


def test_time_bins_hold_the_union_of_the_threads_calls(run):
    """The bins take the same union as mpi_time: they add up to it exactly,
    and no bin holds more MPI time than its width."""
    profile, _ = run
    b = profile.bins
    sums = b.groupby("rank")[["mpi_time", "compute_time"]].sum()
    for row in profile.ranks.itertuples():
        assert sums.loc[row.rank, "mpi_time"] == pytest.approx(row.mpi_time, abs=2e-9)
        # the bins' compute holds the profiler's own time (docs/runtime.md)
        assert sums.loc[row.rank, "compute_time"] == pytest.approx(row.compute_time + row.profiler_time, abs=2e-9)
    # Bins are exact in ticks; in nanoseconds each one is a piece of a rounded running sum (so the
    # bins add up to the totals), and a bin wholly inside MPI can come out 1 ns above its width.
    assert (b["mpi_time"] <= b["width"] + 1.001e-9).all()
