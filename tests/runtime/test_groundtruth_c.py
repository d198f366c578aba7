"""The C ground-truth program (programs/groundtruth.c) under both MPIs at 1, 2
and 4 ranks: every call, byte, histogram entry and matrix entry must be exact."""

from __future__ import annotations

import pytest

import scalewise
from support.expect import function_differences, groundtruth_c, recorded_p2p
from support.mpijob import FLAVOURS, counted_calls

REPS, COUNT = 3, 5
# 0, 1, 7, 8, 1024 and 65536 bytes land in bins 0, 1, 3, 4, 11 and 17.
SIZES = [0, 1, 7, 8, 1024, 65536]

CASES = [pytest.param((f, n), id=f"{f}-{n}ranks") for f in FLAVOURS for n in (1, 2, 4)]


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    """(job, profile, expected) of one launch; shared by all tests of its case."""
    flavour, nranks = request.param
    exe = program("groundtruth.c", flavour)
    argv = [exe, "{workdir}/io.dat", REPS, COUNT, *SIZES]
    job = mpi_job(f"groundtruth-c-{flavour}-{nranks}", flavour, nranks, argv)
    assert job.returncode == 0, job.stderr
    profile = scalewise.load(job.logfile)
    expected = groundtruth_c(nranks, REPS, COUNT, SIZES, counted_calls(job.stdout))
    return job, profile, expected


def test_every_rank_is_present_and_complete(run):
    job, profile, expected = run
    assert sorted(profile.ranks["rank"]) == list(range(expected.nranks))
    assert profile.meta["nranks"] == expected.nranks
    assert profile.flags == frozenset()
    assert not profile.ranks["partial"].any()


@pytest.mark.parametrize("what", ["calls", "bytes", "hist"])
def test_functions_match_the_program(run, what):
    _, profile, expected = run
    diffs = function_differences(profile, expected, what)
    assert not diffs, "\n".join(diffs)


def test_p2p_matrix_matches_the_program(run):
    _, profile, expected = run
    messages, nbytes = recorded_p2p(profile)
    assert dict(messages) == dict(expected.p2p)
    assert dict(nbytes) == dict(expected.p2p_bytes)


def test_times_add_up_on_every_rank(run):
    _, profile, _ = run
    for row in profile.ranks.itertuples():
        assert 0 < row.mpi_time <= row.wall
        assert abs(row.mpi_time + row.profiler_time + row.compute_time - row.wall) <= 1e-6
    f = profile.functions
    assert (f["tmin"] <= f["tmax"]).all()
    assert (f["time"] >= 0).all()
