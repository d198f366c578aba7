"""The poll forms at the edges of the request bookkeeping, under both MPIs
(tests/runtime/programs/polls.c): Testsome, Testall and Testany of one
request until it completes, Testall over null handles, Testany of null
handles only (MPI_UNDEFINED), a persistent receive completed twice by
Testsome and tested while inactive, receives from MPI_PROC_NULL (a shared
handle).  Entries are looked up only once a poll completes something, so
every completion must still credit its bytes exactly once, to the poll and
to the call that started it, and every poll must count."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import Expected, function_differences
from support.mpijob import FLAVOURS, counted_calls

TESTSOME1, TESTALL_NULLS, TESTALL1, TESTANY1, PERSISTENT = 100, 300, 700, 1500, 3000
CHECKED = {"MPI_Irecv", "MPI_Send", "MPI_Testsome", "MPI_Testall", "MPI_Testany", "MPI_Recv_init", "MPI_Start",
           "MPI_Test", "MPI_Request_free"}
CASES = [pytest.param((f, n), id=f"{f}-{n}ranks") for f in FLAVOURS for n in (1, 3)]


def expected(nranks: int, counted: dict[tuple[str, int], int]) -> Expected:
    e = Expected(nranks)
    for r in range(nranks):
        right = (r + 1) % nranks
        for size in (TESTSOME1, TESTALL_NULLS, TESTALL1, TESTANY1):
            e.call(r, "MPI_Irecv", size)
            e.send(r, "MPI_Send", right, size)
        e.call(r, "MPI_Testall", TESTALL_NULLS, TESTALL1, 0, 0, calls=counted[("MPI_Testall", r)])
        e.call(r, "MPI_Testany", TESTANY1, calls=counted[("MPI_Testany", r)])
        # The persistent receive: credited to its Start and to the completing poll, twice.
        e.call(r, "MPI_Recv_init")
        e.call(r, "MPI_Start", PERSISTENT, PERSISTENT, calls=2)
        for _ in range(2):
            e.send(r, "MPI_Send", right, PERSISTENT)
        e.call(r, "MPI_Testsome", TESTSOME1, PERSISTENT, PERSISTENT, calls=counted[("MPI_Testsome", r)])
        e.call(r, "MPI_Test")  # the inactive request: completes at once, moves nothing
        e.call(r, "MPI_Request_free")
        e.call(r, "MPI_Irecv", 0, 0, calls=2)  # from MPI_PROC_NULL
    return e


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    flavour, nranks = request.param
    job = mpi_job(f"polls-{flavour}-{nranks}", flavour, nranks, [program("polls.c", flavour)])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), expected(nranks, counted_calls(job.stdout))


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_every_poll_counts_and_every_completion_credits_once(run, what):
    profile, want = run
    diffs = function_differences(profile, want, what, only=CHECKED)
    assert not diffs, "\n".join(diffs)
