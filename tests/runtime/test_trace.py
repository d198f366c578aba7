"""Trace mode (SCALEWISE_TRACE=1): a planted program's trace, read back by
the Python reader, holds exactly the planted sequence under both MPIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support import mpijob

import scalewise

from scalewise import whatif
from scalewise.logfile.tracefile import read_trace
from scalewise.whatif.trace import Kind

NRANKS = 4
S, R, IS, IR, W, C = Kind.SEND, Kind.RECV, Kind.ISEND, Kind.IRECV, Kind.WAIT, Kind.COLLECTIVE


def planted(rank: int) -> tuple[list[tuple], list[int]]:
    """(func, kind, peer, bytes, tag, comm, req, root, flags, nreq) of every event, and the waits' requests."""
    right, left, partner = (rank + 1) % NRANKS, (rank - 1) % NRANKS, rank ^ 1
    ring = [("MPI_Send", S, right, 40, 7, 0, -1, -1, 0, 0), ("MPI_Recv", R, left, 40, 7, 0, -1, -1, 0, 0)]
    events = (ring if rank % 2 == 0 else ring[::-1]) + [
        ("MPI_Barrier", C, -1, 0, 0, 0, -1, -1, 0, 0),
        ("MPI_Isend", IS, partner, 8000, 11, 0, 0, -1, 0, 0),
        ("MPI_Irecv", IR, partner, 8000, 11, 0, 1, -1, 0, 0),  # a wildcard source: the actual one
        ("MPI_Waitall", W, -1, 0, 0, 0, -1, -1, 0, 2),
        ("MPI_Sendrecv", IS, right, 16, 3, 0, 2, -1, 0, 0),
        ("MPI_Sendrecv", IR, left, 16, 3, 0, 3, -1, 0, 0),
        ("MPI_Sendrecv", W, -1, 0, 0, 0, -1, -1, 0, 2),
        ("MPI_Allreduce", C, -1, 40, 0, 0, -1, -1, 0, 0),
        ("MPI_Reduce", C, -1, 24, 0, 0, -1, 2, 1, 0),  # a non-commutative operation
        ("MPI_Bcast", C, -1, 12, 0, 0, -1, 1, 0, 0),
        ("MPI_Alltoall", C, -1, 8, 0, 0, -1, -1, 0, 0),  # the block for one peer
        ("MPI_Scatter", C, -1, 8, 0, 0, -1, 0, 0, 0),  # one rank's share
        ("MPI_Allreduce", C, -1, 8, 0, 1 + rank % 2, -1, -1, 0, 0),  # on the even or the odd half
    ]
    # The Irecv from MPI_PROC_NULL and its Wait leave no event; of the polling
    # Tests only the one that completed is an event.
    if rank % 2 == 0:
        events += [("MPI_Isend", IS, partner, 4, 5, 0, 4, -1, 0, 0), ("MPI_Test", W, -1, 0, 0, 0, -1, -1, 0, 1)]
    else:
        events += [("MPI_Irecv", IR, partner, 4, 5, 0, 4, -1, 0, 0), ("MPI_Wait", W, -1, 0, 0, 0, -1, -1, 0, 1)]
    events.append(("MPI_Barrier", C, -1, 0, 0, 0, -1, -1, 0, 0))
    events.append(("MPI_Finalize", Kind.OTHER, -1, 0, 0, 0, -1, -1, 0, 0))  # the compute before it
    return events, [1, 0, 2, 3, 4]  # Waitall got [irecv, isend]


def traced(mpi_job, program, flavour, key, env=None):
    exe = program("traced.c", flavour)
    env = {"SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": "{workdir}/job.swtrace", **(env or {})}
    job = mpi_job(f"trace-{key}-{flavour}", flavour, NRANKS, [str(exe)], extra_env=env)
    assert job.returncode == 0, job.stderr
    return read_trace(job.workdir / "job.swtrace")


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
@pytest.mark.parametrize("bound", [None, 3])
def test_trace_holds_the_planted_sequence(mpi_job, program, flavour, bound):
    """bound 3: the communicators' member lists reach rank 0 in 3-byte batches
    (SCALEWISE_GATHER_BATCH_BYTES), every int cut across two of them."""
    env = {"SCALEWISE_GATHER_BATCH_BYTES": str(bound)} if bound else None
    t = traced(mpi_job, program, flavour, f"planted-{bound}" if bound else "planted", env)  # "planted": shared below
    assert t.nranks == NRANKS and not t.capped
    assert {k: v.tolist() for k, v in t.comms.items()} == {1: [0, 2], 2: [1, 3]}
    fields = ("kind", "peer", "bytes", "tag", "comm", "req", "root", "flags", "nreq")
    for rank, ev in enumerate(t.ranks):
        want, waits = planted(rank)
        c = ev.columns
        got = [(t.functions[c["func"][i]], *(int(c[f][i]) for f in fields)) for i in range(len(ev))]
        assert got == [(f, int(k), *rest) for f, k, *rest in want], f"rank {rank}"
        assert ev.wait_reqs.tolist() == waits
        # the program sleeps 20 ms before its first MPI call after MPI_Init
        assert c["compute"][0] >= 0.02 and (c["compute"] >= 0).all()


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_recorded_trace_replays(mpi_job, program, flavour):
    t = traced(mpi_job, program, flavour, "planted")
    for p in whatif.replay(t, ["ideal", "gige"], library=flavour):
        assert p.wall_time >= 0.02 and np.isfinite(p.ranks["finish"]).all()


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_event_cap_stops_recording_and_flags_the_trace(mpi_job, program, flavour):
    t = traced(mpi_job, program, flavour, "capped", {"SCALEWISE_TRACE_MAX_EVENTS": "5"})
    assert t.capped
    for rank, ev in enumerate(t.ranks):
        want, _ = planted(rank)
        assert [t.functions[f] for f in ev.columns["func"]] == [w[0] for w in want[:5]]


def test_scalewise_run_trace_keeps_the_trace_beside_the_log(program, tmp_path):
    exe = program("traced.c", "openmpi")
    scalewise_cli = Path(sys.executable).parent / "scalewise"
    res = subprocess.run([str(scalewise_cli), "run", "--quiet", "--trace", "-o", str(tmp_path), "--",
                          *mpijob.launch_command("openmpi", NRANKS, [str(exe)])],
                         env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    [log], [trace] = sorted(tmp_path.glob("*.swlog")), sorted(tmp_path.glob("*.swtrace"))
    assert trace.stem == log.stem and f"trace: {trace}" in res.stdout
    t = read_trace(trace)
    assert [len(ev) for ev in t.ranks] == [len(planted(r)[0]) for r in range(NRANKS)]


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_whatif_puts_the_measured_log_beside_the_predictions(mpi_job, program, flavour):
    traced(mpi_job, program, flavour, "planted")
    job = mpi_job(f"trace-planted-{flavour}", flavour, NRANKS, [])  # the run above, as recorded
    res = subprocess.run([str(Path(sys.executable).parent / "scalewise"), "whatif", str(job.workdir / "job.swtrace"),
                          "--network", "ideal", "--mpi", flavour, "--json"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["measured"] == str(job.logfile)
    rows = {r["source"]: r for r in out["summary"]}
    measured = scalewise.load(job.logfile).ranks
    assert rows["measured"]["wall_time"] == pytest.approx(measured["wall"].max(), rel=1e-12)
    assert rows["measured"]["mpi"] == pytest.approx(measured["mpi_time"].sum(), rel=1e-12)
    # The trace covers MPI_Init's return to MPI_Finalize: each rank's recorded
    # compute is its window less the time in its traced calls (a subset of the
    # calls the log times), and the replay computes exactly that.  Compute plus
    # the replay's waits is not bounded by the window: the replay starts every
    # rank at 0, while the ranks left MPI_Init microseconds apart.
    compute = np.array([ev.columns["compute"].sum() for ev in read_trace(job.workdir / "job.swtrace").ranks])
    wall, mpi = measured["wall"].to_numpy(), measured["mpi_time"].to_numpy()
    assert np.all(compute <= wall * (1 + 1e-6)) and np.all(compute >= (wall - mpi) * (1 - 1e-6)), (compute, wall, mpi)
    assert rows["ideal"]["compute"] == pytest.approx(compute.sum(), rel=1e-9)
