"""The Fortran ground-truth programs through mpif.h, `use mpi` and `use
mpi_f08`, under both MPIs at 1, 2 and 4 ranks: the coverage matrix of
docs/runtime.md.  Counts must be exactly those of the same program in C."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import function_differences, groundtruth_fortran, recorded_p2p
from support.mpijob import FLAVOURS

REPS, COUNT = 4, 3
SIZES = [0, 1, 7, 8, 1024, 65536]
BINDINGS = {  # binding -> (source, preprocessor defines)
    "mpif.h": ("groundtruth_f.F90", ("USE_MPIF_H",)),
    "use-mpi": ("groundtruth_f.F90", ()),
    "use-mpi_f08": ("groundtruth_f08.f90", ()),
}
CASES = [pytest.param((b, f, n), id=f"{b}-{f}-{n}ranks") for b in BINDINGS for f in FLAVOURS for n in (1, 2, 4)]


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    binding, flavour, nranks = request.param
    source, defines = BINDINGS[binding]
    exe = program(source, flavour, defines)
    job = mpi_job(f"groundtruth-{binding}-{flavour}-{nranks}", flavour, nranks, [exe, REPS, COUNT, *SIZES])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), groundtruth_fortran(nranks, REPS, COUNT, SIZES)


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_functions_match_the_program(run, what):
    profile, expected = run
    diffs = function_differences(profile, expected, what)
    assert not diffs, "\n".join(diffs)


def test_p2p_matrix_in_world_ranks(run):
    profile, expected = run
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))


def test_times_add_up_on_every_rank(run):
    profile, expected = run
    assert sorted(profile.ranks["rank"]) == list(range(expected.nranks))
    for row in profile.ranks.itertuples():
        assert 0 < row.mpi_time <= row.wall
        assert abs(row.mpi_time + row.profiler_time + row.compute_time - row.wall) <= 1e-6
