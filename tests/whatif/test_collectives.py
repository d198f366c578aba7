"""Collective decomposition: the algorithm each library's own rules pick
(thresholds read from their sources, cited in docs/whatif.md), and the exact
messages each algorithm sends."""

import pytest

from scalewise.whatif.collectives import mpich, openmpi, schedule
from scalewise.whatif.collectives.algorithms import SEND, ring_allreduce


def sent(sched, rank):
    """(number of messages, bytes) rank sends in the schedule."""
    msgs = [b for phase in sched[rank] for d, _, b in phase if d == SEND]
    return len(msgs), sum(msgs)


def every_send_is_received(sched):
    out, into = [], []
    for r, phases in enumerate(sched):
        for phase in phases:
            for d, q, b in phase:
                (out if d == SEND else into).append((r, q, b) if d == SEND else (q, r, b))
    return sorted(out) == sorted(into)


# coll_tuned_decision_fixed.c (v4.1.8), allreduce, commutative, 16 <= P < 32:
#   total_dsize < 64 -> 5 (segmented ring), < 4096 -> 3 (recursive doubling), else 6 (rabenseifner)
@pytest.mark.parametrize("nbytes, alg, name", [(32, 5, "recursive_doubling"), (1024, 3, "recursive_doubling"),
                                               (4095, 3, "recursive_doubling"), (4096, 6, "rabenseifner"),
                                               (1 << 20, 6, "rabenseifner")])
def test_openmpi_allreduce_switches_where_tuned_switches(nbytes, alg, name):
    assert openmpi.decide("allreduce", 16, nbytes) == alg
    # segmented ring needs one element per rank; 32 bytes are 4 doubles, so Open MPI falls back
    assert schedule("openmpi", "MPI_Allreduce", 16, nbytes)[0] == name


def test_openmpi_rules_read_other_branches_of_the_source():
    assert openmpi.decide("allreduce", 8, 8191) == 3 and openmpi.decide("allreduce", 8, 8192) == 6
    assert openmpi.decide("allreduce", 16, 100, commutative=False) == 3  # non-commutative branch
    assert openmpi.decide("barrier", 2, 0) == 3 and openmpi.decide("barrier", 100, 0) == 4
    assert openmpi.decide("alltoall", 2, 300) == 5  # communicator_size == 2 branch
    assert openmpi.decide("bcast", 100, 10_000) == 7
    assert schedule("openmpi", "MPI_Bcast", 100, 10_000)[0] == "knomial"
    assert schedule("openmpi", "MPI_Allgather", 12, 64)[0] == "bruck"  # recursive doubling, not a power of 2
    assert openmpi.decide("gather", 300, 4096) == 1 and openmpi.decide("scatter", 70, 1000) == 3


# MPICH 4.0 generic.json, allreduce intra: avg_msg_size<=8 -> recursive doubling; otherwise (built-in op)
# count < pof2 -> recursive doubling, else reduce_scatter_allgather.  MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE
# (2048) no longer takes part in the blocking selection.
@pytest.mark.parametrize("P, nbytes, algorithm", [
    (8, 8, "MPIR_Allreduce_intra_recursive_doubling"),
    (8, 56, "MPIR_Allreduce_intra_recursive_doubling"),  # 7 doubles < pof2 = 8
    (8, 64, "MPIR_Allreduce_intra_reduce_scatter_allgather"),
    (12, 64, "MPIR_Allreduce_intra_reduce_scatter_allgather"),
    (1024, 8192, "MPIR_Allreduce_intra_reduce_scatter_allgather"),  # 1024 doubles
    (1024, 8184, "MPIR_Allreduce_intra_recursive_doubling"),  # 1023 doubles < 1024
    (8, 1 << 20, "MPIR_Allreduce_intra_reduce_scatter_allgather")])
def test_mpich_allreduce_follows_the_json_selection(P, nbytes, algorithm):
    assert schedule("mpich", "MPI_Allreduce", P, nbytes)[0] == algorithm


def test_mpich_selection_other_collectives():
    assert mpich.select("MPI_Bcast", 8, [12288]) == "MPIR_Bcast_intra_binomial"
    # csel.c evaluates "comm_size<8" as comm_size <= 8: 8 ranks still take the first branch
    assert mpich.select("MPI_Bcast", 8, [1 << 20]) == "MPIR_Bcast_intra_binomial"
    assert mpich.select("MPI_Bcast", 16, [12289]) == "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"
    assert mpich.select("MPI_Bcast", 12, [12289]) == "MPIR_Bcast_intra_scatter_ring_allgather"
    assert mpich.select("MPI_Alltoall", 16, [256]) == "MPIR_Alltoall_intra_brucks"
    assert mpich.select("MPI_Alltoall", 16, [257]) == "MPIR_Alltoall_intra_scattered"
    assert mpich.select("MPI_Alltoall", 16, [32769]) == "MPIR_Alltoall_intra_pairwise"
    assert mpich.select("MPI_Allgather", 6, [81920 // 6]) == "MPIR_Allgather_intra_brucks"
    assert mpich.select("MPI_Allgather", 8, [65536]) == "MPIR_Allgather_intra_ring"
    assert mpich.select("MPI_Barrier", 5, [0]) == "MPIR_Barrier_intra_dissemination"


def test_recursive_doubling_counts_power_of_two():
    name, s = schedule("openmpi", "MPI_Allreduce", 8, 1024)
    assert name == "recursive_doubling"
    assert [sent(s, r) for r in range(8)] == [(3, 3072)] * 8


def test_recursive_doubling_counts_with_extra_ranks():
    _, s = schedule("mpich", "MPI_Allreduce", 6, 8)
    # pof2 = 4: ranks 0 and 2 fold into 1 and 3 and get the answer back; 1, 3 also send it back
    assert [sent(s, r) for r in range(6)] == [(1, 8), (3, 24), (1, 8), (3, 24), (2, 16), (2, 16)]
    assert every_send_is_received(s)


def test_rabenseifner_counts():
    n = 1 << 20
    _, s = schedule("openmpi", "MPI_Allreduce", 8, n)
    # halving sends n/2, n/4, n/8; doubling sends n/8, n/4, n/2
    assert [sent(s, r) for r in range(8)] == [(6, 2 * n * 7 // 8)] * 8
    _, s = schedule("mpich", "MPI_Allreduce", 12, 12 * 4096)
    n = 12 * 4096  # pof2 = 8, ranks 0..7 pair up for the fold
    assert sent(s, 0) == (1, n) and sent(s, 1) == (7, n + 2 * n * 7 // 8)
    assert sent(s, 8) == (6, 2 * n * 7 // 8) and every_send_is_received(s)


def test_ring_counts_split_uneven_blocks():
    # tuned picks the ring for 2 ranks at 4096..8191 bytes; 2 (P-1) steps of one block each
    name, s = schedule("openmpi", "MPI_Allreduce", 2, 4096)
    assert name == "ring" and [sent(s, r) for r in range(2)] == [(2, 4096)] * 2
    s = ring_allreduce(3, 10)  # blocks of 4, 3, 3 bytes; rank r passes on block r - step
    assert [sent(s, r) for r in range(3)] == [(4, 14), (4, 13), (4, 13)]
    assert every_send_is_received(s)


def test_binomial_bcast_and_gather_counts():
    name, s = schedule("mpich", "MPI_Bcast", 8, 1000, root=0)
    assert name == "MPIR_Bcast_intra_binomial"
    assert [sent(s, r) for r in range(8)] == [(3, 3000), (0, 0), (1, 1000), (0, 0), (2, 2000), (0, 0),
                                              (1, 1000), (0, 0)]
    name, s = schedule("mpich", "MPI_Gather", 8, 100, root=0)
    # subtrees send their whole blocks: rank 4 carries 4 blocks, 2 and 6 carry 2
    assert [sent(s, r) for r in range(8)] == [(0, 0), (1, 100), (1, 200), (1, 100), (1, 400), (1, 100),
                                              (1, 200), (1, 100)]


def test_every_algorithm_is_matched_for_many_sizes():
    funcs = ["MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Allgather",
             "MPI_Allgatherv", "MPI_Barrier", "MPI_Gather", "MPI_Scatter", "MPI_Gatherv", "MPI_Scatterv"]
    seen = set()
    for library in ("openmpi", "mpich"):
        for func in funcs:
            for P in (2, 3, 5, 8, 12, 33, 64, 130):
                for n in (0, 8, 3000, 70_000, 1 << 20):
                    name, s = schedule(library, func, P, n, root=P // 2)
                    assert every_send_is_received(s), (library, func, P, n, name)
                    seen.add((library, name))
    assert len(seen) >= 35  # the size and count crossovers reach most algorithms


# Per release line: Open MPI 5.0's coll_tuned_decision_fixed.c (v5.0.10, and v5.0.x's head) is the same file as
# 4.1's, so the same thresholds; MPICH 5.0's generic.json (v5.0.1) differs from 4.0's in barrier alone.
@pytest.mark.parametrize("nbytes, alg", [(32, 5), (4095, 3), (4096, 6)])
def test_open_mpi_5_rules_are_read_from_its_own_source_and_keep_41s_thresholds(nbytes, alg):
    assert openmpi.rules("openmpi-5.0")["source"].startswith("open-mpi/ompi v5.0.10 ")
    assert openmpi.decide("allreduce", 16, nbytes, line="openmpi-5.0") == alg
    assert openmpi.decide("bcast", 100, 10_000, line="openmpi-5.0") == 7
    assert openmpi.decide("alltoall", 2, 300, line="openmpi-5.0") == 5
    assert schedule("openmpi-5.0.11", "MPI_Allreduce", 16, nbytes) == schedule("openmpi", "MPI_Allreduce", 16, nbytes)


def test_mpich_5_barrier_is_k_dissemination_with_the_exchanges_of_4s_dissemination():
    assert mpich.rules("mpich-5.0")["collective=barrier"]["comm_type=intra"]["comm_hierarchy=any"] == {
        "algorithm=MPIR_Barrier_intra_k_dissemination": {"k=2": {}}}
    name5, s5 = schedule("mpich-5.0.2", "MPI_Barrier", 5, 0)
    name4, s4 = schedule("mpich", "MPI_Barrier", 5, 0)
    assert (name5, name4) == ("MPIR_Barrier_intra_k_dissemination", "MPIR_Barrier_intra_dissemination")
    assert s5 == s4 and every_send_is_received(s5)
    assert schedule("mpich-5.0.2", "MPI_Allreduce", 8, 64)[0] == "MPIR_Allreduce_intra_reduce_scatter_allgather"
    assert mpich.select("MPI_Bcast", 16, [12289], line="mpich-5.0") == \
        "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"


def test_an_unknown_library_is_one_line():
    from scalewise.errors import ScalewiseError
    with pytest.raises(ScalewiseError, match=r"^--mpi: MPI openmpi-3.1.6 is not supported \(known: openmpi-4.1, "):
        schedule("openmpi-3.1.6", "MPI_Barrier", 4, 0)
