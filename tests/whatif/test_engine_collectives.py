"""Collectives the engine runs for all their members at once (runtime/replay/collective.c), against the
pure-Python reference, which walks every member's schedule op by op: every function of every library's
tables, on the world and on communicators of a subset in no rank order, eager and rendezvous sizes, ranks
reaching each call in different orders between point-to-point traffic, and the programs where the engine
must go back to walking the schedules op by op (a rank that passes a call before the others come, members
reaching one call with different signatures)."""

import random

import pytest

from scalewise import whatif
from scalewise.whatif.trace import Call as C

from test_engine import matches_reference

LIBRARIES = ["openmpi-4.1.4", "openmpi-5.0.8", "mpich-4.0.2", "mpich-5.0.2", "intelmpi-2021.19"]
FUNCTIONS = ["MPI_Allgather", "MPI_Allgatherv", "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Barrier",
             "MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Reduce", "MPI_Scatter", "MPI_Scatterv"]


def network(seed):
    """Eager up to 4 KiB; shaped, both ways slower, or one direction at a time, by seed."""
    shaping = whatif.Shaping(rate_gbit_s=2.0, bucket_bytes=16384) if seed % 3 == 1 else None
    return whatif.Network(name="pw", eager_limit=4096, shaping=shaping, both_ways=1.2 if seed % 3 == 2 else None,
                          duplex="half" if seed % 4 == 3 else "full", ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=65536, latency_us=2.5, overhead_us=0.8, gap_us=0.3, bandwidth_gbit_s=40),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])


def mixed_trace(seed, P):
    """Every collective function on three communicators (the world, a subset in no rank order and one
    overlapping it), each rank arriving after its own compute and a halo exchange with random partners."""
    rnd = random.Random(seed)
    ranks = [[] for _ in range(P)]
    sub = rnd.sample(range(P), P // 2 + 1)
    comms = {4: sub, 6: [r for r in reversed(range(P)) if r not in sub[1:]]}
    req = [0] * P
    for call in range(3 * len(FUNCTIONS)):
        order = list(range(P))
        rnd.shuffle(order)
        for a, b in zip(order[::2], order[1::2]):  # point-to-point between the calls, some rendezvous
            n = rnd.choice([8, 5000, 70000])
            for x, y in ((a, b), (b, a)):
                ranks[x] += [C("MPI_Irecv", y, n, req=req[x], compute=rnd.random() * 2e-5),
                             C("MPI_Isend", y, n, req=req[x] + 1),
                             C("MPI_Waitall", reqs=(req[x], req[x] + 1), compute=rnd.random() * 1e-6)]
                req[x] += 2
        func = FUNCTIONS[call % len(FUNCTIONS)]
        comm = rnd.choice([0, 4, 6])
        members = comms.get(comm, list(range(P)))
        root, same, commutative = rnd.randrange(len(members)), rnd.choice([8, 3000, 200_000]), rnd.random() < 0.8
        for w in members:
            n = rnd.choice([0, 16, 5000, 90_000]) if func.endswith("v") else same
            ranks[w].append(C(func, bytes=n, root=root, comm=comm, compute=rnd.random() * 1e-4 * (1 + w % 3),
                              commutative=commutative))
    return whatif.from_calls(ranks, comms)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("seed", range(4))
def test_every_collective_of_every_library_matches_the_reference(library, seed):
    P = [5, 8, 12, 7][seed]
    matches_reference(mixed_trace(seed, P), network(seed), library)


def test_many_repeated_collectives_on_many_ranks_match_the_reference():
    # A 64-rank stencil step with an Allreduce (the bench's pattern), and a Bcast of a rendezvous size: the
    # same call over and over, each member's state carried from one call to the next.
    rnd = random.Random(5)
    P = 64
    ranks = [[] for _ in range(P)]
    for step in range(12):
        for r in range(P):
            nb = [(r + 1) % P, (r - 1) % P]
            q = 4 * step  # request ids are not reused
            ranks[r] += [C("MPI_Irecv", nb[1], 32768, req=q, compute=rnd.random() * 1e-4),
                         C("MPI_Irecv", nb[0], 32768, req=q + 1), C("MPI_Isend", nb[0], 32768, req=q + 2),
                         C("MPI_Isend", nb[1], 32768, req=q + 3), C("MPI_Waitall", reqs=(q, q + 1, q + 2, q + 3)),
                         C("MPI_Allreduce", bytes=8, compute=rnd.random() * 1e-6)]
            if step % 3 == 2:
                ranks[r].append(C("MPI_Bcast", bytes=100_000, root=step % P, compute=rnd.random() * 1e-5))
    for library in ("openmpi", "mpich"):
        matches_reference(whatif.from_calls(ranks), network(1), library)


def test_a_rank_passing_a_collective_before_the_others_come_matches_the_reference():
    # The root of an eager Bcast is through it before the others call it, then sends to rank 1, which
    # receives before its own Bcast: no rank can go on while the root waits for the call's other members,
    # so the engine walks the calls op by op from there; the collectives before and after still match.
    ranks = [[C("MPI_Allreduce", bytes=8, compute=1e-5 * r)] for r in range(4)]
    ranks[0] += [C("MPI_Bcast", bytes=8, root=0), C("MPI_Send", 1, 64, compute=2e-6)]
    ranks[1] += [C("MPI_Recv", 0, 64, compute=3e-6), C("MPI_Bcast", bytes=8, root=0)]
    for r in (2, 3):
        ranks[r].append(C("MPI_Bcast", bytes=8, root=0, compute=1e-6))
    for r in range(4):
        ranks[r] += [C("MPI_Allreduce", bytes=8, compute=1e-6 * r), C("MPI_Barrier", compute=1e-6)]
    got = matches_reference(whatif.from_calls(ranks), network(0))
    assert got.ranks["finish"].min() > 1e-5 * 3  # the last Allreduce and the Barrier wait for every rank


def test_members_reaching_one_call_with_different_sizes_match_the_reference():
    # Rank 2 records its Bcast with another byte count (its own signature, the same schedule): the members
    # disagree, and the engine walks each member's own template op by op, as the reference does.
    ranks = [[C("MPI_Barrier", compute=1e-5 * r), C("MPI_Bcast", bytes=16 if r == 2 else 8, root=0,
                                                      compute=1e-6 * (3 - r)), C("MPI_Allreduce", bytes=8)]
             for r in range(4)]
    matches_reference(whatif.from_calls(ranks), network(0))
