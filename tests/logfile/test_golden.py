"""Golden logs: every released format version keeps one, and the reader must
keep reading it (docs/log-format.md, "Versioning").

golden-1.0-mpich-ring.swlog was written by the runtime (format 1.0, MPICH
4.0.2) for `mpiexec.mpich -n 3 ring 5 256 fan` (tests/runtime/programs/ring.c):
5 Sendrecv of 256 bytes to the right neighbour, then one 256-byte Isend/Irecv
to each other rank, completed by one Waitall, then a Barrier."""

from __future__ import annotations

from pathlib import Path

import scalewise
from scalewise.model import size_bin

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-1.0-mpich-ring.swlog"
P, ITERS, NBYTES = 3, 5, 256


def test_golden_1_0_reads_exactly():
    p = scalewise.load(GOLDEN)
    assert p.meta["format"] == "1.0" and p.nranks == P and not p.partial
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
