"""What the profiler must record for the ground-truth programs, derived from
their structure and their command-line parameters with the byte rules of
docs/runtime.md, and the comparison of a Profile against it."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

NBINS = 48
INT, DOUBLE = 4, 8  # sizes of MPI_INT and MPI_DOUBLE on x86-64


def size_bin(nbytes: int) -> int:
    """docs/runtime.md: bin 0 holds 0 bytes, bin k holds [2^(k-1), 2^k); the last bin the rest."""
    return min(nbytes.bit_length(), NBINS - 1)


@dataclass
class Fn:
    calls: int = 0
    bytes: int = 0
    hist: Counter = field(default_factory=Counter)


class Expected:
    """Per rank: function -> calls, bytes, histogram; and the p2p matrix."""

    def __init__(self, nranks: int):
        self.nranks = nranks
        self.fns: dict[int, dict[str, Fn]] = {r: defaultdict(Fn) for r in range(nranks)}
        self.p2p: Counter = Counter()  # (src, dst) -> messages
        self.p2p_bytes: Counter = Counter()

    def call(self, rank: int, fn: str, *messages: int, calls: int = 1) -> None:
        """`calls` calls of fn that together move `messages` (one histogram entry each)."""
        f = self.fns[rank][fn]
        f.calls += calls
        for m in messages:
            f.bytes += m
            f.hist[size_bin(m)] += 1

    def send(self, rank: int, fn: str, dst: int, nbytes: int) -> None:
        """One point-to-point send call: a histogram entry and a matrix entry."""
        self.call(rank, fn, nbytes)
        self.message(rank, dst, nbytes)

    def message(self, src: int, dst: int, nbytes: int) -> None:
        self.p2p[(src, dst)] += 1
        self.p2p_bytes[(src, dst)] += nbytes


def moved(nranks: int):
    """The bytes a collective on a communicator of nranks credits: none on one rank."""
    return lambda nbytes: 0 if nranks == 1 else nbytes


# -- reading a Profile into the same shape ----------------------------------

def recorded_functions(profile) -> dict[int, dict[str, Fn]]:
    out: dict[int, dict[str, Fn]] = defaultdict(dict)
    for row in profile.functions.itertuples():
        out[row.rank][row.function] = Fn(int(row.calls), int(row.bytes), Counter())
    for row in profile.hist.itertuples():
        out[row.rank][row.function].hist[int(row.bin)] += int(row.count)
    return out


def recorded_p2p(profile) -> tuple[Counter, Counter]:
    msgs, nbytes = Counter(), Counter()
    for row in profile.p2p.itertuples():
        msgs[(int(row.src), int(row.dst))] += int(row.messages)
        nbytes[(int(row.src), int(row.dst))] += int(row.bytes)
    return msgs, nbytes


def function_differences(profile, expected: Expected, what: str, only=None) -> list[str]:
    """Every (rank, function) whose calls/bytes/histogram differ, as readable lines.
    `what` is "calls", "bytes" or "hist"; functions missing or extra count too.
    `only`: the functions compared (default every one)."""
    got = recorded_functions(profile)
    diffs = []
    for rank in range(expected.nranks):
        want = {fn: f for fn, f in expected.fns[rank].items() if f.calls or f.bytes}
        have = got.get(rank, {})
        for fn in sorted(set(want) | set(have)):
            if only is not None and fn not in only:
                continue
            w, h = want.get(fn), have.get(fn)
            if w is None or h is None:
                diffs.append(f"rank {rank} {fn}: expected {'absent' if w is None else w}, recorded {'absent' if h is None else h}")
                continue
            a, b = (dict(w.hist), dict(h.hist)) if what == "hist" else (getattr(w, what), getattr(h, what))
            if a != b:
                diffs.append(f"rank {rank} {fn} {what}: expected {a}, recorded {b}")
    return diffs


# -- tests/runtime/programs/groundtruth.c ------------------------------------

def groundtruth_c(nranks: int, reps: int, count: int, sizes: list[int],
                  counted: dict[tuple[str, int], int]) -> Expected:
    """Mirror of groundtruth.c, phase by phase (see the comments there)."""
    P, e = nranks, Expected(nranks)
    maxs = max(sizes)
    for r in range(P):
        right = (r + 1) % P
        e.call(r, "MPI_Init")
        e.call(r, "MPI_Finalize")

        # pairs: Send/Recv then Ssend back; then Send + Probe/Recv
        partner = r ^ 1
        if partner < P:
            for s in sizes:
                if r % 2 == 0:
                    e.send(r, "MPI_Send", partner, s)
                    e.call(r, "MPI_Recv", s)
                else:
                    e.call(r, "MPI_Recv", s)
                    e.send(r, "MPI_Ssend", partner, s)
            for s in sizes:
                if r % 2 == 0:
                    e.send(r, "MPI_Send", partner, s)
                else:
                    e.call(r, "MPI_Probe")  # a probe moves nothing
                    e.call(r, "MPI_Recv", s)

        # ring_sendrecv: two entries per call, the send and the receive
        for s in sizes:
            e.call(r, "MPI_Sendrecv", s, s)
            e.message(r, right, s)
        e.call(r, "MPI_Sendrecv_replace", count * INT, count * INT)
        e.message(r, right, count * INT)

        # ring_nonblocking: the completing call gets one entry per operation
        for i, s in enumerate(sizes):
            e.call(r, "MPI_Irecv", s)
            e.send(r, "MPI_Isend", right, s)
            kind = i % 4
            if kind == 0:
                e.call(r, "MPI_Waitall", s, s)
            elif kind == 1:
                e.call(r, "MPI_Wait", s, s, calls=2)
            elif kind == 2:
                e.call(r, "MPI_Waitany", s, s, calls=2)
            else:
                e.call(r, "MPI_Waitsome", s, s, calls=0)
        e.call(r, "MPI_Waitsome", calls=counted.get(("MPI_Waitsome", r), 0))

        # ring_burst: all sizes in flight, one Waitall for everything
        for s in sizes:
            e.call(r, "MPI_Irecv", s)
            e.send(r, "MPI_Isend", right, s)
        e.call(r, "MPI_Waitall", *sizes, *sizes)

        # ring_test_loops: variant v exchanges sizes[v % len(sizes)]
        for v, fn in enumerate(("MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome")):
            s = sizes[v % len(sizes)]
            e.call(r, "MPI_Irecv", s)
            e.send(r, "MPI_Isend", right, s)
            e.call(r, fn, s, s, calls=counted[(fn, r)])

        # ring_persistent: sends credited to the start, receives to the start
        # when they complete; the completing Wait/Waitall gets both as well
        sp = sizes[len(sizes) // 2]
        e.call(r, "MPI_Send_init")
        e.call(r, "MPI_Recv_init")
        for _ in range(reps):
            e.call(r, "MPI_Startall", sp, sp)
            e.message(r, right, sp)
            e.call(r, "MPI_Waitall", sp, sp)
        for _ in range(reps):
            e.call(r, "MPI_Start", sp, sp, calls=2)
            e.message(r, right, sp)
            e.call(r, "MPI_Wait", sp, sp, calls=2)
        e.call(r, "MPI_Request_free", calls=2)

        # collectives (on one rank they move nothing)
        block = count * DOUBLE
        w = moved(P)
        e.call(r, "MPI_Bcast", w(block))
        e.call(r, "MPI_Reduce", w(block))
        for _ in range(reps):
            e.call(r, "MPI_Allreduce", w(block), w(block), calls=2)
        # in place at the root: its own block stays, it sends nothing
        e.call(r, "MPI_Gather", w(count * INT), 0 if r == 0 else w(count * INT), calls=2)
        e.call(r, "MPI_Gatherv", w((r + 1) * INT))
        e.call(r, "MPI_Scatter", w(count * INT * (P if r == 0 else 1)))
        e.call(r, "MPI_Scatterv", w(INT * (sum(range(1, P + 1)) if r == 0 else r + 1)))
        e.call(r, "MPI_Allgather", w(count * INT), w(count * INT), calls=2)
        e.call(r, "MPI_Allgatherv", w((r + 1) * INT), w((r + 1) * INT), calls=2)
        e.call(r, "MPI_Alltoall", w(count * INT * P))
        e.call(r, "MPI_Alltoallv", w(INT * sum(range(1, P + 1))))
        e.call(r, "MPI_Reduce_scatter_block", w(block * P))
        e.call(r, "MPI_Reduce_scatter", w(DOUBLE * sum(range(1, P + 1))))
        e.call(r, "MPI_Scan", w(block))
        e.call(r, "MPI_Barrier", 0)
        e.call(r, "MPI_Iallreduce", w(block))
        e.call(r, "MPI_Wait", w(block))
        e.call(r, "MPI_Cart_create")
        e.call(r, "MPI_Neighbor_alltoall", w(count * INT * 2))  # 1-D Cartesian: 2 neighbours
        e.call(r, "MPI_Neighbor_allgather", w(count * INT * 2))
        e.call(r, "MPI_Comm_free")

        # one_sided
        e.call(r, "MPI_Win_create")
        e.call(r, "MPI_Win_fence", calls=3)
        e.call(r, "MPI_Put", block)
        e.call(r, "MPI_Get", block)
        e.call(r, "MPI_Win_free")

        # file_io: the read asks for 2 x COUNT doubles at the last block, gets COUNT
        e.call(r, "MPI_File_open")
        e.call(r, "MPI_File_write_at", block)
        e.call(r, "MPI_File_sync", calls=2)
        e.call(r, "MPI_Barrier", 0)
        e.call(r, "MPI_File_read_at", block)
        e.call(r, "MPI_File_close")

        # split_ring: parity sub-communicator, peers reported as world ranks
        members = list(range(r % 2, P, 2))
        q = members.index(r)
        e.call(r, "MPI_Comm_split")
        e.call(r, "MPI_Irecv", maxs)
        e.send(r, "MPI_Isend", members[(q + 1) % len(members)], maxs)
        e.call(r, "MPI_Waitall", maxs, maxs)
        e.call(r, "MPI_Allreduce", moved(len(members))(DOUBLE))
        e.call(r, "MPI_Comm_free")

        # proc_null: 0-byte messages, nothing in the matrix
        e.call(r, "MPI_Send", 0)
        e.call(r, "MPI_Recv", 0)
        e.call(r, "MPI_Irecv", 0, 0, calls=2)
        e.call(r, "MPI_Isend", 0, 0, calls=2)
        e.call(r, "MPI_Waitall", 0, 0, 0, 0)
        e.call(r, "MPI_Sendrecv", 0, 0)
    return e


# -- tests/runtime/programs/groundtruth_f.F90 and groundtruth_f08.f90 ---------

def groundtruth_fortran(nranks: int, reps: int, count: int, sizes: list[int]) -> Expected:
    """Mirror of the Fortran programs (MPI_CHARACTER is 1 byte, MPI_DOUBLE_PRECISION 8)."""
    P, e = nranks, Expected(nranks)
    maxs = max(sizes)
    for r in range(P):
        right = (r + 1) % P
        e.call(r, "MPI_Init")
        e.call(r, "MPI_Finalize")
        partner = r ^ 1
        if partner < P:
            for s in sizes:
                e.send(r, "MPI_Send", partner, s)
                e.call(r, "MPI_Recv", s)
        for s in sizes:
            e.call(r, "MPI_Irecv", s)
            e.send(r, "MPI_Isend", right, s)
            e.call(r, "MPI_Waitall", s, s)
        for s in sizes:
            e.call(r, "MPI_Sendrecv", s, s)
            e.message(r, right, s)
        w = moved(P)
        e.call(r, "MPI_Allreduce", *[w(count * DOUBLE)] * (2 * reps), calls=2 * reps)
        e.call(r, "MPI_Bcast", w(count * DOUBLE))
        e.call(r, "MPI_Bcast", w(count * DOUBLE))  # again, through MPI_BOTTOM
        for fn in ("MPI_Get_address", "MPI_Type_create_hindexed", "MPI_Type_commit", "MPI_Type_free"):
            e.call(r, fn)  # the absolute-address type of the MPI_BOTTOM Bcast (local calls)
        e.call(r, "MPI_Barrier", 0)
        members = list(range(r % 2, P, 2))
        q = members.index(r)
        e.call(r, "MPI_Comm_split")
        e.call(r, "MPI_Irecv", maxs)
        e.send(r, "MPI_Isend", members[(q + 1) % len(members)], maxs)
        e.call(r, "MPI_Waitall", maxs, maxs)
        e.call(r, "MPI_Comm_free")
    return e


# -- tests/runtime/programs/threads.c ----------------------------------------

def threads(nranks: int, iters: int, sizes: list[int]) -> Expected:
    """Mirror of threads.c: thread t uses sizes[t] and t + 1 doubles."""
    e = Expected(nranks)
    for r in range(nranks):
        right = (r + 1) % nranks
        e.call(r, "MPI_Init_thread")
        e.call(r, "MPI_Finalize")
        e.call(r, "MPI_Comm_dup", calls=len(sizes))
        e.call(r, "MPI_Comm_free", calls=len(sizes))
        for t, s in enumerate(sizes):
            for _ in range(iters):
                e.call(r, "MPI_Sendrecv", s, s)
                e.message(r, right, s)
                e.call(r, "MPI_Irecv", s)
                e.send(r, "MPI_Isend", right, s)
                e.call(r, "MPI_Waitall", s, s)
                e.call(r, "MPI_Allreduce", (t + 1) * DOUBLE)
    return e


def assert_ring_on_two_nodes(profile, iters: int, nbytes: int, what: str = "") -> None:
    """A 4-rank ring.c run placed 2 ranks on each of the emulated swnode1 and swnode2 (by rank), every
    message to the next rank counted with its bytes."""
    assert profile.ranks.set_index("rank")["host"].sort_index().tolist() == [
        "swnode1", "swnode1", "swnode2", "swnode2"], what
    messages, nbytes_sent = recorded_p2p(profile)
    assert dict(messages) == {(r, (r + 1) % 4): iters for r in range(4)}, what
    assert dict(nbytes_sent) == {(r, (r + 1) % 4): iters * nbytes for r in range(4)}, what
