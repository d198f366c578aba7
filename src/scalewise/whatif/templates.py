"""The schedule of every distinct collective call of a trace, as the engine
walks it: for each signature (function, communicator, bytes, root,
commutativity; for the v-collectives also the call's place on its
communicator, whose members' sizes differ call by call) and each rank of
its communicator, the point-to-point ops of that rank's part of the
schedule the target library runs (collectives/).

A phase of one message is a blocking send or receive; a larger phase posts
its messages and then waits for all of them (a WAIT whose peer field is the
number of requests, the ones posted just before)."""

from __future__ import annotations

import gc
from collections import defaultdict

import numpy as np

from scalewise.whatif import engine as E
from scalewise.whatif.collectives import layout, schedule
from scalewise.whatif.collectives.algorithms import SEND
from scalewise.whatif.network import Network
from scalewise.whatif.percall import extra_seconds
from scalewise.whatif.trace import NONCOMMUTATIVE

VECTOR = ("MPI_Allgatherv", "MPI_Alltoallv", "MPI_Gatherv", "MPI_Scatterv")


def _flatten(sched) -> tuple[list[int], list[int], list[int], list[int]]:
    """Per comm rank, its ops back to back; the first list is each rank's end offset."""
    ends, op, peer, nbytes = [], [], [], []
    for phases in sched:
        for phase in phases:
            if len(phase) == 1:
                d, q, b = phase[0]
                op.append(E.SEND if d == SEND else E.RECV)
                peer.append(q)
                nbytes.append(b)
                continue
            for d, q, b in phase:
                op.append(E.ISEND if d == SEND else E.IRECV)
                peer.append(q)
                nbytes.append(b)
            op.append(E.WAIT)
            peer.append(len(phase))
            nbytes.append(0)
        ends.append(len(op))
    return ends, op, peer, nbytes


def _vector_sizes(vcalls: np.ndarray, members_of) -> dict[tuple[int, int, int], tuple[int, ...]]:
    """(comm, func, place) -> every member's bytes, for the v-collectives (the k-th collective on a
    communicator is the same call on every member; the first member's function names it)."""
    calls: dict[tuple[int, int], dict[int, tuple[int, int]]] = defaultdict(dict)
    for v in vcalls.tolist():
        rank, comm, k, func, nbytes = v
        calls[(comm, k)][rank] = (func, nbytes)
    out = {}
    for (comm, k), by_rank in calls.items():
        members = members_of(comm).tolist()
        if members[0] not in by_rank:
            continue
        func = by_rank[members[0]][0]
        out[(comm, func, k)] = tuple(by_rank[m][1] if m in by_rank else 0 for m in members)
    return out


def build(decoded: E.Decoded, functions: list[str], members_of, library: str,
          node_of: np.ndarray | None = None) -> E.Templates:
    """Templates for every signature of ``decoded``; ``members_of(comm)`` gives a communicator's world ranks,
    ``node_of`` each world rank's node (None: a node per rank), which the schedules of a library whose
    collectives are node-aware (Open MPI 5's han) follow."""
    collecting = gc.isenabled()
    gc.disable()  # a 16K-rank schedule is some 10^5 small tuples, none of them cyclic: the collector only slows it
    try:
        return _build(decoded, functions, members_of, library, node_of)
    finally:
        if collecting:
            gc.enable()


def _build(decoded: E.Decoded, functions: list[str], members_of, library: str, node_of) -> E.Templates:
    sizes_of = _vector_sizes(decoded.vcalls, members_of) if len(decoded.vcalls) else {}
    layouts: dict[int, tuple[int, ...] | None] = {}  # communicator -> its ranks' nodes, where they matter
    made: dict[tuple, int] = {}  # schedule key -> offset of its first start entry
    first, size = [], []
    starts, ops, peers, nbytes = [0], [], [], []
    for s in decoded.signatures.tolist():
        func, comm, b, root, flags, k = s
        name = functions[func]
        members = members_of(comm)
        P = len(members)
        if comm not in layouts:
            layouts[comm] = layout(library, None if node_of is None else node_of[members])
        sizes = sizes_of.get((comm, func, k), b) if k >= 0 else b
        key = (name, P, sizes, max(root, 0), not flags & NONCOMMUTATIVE, layouts[comm])
        if key not in made:
            _, sched = schedule(library, *key)
            ends, op, peer, nb = _flatten(sched)
            base = len(ops)
            made[key] = len(starts) - 1
            starts.extend(base + e for e in ends)  # its last entry is the next template's first
            ops.extend(op), peers.extend(peer), nbytes.extend(nb)
        first.append(made[key])
        size.append(P)
    return E.Templates(np.array(first, dtype=np.int64), np.array(size, dtype=np.int64),
                       np.array(starts, dtype=np.int64), np.array(ops, dtype=np.uint8),
                       np.array(peers, dtype=np.int32), np.array(nbytes, dtype=np.int64))


def costs(decoded: E.Decoded, functions: list[str], tpl: E.Templates, net: Network, library: str) -> np.ndarray:
    """Each signature's measured per-call seconds on ``net`` (scalewise.whatif.percall)."""
    extra = extra_seconds(net, library)
    if not extra:
        return np.zeros(len(tpl.first))
    return np.array([extra.get((functions[f], int(P)), 0.0)
                     for f, P in zip(decoded.signatures["func"].tolist(), tpl.size.tolist())], dtype=np.float64)
