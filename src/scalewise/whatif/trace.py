"""Traces built from readable records (:class:`Call`, :func:`from_calls`), and what each MPI function
is to the replay (:func:`kind_of`, :func:`category`).  The trace itself is ``model/trace.py``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scalewise.model.trace import COLUMNS, NONCOMMUTATIVE, Kind, RankEvents, Trace


_KIND_OF = {
    **dict.fromkeys(("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"), Kind.SEND),
    **dict.fromkeys(("MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"), Kind.ISEND),
    "MPI_Recv": Kind.RECV,
    "MPI_Irecv": Kind.IRECV,
    **dict.fromkeys(("MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test",
                     "MPI_Testall", "MPI_Testany", "MPI_Testsome"), Kind.WAIT),
}


# The collectives the replay decomposes (docs/whatif.md has each one's algorithms).
COLLECTIVES = ("MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Alltoall", "MPI_Alltoallv",
               "MPI_Allgather", "MPI_Allgatherv", "MPI_Barrier", "MPI_Gather", "MPI_Gatherv",
               "MPI_Scatter", "MPI_Scatterv")


def kind_of(func: str) -> Kind:
    """The replay kind a plain call of ``func`` has (collectives by name)."""
    if func in _KIND_OF:
        return _KIND_OF[func]
    return Kind.COLLECTIVE if func in COLLECTIVES else Kind.OTHER


def category(func: str) -> str:
    """Coarse kind of an MPI function for time breakdowns: point-to-point,
    wait, collective or other."""
    kind = Kind.ISEND if func in ("MPI_Sendrecv", "MPI_Sendrecv_replace") else kind_of(func)
    if kind in (Kind.SEND, Kind.RECV, Kind.ISEND, Kind.IRECV):
        return "point-to-point"
    return {Kind.WAIT: "wait", Kind.COLLECTIVE: "collective"}.get(kind, "other")


@dataclass(frozen=True)
class Call:
    """One MPI call of one rank, as a person would write it down.

    ``peer`` is a world rank; ``root`` a rank in ``comm``; ``bytes`` the
    message size (for collectives: the size the library's rules look at, see
    docs/whatif.md); ``compute`` the seconds of computation before the call.
    """

    func: str
    peer: int = -1
    bytes: int = 0
    tag: int = 0
    comm: int = 0
    req: int = -1
    reqs: tuple[int, ...] = ()
    root: int = -1
    compute: float = 0.0
    commutative: bool = True
    kind: Kind | None = None


def sendrecv(dest: int, sendbytes: int, source: int, recvbytes: int, *, tag: int = 0, comm: int = 0,
             compute: float = 0.0, first_req: int) -> list[Call]:
    """MPI_Sendrecv as the trace records it: Isend, Irecv, Waitall under its own name."""
    name = "MPI_Sendrecv"
    return [Call(name, dest, sendbytes, tag, comm, req=first_req, compute=compute, kind=Kind.ISEND),
            Call(name, source, recvbytes, tag, comm, req=first_req + 1, kind=Kind.IRECV),
            Call(name, reqs=(first_req, first_req + 1), kind=Kind.WAIT)]


def from_calls(ranks: list[list[Call]], comms: dict[int, list[int]] | None = None) -> Trace:
    """A Trace from readable per-rank call lists (tests, examples, small studies)."""
    functions: list[str] = []
    index: dict[str, int] = {}
    built = []
    for calls in ranks:
        cols = {name: np.zeros(len(calls), dtype=dtype) for name, dtype in COLUMNS.items()}
        waits: list[int] = []
        for i, c in enumerate(calls):
            if c.func not in index:
                index[c.func] = len(functions)
                functions.append(c.func)
            row = dict(kind=c.kind if c.kind is not None else kind_of(c.func), func=index[c.func],
                       peer=c.peer, bytes=c.bytes, tag=c.tag, comm=c.comm, req=c.req, root=c.root,
                       flags=0 if c.commutative else NONCOMMUTATIVE, nreq=len(c.reqs), compute=c.compute)
            for name, value in row.items():
                cols[name][i] = value
            waits.extend(c.reqs)
        built.append(RankEvents(cols, np.asarray(waits, dtype=np.int64)))
    members = {k: np.asarray(v, dtype=np.int64) for k, v in (comms or {}).items()}
    return Trace(functions, built, members)
