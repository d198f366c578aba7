"""Golden logs: every released format version keeps one, and the reader must
keep reading it (docs/log-format.md, "Versioning").

golden-1.0-mpich-ring.swlog and golden-1.1-mpich-ring.swlog were written by
the runtime (formats 1.0 and 1.1, MPICH 4.0.2) for `mpiexec.mpich -n 3 ring 5
256 fan` (tests/runtime/programs/ring.c): 5 Sendrecv of 256 bytes to the right
neighbour, then one 256-byte Isend/Irecv to each other rank, completed by one
Waitall, then a Barrier.  1.1 adds the rank lifecycle and call-site sections.
1.2 has golden logs of its own, of the planted phases and of MPI_T (below)."""

from __future__ import annotations

from pathlib import Path

import pytest

import scalewise
from scalewise.logfile.writer import write_profile
from scalewise.model import size_bin

DATA = Path(__file__).resolve().parents[1] / "data"
LIFECYCLE = ["rss_init_start", "rss_init_end", "rss_finalize", "finalize_time"]
P, ITERS, NBYTES = 3, 5, 256


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_golden_reads_exactly(version):
    p = scalewise.load(DATA / f"golden-{version}-mpich-ring.swlog")
    assert p.meta["format"] == version and p.nranks == P and not p.partial
    if version == "1.0":  # no rank lifecycle section: the columns are absent, not invented
        assert not set(LIFECYCLE) & set(p.ranks.columns)
    else:
        assert (p.ranks["rss_init_end"] > p.ranks["rss_init_start"]).all() and (p.ranks["rss_init_start"] > 0).all()
        f = p.functions.set_index(["rank", "function"])["time"]
        for r in p.ranks.itertuples():
            assert f.loc[(r.rank, "MPI_Finalize")] == pytest.approx(r.finalize_time, abs=1e-9)
        # Call sites: ring.c has no debug information and the machine reading
        # this is not the one that wrote it, so sites are named object+offset;
        # each site's calls and bytes add up to its function's, except that a
        # receive's bytes, known at its completion, are at the Wait's site.
        s = p.sites.groupby(["rank", "function"])[["calls", "bytes"]].sum()
        fb = p.functions.set_index(["rank", "function"])
        for (rank, name), row in s.iterrows():
            nbytes = 0 if name == "MPI_Irecv" else fb.loc[(rank, name), "bytes"]
            assert (row["calls"], row["bytes"]) == (fb.loc[(rank, name), "calls"], nbytes)
        assert s.loc[(0, "MPI_Sendrecv"), "calls"] == ITERS
    assert p.meta["command"][1:] == [str(ITERS), str(NBYTES), "fan"]
    f = p.functions.set_index(["rank", "function"])
    h = p.hist.set_index(["rank", "function", "bin"])["count"]
    for r in range(P):
        assert f.loc[(r, "MPI_Sendrecv"), "calls"] == ITERS
        assert f.loc[(r, "MPI_Sendrecv"), "bytes"] == 2 * ITERS * NBYTES
        assert f.loc[(r, "MPI_Isend"), "bytes"] == f.loc[(r, "MPI_Irecv"), "bytes"] == (P - 1) * NBYTES
        assert f.loc[(r, "MPI_Waitall"), "calls"] == 1
        assert f.loc[(r, "MPI_Waitall"), "bytes"] == 2 * (P - 1) * NBYTES
        assert h.loc[(r, "MPI_Waitall", size_bin(NBYTES))] == 2 * (P - 1)
        assert h.loc[(r, "MPI_Barrier", 0)] == 1
    m = p.p2p.set_index(["src", "dst"])
    for r in range(P):
        right = (r + 1) % P
        assert m.loc[(r, right), "messages"] == ITERS + 1
        assert m.loc[(r, right), "bytes"] == (ITERS + 1) * NBYTES
    assert len(m) == P * (P - 1) and m["messages"].sum() == P * ITERS + P * (P - 1)
    assert ((p.ranks["mpi_time"] + p.ranks["compute_time"] - p.ranks["wall"]).abs() < 1e-6).all()


def test_golden_1_2_mpit_reads_exactly():
    """golden-1.2-mpit-openmpi-unexpected.swlog: format 1.2 (Open MPI 4.1.4),
    `OMPI_MCA_btl_vader_eager_limit=8192 mpirun.openmpi --mca btl self,vader
    -np 2 unexpected` (tests/runtime/programs/unexpected.c): rank 0 sends 10
    ints rank 1 never receives, so at MPI_Finalize they wait in rank 1's
    unexpected queue for peer 0."""
    p = scalewise.load(DATA / "golden-1.2-mpit-openmpi-unexpected.swlog")
    assert p.meta["format"] == "1.2" and p.nranks == 2 and not p.partial
    assert p.mpit.status == "read" and not p.mpit.pvars_capped and not p.mpit.cvars_capped
    v = p.pvars.set_index(["rank", "variable"])
    assert v.loc[(1, "pml_ob1_unexpected_msgq_length"), "values"] == (10, 0)
    assert v.loc[(0, "pml_ob1_unexpected_msgq_length"), "values"] == (0, 0)
    assert set(v.index.get_level_values("variable")) == {"mpool_hugepage_bytes_allocated",
                                                         "pml_ob1_unexpected_msgq_length", "pml_ob1_posted_recvq_length"}
    assert p.mpit.cvars["btl_vader_eager_limit"] == "8192" and p.mpit.cvars["btl"] == "self,vader"
    assert p.mpit.cvars["mpi_leave_pinned"] == "auto"  # an enumerated value, by its name
    f = p.functions.set_index(["rank", "function"])
    assert f.loc[(0, "MPI_Send"), "calls"] == 10 and f.loc[(0, "MPI_Send"), "bytes"] == 40
    assert p.p2p[["src", "dst", "messages", "bytes"]].values.tolist() == [[0, 1, 10, 40]]


def test_golden_1_2_reads_bins_and_phases():
    """golden-1.2-mpich-phases.swlog: `mpiexec.mpich -n 2 phases` (MPICH 4.0,
    tests/runtime/programs/phases.c): 1.2 adds the timeline section, time bins
    and the planted MPI_Pcontrol phases."""
    p = scalewise.load(DATA / "golden-1.2-mpich-phases.swlog")
    assert p.meta["format"] == "1.2" and p.nranks == 2 and not p.partial and not p.sites.empty
    assert list(p.phases[p.phases["rank"] == 1]["phase"]) == ["(outside phases)", "compute", "wait", "phase 3"]
    fn = p.phase_functions.set_index(["rank", "phase", "function"])
    assert fn.loc[(1, "phase 3", "MPI_Allreduce"), "calls"] == 50
    assert fn.loc[(0, "compute", "MPI_Pcontrol"), "calls"] == 4
    ph = p.phases.set_index(["rank", "phase"])
    assert 0.140 <= ph.loc[(1, "wait"), "mpi_time"] <= 0.220
    b = p.bins.groupby("rank")[["mpi_time", "compute_time"]].sum()
    for r in p.ranks.itertuples():
        assert b.loc[r.rank, "mpi_time"] == pytest.approx(r.mpi_time, abs=2e-9)
        assert b.loc[r.rank, "compute_time"] == pytest.approx(r.compute_time, abs=2e-9)


def test_the_python_writer_keeps_bins_and_phases(tmp_path):
    """The writer (synthetic logs, benchmarks) writes the timeline section back: the same frames read back."""
    p = scalewise.load(DATA / "golden-1.2-mpich-phases.swlog")
    q = scalewise.load(write_profile(p, tmp_path / "copy.swlog"))
    for frame in ("bins", "phases", "phase_functions"):
        assert getattr(q, frame).equals(getattr(p, frame)), frame


def test_golden_1_3_reads_the_rank_setup():
    """golden-1.3-mpich-busy.swlog: `mpiexec.mpich -n 2 busy` (MPICH 4.0.2,
    tests/runtime/programs/busy.c, each rank burning 3 x 100 ms of CPU) on a
    2-core machine that other jobs kept busy: 1.3 adds the rank setup section."""
    p = scalewise.load(DATA / "golden-1.3-mpich-busy.swlog")
    assert p.meta["format"] == "1.3" and p.nranks == 2 and not p.partial
    r = p.ranks.set_index("rank")
    assert list(r.loc[0, ["cpus_online", "cpus_allowed", "node_cpus", "ranks_on_node", "omp_threads"]]) == [2, 2, 2, 2, 0]
    assert list(r.loc[0, ["setup_window", "cpu_user", "cpu_sys"]]) == [0.677455301, 0.073054, 0.237113]
    assert list(r.loc[1, ["setup_window", "cpu_user", "cpu_sys"]]) == [0.677424991, 0.112814, 0.204069]
    assert list(r.loc[0, ["nivcsw", "nvcsw", "load1_start", "load1_end"]]) == [120, 0, 5.992, 6.073]
    assert list(r.loc[1, ["node_busy", "node_total", "node_steal"]]) == [1.35, 1.35, 0.0]
    assert ((r["cpu_user"] + r["cpu_sys"]) >= 0.3).all()  # the CPU time busy.c burnt


def test_golden_1_4_reads_the_profiler_section():
    """golden-1.4-mpich-owntime.swlog: `mpiexec.mpich -n 2 owntime 20000 100`
    (MPICH 4.0.2, tests/runtime/programs/owntime.c, SCALEWISE_HOT_LOCAL=1):
    20,000 recorded MPI_Comm_rank and 100 rounds of Isend/Irecv/Waitall per
    rank; 1.4 adds the profiler section, the profiler's own time per rank."""
    p = scalewise.load(DATA / "golden-1.4-mpich-owntime.swlog")
    assert p.meta["format"] == "1.4" and p.nranks == 2 and not p.partial
    r = p.ranks.set_index("rank")
    assert list(r["profiler_time"]) == [0.000926037, 0.00079142]
    assert list(r["profiler_init"]) == [0.120205291, 0.167287559]
    assert list(r["profiler_finalize"]) == [0.001620243, 0.001612892]
    # the time inside the window left compute: wall = MPI + profiler + compute, to the ns
    assert ((r["mpi_time"] + r["profiler_time"] + r["compute_time"] - r["wall"]).abs() < 1e-9).all()
    f = p.functions.set_index(["rank", "function"])["calls"]
    assert f.loc[(0, "MPI_Comm_rank")] == f.loc[(1, "MPI_Comm_rank")] == 20000
    assert f.loc[(1, "MPI_Waitall")] == 100
