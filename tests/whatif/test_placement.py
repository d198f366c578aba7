"""Ranks on nodes in the replay: messages inside a node go through shared memory (their own parameters
and channel), messages between nodes through the network, on the link the node's ranks share.  Hand-worked
answers (docs/whatif.md), and the engine against the Python reference."""

import random

import numpy as np
import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.logfile.tracefile import image_of
from scalewise.whatif.api import nodes_of
from scalewise.whatif.hostcost import HostCosts
from scalewise.whatif.trace import Call as C

from whatif_nets import loggp
from whatif_reference import reference_replay
from whatif_streams import build_streams
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


BIG = 1_000_000  # 1 ms on the network's wire, eager


def test_two_ranks_of_a_node_sending_to_two_ranks_of_another_share_the_nodes_link():
    # 0 -> 2 and 1 -> 3 at once, ranks 0, 1 on node 0 and 2, 3 on node 1: the node's link sends one after
    # the other, the first arrives at o + L + 1000 = 1003 us, the second 1000 us later; each receiver pays o
    trace = whatif.from_calls([[C("MPI_Send", 2, BIG)], [C("MPI_Send", 3, BIG)], [C("MPI_Recv", 0, BIG)],
                               [C("MPI_Recv", 1, BIG)]])
    placed = finishes(trace, ranks_per_node=2)
    assert placed[:2] == pytest.approx([1, 1])  # eager: each send is done at o
    assert sorted(placed[2:]) == pytest.approx([1004, 2004])  # twice one message's wire time
    # a link per rank (without placement, or a rank per node): both arrive at once
    assert finishes(trace) == pytest.approx([1, 1, 1004, 1004])
    assert finishes(trace, ranks_per_node=1) == pytest.approx([1, 1, 1004, 1004])


def test_two_messages_from_two_nodes_to_one_node_come_in_one_after_the_other():
    # 3 nodes of 2 ranks: 0 -> 2 and 4 -> 3, both leave at once on links of their own and arrive at 1003 us;
    # node 1's link takes them in one after the other
    ranks = [[] for _ in range(6)]
    ranks[0], ranks[4] = [C("MPI_Send", 2, BIG)], [C("MPI_Send", 3, BIG)]
    ranks[2], ranks[3] = [C("MPI_Recv", 0, BIG)], [C("MPI_Recv", 4, BIG)]
    trace = whatif.from_calls(ranks)
    placed = finishes(trace, ranks_per_node=2)
    assert [placed[r] for r in (0, 1, 4, 5)] == pytest.approx([1, 0, 1, 0])
    assert sorted(placed[2:4]) == pytest.approx([1004, 2004])
    assert finishes(trace)[2:4] == pytest.approx([1004, 1004])


def test_the_ranks_of_a_node_draw_on_one_token_bucket():
    # 1 byte per us refilling a 3000-byte bucket; ranks 0 and 1 (node 0) each send 2000 B at once.  The first
    # takes 2000 of the credit and holds the wire 2 us: arrives at o + L + 2 = 5, received at 6.  The second
    # starts when the wire is free (2 us) with 1002 B of credit and waits 998 us for the rest: leaves at 1000,
    # arrives at 1005, received at 1006.  With a bucket each, both are received at 6.
    shaped = NET.model_copy(update={"shaping": whatif.Shaping(rate_gbit_s=0.008, bucket_bytes=3000)})
    trace = whatif.from_calls([[C("MPI_Send", 2, 2000)], [C("MPI_Send", 3, 2000)], [C("MPI_Recv", 0, 2000)],
                               [C("MPI_Recv", 1, 2000)]])
    [placed] = whatif.replay(trace, shaped, local=SHM, ranks_per_node=2)
    assert sorted(placed.ranks["finish"].to_numpy()[2:] / US) == pytest.approx([6, 1006])
    [apart] = whatif.replay(trace, shaped)
    assert apart.ranks["finish"].to_numpy()[2:] / US == pytest.approx([6, 6])


def _piecewise(**extra):
    return whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=65536, latency_us=2.5, overhead_us=0.8, gap_us=0.3, bandwidth_gbit_s=40),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)], **extra)


PW_SHM = whatif.Network(name="shm", eager_limit=16384, ranges=[
    dict(upto=2048, latency_us=0.3, overhead_us=0.2, gap_us=0.05, bandwidth_gbit_s=60),
    dict(upto=float("inf"), latency_us=0.8, overhead_us=0.5, gap_us=0.1, bandwidth_gbit_s=90)])


@pytest.mark.parametrize("seed", range(12))
def test_engine_matches_the_python_reference_with_ranks_on_nodes(seed):
    # shared node links (shaped, half duplex or both ways slower), shared memory, rendezvous, collectives and
    # host costs, by slot and by node, for the libraries that keep their schedules and for han
    rnd = random.Random(seed)
    P = rnd.choice([4, 5, 6, 8])
    per_node = rnd.choice([2, 3, 4])
    placement = "slot" if seed % 2 else "node"
    node_of = nodes_of(P, per_node, placement)
    shaping = whatif.Shaping(rate_gbit_s=1.0, bucket_bytes=8192, payload_share=0.95) if seed % 3 else None
    # on seeds 5 and 11 the exchanges' cost grows with the nodes a node's link sends to at once
    peers = dict(both_ways_peers=[1.3, 1.6, 1.9]) if seed % 6 == 5 else {}
    duplex = [dict(), dict(duplex="half"), dict(both_ways=1.3, **peers)][seed % 3 if shaping else 0]
    net = _piecewise(shaping=shaping, library="openmpi", **duplex)
    host = HostCosts(per_message=np.array([rnd.choice([0.0, 0.3, 4.0]) * US for _ in range(P)]),
                     irecv=np.array([rnd.choice([0.0, 2.5]) * US for _ in range(P)])) if seed % 4 == 1 else None
    trace = random_trace(seed, P)
    for library in ("openmpi", "mpich", "openmpi-5.0.11"):
        [got] = whatif.replay(trace, net, library, ranks_per_node=per_node, placement=placement, local=PW_SHM,
                              host=host if library == "openmpi" else None)
        streams = build_streams(image_of(trace), library, node_of)
        clock, comp, ftime = reference_replay(streams, net, host if library == "openmpi" else None, node_of,
                                              PW_SHM)
        assert got.ranks["finish"].to_numpy() == pytest.approx(np.array(clock), rel=1e-12, abs=1e-15)
        assert got.ranks["compute"].to_numpy() == pytest.approx(np.array(comp), rel=1e-12)
        assert got.functions.to_numpy() == pytest.approx(np.array(ftime)[:, :len(streams.functions)], rel=1e-9,
                                                          abs=1e-15)
