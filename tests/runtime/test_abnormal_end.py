"""Jobs that never finalize (docs/runtime.md, "How a job ends"): MPI_Abort
leaves a readable log of the aborting rank only; a rank killed by a signal
leaves no log and never a corrupt one.  The launcher fails in both cases."""

from __future__ import annotations

import pytest

import scalewise
from support.mpijob import FLAVOURS

NRANKS, REPS, CODE = 3, 4, 7
TIMEOUT = 60


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_abort_leaves_only_the_aborting_rank(flavour, program, mpi_job):
    aborter = NRANKS - 1  # not rank 0, which writes the log of a normal end
    exe = program("abnormal_end.c", flavour)
    job = mpi_job(f"abort-{flavour}", flavour, NRANKS, [exe, "abort", aborter, CODE, REPS], timeout=TIMEOUT)
    assert job.returncode == CODE  # both launchers exit with the abort's error code
    profile = scalewise.load(job.logfile)
    assert profile.flags == frozenset({"partial", "aborted"})
    assert profile.meta["aborted_by_rank"] == aborter
    assert profile.meta["abort_errorcode"] == CODE
    assert profile.meta["nranks"] == NRANKS
    assert list(profile.ranks["rank"]) == [aborter]
    calls = dict(zip(profile.functions["function"], profile.functions["calls"]))
    assert calls == {"MPI_Init": 1, "MPI_Allreduce": REPS, "MPI_Abort": 1}
    allreduce = profile.functions.set_index("function").loc["MPI_Allreduce"]
    assert allreduce["bytes"] == 8 * REPS
    row = profile.ranks.iloc[0]
    assert 0 < row.mpi_time <= row.wall


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_killed_rank_leaves_no_log(flavour, program, mpi_job):
    exe = program("abnormal_end.c", flavour)
    job = mpi_job(f"kill-{flavour}", flavour, NRANKS, [exe, "kill", 1, REPS], timeout=TIMEOUT)
    # The launcher reports the signal: hydra exits with 9, mpirun with 128 + 9.
    assert job.returncode in (9, 128 + 9), job.stderr
    assert not job.logfile.exists()
    # At most a temporary file of an interrupted write, never a partial log.
    leftovers = [p.name for p in job.workdir.iterdir() if p.name.startswith(job.logfile.name)]
    assert all(".tmp." in name for name in leftovers), leftovers
