"""Time bins and MPI_Pcontrol phases under both MPIs: the planted phases of
programs/phases.c show the times planted in them and exact call counts; the
bins of every rank add up to its MPI and compute totals, also when a run
outgrows its bins and merges them; Fortran marks numbered phases."""

from __future__ import annotations

import pytest

import scalewise
from support.mpijob import FLAVOURS

NRANKS = 2
NS = 2e-9  # bins are whole ns whose running sums are rounded once: 1 ns each way, and float sums


def run(program, mpi_job, flavour: str, source: str = "phases.c", **env) -> scalewise.Profile:
    exe = program(source, flavour)
    key = f"timeline-{flavour}-{exe.parent.name}-{'-'.join(f'{k}{v}' for k, v in env.items())}"
    job = mpi_job(key, flavour, NRANKS, [exe], extra_env=env)
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


def check_bins_add_up(p: scalewise.Profile) -> None:
    b = p.bins.groupby("rank")[["mpi_time", "compute_time"]].sum()
    for r in p.ranks.itertuples():
        assert b.loc[r.rank, "mpi_time"] == pytest.approx(r.mpi_time, abs=NS)
        # the bins' compute holds the profiler's own time (docs/runtime.md)
        assert b.loc[r.rank, "compute_time"] == pytest.approx(r.compute_time + r.profiler_time, abs=NS)
    # Bins are as wide on every rank, so bin k is the same span of time on all.
    assert p.bins["width"].max() == pytest.approx(p.bins["width"].min(), rel=1e-3)  # each rank converts its own ticks


@pytest.mark.alone  # asserts the planted program's times: beside the parallel tests its windows shift
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_planted_phases_show_their_times_and_calls(program, mpi_job, flavour):
    p = run(program, mpi_job, flavour)
    ph = p.phases.set_index(["rank", "phase"])
    fn = p.phase_functions.set_index(["rank", "phase", "function"])
    for r in range(NRANKS):
        assert list(p.phases[p.phases["rank"] == r]["phase"]) == ["(outside phases)", "compute", "wait", "phase 3"]
        compute = ph.loc[(r, "compute")]
        assert 0.190 <= compute["compute_time"] <= 0.260 and compute["mpi_time"] < 0.005
        wait = ph.loc[(r, "wait")]
        busy, idle = ("compute_time", "mpi_time") if r == 0 else ("mpi_time", "compute_time")
        assert 0.140 <= wait[busy] <= 0.220 and wait[idle] < 0.020, (r, wait)
        assert fn.loc[(r, "phase 3", "MPI_Allreduce"), "calls"] == 50
        assert fn.loc[(r, "phase 3", "MPI_Allreduce"), "bytes"] == 50 * 8
        assert fn.loc[(r, "wait", "MPI_Barrier"), "calls"] == 1
        assert fn.loc[(r, "(outside phases)", "MPI_Barrier"), "calls"] == 1
        # The Barrier under MPI_Pcontrol(0) is not counted anywhere; each
        # MPI_Pcontrol call belongs to the phase it ends.
        assert ("compute", "MPI_Barrier") not in {(k[1], k[2]) for k in fn.index if k[0] == r}
        assert fn.loc[(r, "compute", "MPI_Pcontrol"), "calls"] == 2 + 2
        mine = p.phases[p.phases["rank"] == r]
        rank = p.ranks.set_index("rank").loc[r]
        assert mine["wall"].sum() == pytest.approx(rank["wall"], abs=1e-6)
        assert mine["mpi_time"].sum() == pytest.approx(rank["mpi_time"], abs=1e-6)
    # Per function, the phases hold every call but MPI_Init's and MPI_Finalize's.
    calls = p.functions.set_index(["rank", "function"])["calls"]
    in_phases = p.phase_functions.groupby(["rank", "function"])["calls"].sum()
    assert in_phases.to_dict() == calls.drop(["MPI_Init", "MPI_Finalize"], level=1).to_dict()
    check_bins_add_up(p)
    assert (p.bins.groupby("rank").size() <= 64).all()


@pytest.mark.alone  # as above: under load a 20 ms bin of the sleep can hold a late start's wait
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_bins_place_the_planted_wait(program, mpi_job, flavour):
    """Rank 1 computes for 100 ms, then waits 150 ms in a Barrier: bins well
    inside the wait are MPI, bins well inside the sleep are compute."""
    p = run(program, mpi_job, flavour)
    b = p.bins[p.bins["rank"] == 1]
    share = b["mpi_time"] / (b["mpi_time"] + b["compute_time"])
    end = b["start"] + b["width"]
    assert (share[(b["start"] >= 0.115) & (end <= 0.235)] > 0.9).sum() >= 5
    assert (share[(b["start"] >= 0.010) & (end <= 0.090)] < 0.1).sum() >= 5


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_run_longer_than_its_bins_merges_them_and_still_adds_up(program, mpi_job, flavour):
    p = run(program, mpi_job, flavour, SCALEWISE_BINS="4")
    check_bins_add_up(p)
    wall = p.ranks["wall"].max()
    width = p.bins["width"].iloc[0]
    assert (p.bins.groupby("rank").size() <= 4).all()
    assert wall / 4 <= width < wall  # doubled until 4 bins hold the run, no further
    # Rank 1's 150 ms in the Barrier lie in its bins, wherever they were merged.
    assert p.bins[p.bins["rank"] == 1]["mpi_time"].max() >= 0.070


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_bins_can_be_switched_off(program, mpi_job, flavour):
    p = run(program, mpi_job, flavour, SCALEWISE_BINS="0")
    assert p.bins.empty and len(p.phases) == 4 * NRANKS


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_fortran_marks_numbered_phases(program, mpi_job, flavour):
    p = run(program, mpi_job, flavour, source="phases_f.F90")
    fn = p.phase_functions.set_index(["rank", "phase", "function"])["calls"]
    for r in range(NRANKS):
        assert fn.loc[(r, "phase 2", "MPI_Barrier")] == 3
        assert fn.loc[(r, "phase 5", "MPI_Allreduce")] == 4
        assert fn.loc[(r, "(outside phases)", "MPI_Barrier")] == 1
        assert ("phase 5", "MPI_Barrier") not in {(k[1], k[2]) for k in fn.index if k[0] == r}
    check_bins_add_up(p)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_phases_past_the_cap_are_summed_and_flagged(program, mpi_job, flavour):
    p = run(program, mpi_job, flavour, SCALEWISE_MAX_PHASES="2")
    assert "phases_capped" in p.flags
    fn = p.phase_functions.set_index(["rank", "phase", "function"])["calls"]
    for r in range(NRANKS):
        assert list(p.phases[p.phases["rank"] == r]["phase"]) == ["(outside phases)", "compute", "wait",
                                                                  "(other phases)"]
        assert fn.loc[(r, "(other phases)", "MPI_Allreduce")] == 50
