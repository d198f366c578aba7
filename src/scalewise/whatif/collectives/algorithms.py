"""Collective algorithms as point-to-point schedules.

A schedule lists, for every rank of the communicator, its phases in order; a
phase is the messages the rank posts together and then waits for, each
``(SEND or RECV, peer rank in the communicator, bytes)``.  A one-message phase
is a blocking call.  Blocks of a vector are split by bytes, early blocks one
byte larger, as the libraries split by elements.  Reductions cost no compute.
"""

from __future__ import annotations

SEND, RECV = 1, -1
Phase = list[tuple[int, int, int]]
Schedule = list[list[Phase]]


def empty(P: int) -> Schedule:
    return [[] for _ in range(P)]


def pof2_below(P: int) -> int:
    """Largest power of two <= P."""
    return 1 << (P.bit_length() - 1)


def split(nbytes: int, parts: int) -> list[int]:
    base, extra = divmod(nbytes, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def exchange(s: Schedule, a: int, b: int, to_b: int, to_a: int) -> None:
    """a and b swap data in one phase each (Sendrecv-style)."""
    s[a].append([(RECV, b, to_a), (SEND, b, to_b)])
    s[b].append([(RECV, a, to_b), (SEND, a, to_a)])


def concat(*schedules: Schedule) -> Schedule:
    return [sum((sch[r] for sch in schedules), []) for r in range(len(schedules[0]))]


# ---- trees ---------------------------------------------------------------

def binomial_children(v: int, P: int) -> list[int]:
    low = v & -v if v else 1 << P.bit_length()
    return [v + m for m in (1 << k for k in range(P.bit_length())) if m < low and v + m < P]


def knomial_children(v: int, P: int, radix: int) -> list[int]:
    """Children in a k-nomial tree rooted at 0 (vrank numbering)."""
    kids, mask = [], 1
    while mask < P:
        if v % (mask * radix):
            break
        kids.extend(v + j * mask for j in range(1, radix) if v + j * mask < P)
        mask *= radix
    return kids


def linear_children(v: int, P: int) -> list[int]:
    return list(range(1, P)) if v == 0 else []


def tree_schedule(P: int, root: int, children, nbytes: int, down: bool) -> Schedule:
    """Broadcast down (``down``) or reduce up a tree given in vranks (root = 0)."""
    s = empty(P)
    real = lambda v: (v + root) % P  # noqa: E731
    parent = {c: v for v in range(P) for c in children(v, P)}
    for v in range(P):
        kids = [real(c) for c in children(v, P)]
        r = real(v)
        if down:
            if v:
                s[r].append([(RECV, real(parent[v]), nbytes)])
            if kids:
                s[r].append([(SEND, k, nbytes) for k in kids])
        else:
            if kids:
                s[r].append([(RECV, k, nbytes) for k in kids])
            if v:
                s[r].append([(SEND, real(parent[v]), nbytes)])
    return s


def linear_sequential(P: int, root: int, sizes: list[int], to_root: bool) -> Schedule:
    """The root receives from (sends to) every other rank one call at a time."""
    s = empty(P)
    d = RECV if to_root else SEND
    for r in range(P):
        if r == root:
            s[r].extend([[(d, q, sizes[q])] for q in range(P) if q != root])
        else:
            s[r].append([(-d, root, sizes[r])])
    return s


def linear_nonblocking(P: int, root: int, sizes: list[int], to_root: bool) -> Schedule:
    """As linear_sequential, but the root posts everything at once."""
    s = linear_sequential(P, root, sizes, to_root)
    s[root] = [[m for ph in s[root] for m in ph]] if P > 1 else []
    return s


def binomial_gather(P: int, root: int, sizes: list[int], to_root: bool) -> Schedule:
    """Gather (or scatter) along a binomial tree: a child's message carries its subtree's blocks."""
    s = empty(P)
    real = lambda v: (v + root) % P  # noqa: E731

    def subtree(c: int) -> int:
        return sum(sizes[real(x)] for x in range(c, min(c + (c & -c), P)))

    for v in range(P):
        r, kids = real(v), binomial_children(v, P)
        parent = v & (v - 1)
        if to_root:
            s[r].extend([[(RECV, real(c), subtree(c))] for c in kids])
            if v:
                s[r].append([(SEND, real(parent), subtree(v))])
        else:
            if v:
                s[r].append([(RECV, real(parent), subtree(v))])
            s[r].extend([[(SEND, real(c), subtree(c))] for c in reversed(kids)])
    return s


# ---- all-to-all families -------------------------------------------------

def fold_in(s: Schedule, P: int, nbytes: int) -> dict[int, int]:
    """Ranks beyond the largest power of two hand their data to a partner
    first (both libraries' non-power-of-two scheme): even ranks below
    2*(P - pof2) send to the odd rank above.  Returns old rank of each new rank."""
    extra = P - pof2_below(P)
    old = {}
    for r in range(P):
        if r < 2 * extra:
            if r % 2 == 0:
                s[r].append([(SEND, r + 1, nbytes)])
            else:
                s[r].append([(RECV, r - 1, nbytes)])
                old[r // 2] = r
        else:
            old[r - extra] = r
    return old


def fold_out(s: Schedule, P: int, nbytes: int) -> None:
    """The folded-in ranks get the result back."""
    for r in range(0, 2 * (P - pof2_below(P)), 2):
        s[r + 1].append([(SEND, r, nbytes)])
        s[r].append([(RECV, r + 1, nbytes)])


def allreduce_recursive_doubling(P: int, n: int) -> Schedule:
    """Exchange the whole vector with newrank xor 2^k, k = 0, 1, ..."""
    s = empty(P)
    old = fold_in(s, P, n)
    pof2 = pof2_below(P)
    mask = 1
    while mask < pof2:
        for a in range(pof2):
            if a < a ^ mask:
                exchange(s, old[a], old[a ^ mask], n, n)
        mask <<= 1
    fold_out(s, P, n)
    return s


def _halving(s: Schedule, old: dict[int, int], blocks: list[int]) -> tuple[dict, list[int]]:
    """Reduce-scatter by recursive halving over the pof2 active ranks: each
    keeps the half of its window on its side and sends the other half."""
    pof2 = len(blocks)
    window = {a: (0, pof2) for a in range(pof2)}
    masks, mask = [], 1
    while mask < pof2:
        for a in range(pof2):
            b = a ^ mask
            if a < b:
                lo, hi = window[a]
                mid = (lo + hi) // 2
                exchange(s, old[a], old[b], sum(blocks[mid:hi]), sum(blocks[lo:mid]))
                window[a], window[b] = (lo, mid), (mid, hi)
        masks.append(mask)
        mask <<= 1
    return window, masks


def rabenseifner(P: int, n: int) -> Schedule:
    """Reduce-scatter by recursive halving, then allgather by recursive
    doubling (Open MPI's and MPICH's large-message Allreduce)."""
    s = empty(P)
    old = fold_in(s, P, n)
    blocks = split(n, pof2_below(P))
    window, masks = _halving(s, old, blocks)
    for mask in reversed(masks):  # doubling: send the window gathered so far
        for a in range(len(blocks)):
            b = a ^ mask
            if a < b:
                (alo, ahi), (blo, bhi) = window[a], window[b]
                exchange(s, old[a], old[b], sum(blocks[alo:ahi]), sum(blocks[blo:bhi]))
                window[a] = window[b] = (min(alo, blo), max(ahi, bhi))
    fold_out(s, P, n)
    return s


def reduce_scatter_gather(P: int, n: int, root: int) -> Schedule:
    """Reduce: recursive halving, then a binomial gather of the pieces to the
    root (its fold-in partner stands in for a folded-out root)."""
    s = empty(P)
    old = fold_in(s, P, n)
    pof2 = pof2_below(P)
    blocks = split(n, pof2)
    window, _ = _halving(s, old, blocks)
    new_of = {r: a for a, r in old.items()}
    stand_in = new_of.get(root, new_of.get(root + 1, 0))
    piece = [sum(blocks[lo:hi]) for lo, hi in (window[a] for a in range(pof2))]
    sub = binomial_gather(pof2, stand_in, piece, to_root=True)
    for a in range(pof2):
        s[old[a]].extend([[(d, old[q], b) for d, q, b in ph] for ph in sub[a]])
    if old[stand_in] != root:
        s[old[stand_in]].append([(SEND, root, n)])
        s[root].append([(RECV, old[stand_in], n)])
    return s


def ring_allreduce(P: int, n: int) -> Schedule:
    """P-1 reduce-scatter steps, then P-1 allgather steps, around the ring."""
    s = empty(P)
    blocks = split(n, P)
    for step in range(2 * (P - 1)):
        for r in range(P):
            # at every step, reduce-scatter then allgather alike, rank r passes
            # block r - step on and takes block r - step - 1 in
            send_block = (r - step) % P
            recv_block = (send_block - 1) % P
            s[r].append([(RECV, (r - 1) % P, blocks[recv_block]), (SEND, (r + 1) % P, blocks[send_block])])
    return s


def ring_allgather(P: int, sizes: list[int]) -> Schedule:
    s = empty(P)
    for step in range(P - 1):
        for r in range(P):
            s[r].append([(RECV, (r - 1) % P, sizes[(r - step - 1) % P]), (SEND, (r + 1) % P, sizes[(r - step) % P])])
    return s


def recursive_doubling_allgather(P: int, sizes: list[int]) -> Schedule:
    """Power-of-two communicators only: exchange everything gathered so far with rank xor 2^k."""
    s = empty(P)
    mask = 1
    while mask < P:
        for a in range(P):
            b = a ^ mask
            if a < b:
                lo_a, lo_b = a & ~(mask - 1), b & ~(mask - 1)
                exchange(s, a, b, sum(sizes[lo_a:lo_a + mask]), sum(sizes[lo_b:lo_b + mask]))
        mask <<= 1
    return s


def bruck_allgather(P: int, sizes: list[int]) -> Schedule:
    """Step k: send the 2^k (or the remaining) blocks gathered so far to r - 2^k."""
    s = empty(P)
    dist = 1
    while dist < P:
        count = min(dist, P - dist)
        for r in range(P):
            out = sum(sizes[(r + i) % P] for i in range(count))
            into = sum(sizes[(r + dist + i) % P] for i in range(count))
            s[r].append([(RECV, (r + dist) % P, into), (SEND, (r - dist) % P, out)])
        dist <<= 1
    return s


def neighbor_allgather(P: int, sizes: list[int]) -> Schedule:
    """Open MPI's neighbor exchange (even P): one block with one neighbour, then
    P/2 - 1 steps of two blocks alternating between the two neighbours."""
    if P % 2:
        return ring_allgather(P, sizes)
    s = empty(P)
    for r in range(P):
        first = r + 1 if r % 2 == 0 else r - 1
        s[r].append([(RECV, first, sizes[first]), (SEND, first, sizes[r])])
    blk = sum(sizes) // P
    for step in range(1, P // 2):
        for r in range(P):
            even = r % 2 == 0
            peer = (r - 1) % P if even == (step % 2 == 1) else (r + 1) % P
            s[r].append([(RECV, peer, 2 * blk), (SEND, peer, 2 * blk)])
    return s


def pairwise_alltoall(P: int, blk: list[int]) -> Schedule:
    """``blk[r]``: the bytes rank r sends to each other rank."""
    s = empty(P)
    for step in range(1, P):
        for r in range(P):
            src = (r - step) % P
            s[r].append([(RECV, src, blk[src]), (SEND, (r + step) % P, blk[r])])
    return s


def linear_alltoall(P: int, blk: list[int], window: int = 0) -> Schedule:
    """Post every receive and send at once (``window`` > 0: that many peers at a time)."""
    s = empty(P)
    window = window or P
    for r in range(P):
        steps = list(range(1, P))
        for lo in range(0, len(steps), window):
            chunk = steps[lo:lo + window]
            s[r].append([(RECV, (r - i) % P, blk[(r - i) % P]) for i in chunk]
                        + [(SEND, (r + i) % P, blk[r]) for i in chunk])
    return s


def bruck_alltoall(P: int, blk: list[int]) -> Schedule:
    """Step k sends every block whose index has bit k set, to r + 2^k."""
    s = empty(P)
    dist = 1
    while dist < P:
        count = sum(1 for i in range(P) if i & dist)
        for r in range(P):
            src = (r - dist) % P
            s[r].append([(RECV, src, count * blk[src]), (SEND, (r + dist) % P, count * blk[r])])
        dist <<= 1
    return s


def dissemination_barrier(P: int) -> Schedule:
    s = empty(P)
    dist = 1
    while dist < P:
        for r in range(P):
            s[r].append([(RECV, (r - dist) % P, 0), (SEND, (r + dist) % P, 0)])
        dist <<= 1
    return s


def double_ring_barrier(P: int) -> Schedule:
    """A token goes round the ring twice, starting at rank 0."""
    s = empty(P)
    for _ in range(2):
        for r in range(P):
            if r == 0:
                s[r].extend([[(SEND, 1 % P, 0)], [(RECV, P - 1, 0)]])
            else:
                s[r].extend([[(RECV, r - 1, 0)], [(SEND, (r + 1) % P, 0)]])
    return s


def scatter_then_allgather(P: int, root: int, n: int, allgather) -> Schedule:
    """Bcast of a large message: binomial scatter of P pieces, then an allgather of them."""
    pieces = split(n, P)
    return concat(binomial_gather(P, root, pieces, to_root=False), allgather(P, pieces))


def linear_barrier(P: int) -> Schedule:
    """Everyone reports to rank 0, which then releases everyone."""
    return concat(linear_sequential(P, 0, [0] * P, to_root=True), linear_nonblocking(P, 0, [0] * P, to_root=False))


def pair_exchange(P: int, sizes: list[int]) -> Schedule:
    """Two ranks swap their data in one step (the libraries' two-process algorithms)."""
    s = empty(P)
    exchange(s, 0, 1, sizes[0], sizes[1])
    return s
