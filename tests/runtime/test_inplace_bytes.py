"""Collectives credit no bytes they do not move (docs/runtime.md, the byte
rules): with MPI_IN_PLACE a rank's own block stays where it is, and a
collective on a one-rank communicator moves nothing, e.g. a root's in-place
MPI_Gatherv on a communicator of one rank credits 0.
tests/runtime/programs/inplace.c, both MPIs, 1 and 3 ranks."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import INT, Expected, function_differences
from support.mpijob import FLAVOURS

N = 4
CHECKED = {"MPI_Gather", "MPI_Gatherv", "MPI_Reduce", "MPI_Scatter", "MPI_Scatterv", "MPI_Alltoall", "MPI_Alltoallv",
           "MPI_Allgather", "MPI_Allreduce", "MPI_Bcast", "MPI_Ibcast", "MPI_Wait"}
CASES = [pytest.param((f, n), id=f"{f}-{n}ranks") for f in FLAVOURS for n in (1, 3)]


def expected(P: int) -> Expected:
    e = Expected(P)
    block = N * INT

    def w(nbytes: int) -> int:
        return 0 if P == 1 else nbytes  # MPI_COMM_WORLD of one rank moves nothing either

    for r in range(P):
        root = r == 0
        e.call(r, "MPI_Gather", w(0 if root else block))
        e.call(r, "MPI_Gatherv", w(0 if root else (r + 1) * INT))
        e.call(r, "MPI_Reduce", w(0 if root else block))
        e.call(r, "MPI_Scatter", w((P - 1) * block if root else block))
        e.call(r, "MPI_Scatterv", w((sum(range(1, P + 1)) - 1) * INT if root else (r + 1) * INT))
        e.call(r, "MPI_Alltoall", w((P - 1) * block))
        e.call(r, "MPI_Alltoallv", w((P - 1) * 2 * INT))
        e.call(r, "MPI_Allgather", w(block))
        e.call(r, "MPI_Allreduce", w(block))
        # one-rank communicators
        e.call(r, "MPI_Gatherv", 0)
        e.call(r, "MPI_Bcast", 0)
        e.call(r, "MPI_Ibcast", 0)
        e.call(r, "MPI_Wait", 0)
        e.call(r, "MPI_Allreduce", 0)
        e.call(r, "MPI_Alltoall", 0)
    return e


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    flavour, nranks = request.param
    job = mpi_job(f"inplace-{flavour}-{nranks}", flavour, nranks, [program("inplace.c", flavour)])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), expected(nranks)


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_collectives_credit_only_what_moves(run, what):
    profile, want = run
    diffs = function_differences(profile, want, what, only=CHECKED)
    assert not diffs, "\n".join(diffs)
