"""MPICH 4.0 and 5.0: their default collective selection (maint/tuning/coll/mpir/generic.json
of each release, vendored as data/mpich-<line>-generic.json and walked here the
way src/mpi/coll/src/csel.c walks it) and the MPIR algorithms it names.  The two
differ in one rule: 5.0's barrier is k_dissemination with k=2, the same
exchanges as 4.0's dissemination.

The communicator is taken as flat (comm_hierarchy is not "parent"): one rank
per node, which is the set-up the network models describe."""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources

from scalewise.errors import ScalewiseError
from scalewise.whatif.collectives import algorithms as A

ELEMENT_BYTES = 8  # count-based keys (count<pow2) need elements: doubles assumed
THROTTLE = 32  # MPIR_CVAR_ALLTOALL_THROTTLE default: peers in flight in the "scattered" algorithms


_KEY = re.compile(r"^(\w+)(<=|<|=)(.+)$")


LINES = ("mpich-4.0", "mpich-5.0")


@cache
def rules(line: str = LINES[0]) -> dict:
    text = resources.files("scalewise.whatif").joinpath(f"data/{line}-generic.json").read_text()
    return json.loads(text)["rules"]


def _sizes_seen(func: str, P: int, sizes: list[int]) -> tuple[int, int]:
    """(avg_msg_size, total_msg_size) as csel.c computes them for this collective."""
    n = sizes[0]
    if func in ("MPI_Allgatherv", "MPI_Alltoallv", "MPI_Gatherv", "MPI_Scatterv"):
        return n, sum(sizes)
    return n, n * P


def _holds(key: str, facts: dict) -> bool:
    name, op, limit = _KEY.match(key).groups()
    if name not in facts:
        raise ScalewiseError(f"MPICH selection: unsupported key '{key}'")
    got = facts[name]
    if limit == "any":
        return True
    if limit == "pow2":  # comm_size=pow2: a power of two; count<pow2: below the largest one <= P
        return got & (got - 1) == 0 if name == "comm_size" else got < facts["pof2"]
    if op == "=":
        return str(got) == limit
    # csel.c tests "comm_size<N" with <= (COMM_SIZE_LT); the other "<" keys are strict
    if op == "<=" or name == "comm_size":
        return got <= int(limit)
    return got < int(limit)


def select(func: str, P: int, sizes: list[int], commutative: bool = True, line: str = LINES[0]) -> str:
    """The MPIR algorithm the default selection of MPICH release ``line`` picks."""
    avg, total = _sizes_seen(func, P, sizes)
    facts = {"collective": func[4:].lower(), "comm_type": "intra", "comm_size": P, "avg_msg_size": avg,
             "total_msg_size": total, "count": math.ceil(sizes[0] / ELEMENT_BYTES), "pof2": A.pof2_below(P),
             "comm_hierarchy": "flat", "is_commutative": "yes" if commutative else "no",
             "is_op_built_in": "yes", "is_sendbuf_inplace": "no", "is_block_regular": "yes",
             "is_node_consecutive": "no"}
    node = rules(line)["collective=" + facts["collective"]]
    while True:
        for key in node:
            if key.startswith("algorithm="):
                return key.removeprefix("algorithm=")
            if _holds(key, facts):
                node = node[key]
                break
        else:
            raise ScalewiseError(f"MPICH selection: no rule matches {func} on {P} ranks")


def _builders(P: int, sizes: list[int], root: int):
    n = sizes[0]
    rd_or_bruck = A.recursive_doubling_allgather if P & (P - 1) == 0 else A.bruck_allgather
    return {
        "MPIR_Bcast_intra_binomial": lambda: A.tree_schedule(P, root, A.binomial_children, n, down=True),
        "MPIR_Bcast_intra_scatter_recursive_doubling_allgather":
            lambda: A.scatter_then_allgather(P, root, n, rd_or_bruck),
        "MPIR_Bcast_intra_scatter_ring_allgather": lambda: A.scatter_then_allgather(P, root, n, A.ring_allgather),
        "MPIR_Allreduce_intra_recursive_doubling": lambda: A.allreduce_recursive_doubling(P, n),
        # picked for 0-byte calls; with one rank per node it reduces among the node leaders only
        "MPIR_Allreduce_intra_smp": lambda: A.allreduce_recursive_doubling(P, n),
        "MPIR_Allreduce_intra_reduce_scatter_allgather": lambda: A.rabenseifner(P, n),
        "MPIR_Reduce_intra_binomial": lambda: A.tree_schedule(P, root, A.binomial_children, n, down=False),
        "MPIR_Reduce_intra_reduce_scatter_gather": lambda: A.reduce_scatter_gather(P, n, root),
        "MPIR_Allgather_intra_recursive_doubling": lambda: A.recursive_doubling_allgather(P, sizes),
        "MPIR_Allgather_intra_brucks": lambda: A.bruck_allgather(P, sizes),
        "MPIR_Allgather_intra_ring": lambda: A.ring_allgather(P, sizes),
        "MPIR_Allgatherv_intra_recursive_doubling": lambda: A.recursive_doubling_allgather(P, sizes),
        "MPIR_Allgatherv_intra_brucks": lambda: A.bruck_allgather(P, sizes),
        "MPIR_Allgatherv_intra_ring": lambda: A.ring_allgather(P, sizes),
        "MPIR_Gather_intra_binomial": lambda: A.binomial_gather(P, root, sizes, to_root=True),
        "MPIR_Scatter_intra_binomial": lambda: A.binomial_gather(P, root, sizes, to_root=False),
        "MPIR_Gatherv_allcomm_linear": lambda: A.linear_nonblocking(P, root, sizes, to_root=True),
        "MPIR_Scatterv_allcomm_linear": lambda: A.linear_nonblocking(P, root, sizes, to_root=False),
        "MPIR_Barrier_intra_dissemination": lambda: A.dissemination_barrier(P),
        "MPIR_Barrier_intra_k_dissemination": lambda: A.dissemination_barrier(P),  # k=2: one peer a round
        "MPIR_Alltoall_intra_brucks": lambda: A.bruck_alltoall(P, sizes),
        "MPIR_Alltoall_intra_scattered": lambda: A.linear_alltoall(P, sizes, THROTTLE),
        "MPIR_Alltoall_intra_pairwise": lambda: A.pairwise_alltoall(P, sizes),
        "MPIR_Alltoallv_intra_scattered": lambda: A.linear_alltoall(P, [s // P for s in sizes], THROTTLE),
    }


def choose(func: str, P: int, sizes: list[int], root: int, commutative: bool = True, line: str = LINES[0]
           ) -> tuple[str, A.Schedule]:
    """(algorithm, schedule) MPICH release ``line`` runs for this call."""
    if P == 1:
        return "self", A.empty(1)
    name = select(func, P, sizes, commutative, line)
    builders = _builders(P, sizes, root)
    if name not in builders:
        raise ScalewiseError(f"MPICH selection picked {name}, which the replay does not model")
    return name, builders[name]()
