"""Open MPI 5.0 coll/han: the hierarchical collectives it runs by default on a communicator
whose ranks share nodes (open-mpi/ompi v5.0.10, ompi/mca/coll/han/; docs/whatif.md cites each
rule).  A collective is split into operations on the node ("low": the ranks of one node, in
rank order, served by coll/tuned) and between nodes ("up": the ranks of one node-local rank
across nodes, in rank order: libnbc for the pipelined algorithms' nonblocking reduce and bcast,
coll/tuned for the blocking ones), each replayed as its own point-to-point schedule.

Han runs neither with one rank on every node (coll_han_subcomms.c: the largest ranks-per-node
is 1), nor on one node (coll_han_module.c), nor for non-commutative reductions; Bcast, Reduce,
Gather, Scatter and Allgather fall back where nodes hold different numbers of ranks
(coll_han_topo.c).  Then coll/tuned's rules decide (openmpi.choose).

The operations of a task (coll_han_allreduce.c's t0..t3 and the like) are replayed one after
the other in the order the task starts them: each libnbc round is a phase, waited for before
the next; the overlap of a task's libnbc operations with its operation on the node is not."""

from __future__ import annotations

from functools import lru_cache

from scalewise.whatif.collectives import algorithms as A
from scalewise.whatif.collectives import openmpi

LINE = "openmpi-5.0"
SEGSIZE = 65536  # coll_han_{bcast,reduce,allreduce}_segsize
NBC_FRAG = 8192  # nbc_ireduce.c chain: segsize = 16384/2
IMPLEMENTED = ("MPI_Allgather", "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Gather",
               "MPI_Reduce", "MPI_Scatter")
S, R = A.SEND, A.RECV


class Layout:
    """Han's sub-communicators of a communicator whose rank i is on node ``nodes[i]``."""

    def __init__(self, nodes: tuple[int, ...]):
        self.P = len(nodes)
        order: dict[int, list[int]] = {}
        for r, n in enumerate(nodes):
            order.setdefault(n, []).append(r)
        self.low = list(order.values())  # node-local comms, by first rank (the up rank of their leader)
        self.low_rank = {r: i for group in self.low for i, r in enumerate(group)}
        width = max(len(g) for g in self.low)
        # split by low rank, keyed by rank: each up comm in rank order
        self.up = [sorted(g[c] for g in self.low if c < len(g)) for c in range(width)]
        self.balanced = all(len(g) == width for g in self.low)
        self.runs = self.P > 1 and len(self.low) > 1 and width > 1

    def root(self, root: int) -> tuple[int, int]:
        """(root's low rank, root's up rank)."""
        c = self.low_rank[root]
        return c, self.up[c].index(root)


def embed(s: A.Schedule, members: list[int], sub: A.Schedule) -> None:
    """Append ``sub`` (a schedule on ``members``, by index) to the ranks of ``s``."""
    for i, phases in enumerate(sub):
        s[members[i]].extend([[(d, members[q], b) for d, q, b in ph] for ph in phases])


def tuned(func: str, members: list[int], n: int, root: int = 0) -> A.Schedule:
    return _tuned(func, len(members), n, root)


@lru_cache(maxsize=256)
def _tuned(func: str, m: int, n: int, root: int) -> A.Schedule:
    """Every node (every segment) runs the same one: built once, only read by embed."""
    return openmpi.choose(func, m, [n] * m, root, True, LINE)[1]


# ---- libnbc (nbc_ibcast.c, nbc_ireduce.c): one list of rounds per rank -------------------------

def _vrank(r: int, root: int) -> int:
    return root if r == 0 else 0 if r == root else r


def nbc_ibcast(p: int, root: int, n: int) -> A.Schedule:
    """libnbc_ibcast_skip_dt_decision (default true): linear for p <= 4, else binomial."""
    s = A.empty(p)
    if p == 1:
        return s
    if p <= 4:
        s[root].append([(S, q, n) for q in range(p) if q != root])
        for q in range(p):
            if q != root:
                s[q].append([(R, root, n)])
        return s
    maxr = (p - 1).bit_length()
    for r in range(p):
        v = _vrank(r, root)
        if v:
            s[r].append([(R, _vrank(v - (1 << (v.bit_length() - 1)), root), n)])
        sends = [(S, _vrank(v + (1 << k), root), n) for k in range(maxr)
                 if (v + (1 << k) < p and v < (1 << k)) or v == 0]
        if sends:
            s[r].append(sends)
    return s


def nbc_ireduce(p: int, root: int, count: int, elem: int) -> A.Schedule:
    """nbc_reduce_init's choice for a commutative operation."""
    if p == 1:
        return A.empty(1)
    if p > 2 and count >= A.pof2_below(p):
        return _redscat_gather(p, root, count, elem)
    if p > 4 or count * elem < 65536:
        return _binomial_reduce(p, root, count * elem)
    return _chain_reduce(p, root, count, elem)


def _binomial_reduce(p: int, root: int, n: int) -> A.Schedule:
    s = A.empty(p)
    for r in range(p):
        v = _vrank(r, root)
        for k in range(1, (p - 1).bit_length() + 1):
            if v % (1 << k) == 0:
                if v + (1 << (k - 1)) < p:
                    s[r].append([(R, _vrank(v + (1 << (k - 1)), root), n)])
            else:
                s[r].append([(S, _vrank(v - (1 << (k - 1)), root), n)])
                break
    return s


def _chain_reduce(p: int, root: int, count: int, elem: int) -> A.Schedule:
    s = A.empty(p)
    nfrag = -(-count * elem // NBC_FRAG)
    fragcount = count // nfrag
    frags = [fragcount] * (nfrag - 1) + [count - fragcount * (nfrag - 1)]
    for r in range(p):
        v = _vrank(r, root)
        for f in frags:
            if v != p - 1:
                s[r].append([(R, _vrank(v + 1, root), f * elem)])
            if v != 0:
                s[r].append([(S, _vrank(v - 1, root), f * elem)])
    return s


def _redscat_gather(p: int, root: int, count: int, elem: int) -> A.Schedule:
    """red_sched_redscat_gather, rank by rank as the source builds each rank's schedule."""
    s = A.empty(p)
    nsteps = A.pof2_below(p).bit_length() - 1
    pof2, rem = 1 << nsteps, p - (1 << nsteps)
    real = lambda v: v * 2 if v < rem else v + rem  # noqa: E731
    vroot = (0 if root % 2 else root // 2) if root < 2 * rem else root - rem
    for rank in range(p):
        ph = s[rank]
        lh = count // 2
        if rank < 2 * rem:
            if rank % 2:
                ph += [[(S, rank - 1, lh * elem), (R, rank - 1, (count - lh) * elem)]]
                ph += [[(S, rank - 1, (count - lh) * elem)]]
                vrank = -1
            else:
                ph += [[(S, rank + 1, (count - lh) * elem), (R, rank + 1, lh * elem)]]
                ph += [[(R, rank + 1, (count - lh) * elem)]]
                vrank = rank // 2
        else:
            vrank = rank - rem
        rcount, scount = [0] * nsteps, [0] * nsteps
        if vrank != -1:
            wsize = count
            for step in range(nsteps):
                dest = real(vrank ^ (1 << step))
                if rank < dest:
                    rcount[step] = wsize // 2
                    scount[step] = wsize - rcount[step]
                else:
                    scount[step] = wsize // 2
                    rcount[step] = wsize - scount[step]
                ph.append([(S, dest, scount[step] * elem), (R, dest, rcount[step] * elem)])
                wsize = rcount[step]
        if root < 2 * rem and root % 2:
            if rank == root:
                wsize = count
                for step in range(nsteps):
                    rcount[step] = wsize // 2
                    scount[step] = wsize - rcount[step]
                    wsize //= 2
                ph.append([(R, 0, rcount[nsteps - 1] * elem)])
                vrank = 0
            elif vrank == 0:
                ph.append([(S, root, rcount[nsteps - 1] * elem)])
                vrank = -1
        if vrank == -1:
            continue
        step = nsteps - 1
        mask = pof2 >> 1
        while mask:
            vdest = vrank ^ mask
            dest = root if vdest == 0 and root < 2 * rem and root % 2 else real(vdest)
            if (vdest >> step) == (vroot >> step):
                ph.append([(S, dest, rcount[step] * elem)])
                break
            ph.append([(R, dest, scount[step] * elem)])
            step -= 1
            mask >>= 1
    return s


# ---- han's algorithms ---------------------------------------------------------------------

element_bytes = openmpi.element_bytes


def segments(n: int) -> tuple[list[int], int]:
    """(elements of each segment, bytes per element): COLL_BASE_COMPUTED_SEGCOUNT with the
    64 KiB segsize, num_segments = ceil(count / seg_count)."""
    elem = element_bytes(n)
    count = n // elem
    seg = SEGSIZE // elem if elem <= SEGSIZE < elem * count else count
    nseg = -(-count // seg)
    return [seg] * (nseg - 1) + [count - seg * (nseg - 1)], elem


def _allreduce(L: Layout, n: int) -> A.Schedule:
    """mca_coll_han_allreduce_intra: per segment lr (tuned reduce to low rank 0), ur and ub
    (libnbc ireduce and ibcast among the node leaders, root up rank 0), lb (tuned bcast)."""
    s = A.empty(L.P)
    segs, elem = segments(n)
    ns, up = len(segs), L.up[0]

    def lr(k):
        for g in L.low:
            embed(s, g, tuned("MPI_Reduce", g, segs[k] * elem))

    def lb(k):
        for g in L.low:
            embed(s, g, tuned("MPI_Bcast", g, segs[k] * elem))

    def ur(k):
        embed(s, up, nbc_ireduce(len(up), 0, segs[k], elem))

    def ub(k):
        embed(s, up, nbc_ibcast(len(up), 0, segs[k] * elem))
    lr(0)
    ur(0)  # t1
    if ns > 1:
        lr(1)
    ub(0)  # t2
    if ns > 1:
        ur(1)
    if ns > 2:
        lr(2)
    for c in range(ns):  # t3 of segment c
        if c <= ns - 2:
            ub(c + 1)
        if c <= ns - 3:
            ur(c + 2)
        if c <= ns - 4:
            lr(c + 3)
        lb(c)
    return s


def _reduce(L: Layout, n: int, root: int) -> A.Schedule:
    """mca_coll_han_reduce_intra: lr of segment 0, then per segment c ur(c) and lr(c + 1)."""
    s = A.empty(L.P)
    segs, elem = segments(n)
    low_root, up_root = L.root(root)
    up = L.up[low_root]
    for c in range(-1, len(segs)):
        if c >= 0:
            embed(s, up, nbc_ireduce(len(up), up_root, segs[c], elem))
        if c + 1 < len(segs):
            for g in L.low:
                embed(s, g, tuned("MPI_Reduce", g, segs[c + 1] * elem, low_root))
    return s


def _bcast(L: Layout, n: int, root: int) -> A.Schedule:
    """mca_coll_han_bcast_intra: t0 is tuned's bcast of segment 0 among the root's up comm, then
    per segment c the libnbc ibcast of c + 1 and tuned's bcast of c on every node."""
    s = A.empty(L.P)
    segs, elem = segments(n)
    low_root, up_root = L.root(root)
    up = L.up[low_root]
    embed(s, up, tuned("MPI_Bcast", up, segs[0] * elem, up_root))
    for c in range(len(segs)):
        if c + 1 < len(segs):
            embed(s, up, nbc_ibcast(len(up), up_root, segs[c + 1] * elem))
        for g in L.low:
            embed(s, g, tuned("MPI_Bcast", g, segs[c] * elem, low_root))
    return s


def _rooted(L: Layout, func: str, n: int, root: int) -> A.Schedule:
    """Gather (mca_coll_han_gather_intra_simple): tuned gather on each node, then among the root's
    up comm with a node's blocks; Scatter (mca_coll_han_scatter_intra): the same, reversed."""
    s = A.empty(L.P)
    low_root, up_root = L.root(root)
    up, width = L.up[low_root], len(L.low[0])

    def low():
        for g in L.low:
            embed(s, g, tuned(func, g, n, low_root))
    if func == "MPI_Gather":
        low()
    embed(s, up, tuned(func, up, n * width, up_root))
    if func == "MPI_Scatter":
        low()
    return s


def _allgather(L: Layout, n: int) -> A.Schedule:
    """mca_coll_han_allgather_intra: tuned gather to low rank 0, tuned allgather of the nodes'
    blocks among the leaders, tuned bcast of everything on each node."""
    s = A.empty(L.P)
    width = len(L.low[0])
    for g in L.low:
        embed(s, g, tuned("MPI_Gather", g, n))
    embed(s, L.up[0], tuned("MPI_Allgather", L.up[0], n * width))
    for g in L.low:
        embed(s, g, tuned("MPI_Bcast", g, n * L.P))
    return s


def _barrier(L: Layout) -> A.Schedule:
    """mca_coll_han_barrier_intra_simple: tuned barrier on each node, among the leaders, on each node."""
    s = A.empty(L.P)
    for level in (L.low, [L.up[0]], L.low):
        for g in level:
            embed(s, g, tuned("MPI_Barrier", g, 0))
    return s


def choose(func: str, P: int, sizes: list[int], root: int, commutative: bool,
           nodes: tuple[int, ...]) -> tuple[str, A.Schedule]:
    """(algorithm, schedule) Open MPI 5.0 runs for this call with its ranks on ``nodes``."""
    L = Layout(nodes)
    tuned_choice = lambda: openmpi.choose(func, P, sizes, root, commutative, LINE)  # noqa: E731
    if func not in IMPLEMENTED or not L.runs:
        return tuned_choice()
    n = sizes[0]
    if n == 0 and func in ("MPI_Allreduce", "MPI_Bcast", "MPI_Reduce"):
        return "none", A.empty(P)  # ompi/mpi/c/{allreduce,bcast,reduce}.c return before any component
    if func == "MPI_Allreduce":
        return ("han_pipelined", _allreduce(L, n)) if commutative else tuned_choice()
    if func == "MPI_Barrier":
        return "han_simple", _barrier(L)
    if not L.balanced or (func == "MPI_Reduce" and not commutative):
        return tuned_choice()
    if func == "MPI_Reduce":
        return "han_pipelined", _reduce(L, n, root)
    if func == "MPI_Bcast":
        return "han_pipelined", _bcast(L, n, root)
    if func == "MPI_Allgather":
        return "han", _allgather(L, n)
    return ("han_simple" if func == "MPI_Gather" else "han"), _rooted(L, func, n, root)
