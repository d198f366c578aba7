"""What each MPI library lets a user choose for a collective or for point-to-point, as parameter sets.

The sets follow the release line of the MPI's identity (launch/releases.py).
Open MPI 4.1 and 5.0 (``ompi_info --all``, component coll/tuned): an algorithm is
forced with ``coll_tuned_use_dynamic_rules=1`` and
``coll_tuned_<coll>_algorithm=N``; the numbers below are the ``Valid values``
Open MPI 4.1.4 prints on this machine (0, "ignore", is the default: the
fixed decision rules).  MPICH 4.0 (``mpivars``): ``MPIR_CVAR_<COLL>_INTRA_ALGORITHM``
takes a name; ``auto`` is the default.  Point-to-point: the size up to which a
message is sent eagerly (Open MPI's ``btl_<btl>_eager_limit``; UCX's
``UCX_RNDV_THRESH`` for Debian's MPICH 4.0, whose UCX carries messages on one node too, and for
MPICH 5.0 between nodes; MPICH 5.0's shared-memory cell with its CMA threshold on one node).  Open MPI 5.0 adds ``sparbit``
to allgather(v), and puts coll/han (priority 35) before coll/tuned (30) on a
communicator that spans nodes; MPICH 5.0 (its ``mpivars``) replaces barrier's
``dissemination`` by ``k_dissemination``.  Intel MPI 2021: ``I_MPI_ADJUST_<COLL>=N``,
numbered as in its Developer Reference, "I_MPI_ADJUST Family Environment
Variables" (docs/tuning.md cites the page).
"""

from __future__ import annotations

from scalewise.campaign.mpi_settings import MpiSettings
from scalewise.model.profile import bin_bounds
from scalewise.tune.targets import TuneTarget

OPENMPI_ALGORITHMS: dict[str, dict[int, str]] = {
    "allreduce": {1: "basic_linear", 2: "nonoverlapping", 3: "recursive_doubling", 4: "ring",
                  5: "segmented_ring", 6: "rabenseifner"},
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_binary_tree", 5: "binary_tree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial", 6: "in-order_binary",
               7: "rabenseifner"},
    "alltoall": {1: "linear", 2: "pairwise", 3: "modified_bruck", 4: "linear_sync", 5: "two_proc"},
    "alltoallv": {1: "basic_linear", 2: "pairwise"},
    "allgather": {1: "linear", 2: "bruck", 3: "recursive_doubling", 4: "ring", 5: "neighbor", 6: "two_proc"},
    "allgatherv": {1: "default", 2: "bruck", 3: "ring", 4: "neighbor", 5: "two_proc"},
    "barrier": {1: "linear", 2: "double_ring", 3: "recursive_doubling", 4: "bruck", 5: "two_proc", 6: "tree"},
    "gather": {1: "basic_linear", 2: "binomial", 3: "linear_sync"},
    "scatter": {1: "basic_linear", 2: "binomial", 3: "linear_nb"},
    "reduce_scatter": {1: "non-overlapping", 2: "recursive_halving", 3: "ring", 4: "butterfly"},
}
# Open MPI 5.0.11's ompi_info --all: the same numbers, and sparbit last in allgather and allgatherv.
OPENMPI5_ALGORITHMS: dict[str, dict[int, str]] = {**OPENMPI_ALGORITHMS,
                                                  "allgather": {**OPENMPI_ALGORITHMS["allgather"], 7: "sparbit"},
                                                  "allgatherv": {**OPENMPI_ALGORITHMS["allgatherv"], 6: "sparbit"}}
# Above coll/han's default priority (35 in Open MPI 5.0), so that a forced coll/tuned algorithm is the one
# that runs on a communicator spanning nodes (han disqualifies itself on one node).
OPENMPI5_TUNED_PRIORITY = "40"
# Open MPI's two_proc algorithms refuse any communicator but two ranks.
_TWO_PROC_ONLY = "two_proc"

MPICH_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": ("nb", "smp", "recursive_doubling", "reduce_scatter_allgather"),
    "bcast": ("binomial", "nb", "smp", "scatter_recursive_doubling_allgather", "scatter_ring_allgather"),
    "reduce": ("binomial", "nb", "smp", "reduce_scatter_gather"),
    "alltoall": ("brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"),
    "alltoallv": ("nb", "pairwise_sendrecv_replace", "scattered"),
    "allgather": ("brucks", "nb", "recursive_doubling", "ring"),
    "allgatherv": ("brucks", "nb", "recursive_doubling", "ring"),
    "barrier": ("nb", "smp", "dissemination"),
    "gather": ("binomial", "nb"),
    "scatter": ("binomial", "nb"),
    "reduce_scatter": ("nb", "noncommutative", "pairwise", "recursive_doubling", "recursive_halving"),
}

MPICH5_ALGORITHMS: dict[str, tuple[str, ...]] = {**MPICH_ALGORITHMS, "barrier": ("nb", "smp", "k_dissemination")}

# Intel MPI 2021's presets a flat communicator can take (the topology-aware ones are left out: across nodes
# they depend on the placement).  Each was seen, under gdb, to enter its algorithm's MPIR_ function in Intel
# MPI 2021.19 (docs/tuning.md); Shumilin's Reduce is its MPIR_Reduce_intra_ring.
INTELMPI_ALGORITHMS: dict[str, dict[int, str]] = {
    "allreduce": {1: "recursive_doubling", 2: "rabenseifner", 3: "reduce_bcast", 7: "shumilin_ring", 8: "ring"},
    "bcast": {1: "binomial", 2: "recursive_doubling", 3: "ring", 7: "shumilin", 8: "knomial"},
    "reduce": {1: "shumilin", 2: "binomial", 5: "rabenseifner", 7: "knomial"},
    "alltoall": {1: "bruck", 2: "isend_irecv_waitall", 3: "pairwise"},
    "alltoallv": {1: "isend_irecv_waitall", 2: "plum"},
    "allgather": {1: "recursive_doubling", 2: "bruck", 3: "ring", 5: "knomial"},
    "allgatherv": {1: "recursive_doubling", 2: "bruck", 3: "ring"},
    "barrier": {1: "dissemination"},
    "gather": {1: "binomial", 3: "shumilin"},
    "scatter": {1: "binomial", 3: "shumilin"},
    "reduce_scatter": {1: "recursive_halving", 2: "pairwise", 3: "recursive_doubling", 4: "reduce_scatterv"},
}
# Presets the documentation lists that Intel MPI 2021.19 did not run on 4 ranks of one node (its own
# selection ran instead), are left out: Allreduce 9 (Knomial), Alltoall 4 (Plum's), Barrier 2 (recursive
# doubling); so are those not tried (Allreduce 5, Barrier 5).

# Defaults on this machine (ompi_info --all; mpivars), the value a threshold set moves away from.
OPENMPI_EAGER = {"vader": 4096, "sm": 4096, "tcp": 65536}  # sm: Open MPI 5.0's name for vader
MPICH5_SHM_CELL = 8192  # MPICH 5.0.2's mpivars, as its CMA threshold
MPICH5_PACK_BUFFER = 16384  # MPIR_CVAR_CH4_PACK_BUFFER_SIZE: must hold a cell
EAGER_RANGE = (1024, 1 << 20)


def algorithm_sets(line: str, target: TuneTarget, spans_nodes: bool = False) -> dict[str, MpiSettings]:
    """One parameter set per algorithm the library (its release ``line``, launch/releases.py) offers for
    ``target``'s collective (none if it offers none)."""
    coll = target.collective
    out: dict[str, MpiSettings] = {}
    if line.startswith("openmpi-"):
        table = OPENMPI5_ALGORITHMS if line == "openmpi-5.0" else OPENMPI_ALGORITHMS
        extra = {"coll_tuned_priority": OPENMPI5_TUNED_PRIORITY} if line == "openmpi-5.0" and spans_nodes else {}
        for number, name in table.get(coll, {}).items():
            if name == _TWO_PROC_ONLY and target.comm_size != 2:
                continue
            out[f"{coll}-{number}-{name}"] = MpiSettings(mca={"coll_tuned_use_dynamic_rules": "1",
                                                              f"coll_tuned_{coll}_algorithm": str(number), **extra})
    elif line.startswith("mpich-"):
        for name in (MPICH5_ALGORITHMS if line == "mpich-5.0" else MPICH_ALGORITHMS).get(coll, ()):
            out[f"{coll}-{name}"] = MpiSettings(cvars={f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM": name})
    elif line.startswith("intelmpi-"):
        for number, name in INTELMPI_ALGORITHMS.get(coll, {}).items():
            out[f"{coll}-{number}-{name}"] = MpiSettings(env={f"I_MPI_ADJUST_{coll.upper()}": str(number)})
    return out


def threshold_values(target: TuneTarget, default: int) -> list[int]:
    """Thresholds worth a run: just above the busiest size (it goes eagerly) and just below it (it does not)."""
    if target.mode_bin < 1:
        return []
    lo, hi = bin_bounds(target.mode_bin)
    values = {min(max(v, EAGER_RANGE[0]), EAGER_RANGE[1]) for v in (hi, lo // 2)}
    return sorted(v for v in values if v != default)


def threshold_sets(line: str, target: TuneTarget, over_network: bool) -> dict[str, MpiSettings]:
    """Parameter sets that move the eager/rendezvous threshold around ``target``'s typical size (none for
    Intel MPI between nodes: its library names no threshold of its OFI netmod)."""
    out: dict[str, MpiSettings] = {}
    if line.startswith("openmpi-"):
        btl = "tcp" if over_network else ("sm" if line == "openmpi-5.0" else "vader")
        for v in threshold_values(target, OPENMPI_EAGER[btl]):
            out[f"eager-{v}"] = MpiSettings(mca={f"btl_{btl}_eager_limit": str(v)})
    elif line == "mpich-5.0" and not over_network:
        # On one node MPICH 5.0 sends eagerly what fits a shared-memory cell and hands messages of
        # MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD (8192) or more to CMA's single copy, whatever the cell: a
        # larger cell alone moved nothing, and one above the pack buffer (16384) aborts MPI_Init
        # ("MPIR_CVAR_CH4_PACK_BUFFER_SIZE >= buf_size_limit"): the three move together
        # (docs/benchmarks.md, "Eager limits on one host").
        for v in threshold_values(target, MPICH5_SHM_CELL):
            out[f"eager-{v}"] = MpiSettings(cvars={"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": str(v),
                                                   "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": str(v),
                                                   "MPIR_CVAR_CH4_PACK_BUFFER_SIZE": str(max(v, MPICH5_PACK_BUFFER))})
    elif line.startswith("mpich-"):
        # UCX's threshold: between nodes (Debian's MPICH 4.0 and MPICH 5.0's default netmod) and, for
        # Debian's ch4:ucx build, on one node too, where UCX's shared memory carries the messages and the
        # POSIX cell size changes nothing (UCX_PROTO_INFO=y prints the ranges in force). MPICH 5.0 may be
        # built with OFI as its netmod, which reads its own CVAR and ignores UCX's (each set moves the
        # one threshold in use).
        ofi = ["MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD"] if line == "mpich-5.0" else []
        for v in threshold_values(target, -1):
            out[f"eager-{v}"] = MpiSettings(mpich_env={"UCX_RNDV_THRESH": str(v)}, cvars=dict.fromkeys(ofi, str(v)))
    elif line.startswith("intelmpi-") and not over_network:
        # An expert variable of Intel MPI 2021's shared memory (its library lists it; impi_info prints no
        # default, so no value is left out as the default).
        for v in threshold_values(target, -1):
            out[f"eager-{v}"] = MpiSettings(env={"I_MPI_SHM_EAGER_THRESHOLD": str(v)})
    return out


def candidate_sets(line: str, targets: list[TuneTarget], over_network: bool, spans_nodes: bool = False
                   ) -> dict[str, dict[str, MpiSettings]]:
    """Per target name, its parameter sets (each changes one thing from the default), busiest target first."""
    out = {}
    for t in targets:
        sets = algorithm_sets(line, t, spans_nodes) if t.collective else threshold_sets(line, t, over_network)
        if sets:
            out[t.name] = sets
    return out
