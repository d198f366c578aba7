"""MPI-4 large-count functions and what MPI itself costs a rank
(programs/largecount.c).  Under MPICH 4.0 (MPI 4.0 headers) the program calls
the `_c` forms, which must be counted exactly under their own names; under
Open MPI 4.1 (MPI 3.1, no `_c` forms) the same program uses the int forms.
Under both, the rank lifecycle section must show the memory the program
touched and the wait the late rank caused in MPI_Finalize."""

from __future__ import annotations

import pytest

import scalewise
from support.mpijob import FLAVOURS

NRANKS, REPS, N, TOUCH_MIB, LATE_MS = 2, 3, 1000, 64, 400


@pytest.fixture(params=FLAVOURS, scope="module")
def profile(request, program, mpi_job):
    flavour = request.param
    exe = program("largecount.c", flavour)
    job = mpi_job(f"largecount-{flavour}", flavour, NRANKS, [exe, REPS, N, TOUCH_MIB, LATE_MS])
    assert job.returncode == 0, job.stderr
    return flavour, scalewise.load(job.logfile)


def expected(suffix: str) -> dict[str, tuple[int, int]]:
    """(calls, bytes) per function on every rank."""
    c = suffix
    return {f"MPI_Sendrecv{c}": (REPS, 2 * REPS * N), f"MPI_Isend{c}": (REPS, REPS * N),
            f"MPI_Irecv{c}": (REPS, REPS * N), "MPI_Waitall": (REPS, 2 * REPS * N),
            f"MPI_Bcast{c}": (REPS, REPS * N), f"MPI_Allreduce{c}": (REPS, REPS * N),
            f"MPI_Gatherv{c}": (REPS, REPS * N), f"MPI_Alltoallv{c}": (REPS, REPS * N * NRANKS),
            "MPI_Barrier": (1, 0), "MPI_Init": (1, 0), "MPI_Finalize": (1, 0)}


def test_calls_and_bytes_are_exact_under_their_own_names(profile):
    flavour, p = profile
    want = expected("_c" if flavour == "mpich" else "")
    for rank in range(NRANKS):
        f = p.functions[p.functions["rank"] == rank].set_index("function")
        got = {name: (int(row.calls), int(row.bytes)) for name, row in f.iterrows()}
        assert got == want, f"rank {rank}"
    h = p.hist[p.hist["function"] == ("MPI_Bcast_c" if flavour == "mpich" else "MPI_Bcast")]
    assert set(h["bin"]) == {N.bit_length()} and h["count"].sum() == NRANKS * REPS


def test_memory_mpi_took_and_the_program_touched(profile):
    _, p = profile
    for r in p.ranks.itertuples():
        # MPI_Init maps its libraries' data, buffers and shared memory.
        assert 0 < r.rss_init_start < r.rss_init_end
        # The program touched TOUCH_MIB MiB between MPI_Init and MPI_Finalize.
        assert r.rss_finalize - r.rss_init_end >= TOUCH_MIB << 20


def test_finalize_wait_is_recorded_apart_from_the_application(profile):
    _, p = profile
    r = p.ranks.set_index("rank")
    # Rank 0 entered MPI_Finalize right after the Barrier; the last rank slept
    # LATE_MS first (the Barrier's exits differ by far less than the margin).
    assert r.loc[0, "finalize_time"] >= 0.8 * LATE_MS / 1000
    assert r.loc[0, "finalize_time"] > r.loc[NRANKS - 1, "finalize_time"]
    f = p.functions.set_index(["rank", "function"])
    for rank in range(NRANKS):
        assert f.loc[(rank, "MPI_Finalize"), "time"] == pytest.approx(r.loc[rank, "finalize_time"], abs=1e-9)
        assert f.loc[(rank, "MPI_Finalize"), "fclass"] == "init"
    # The measured window ends where MPI_Finalize starts: rank 0's wall time
    # does not hold its wait.
    assert r.loc[0, "wall"] < r.loc[NRANKS - 1, "wall"]


def test_fortran_large_counts_are_counted_exactly_on_mpich(program, mpi_job):
    """mpi_f08 counts of kind MPI_COUNT_KIND select the large-count procedures,
    which MPICH's Fortran library implements with the C `_c` functions.  (Open
    MPI 4.1's bindings have no large-count procedures to call.)"""
    exe = program("largecount_f08.f90", "mpich")
    job = mpi_job("largecount-f08-mpich", "mpich", NRANKS, [exe, REPS, N])
    assert job.returncode == 0, job.stderr
    p = scalewise.load(job.logfile)
    want = {"MPI_Irecv_c": (REPS, REPS * N), "MPI_Isend_c": (REPS, REPS * N), "MPI_Waitall": (REPS, 2 * REPS * N),
            "MPI_Send_c": (REPS, REPS * N), "MPI_Recv_c": (REPS, REPS * N), "MPI_Init": (1, 0),
            "MPI_Finalize": (1, 0)}
    for rank in range(NRANKS):
        f = p.functions[p.functions["rank"] == rank]
        assert {r.function: (r.calls, r.bytes) for r in f.itertuples()} == want, f"rank {rank}"
