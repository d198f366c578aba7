"""Open MPI 4.1 and 5.0 coll/tuned: the fixed decision rules (data/openmpi-<line>-tuned.json,
extracted from coll_tuned_decision_fixed.c of each release by scripts/ompi-tuned-rules.py;
the two are the same rules) and the numbered algorithms they name, with segment
size 0 (no pipelining) as the fixed rules pass it."""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources

from scalewise.whatif.collectives import algorithms as A

ELEMENT_BYTES = 8  # a trace has bytes, the rules' "count" checks need elements: doubles assumed
KNOMIAL_RADIX = 4  # coll_tuned_bcast_knomial_radix default
CHAIN_FANOUT = 4  # coll_tuned_init_chain_fanout default
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


def _bcast(alg: int, P: int, n: int, root: int) -> tuple[str, A.Schedule]:
    trees = {1: ("basic_linear", A.linear_children),
             2: ("chain", lambda v, p: A.chain_children(v, p, CHAIN_FANOUT)),
             3: ("pipeline", lambda v, p: A.chain_children(v, p, 1)),
             4: ("split_binary_tree", A.binary_children), 5: ("binary_tree", A.binary_children),
             6: ("binomial", A.binomial_children),
             7: ("knomial", lambda v, p: A.knomial_children(v, p, KNOMIAL_RADIX))}
    if alg in trees or _count(n) < P:
        name, children = trees.get(alg, trees[6])
        return name, A.tree_schedule(P, root, children, n, down=True)
    if alg == 8:
        rd = A.recursive_doubling_allgather if P & (P - 1) == 0 else A.bruck_allgather
        return "scatter_allgather", A.scatter_then_allgather(P, root, n, rd)
    return "scatter_allgather_ring", A.scatter_then_allgather(P, root, n, A.ring_allgather)


def _reduce(alg: int, P: int, n: int, root: int) -> tuple[str, A.Schedule]:
    if alg == 1:
        return "linear", A.linear_sequential(P, root, [n] * P, to_root=True)
    if alg == 7 and _count(n) >= A.pof2_below(P):
        return "rabenseifner", A.reduce_scatter_gather(P, n, root)
    trees = {2: ("chain", lambda v, p: A.chain_children(v, p, CHAIN_FANOUT)),
             3: ("pipeline", lambda v, p: A.chain_children(v, p, 1)),
             4: ("binary", A.binary_children), 5: ("binomial", A.binomial_children),
             6: ("in-order_binary", A.binary_children), 7: ("binomial", A.binomial_children)}
    name, children = trees[alg]
    return name, A.tree_schedule(P, root, children, n, down=False)


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
        alg = pick("barrier", P, 0)
        table = {1: ("linear", A.linear_barrier), 2: ("double_ring", A.double_ring_barrier),
                 3: ("recursive_doubling", lambda p: A.allreduce_recursive_doubling(p, 0)),
                 4: ("bruck", A.dissemination_barrier), 5: ("two_proc", lambda p: A.pair_exchange(p, [0, 0])),
                 6: ("tree", lambda p: A.concat(A.tree_schedule(p, 0, A.binomial_children, 0, down=False),
                                                A.tree_schedule(p, 0, A.binomial_children, 0, down=True)))}
        name, build = table[alg]
        return name, build(P)
    if func in ("MPI_Gather", "MPI_Scatter"):
        coll = func[4:].lower()
        names = {"gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
                 "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"}}[coll]
        name = names[pick(coll, P, n)]
        return name, _rooted_linear(name, P, sizes, root, to_root=coll == "gather")
    if func in ("MPI_Gatherv", "MPI_Scatterv"):  # coll/tuned has no rule: coll/base's linear one runs
        return "basic_linear", A.linear_sequential(P, root, sizes, to_root=func == "MPI_Gatherv")
    raise KeyError(func)

