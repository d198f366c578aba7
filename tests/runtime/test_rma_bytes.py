"""One-sided bytes on both MPIs (tests/runtime/programs/rma_bytes.c):
Get_accumulate and Rget_accumulate credit what moves, the fetched result
alone with MPI_NO_OP and both sides with any other op; Fetch_and_op and
Compare_and_swap their one element; Put, Get, Accumulate the origin.  Each
rank's sizes are scaled by its target (the next rank), so every rank's
totals are asserted for its own target."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import DOUBLE, Expected, function_differences
from support.mpijob import FLAVOURS

REPS = 20
LONG, INT = 8, 4
CHECKED = {"MPI_Get_accumulate", "MPI_Rget_accumulate", "MPI_Wait", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
           "MPI_Put", "MPI_Get", "MPI_Accumulate"}
CASES = [pytest.param((f, n), id=f"{f}-{n}ranks") for f in FLAVOURS for n in (1, 3)]


def expected(nranks: int) -> Expected:
    e = Expected(nranks)
    for r in range(nranks):
        k = (r + 1) % nranks + 1
        fetch_only, both_ways = 100 * k * DOUBLE, 2 * 10 * k * DOUBLE  # e.g. k=1: 800 B and 160 B
        for fn in ("MPI_Get_accumulate", "MPI_Rget_accumulate", "MPI_Wait"):  # Wait: the Rget_accumulate it completes
            e.call(r, fn, *[fetch_only, both_ways] * REPS, calls=2 * REPS)
        e.call(r, "MPI_Fetch_and_op", *[LONG] * 2 * REPS, calls=2 * REPS)
        e.call(r, "MPI_Compare_and_swap", *[INT] * REPS, calls=REPS)
        for fn in ("MPI_Put", "MPI_Get", "MPI_Accumulate"):
            e.call(r, fn, *[16 * k * DOUBLE] * REPS, calls=REPS)
    return e


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    flavour, nranks = request.param
    job = mpi_job(f"rma-bytes-{flavour}-{nranks}", flavour, nranks, [program("rma_bytes.c", flavour), REPS])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), expected(nranks)


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_one_sided_calls_credit_what_moves(run, what):
    profile, want = run
    diffs = function_differences(profile, want, what, only=CHECKED)
    assert not diffs, "\n".join(diffs)
