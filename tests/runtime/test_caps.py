"""Memory is bounded: past a cap the profiler drops what does not fit and says
so with the partial flag, in the rank record and in the log header."""

from __future__ import annotations

import pytest

import scalewise

NRANKS, NBYTES = 4, 64


def fan_job(mpi_job, program, flavour, key, env):
    exe = program("ring.c", flavour)
    job = mpi_job(f"caps-{key}-{flavour}", flavour, NRANKS, [str(exe), "1", str(NBYTES), "fan"], extra_env=env)
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_without_caps_hit_the_log_is_complete(mpi_job, program, flavour):
    p = fan_job(mpi_job, program, flavour, "none", {})
    assert not p.partial and "partial" not in p.flags
    # Every rank sent to every other rank: the ring message to the right, plus one fan message each.
    assert len(p.p2p) == NRANKS * (NRANKS - 1)


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_peer_cap_keeps_at_most_that_many_peers_and_flags_partial(mpi_job, program, flavour):
    p = fan_job(mpi_job, program, flavour, "peers", {"SCALEWISE_MAX_PEERS": "2"})
    assert "partial" in p.flags and p.ranks["partial"].all()
    assert p.p2p.groupby("src").size().max() == 2


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_request_cap_flags_partial(mpi_job, program, flavour):
    # 2 x 3 requests are in flight at once on every rank; only 2 can be tracked.
    p = fan_job(mpi_job, program, flavour, "requests", {"SCALEWISE_MAX_REQUESTS": "2"})
    assert "partial" in p.flags and p.ranks["partial"].all()
    f = p.functions.set_index(["rank", "function"])
    # Calls are still all counted; only the completion credit of untracked requests is lost.
    assert (f.xs("MPI_Isend", level="function")["calls"] == NRANKS - 1).all()
    assert (f.xs("MPI_Waitall", level="function")["bytes"] < 2 * (NRANKS - 1) * NBYTES).all()
