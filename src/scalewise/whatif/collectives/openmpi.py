"""Open MPI 4.1 and 5.0 coll/tuned: the fixed decision rules (data/openmpi-<line>-tuned.json,
extracted from coll_tuned_decision_fixed.c of each release by scripts/ompi-tuned-rules.py;
the two are the same rules) and the numbered algorithms they name, with segment
size 0 (no pipelining) and fan-in/out 0 as the fixed rules pass them, along Open MPI's own trees
(ompi_topo.py)."""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources

from scalewise.whatif.collectives import algorithms as A
from scalewise.whatif.collectives import ompi_topo as T

ELEMENT_BYTES = 8  # a trace has bytes, the rules' "count" checks need elements: doubles assumed
KNOMIAL_RADIX = 4  # coll_tuned_bcast_knomial_radix default
FORCED_CHAIN_FANOUT = 4  # coll_tuned_<coll>_algorithm_chain_fanout default (ompi_coll_tuned_init_chain_fanout):
# a forced chain's; the fixed rules pass fan-in/out 0, which build_chain takes as 1 (a pipeline)
BINARY_FANOUT = 2  # bintree: ompi_coll_base_topo_build_tree(2, ...)
_COND = re.compile(r"(\w+) (<|==) (\d+)$")


LINES = ("openmpi-4.1", "openmpi-5.0")


@cache
def rules(line: str = LINES[0]) -> dict:
    text = resources.files("scalewise.whatif").joinpath(f"data/{line}-tuned.json").read_text()
    return json.loads(text)


def decide(collective: str, P: int, total_dsize: int, commutative: bool = True, line: str = LINES[0]) -> int:
    """The algorithm number coll_tuned_<collective>_intra_dec_fixed of release ``line`` returns."""
    env = {"communicator_size": P, "total_dsize": total_dsize, "per_rank_dsize": total_dsize}
    rule = rules(line)[collective]
    while isinstance(rule, list):
        cond, yes, no = rule
        if cond == "!ompi_op_is_commute(op)":
            hit = not commutative
        else:
            name, op, value = _COND.match(cond).groups()
            hit = env[name] < int(value) if op == "<" else env[name] == int(value)
        rule = yes if hit else no
    return rule


def _count(n: int) -> int:
    return math.ceil(n / ELEMENT_BYTES)


def _allreduce(alg: int, P: int, n: int, commutative: bool, line: str) -> tuple[str, A.Schedule]:
    if alg == 1:
        return "basic_linear", A.concat(A.linear_sequential(P, 0, [n] * P, to_root=True),
                                        A.linear_nonblocking(P, 0, [n] * P, to_root=False))
    if alg == 2:
        (_, red), (_, bc) = (choose("MPI_Reduce", P, [n] * P, 0, commutative, line),
                             choose("MPI_Bcast", P, [n] * P, 0, line=line))
        return "nonoverlapping", A.concat(red, bc)
    if alg in (4, 5) and _count(n) >= P:  # ring falls back below one element per rank
        return ("ring", "segmented_ring")[alg - 4], A.ring_allreduce(P, n)
    if alg == 6 and _count(n) >= A.pof2_below(P):
        return "rabenseifner", A.rabenseifner(P, n)
    return "recursive_doubling", A.allreduce_recursive_doubling(P, n)


def element_bytes(n: int) -> int:
    """Bytes per element where an algorithm splits by elements: a trace has bytes only; doubles
    (ELEMENT_BYTES) where they divide the call's bytes, else single bytes."""
    return ELEMENT_BYTES if n % ELEMENT_BYTES == 0 else 1


def along(tree: T.Tree, nbytes: int, down: bool) -> A.Schedule:
    """One segment down a tree (bcast_intra_generic: receive from the parent, then post every
    child's send and wait) or up it (reduce_generic: receive the children's, then send up)."""
    s = A.empty(len(tree))
    for r, (prev, kids) in enumerate(tree):
        parent = [[(A.RECV if down else A.SEND, prev, nbytes)]] if prev is not None else []
        children = [[(A.SEND if down else A.RECV, k, nbytes) for k in kids]] if kids else []
        s[r] = parent + children if down else children + parent
    return s


def split_bintree(P: int, n: int, root: int) -> A.Schedule:
    """ompi_coll_base_bcast_intra_split_bintree, unsegmented: the first half of the elements goes
    down the binary tree's left subtree, the second down its right, then each rank swaps halves
    with its pair, the rank next to it (with an even P, root - 1 takes its half from the root)."""
    elem = element_bytes(n)
    count = n // elem
    half = [(count + 1) // 2 * elem, count // 2 * elem]
    if half[1] == 0:  # too small to split: a chain of fan-out 1
        return along(T.chain(1, P, root), n, down=True)
    tree = T.tree(BINARY_FANOUT, P, root)
    s = A.empty(P)
    for r, (prev, kids) in enumerate(tree):
        lr = ((r - root) % P + 1) % 2
        if r == root:
            s[r].extend([[(A.SEND, k, half[i])] for i, k in enumerate(kids[:2])])
        else:
            s[r].append([(A.RECV, prev, half[lr])])
            s[r].extend([[(A.SEND, k, half[lr])] for k in kids])
    for r in range(P):
        lr = ((r - root) % P + 1) % 2
        pair = (r + 1) % P if lr == 0 else (r - 1) % P
        if P % 2 == 0 and r == root:
            s[r].append([(A.SEND, (root - 1) % P, half[1])])
        elif P % 2 == 0 and r == (root - 1) % P:
            s[r].append([(A.RECV, root, half[1])])
        elif r != root:
            s[r].append([(A.RECV, pair, half[1 - lr]), (A.SEND, pair, half[lr])])
    return s


def _binomial_scatter(s: A.Schedule, count: int, root: int, elem: int) -> tuple[list[int], int]:
    """The scatter of bcast_intra_scatter_allgather(_ring): ceil(count / P) elements a block by vrank,
    down the binomial tree whose child is vrank + mask, sending only blocks that exist.  Returns each
    vrank's element count after it and the block's elements."""
    P = len(s)
    block = -(-count // P)
    real = lambda v: (v + root) % P  # noqa: E731
    have = [0] * P
    have[0] = count
    for v in range(P):  # parents come before their children
        if v:
            low = v & -v
            if count - v * block > 0:
                s[real(v)].append([(A.RECV, real(v - low), have[v] * elem)])
            mask = low >> 1
        else:
            mask = 1 << (P - 1).bit_length() >> 1
        while mask > 0:
            if v + mask < P:
                out = have[v] - block * mask
                if out > 0:
                    s[real(v)].append([(A.SEND, real(v + mask), out * elem)])
                    have[v + mask] = out
                    have[v] -= out
            mask >>= 1
    return have, block


def scatter_allgather(P: int, n: int, root: int, ring: bool) -> A.Schedule:
    """ompi_coll_base_bcast_intra_scatter_allgather (ring: _ring): the binomial scatter, then a
    recursive-doubling allgather by vrank whose incomplete subtrees are topped up by recursive halving
    (or a ring allgather of the blocks)."""
    elem = element_bytes(n)
    count = n // elem
    s = A.empty(P)
    _, block = _binomial_scatter(s, count, root, elem)
    real = lambda v: (v + root) % P  # noqa: E731
    size = [max(0, min(block, count - v * block)) for v in range(P)]
    if ring:
        for step in range(P - 1):
            for v in range(P):
                into, out = size[(v - step - 1) % P], size[(v - step) % P]
                s[real(v)].append([(A.RECV, real(v - 1), into * elem), (A.SEND, real(v + 1), out * elem)])
        return s
    curr, got = list(size), [0] * P
    mask = 1
    while mask < P:
        start = list(curr)
        for v in range(P):
            w = v ^ mask
            if w < P:
                s[real(v)].append([(A.RECV, real(w), start[w] * elem), (A.SEND, real(w), start[v] * elem)])
                got[v] = start[w]
                curr[v] += start[w]
        for rh in (1 << k for k in range(mask.bit_length() - 2, -1, -1)):
            sent = {}
            for v in range(P):
                w, mine = v ^ mask, v & ~(mask - 1)
                if (w & ~(mask - 1)) + mask <= P:
                    continue
                alldata = P - mine - mask
                partner, top = v ^ rh, v & ~((rh << 1) - 1)
                if partner > v and v < top + alldata <= partner:
                    s[real(v)].append([(A.SEND, real(partner), got[v] * elem)])
                    sent[partner] = got[v]
            for v, nb in sent.items():
                s[real(v)].append([(A.RECV, real(v ^ rh), nb * elem)])
                got[v] = nb
                curr[v] += nb
        mask <<= 1
    return s


def _bcast(alg: int, P: int, n: int, root: int, chain_fanout: int = 0) -> tuple[str, A.Schedule]:
    linear = ("basic_linear", A.tree_schedule(P, root, A.linear_children, n, down=True))
    if alg == 1:
        return linear
    if alg in (8, 9) and _count(n) < P:  # both hand counts below one element per rank to basic linear
        return linear
    if alg == 4:
        return "split_binary_tree", split_bintree(P, n, root)
    trees = {2: ("chain", lambda: T.chain(chain_fanout, P, root)), 3: ("pipeline", lambda: T.chain(1, P, root)),
             5: ("binary_tree", lambda: T.tree(BINARY_FANOUT, P, root)), 6: ("binomial", lambda: T.bmtree(P, root)),
             7: ("knomial", lambda: T.kmtree(P, root, KNOMIAL_RADIX))}
    if alg in trees:
        name, build = trees[alg]
        return name, along(build(), n, down=True)
    if alg == 8:
        return "scatter_allgather", scatter_allgather(P, n, root, ring=False)
    return "scatter_allgather_ring", scatter_allgather(P, n, root, ring=True)


def linear_reduce(P: int, n: int, root: int) -> A.Schedule:
    """ompi_coll_base_reduce_intra_basic_linear: the root receives from rank P-1 down to rank 0."""
    s = A.empty(P)
    s[root] = [[(A.RECV, q, n)] for q in range(P - 1, -1, -1) if q != root]
    for q in range(P):
        if q != root:
            s[q].append([(A.SEND, root, n)])
    return s


def in_order_binary_reduce(P: int, n: int, root: int) -> A.Schedule:
    """ompi_coll_base_reduce_intra_in_order_binary: up the in-order binary tree to rank P-1, which
    then sends the result on to the root."""
    s = along(T.in_order_bintree(P), n, down=False)
    if root != P - 1:
        s[P - 1].append([(A.SEND, root, n)])
        s[root].append([(A.RECV, P - 1, n)])
    return s


def _reduce(alg: int, P: int, n: int, root: int, chain_fanout: int = 0) -> tuple[str, A.Schedule]:
    if alg == 1:
        return "linear", linear_reduce(P, n, root)
    if alg == 7:  # below one element per rank of the power of two: basic linear
        if _count(n) >= A.pof2_below(P):
            return "rabenseifner", A.reduce_scatter_gather(P, n, root)
        return "linear", linear_reduce(P, n, root)
    if alg == 6:
        return "in-order_binary", in_order_binary_reduce(P, n, root)
    trees = {2: ("chain", lambda: T.chain(chain_fanout, P, root)), 3: ("pipeline", lambda: T.chain(1, P, root)),
             4: ("binary", lambda: T.tree(BINARY_FANOUT, P, root)),
             5: ("binomial", lambda: T.in_order_bmtree(P, root))}
    name, build = trees[alg]
    return name, along(build(), n, down=False)


def tree_barrier(P: int) -> A.Schedule:
    """ompi_coll_base_barrier_intra_tree: up a binomial tree to rank 0 one partner at a time
    (rank ^ jump, jump = 1, 2, ...), then back down in the reverse order."""
    s = A.empty(P)
    depth = 1 << (P - 1).bit_length()
    jumps = [1 << k for k in range(depth.bit_length() - 1)]
    for r in range(P):
        for down, order in ((False, jumps), (True, jumps[::-1])):
            for jump in order:
                partner = r ^ jump
                if partner & (jump - 1) or partner >= P:
                    continue
                to_partner = (partner < r) != down
                s[r].append([(A.SEND if to_partner else A.RECV, partner, 0)])
    return s


def _alltoall(alg: int, P: int, blocks: list[int]) -> tuple[str, A.Schedule]:
    table = {1: ("linear", A.linear_alltoall), 2: ("pairwise", A.pairwise_alltoall),
             3: ("modified_bruck", A.bruck_alltoall), 4: ("linear_sync", A.linear_alltoall),
             5: ("two_proc", A.pairwise_alltoall)}
    name, build = table[alg]
    return name, build(P, blocks)


def _allgather(alg: int, P: int, sizes: list[int], vector: bool, line: str) -> tuple[str, A.Schedule]:
    names = ({1: "default", 2: "bruck", 3: "ring", 4: "neighbor", 5: "two_proc"} if vector else
             {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor", 6: "two_proc"})
    name = names[alg]
    if name in ("linear", "default"):
        gather = (A.linear_sequential(P, 0, sizes, to_root=True) if vector
                  else choose("MPI_Gather", P, sizes, 0, line=line)[1])
        return name, A.concat(gather, choose("MPI_Bcast", P, [sum(sizes)] * P, 0, line=line)[1])
    if name == "recursive_doubling" and P & (P - 1):
        name = "bruck"  # Open MPI's recursive doubling hands non-powers of two to Bruck
    build = {"bruck": A.bruck_allgather, "recursive_doubling": A.recursive_doubling_allgather,
             "ring": A.ring_allgather, "neighbor": A.neighbor_allgather, "two_proc": A.pair_exchange}[name]
    return name, build(P, sizes)


def _barrier(alg: int, P: int) -> tuple[str, A.Schedule]:
    table = {1: ("linear", A.linear_barrier), 2: ("double_ring", A.double_ring_barrier),
             3: ("recursive_doubling", lambda p: A.allreduce_recursive_doubling(p, 0)),
             4: ("bruck", A.dissemination_barrier), 5: ("two_proc", lambda p: A.pair_exchange(p, [0, 0])),
             6: ("tree", tree_barrier)}
    name, build = table[alg]
    return name, build(P)


def _rooted_linear(alg_name: str, P: int, sizes: list[int], root: int, to_root: bool):
    if alg_name == "binomial":
        return A.binomial_gather(P, root, sizes, to_root)
    if alg_name == "linear_nb":
        return A.linear_nonblocking(P, root, sizes, to_root)
    return A.linear_sequential(P, root, sizes, to_root)


def choose(func: str, P: int, sizes: list[int], root: int, commutative: bool = True, line: str = LINES[0]
           ) -> tuple[str, A.Schedule]:
    """(algorithm, schedule) the tuned component of Open MPI release ``line`` runs for this call."""
    if P == 1:
        return "self", A.empty(1)
    n = sizes[0]

    def pick(collective: str, P: int, total_dsize: int, commutative: bool = True) -> int:
        return decide(collective, P, total_dsize, commutative, line)
    if func == "MPI_Allreduce":
        return _allreduce(pick("allreduce", P, n, commutative), P, n, commutative, line)
    if func == "MPI_Bcast":
        return _bcast(pick("bcast", P, n), P, n, root)
    if func == "MPI_Reduce":
        return _reduce(pick("reduce", P, n, commutative), P, n, root)
    if func == "MPI_Alltoall":
        return _alltoall(pick("alltoall", P, n), P, sizes)
    if func == "MPI_Alltoallv":
        blocks = [s // P for s in sizes]  # a rank's total, spread evenly over its peers
        return ("basic_linear", A.linear_alltoall(P, blocks)) if pick("alltoallv", P, 0) == 1 \
            else ("pairwise", A.pairwise_alltoall(P, blocks))
    if func == "MPI_Allgather":
        return _allgather(pick("allgather", P, n), P, sizes, vector=False, line=line)
    if func == "MPI_Allgatherv":
        return _allgather(pick("allgatherv", P, sum(sizes) // P), P, sizes, vector=True, line=line)
    if func == "MPI_Barrier":
        return _barrier(pick("barrier", P, 0), P)
    if func in ("MPI_Gather", "MPI_Scatter"):
        coll = func[4:].lower()
        names = {"gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
                 "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"}}[coll]
        name = names[pick(coll, P, n)]
        return name, _rooted_linear(name, P, sizes, root, to_root=coll == "gather")
    if func in ("MPI_Gatherv", "MPI_Scatterv"):  # coll/tuned has no rule: coll/base's linear one runs
        return "basic_linear", A.linear_sequential(P, root, sizes, to_root=func == "MPI_Gatherv")
    raise KeyError(func)



def forced(func: str, alg: int, P: int, n: int, root: int = 0, chain_fanout: int = FORCED_CHAIN_FANOUT
           ) -> tuple[str, A.Schedule]:
    """(algorithm, schedule) of tuned's algorithm ``alg`` forced by coll_tuned_use_dynamic_rules=1 and
    coll_tuned_<coll>_algorithm=alg, with the other forced parameters at their defaults (segment size 0,
    chain fan-out ``chain_fanout``): coll_tuned_decision_dynamic.c passes them where the fixed rules
    pass 0."""
    if func == "MPI_Bcast":
        return _bcast(alg, P, n, root, chain_fanout)
    if func == "MPI_Reduce":
        return _reduce(alg, P, n, root, chain_fanout)
    if func == "MPI_Barrier":
        return _barrier(alg, P)
    coll = func[4:].lower()
    name = {1: "basic_linear", 2: "binomial", 3: "linear_sync" if coll == "gather" else "linear_nb"}[alg]
    return name, _rooted_linear(name, P, [n] * P, root, to_root=coll == "gather")
