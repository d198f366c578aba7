"""Wait and Test calls from Fortran, counted exactly once under every binding
and both MPIs.  Open MPI 4.1's Fortran bindings return without entering
PMPI_Waitall (and the other five) when given zero requests; the profiler
intercepts their entry points too, and must not count twice a call that
does reach the C function (null requests, real requests).  Two local calls
show the class `local` is recorded from every binding too."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import Expected, function_differences
from support.mpijob import FLAVOURS, counted_calls

REPS, MSG = 5, 8
FORMS = ("MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Testall", "MPI_Testany", "MPI_Testsome")
LOCAL = ("MPI_Comm_test_inter", "MPI_Error_class")  # local calls: every binding reaches the C wrapper
LOOPED = ("MPI_Waitsome", "MPI_Testall", "MPI_Testany", "MPI_Testsome")  # their calls are printed
BINDINGS = {  # binding -> (source, preprocessor defines)
    "mpif.h": ("waitzero_f.F90", ("USE_MPIF_H",)),
    "use-mpi": ("waitzero_f.F90", ()),
    "use-mpi_f08": ("waitzero_f08.f90", ()),
}
CASES = [pytest.param((b, f, n), id=f"{b}-{f}-{n}ranks") for b in BINDINGS for f in FLAVOURS for n in (1, 2)]


def expected(nranks: int, counted: dict[tuple[str, int], int]) -> Expected:
    e = Expected(nranks)
    for r in range(nranks):
        for fn in FORMS:
            # zero requests and null requests: a call each, nothing completed
            e.call(r, fn, calls=2 * REPS)
            # real requests: the receive and the send to itself, 8 bytes each
            calls = counted[(fn, r)] if fn in LOOPED else {"MPI_Waitall": 1, "MPI_Waitany": 2}[fn] * REPS
            e.call(r, fn, *([MSG, MSG] * REPS), calls=calls)
        e.call(r, "MPI_Irecv", *([MSG] * 6 * REPS), calls=6 * REPS)  # credited at completion too
        e.call(r, "MPI_Isend", *([MSG] * 6 * REPS), calls=6 * REPS)
        for fn in LOCAL:
            e.call(r, fn, calls=REPS)
    return e


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    binding, flavour, nranks = request.param
    source, defines = BINDINGS[binding]
    exe = program(source, flavour, defines)
    job = mpi_job(f"waitzero-{binding}-{flavour}-{nranks}", flavour, nranks, [exe, REPS])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), expected(nranks, counted_calls(job.stdout))


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_every_wait_and_test_counts_once(run, what):
    profile, want = run
    # the program's other calls (Init, Comm_rank, Finalize) are not the subject here
    diffs = function_differences(profile, want, what, only=(*FORMS, *LOCAL, "MPI_Isend", "MPI_Irecv"))
    assert not diffs, "\n".join(diffs)
