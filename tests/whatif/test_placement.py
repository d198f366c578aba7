"""Ranks on nodes in the replay: messages inside a node go through shared memory (their own parameters
and channel), messages between nodes through the network.  Hand-worked answers (docs/whatif.md)."""

import numpy as np
import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.whatif.api import nodes_of
from scalewise.whatif.trace import Call as C

from whatif_nets import loggp
from support.traces import random_trace

US = 1e-6
NET = loggp(latency_us=2, overhead_us=1)  # G = 1 ns per byte
SHM = loggp(latency_us=0.5, overhead_us=0.25, gbit_s=80)  # G = 0.1 ns per byte


def two_sends():
    """Rank 0 sends 1000 B to rank 1, then to rank 2; ranks 1 and 2 receive; rank 3 does nothing."""
    return whatif.from_calls([[C("MPI_Send", 1, 1000), C("MPI_Send", 2, 1000)], [C("MPI_Recv", 0, 1000)],
                              [C("MPI_Recv", 0, 1000)], []])


def finishes(trace, **place):
    [p] = whatif.replay(trace, NET, local=SHM, **place)
    return (p.ranks["finish"] / US).to_list()


def test_by_slot_ranks_0_and_1_share_a_node():
    # 0 -> 1 through shared memory: leaves at 0, arrives at o + L + sG = 0.25 + 0.5 + 0.1, costs o = 0.25 more.
    # 0 -> 2 over the network once rank 0 is back from the first send (0.25): 0.25 + 1 + 2 + 1, then o = 1.
    assert finishes(two_sends(), ranks_per_node=2) == pytest.approx([0.25 + 1, 1.1, 5.25, 0])
    # everyone on a node of its own: both over the network, the second behind the first on the NIC
    assert finishes(two_sends()) == pytest.approx([2, 5, 6, 0])
    assert finishes(two_sends(), ranks_per_node=1) == pytest.approx([2, 5, 6, 0])


def test_by_node_ranks_go_round_the_nodes():
    # nodes [0, 1, 0, 1]: 0 -> 1 over the network (arrives at 4, costs o = 1), then 0 -> 2 through shared
    # memory from rank 0's clock of 1: arrives at 1 + 0.85, costs 0.25
    assert finishes(two_sends(), ranks_per_node=2, placement="node") == pytest.approx([1.25, 5, 2.1, 0])


def test_shared_memory_does_not_queue_behind_the_nic():
    big = 1_000_000  # 1 ms on the network's wire
    trace = whatif.from_calls([[C("MPI_Isend", 2, big, req=0), C("MPI_Isend", 1, 1000, req=1),
                                C("MPI_Waitall", reqs=(0, 1))], [C("MPI_Recv", 0, 1000)], [C("MPI_Recv", 0, big)],
                               []])
    # the local message leaves when rank 0 has paid the first send's o (1 us), not when the NIC is free
    assert finishes(trace, ranks_per_node=2)[1] == pytest.approx(1 + 0.85 + 0.25)
    assert finishes(trace)[1] == pytest.approx(1000 + 1 + 2 + 1 + 1)  # one node each: behind the big one


def test_nodes_of_by_slot_and_by_node():
    assert nodes_of(5, 2, "slot").tolist() == [0, 0, 1, 1, 2]
    assert nodes_of(5, 2, "node").tolist() == [0, 1, 2, 0, 1]
    assert nodes_of(4, 8, "node").tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("seed", range(6))
def test_one_node_is_the_shared_memory_replay_and_one_rank_per_node_the_network_replay(seed):
    # collectives, rendezvous and waits included: every message local, or every message remote
    trace = random_trace(seed, [2, 3, 5, 8][seed % 4])
    P = trace.nranks
    for library in ("openmpi", "mpich"):
        [all_local] = whatif.replay(trace, NET, library, ranks_per_node=P, local=SHM)
        [shm] = whatif.replay(trace, SHM, library)
        np.testing.assert_array_equal(all_local.ranks.to_numpy(), shm.ranks.to_numpy())
        [all_remote] = whatif.replay(trace, NET, library, ranks_per_node=1, placement="node", local=SHM)
        [net] = whatif.replay(trace, NET, library)
        np.testing.assert_array_equal(all_remote.functions.to_numpy(), net.functions.to_numpy())


def test_bad_placements_are_one_line_errors():
    for place, message in (({"ranks_per_node": 0, "local": SHM}, "0 is not a positive count"),
                           ({"ranks_per_node": 2, "placement": "socket", "local": SHM}, "placement 'socket'"),
                           ({"ranks_per_node": 2}, "give the shared-memory network")):
        with pytest.raises(ScalewiseError, match=message):
            whatif.replay(two_sends(), NET, **place)
