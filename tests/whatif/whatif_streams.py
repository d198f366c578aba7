"""The pure-Python reference of the engine's input: a Trace turned into
every rank's event stream with each collective expanded into its rank's part
of the schedule the target library would run, waits pointed at their
requests' event indices.  whatif_reference.py replays these streams; the
tests hold the compiled engine (which reads the trace file and walks the
schedules itself) to the same answers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from scalewise.errors import ScalewiseError
from scalewise.whatif.collectives import layout, schedule
from scalewise.whatif.collectives.algorithms import SEND
from scalewise.whatif.trace import NONCOMMUTATIVE, Kind, RankEvents, Trace

# One record per event (the engine's former array input).
EVENT = np.dtype([("bytes", np.int64), ("compute", np.float64), ("aux", np.int64), ("peer", np.int32),
                  ("tag", np.int32), ("comm", np.int32), ("func", np.int32), ("op", np.uint8), ("cost", np.float32)],
                 align=True)
CALL = np.dtype([("row", np.int64), ("func", np.int32), ("bytes", np.int64), ("ranks", np.int32)])
OP_NONE, OP_ISEND, OP_IRECV, OP_WAITALL, OP_SEND, OP_RECV = range(6)


@dataclass
class Streams:
    """Every rank's events back to back (rank_start has nranks+1 offsets), the waits' request lists,
    the function-name table and one CALL row per collective call."""

    rank_start: np.ndarray
    events: np.ndarray
    reqs: np.ndarray
    functions: list[str]
    collective_calls: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=CALL))

    @property
    def nranks(self) -> int:
        return len(self.rank_start) - 1

    @property
    def nevents(self) -> int:
        return int(self.rank_start[-1])


E = SimpleNamespace(EVENT=EVENT, CALL=CALL, Streams=Streams, OP_NONE=OP_NONE, OP_ISEND=OP_ISEND, OP_IRECV=OP_IRECV,
                    OP_WAITALL=OP_WAITALL, OP_SEND=OP_SEND, OP_RECV=OP_RECV)

# Collective traffic is matched apart from user messages, as the libraries do
# with their own communicator contexts; one tag per collective keeps instances
# in order (messages between two ranks are not overtaken).
COLLECTIVE_CONTEXT = 1 << 30
_OP_OF_KIND = np.array([E.OP_NONE, E.OP_ISEND, E.OP_IRECV, E.OP_WAITALL, E.OP_SEND, E.OP_RECV, E.OP_NONE],
                       dtype=np.uint8)
_VECTOR = ("MPI_Allgatherv", "MPI_Alltoallv", "MPI_Gatherv", "MPI_Scatterv")


class _Block:
    """One rank's share of one collective schedule, as engine rows (peers are
    communicator ranks; WAITALL rows hold their count in ``peer`` and the
    first index into ``reqs`` in ``aux``; ``reqs`` are block-relative rows)."""

    def __init__(self, phases):
        op, peer, nbytes, aux, reqs = [], [], [], [], []
        for phase in phases:
            if len(phase) == 1:
                d, q, b = phase[0]
                op.append(E.OP_SEND if d == SEND else E.OP_RECV)
                peer.append(q), nbytes.append(b), aux.append(0)
                continue
            first = len(op)
            for d, q, b in phase:
                op.append(E.OP_ISEND if d == SEND else E.OP_IRECV)
                peer.append(q), nbytes.append(b), aux.append(0)
            op.append(E.OP_WAITALL), peer.append(len(phase)), nbytes.append(0), aux.append(len(reqs))
            reqs.extend(range(first, first + len(phase)))
        self.op = np.array(op, dtype=np.uint8)
        self.peer = np.array(peer, dtype=np.int64)
        self.bytes = np.array(nbytes, dtype=np.int64)
        self.aux = np.array(aux, dtype=np.int64)
        self.reqs = np.array(reqs, dtype=np.int64)
        self.is_wait = self.op == E.OP_WAITALL

    def __len__(self) -> int:
        return len(self.op)


class StreamBuilder:
    """Builds Streams for one target library, caching schedules and blocks."""

    def __init__(self, trace: Trace, library: str, node_of=None):
        self.trace, self.library, self.node_of = trace, library, node_of
        self.blocks: dict[tuple, _Block] = {}
        self.vector_sizes = self._vector_sizes()
        self.calls: list[np.ndarray] = []  # collective calls, engine.CALL rows

    def _vector_sizes(self) -> dict[tuple[int, int, int], tuple[int, ...]]:
        """(comm, func, instance) -> every member's bytes, for v-collectives,
        whose algorithms need all contributions (k-th call on a communicator
        is the same collective on every member)."""
        names = self.trace.functions
        wanted = {i for i, f in enumerate(names) if f in _VECTOR}
        seen: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)  # (comm, rank) -> (func, bytes)
        if not wanted:
            return {}
        for rank, ev in enumerate(self.trace.ranks):
            cols = ev.columns
            rows = np.flatnonzero(cols["kind"] == Kind.COLLECTIVE)
            for i in rows:
                seen[(int(cols["comm"][i]), rank)].append((int(cols["func"][i]), int(cols["bytes"][i])))
        out = {}
        for comm in {c for c, _ in seen}:
            members = self.trace.members(comm)
            calls = [seen[(comm, int(m))] for m in members]
            for k, first in enumerate(calls[0]):
                if first[0] in wanted:
                    out[(comm, first[0], k)] = tuple(c[k][1] if k < len(c) else 0 for c in calls)
        return out

    def _block(self, func: int, comm: int, nbytes: int, root: int, commutative: bool, me: int,
               instance: int) -> _Block:
        name = self.trace.functions[func]
        members = self.trace.members(comm)
        sizes = self.vector_sizes.get((comm, func, instance), nbytes) if name in _VECTOR else nbytes
        nodes = layout(self.library, None if self.node_of is None else self.node_of[members].tolist())
        key = (func, len(members), sizes, root, commutative, me, nodes)
        block = self.blocks.get(key)
        if block is None:
            _, sched = schedule(self.library, name, len(members), sizes, max(root, 0), commutative, nodes)
            block = self.blocks[key] = _Block(sched[me])
        return block

    def rank_rows(self, rank: int, ev: RankEvents, base: int, reqs_base: int):
        """This rank's engine rows (EVENT records), its reqs list, given where its
        first row and first reqs entry will sit in the whole stream."""
        c = ev.columns
        kind = c["kind"].astype(np.int64)
        if kind.size and (kind.max() > Kind.COLLECTIVE):
            raise ScalewiseError(f"trace: rank {rank}: unknown event kind {int(kind.max())}")
        coll_rows = np.flatnonzero(kind == Kind.COLLECTIVE)
        blocks, my_rank_in = [], {}
        instance: dict[int, int] = defaultdict(int)
        for i in coll_rows:
            comm = int(c["comm"][i])
            if comm not in my_rank_in:
                where = np.flatnonzero(self.trace.members(comm) == rank)
                if not where.size:
                    raise ScalewiseError(f"trace: rank {rank} calls a collective on communicator {comm}, "
                                         "which does not contain it")
                my_rank_in[comm] = int(where[0])
            blocks.append(self._block(int(c["func"][i]), comm, int(c["bytes"][i]), int(c["root"][i]),
                                      not (c["flags"][i] & NONCOMMUTATIVE), my_rank_in[comm], instance[comm]))
            instance[comm] += 1
        width = np.ones(len(kind), dtype=np.int64)
        width[coll_rows] = [len(b) for b in blocks]
        start = np.concatenate(([0], np.cumsum(width)))
        nrows = int(start[-1])
        out = np.zeros(nrows, dtype=E.EVENT)
        simple = np.flatnonzero(kind != Kind.COLLECTIVE)
        at = start[simple]
        out["op"][at] = _OP_OF_KIND[kind[simple]]
        for name in ("peer", "tag", "comm", "bytes"):
            out[name][at] = c[name][simple]
        out["func"][start[:-1]] = c["func"]
        out["compute"][start[:-1]] = c["compute"]
        calls = np.zeros(len(coll_rows), dtype=E.CALL)
        calls["row"] = base + start[coll_rows]
        calls["func"] = c["func"][coll_rows]
        calls["bytes"] = c["bytes"][coll_rows]
        comms, which = np.unique(c["comm"][coll_rows], return_inverse=True)
        calls["ranks"] = np.array([len(self.trace.members(int(m))) for m in comms], dtype=np.int32)[which]
        self.calls.append(calls)
        reqs = self._wait_requests(rank, ev, kind, start, base, reqs_base, out)
        extra = [reqs]
        offset = reqs_base + len(reqs)
        for i, block in zip(coll_rows, blocks):
            lo, hi = start[i], start[i + 1]
            members = self.trace.members(int(c["comm"][i]))
            out["op"][lo:hi] = block.op
            out["peer"][lo:hi] = np.where(block.is_wait, block.peer, members[np.where(block.is_wait, 0, block.peer)])
            out["bytes"][lo:hi] = block.bytes
            out["tag"][lo:hi] = -1 - int(c["func"][i])
            out["comm"][lo:hi] = int(c["comm"][i]) | COLLECTIVE_CONTEXT
            out["func"][lo:hi] = c["func"][i]
            out["aux"][lo:hi] = np.where(block.is_wait, block.aux + offset, 0)
            extra.append(block.reqs + base + lo)
            offset += len(block.reqs)
        return out, np.concatenate(extra) if extra else np.zeros(0, dtype=np.int64)

    def _wait_requests(self, rank, ev, kind, start, base, reqs_base, out) -> np.ndarray:
        """Point each wait at the rows that created its requests."""
        c = ev.columns
        creates = np.flatnonzero((kind == Kind.ISEND) | (kind == Kind.IRECV))
        ids = c["req"][creates]
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        if len(sorted_ids) > 1 and (np.diff(sorted_ids) == 0).any():
            dup = int(sorted_ids[np.flatnonzero(np.diff(sorted_ids) == 0)[0]])
            raise ScalewiseError(f"trace: rank {rank}: request id {dup} is created twice")
        wanted = ev.wait_reqs
        pos = np.searchsorted(sorted_ids, wanted)
        found = (pos < len(sorted_ids)) & (sorted_ids[np.minimum(pos, len(sorted_ids) - 1)] == wanted) \
            if len(sorted_ids) else np.zeros(len(wanted), dtype=bool)
        if not found.all():
            raise ScalewiseError(f"trace: rank {rank}: a wait completes request {int(wanted[~found][0])}, "
                                 "which no Isend/Irecv created")
        waits = np.flatnonzero(kind == Kind.WAIT)
        nreq = c["nreq"][waits].astype(np.int64)
        if nreq.sum() != len(wanted):
            raise ScalewiseError(f"trace: rank {rank}: waits list {int(nreq.sum())} requests, "
                                 f"the request column has {len(wanted)}")
        w = start[waits]
        out["peer"][w] = nreq
        out["aux"][w] = reqs_base + np.concatenate(([0], np.cumsum(nreq)[:-1])) if len(nreq) else nreq
        return base + start[creates[order[pos]]] if len(wanted) else np.zeros(0, dtype=np.int64)

    def build(self) -> E.Streams:
        cols, reqs, starts = [], [], [0]
        nreqs = 0
        for rank, ev in enumerate(self.trace.ranks):
            out, rq = self.rank_rows(rank, ev, starts[-1], nreqs)
            cols.append(out)
            reqs.append(rq)
            nreqs += len(rq)
            starts.append(starts[-1] + len(out["op"]))
        events = np.concatenate(cols) if cols else np.zeros(0, dtype=E.EVENT)
        return E.Streams(np.array(starts, dtype=np.int64), events,
                         np.concatenate(reqs) if reqs else np.zeros(0, dtype=np.int64), self.trace.functions,
                         np.concatenate(self.calls) if self.calls else np.zeros(0, dtype=E.CALL))


def build_streams(trace: Trace, library: str = "openmpi", node_of=None) -> E.Streams:
    """The engine input for ``trace`` with collectives as ``library`` runs them (with its ranks on the
    nodes ``node_of`` gives, for a library whose collectives look at them)."""
    return StreamBuilder(trace, library, node_of).build()
