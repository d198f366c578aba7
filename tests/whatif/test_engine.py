"""The compiled replay engine against answers worked out by hand (the model
is in docs/whatif.md: L latency, o overhead, g gap, G seconds per byte)."""

import random

import numpy as np
import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.whatif.trace import Call as C
from scalewise.logfile.tracefile import image_of

from whatif_nets import loggp
from whatif_reference import reference_replay
from whatif_streams import build_streams
from support.traces import random_trace

US = 1e-6
NS = 1e-9


def finish(trace, net, library="openmpi"):
    [pred] = whatif.replay(trace, net, library)
    return pred


def matches_reference(trace, net, library="openmpi"):
    """The engine's replay of ``trace``, after checking it against the pure-Python reference: the engine reads
    the trace file's image and walks each collective's schedule itself, the reference replays the streams built
    in Python from the same image (compute in whole ns); each rank's finish and compute and each function's
    time must agree."""
    [got] = whatif.replay(trace, net, library)
    streams = build_streams(image_of(trace), library)
    clock, comp, ftime = reference_replay(streams, net)
    assert got.ranks["finish"].to_numpy() == pytest.approx(np.array(clock), rel=1e-12, abs=1e-15)
    assert got.ranks["compute"].to_numpy() == pytest.approx(np.array(comp), rel=1e-12)
    assert got.functions.to_numpy() == pytest.approx(np.array(ftime)[:, :len(streams.functions)], rel=1e-9,
                                                      abs=1e-15)
    return got


def ping_pong(nbytes, rounds=1):
    a = [C("MPI_Send", 1, nbytes), C("MPI_Recv", 1, nbytes)] * rounds
    b = [C("MPI_Recv", 0, nbytes), C("MPI_Send", 0, nbytes)] * rounds
    return whatif.from_calls([a, b])


def test_eager_ping_pong_is_two_times_latency_two_overheads_and_the_wire():
    pred = finish(ping_pong(1000), loggp(latency_us=2, overhead_us=1))
    # each way: o (send) + L + s*G + o (receive) = 1 + 2 + 1 + 1 us
    assert pred.wall_time == pytest.approx(2 * (2 * 1 + 2 + 1000 * 1e-3) * US)
    assert pred.functions.loc[0, "MPI_Send"] == pytest.approx(1 * US)
    assert pred.functions.loc[1, "MPI_Recv"] == pytest.approx(5 * US)


def test_rendezvous_adds_the_handshake_round_trip():
    pred = finish(ping_pong(100_000), loggp(latency_us=2, overhead_us=1, eager_limit=1024))
    # RTS (o + L0), CTS (L0), data (L + s*G), receiver o: per way 2o + 3L + sG
    assert pred.wall_time == pytest.approx(2 * (2 * 1 + 3 * 2 + 100.0) * US)


def test_gap_spaces_back_to_back_sends():
    sends = [C("MPI_Isend", 1, 0, req=i) for i in range(3)] + [C("MPI_Waitall", reqs=(0, 1, 2))]
    recvs = [C("MPI_Recv", 0, 0) for _ in range(3)]
    pred = finish(whatif.from_calls([sends, recvs]), loggp(latency_us=2, overhead_us=1, gap_us=5))
    # the third message leaves at 2g, arrives at 2g + o + L, then costs o
    assert pred.ranks.loc[1, "finish"] == pytest.approx((10 + 1 + 2 + 1) * US)
    assert pred.ranks.loc[0, "finish"] == pytest.approx(3 * US)


def test_incoming_messages_share_the_receiver_link():
    n = 10_000  # 10 us on the wire each
    senders = [[C("MPI_Send", 0, n)] for _ in range(3)]
    root = [C("MPI_Irecv", r, n, req=r) for r in (1, 2, 3)] + [C("MPI_Waitall", reqs=(1, 2, 3))]
    pred = finish(whatif.from_calls([root] + senders), loggp(latency_us=2, overhead_us=1))
    # all three arrive together at o + L + 10; the link lets them in one after the other
    assert pred.ranks.loc[0, "finish"] == pytest.approx((1 + 2 + 30 + 1) * US)


def test_waitall_keeps_the_wait_for_a_late_partner():
    late = [C("MPI_Isend", 1, 8, req=0, compute=5e-3), C("MPI_Wait", reqs=(0,))]
    early = [C("MPI_Irecv", 0, 8, req=0, compute=1e-3), C("MPI_Waitall", reqs=(0,))]
    trace = whatif.from_calls([late, early])
    for net in ("ideal", loggp()):
        pred = finish(trace, net)
        # the receiver computed 1 ms and waits about 4 ms for the sender, on any network
        assert pred.functions.loc[1, "MPI_Waitall"] >= 4e-3
        assert pred.ranks.loc[1, "compute"] == pytest.approx(1e-3)
    assert finish(trace, "ideal").functions.loc[1, "MPI_Waitall"] == pytest.approx(4e-3)


def test_ideal_network_leaves_only_the_compute_critical_path():
    ranks = [[C("MPI_Barrier", compute=(r + 1) * 1e-3), C("MPI_Allreduce", bytes=1 << 20, compute=2e-3)]
             for r in range(8)]
    for library in ("openmpi", "mpich"):
        pred = finish(whatif.from_calls(ranks), "ideal", library)
        # everyone leaves the barrier when the slowest (8 ms) arrives, then computes 2 ms more
        assert pred.wall_time == pytest.approx(10e-3)
        assert pred.ranks["finish"].to_list() == pytest.approx([10e-3] * 8)


def test_faster_network_is_never_slower_and_keeps_compute():
    ranks = [[C("MPI_Allreduce", bytes=65536, compute=1e-4 * (1 + r % 3)), C("MPI_Bcast", bytes=4096, root=0)]
             for r in range(16)]
    trace = whatif.from_calls(ranks)
    slow, fast = finish(trace, loggp(latency_us=50, gbit_s=1)), finish(trace, loggp(latency_us=1, gbit_s=100))
    assert fast.wall_time < slow.wall_time
    assert fast.ranks["compute"].to_list() == pytest.approx(slow.ranks["compute"].to_list())


def test_sendrecv_ring_does_not_deadlock_and_costs_one_exchange():
    P = 4
    ranks = [whatif.sendrecv((r + 1) % P, 1000, (r - 1) % P, 1000, first_req=0) for r in range(P)]
    pred = finish(whatif.from_calls(ranks), loggp(latency_us=2, overhead_us=1))
    assert pred.ranks["finish"].to_list() == pytest.approx([(1 + 2 + 1 + 1) * US] * P)
    assert list(pred.functions.columns) == ["MPI_Sendrecv"]


def test_deadlock_is_reported_with_rank_and_event():
    both_recv = whatif.from_calls([[C("MPI_Recv", 1, 8)], [C("MPI_Recv", 0, 8)]])
    with pytest.raises(ScalewiseError, match=r"deadlock: rank 0 waits forever at its event 0 \(recv, peer 1\)"):
        finish(both_recv, "ideal")


def test_rendezvous_sends_both_first_deadlock_like_mpi():
    big = 1 << 20
    trace = whatif.from_calls([[C("MPI_Send", 1, big), C("MPI_Recv", 1, big)],
                               [C("MPI_Send", 0, big), C("MPI_Recv", 0, big)]])
    with pytest.raises(ScalewiseError, match="deadlock"):
        finish(trace, loggp(eager_limit=1024))
    assert finish(trace, loggp(eager_limit=big)).wall_time > 0  # eager: both sends complete


def test_wait_on_unknown_request_is_a_clear_error():
    with pytest.raises(ScalewiseError, match="rank 0: a wait completes request 7"):
        finish(whatif.from_calls([[C("MPI_Wait", reqs=(7,))]]), "ideal")


def test_a_shaped_link_lets_a_rested_burst_through_then_holds_its_rate():
    # 8 Gbit/s wire (1 ns per byte) behind a bucket of 3000 bytes refilling at 0.008 Gbit/s (1 byte per us)
    wire = loggp(latency_us=2, overhead_us=0)
    shaped = wire.model_copy(update={"shaping": whatif.Shaping(rate_gbit_s=0.008, bucket_bytes=3000)})

    def last_arrival(rest_us, net):
        sends = [C("MPI_Send", 1, 2000), C("MPI_Send", 1, 2000), C("MPI_Send", 1, 1000, compute=rest_us * US)]
        recvs = [C("MPI_Recv", 0, 2000), C("MPI_Recv", 0, 2000), C("MPI_Recv", 0, 1000)]
        return finish(whatif.from_calls([sends, recvs]), net).ranks.loc[1, "finish"] / US

    # 1st: 3000 bytes of credit, leaves at 0.  2nd: leaves when the wire is free (2 us) with 1002
    # bytes of credit and waits 998 us for the rest: arrives at 1000 + L + 2 = 1004 us.  3rd, sent
    # at once: no credit, waits 1000 us more: arrives at 2000 + 2 + 1 us.
    assert last_arrival(0, shaped) == pytest.approx(2003)
    assert last_arrival(0, wire) == pytest.approx(4 + 3)  # unshaped: back to back on the wire
    # After 5000 us of rest the bucket is full again (5000 - 1000 bytes >= 1000): no wait.
    assert last_arrival(5000, shaped) == pytest.approx(5003)


@pytest.mark.parametrize("seed", range(12))
def test_engine_matches_the_python_reference_on_random_traces(seed):
    P = random.Random(seed).choice([2, 3, 5, 8])
    trace = random_trace(seed, P)
    shaping = None if seed % 2 else whatif.Shaping(rate_gbit_s=1.0, bucket_bytes=8192)
    both_ways = [None, None, 1.3, 1.07][seed % 4]  # exchanges slower than one way on seeds 2, 3, 6, 7, ...
    peers = [1.3, 1.6, 1.9] if seed % 4 == 2 and seed % 8 == 6 else None  # by the nodes sent to, on 6
    net = whatif.Network(name="pw", eager_limit=4096, shaping=shaping, both_ways=both_ways, both_ways_peers=peers,
                         ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=65536, latency_us=2.5, overhead_us=0.8, gap_us=0.3, bandwidth_gbit_s=40),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])
    for library in ("openmpi", "mpich"):
        matches_reference(trace, net, library)


def test_a_receiver_with_more_match_keys_than_its_block_holds_matches_the_reference():
    # Rank 0 receives on 42 keys (3 senders x 14 tags), twice over: a receiver's block holds its first twelve,
    # the engine's shared table the rest; receives are posted in a shuffled order, some before and some after
    # their sends, so queues on both sides of both places fill and drain.
    rnd = random.Random(7)
    keys = [(src, tag) for src in (1, 2, 3) for tag in range(14)]
    ranks = [[] for _ in range(4)]
    for round_ in range(2):
        rnd.shuffle(keys)
        base = 100 * round_
        for i, (src, tag) in enumerate(keys):
            ranks[0].append(C("MPI_Irecv", src, 900 * (tag + 1), tag=tag, req=base + i, compute=rnd.random() * 1e-5))
        ranks[0].append(C("MPI_Waitall", reqs=tuple(range(base, base + len(keys)))))
        for src in (1, 2, 3):
            for tag in range(14):
                ranks[src].append(C("MPI_Isend", 0, 900 * (tag + 1), tag=tag, req=base + tag,
                                    compute=rnd.random() * 1e-5))
            ranks[src].append(C("MPI_Waitall", reqs=tuple(range(base, base + 14))))
    trace = whatif.from_calls(ranks)
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=float("inf"), latency_us=2.5, overhead_us=0.8, gap_us=0.3, bandwidth_gbit_s=40)])
    matches_reference(trace, net)


def test_computes_and_messages_past_32_bits_and_waits_in_any_order_match_the_reference():
    # The rows hold computes in ns and sizes in 32 bits: a compute of 4.294967295 s (2^32 - 1 ns) or more and
    # a size of 2^32 - 1 bytes or more are kept beside the rows.  Waits list their requests out of order, on
    # consecutive request slots (held as a first slot and a count) and not (a list of slots).
    G = 5 * 2**30
    a = [C("MPI_Isend", 1, G, tag=1, req=0, compute=5.0), C("MPI_Isend", 1, 8, tag=2, req=1),
         C("MPI_Irecv", 1, 16, tag=3, req=2), C("MPI_Waitall", reqs=(2, 0)), C("MPI_Wait", reqs=(1,)),
         C("MPI_Irecv", 1, 16, tag=4, req=3, compute=4.294967295), C("MPI_Isend", 1, 2**32 - 1, tag=5, req=4),
         C("MPI_Isend", 1, 2**32 - 2, tag=6, req=5), C("MPI_Waitall", reqs=(5, 3, 4)),
         C("MPI_Send", 1, 2**33, tag=7)]
    b = [C("MPI_Irecv", 0, G, tag=1, req=0), C("MPI_Irecv", 0, 8, tag=2, req=1, compute=6.5),
         C("MPI_Isend", 0, 16, tag=3, req=2), C("MPI_Waitall", reqs=(1, 2, 0)),
         C("MPI_Isend", 0, 16, tag=4, req=3), C("MPI_Irecv", 0, 2**32 - 1, tag=5, req=4),
         C("MPI_Irecv", 0, 2**32 - 2, tag=6, req=5, compute=4.294967296), C("MPI_Waitall", reqs=(4, 3, 5)),
         C("MPI_Recv", 0, 2**33, tag=7)]
    trace = whatif.from_calls([a, b])
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=float("inf"), latency_us=2.5, overhead_us=0.8, gap_us=0.3, bandwidth_gbit_s=40)])
    got = matches_reference(trace, net)
    assert got.ranks["compute"].to_numpy() == pytest.approx([9.294967295, 10.794967296], rel=1e-12)
    # the 8 GiB Send alone holds the wire for 2^33 * 8 / 40e9 s: the sizes past 32 bits are not cut
    assert got.ranks["finish"].max() > 10.794967296 + 2**33 * 8 / 40e9


def test_results_break_down_by_function_and_kind_and_library():
    P = 8
    ranks = [[C("MPI_Irecv", (r - 1) % P, 4096, req=0, compute=1e-4), C("MPI_Isend", (r + 1) % P, 4096, req=1),
              C("MPI_Waitall", reqs=(0, 1)), C("MPI_Allreduce", bytes=64), C("MPI_Comm_rank")] for r in range(P)]
    trace = whatif.from_calls(ranks)
    [ompi], [mpich] = whatif.replay(trace, "10gige", "openmpi"), whatif.replay(trace, "10gige", "mpich")
    kinds = ompi.by_kind()
    assert set(kinds.index) == {"point-to-point", "wait", "collective", "other"}
    assert kinds.sum() == pytest.approx(ompi.ranks["mpi"].sum()) and kinds["other"] == 0
    assert ompi.totals()["wall_time"] == ompi.wall_time == ompi.ranks["finish"].max()
    # 64 bytes on 8 ranks: Open MPI runs recursive doubling (3 exchanges), MPICH reduce-scatter/allgather (6)
    assert mpich.functions["MPI_Allreduce"].sum() > ompi.functions["MPI_Allreduce"].sum()
    assert mpich.functions["MPI_Waitall"].sum() == pytest.approx(ompi.functions["MPI_Waitall"].sum())


def test_engine_rejects_a_peer_that_is_not_a_rank():
    trace = whatif.from_calls([[C("MPI_Send", 5, 8)], [C("MPI_Recv", 0, 8)]])
    with pytest.raises(ScalewiseError, match="rank 0: event 0: peer 5 is not a rank"):
        finish(trace, "ideal")


def test_a_half_duplex_link_moves_an_exchange_one_direction_after_the_other():
    # 1 MB each way at once on a link shaped to 0.08 Gbit/s (10 MB/s) with a 100 kB bucket:
    # each message waits (1 MB - 100 kB) / 10 MB/s = 90 ms for its credit, then takes 1 ms on the wire
    n = 1_000_000
    exchange = [[C("MPI_Irecv", 1 - r, n, req=0), C("MPI_Isend", 1 - r, n, req=1), C("MPI_Waitall", reqs=(0, 1))]
                for r in (0, 1)]
    shaped = loggp(latency_us=0, overhead_us=0).model_copy(
        update={"shaping": whatif.Shaping(rate_gbit_s=0.08, bucket_bytes=100_000)})
    full = finish(whatif.from_calls(exchange), shaped)
    assert full.wall_time == pytest.approx(0.091, rel=1e-9)  # both directions at once
    half = finish(whatif.from_calls(exchange), shaped.model_copy(update={"duplex": "half"}))
    assert half.wall_time == pytest.approx(2 * 0.091, rel=1e-9)  # one after the other
    # both at once, each direction 1.25 times as long as alone: the 91 ms the incoming message
    # held the link all overlap the rank's own sending
    slower = finish(whatif.from_calls(exchange), shaped.model_copy(update={"both_ways": 1.25}))
    assert slower.wall_time == pytest.approx(1.25 * 0.091, rel=1e-9)
    # both_ways is a full-duplex link's: a half-duplex one takes turns as before
    turns = shaped.model_copy(update={"duplex": "half", "both_ways": 1.25})
    assert finish(whatif.from_calls(exchange), turns).wall_time == pytest.approx(2 * 0.091, rel=1e-9)
    # one way only: nothing to take turns with
    one_way = whatif.from_calls([[C("MPI_Send", 1, n)], [C("MPI_Recv", 0, n)]])
    assert finish(one_way, shaped.model_copy(update={"duplex": "half"})).wall_time == pytest.approx(0.091, rel=1e-9)
    assert finish(one_way, shaped.model_copy(update={"both_ways": 1.25})).wall_time == pytest.approx(0.091, rel=1e-9)


def test_an_exchange_with_more_nodes_at_once_costs_the_ratio_calibrated_for_that_many():
    # 3 ranks, each on a link of its own, each sending 1 MB to both others at once and receiving from both;
    # shaped as above (10 MB/s, 100 kB bucket, 1 ms on the wire).  Rank r sends to r+1 first: its first
    # message waits 90 ms for credit and arrives at 91 ms, its second waits (1 MB - 10 kB) / 10 MB/s =
    # 99 ms more and arrives at 191 ms; each rank receives one of each.  Each incoming message held
    # the link 91 ms from its start (0 and 100 ms), inside the rank's own stretch of sending (0 to
    # 191 ms), which goes to 2 nodes: with both_ways_peers [1.1, 1.5] what overlaps it costs 0.5 more
    # and the next message queues behind it: the first ends at 91 + 0.5 x 91 = 136.5 ms, the second
    # starts then (not at 100) and ends at 136.5 + 91 + 0.5 x (191 - 136.5) = 254.75 ms.
    n = 1_000_000
    ranks = [[C("MPI_Irecv", (r + 1) % 3, n, req=0), C("MPI_Irecv", (r + 2) % 3, n, req=1),
              C("MPI_Isend", (r + 1) % 3, n, req=2), C("MPI_Isend", (r + 2) % 3, n, req=3),
              C("MPI_Waitall", reqs=(0, 1, 2, 3))] for r in range(3)]
    shaped = loggp(latency_us=0, overhead_us=0).model_copy(
        update={"shaping": whatif.Shaping(rate_gbit_s=0.08, bucket_bytes=100_000)})
    peers = shaped.model_copy(update={"both_ways": 1.1, "both_ways_peers": [1.1, 1.5]})
    assert finish(whatif.from_calls(ranks), peers).wall_time == pytest.approx(0.25475, rel=1e-9)
    # without the list, both_ways for any number of peers: 91 + 9.1, then 191 + 9.1 ms
    assert finish(whatif.from_calls(ranks), shaped.model_copy(update={"both_ways": 1.1})).wall_time == \
        pytest.approx(0.2001, rel=1e-9)
    # an exchange with one node takes the first entry; beyond the list, its last
    pair = [[C("MPI_Irecv", 1 - r, n, req=0), C("MPI_Isend", 1 - r, n, req=1), C("MPI_Waitall", reqs=(0, 1))]
            for r in (0, 1)]
    assert finish(whatif.from_calls(pair), peers).wall_time == pytest.approx(1.1 * 0.091, rel=1e-9)
    short = shaped.model_copy(update={"both_ways_peers": [1.5]})
    assert finish(whatif.from_calls(ranks), short).wall_time == pytest.approx(0.25475, rel=1e-9)


def test_both_ways_peers_must_be_ratios_from_1_to_2():
    with pytest.raises(ValueError, match="from 1 to 2"):
        whatif.Network.model_validate({**loggp().model_dump(), "both_ways_peers": [1.2, 2.5]})


@pytest.mark.parametrize("seed", range(6))
def test_collectives_on_communicators_and_v_collectives_match_the_reference(seed):
    # communicators in no rank order, one overlapping the others; v-collectives with a size per rank
    rnd = random.Random(seed)
    comms = {5: [4, 1, 3], 9: [0, 2, 5], 7: [2, 1]}
    ranks = [[] for _ in range(6)]
    for _ in range(6):
        comm = rnd.choice([0, 5, 9, 7])
        members = comms.get(comm, list(range(6)))
        func = rnd.choice(["MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Alltoallv", "MPI_Gatherv",
                           "MPI_Allgatherv", "MPI_Scatterv", "MPI_Barrier"])
        root = rnd.randrange(len(members))
        same, commutative = rnd.choice([8, 4000, 300_000]), rnd.random() < 0.8
        for w in members:
            n = rnd.choice([0, 16, 5000, 90_000]) if func.endswith("v") else same
            ranks[w].append(C(func, bytes=n, root=root, comm=comm, compute=rnd.random() * 1e-4,
                              commutative=commutative))
    trace = whatif.from_calls(ranks, comms)
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])
    for library in ("openmpi", "mpich"):
        matches_reference(trace, net, library)


def test_repeated_collectives_and_their_changes_match_the_reference():
    # The decoder reuses a rank's last collective signature while the calls repeat: runs of the same call
    # (on one communicator or on another, rooted or not, v-collectives between them) and every kind of
    # change after a run, over more events than one decoded chunk (256) holds.
    rnd = random.Random(11)
    comms = {5: [4, 1, 3], 9: [0, 2, 5]}
    ranks = [[] for _ in range(6)]
    call = ("MPI_Allreduce", 0, 0, 8, True)
    for _ in range(700):
        if rnd.random() < 0.3:
            func = rnd.choice(["MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Allgatherv", "MPI_Barrier"])
            comm = rnd.choice([0, 5, 9])
            call = (func, comm, rnd.randrange(len(comms.get(comm, range(6)))), rnd.choice([8, 16, 4000]),
                    rnd.random() < 0.8)
        func, comm, root, same, commutative = call
        for w in comms.get(comm, range(6)):
            n = rnd.choice([0, 16, 5000]) if func.endswith("v") else same
            ranks[w].append(C(func, bytes=n, root=root, comm=comm, compute=rnd.random() * 1e-5,
                              commutative=commutative))
    trace = whatif.from_calls(ranks, comms)
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=float("inf"), latency_us=2.0, overhead_us=0.5, gap_us=0.2, bandwidth_gbit_s=40)])
    matches_reference(trace, net)


def test_values_of_every_varint_length_on_long_ranks_beside_empty_ones_match_the_reference():
    # Ranks 0, 70 and 149 of 150 exchange ~1,000 events each (several decoded chunks, the last one partial);
    # the other ranks record nothing.  Sizes take 1 to 9 varint bytes, computes 1 to 6, tags and peers
    # 1 to 5; comm and root are the same on every event (columns of one byte each).
    rnd = random.Random(5)
    P, talkers = 150, [0, 70, 149]
    ranks = [[] for _ in range(P)]
    req = [0] * P
    sizes = [0, 1, 127, 128, 2**14, 2**21 + 3, 2**28, 2**35 + 1, 2**42, 2**49, 2**56 + 7]
    computes = [0.0, 5e-9, 2e-7, 3e-5, 1e-3, 2.5, 300.0]
    tags = [0, 5, -3, 70, 9000, 2**20, -(2**30), 2**31 - 1]
    for _ in range(600):
        a, b = rnd.sample(talkers, 2)
        n, tag = rnd.choice(sizes), rnd.choice(tags)
        if rnd.random() < 0.3:
            ranks[a].append(C("MPI_Send", b, n, tag=tag, compute=rnd.choice(computes)))
            ranks[b].append(C("MPI_Recv", a, n, tag=tag, compute=rnd.choice(computes)))
            continue
        for x, y in ((a, b), (b, a)):
            mine = [req[x], req[x] + 1]
            rnd.shuffle(mine)  # waits list their requests in either order
            ranks[x] += [C("MPI_Irecv", y, n, tag=tag, req=req[x], compute=rnd.choice(computes)),
                         C("MPI_Isend", y, n, tag=tag, req=req[x] + 1, compute=rnd.choice(computes)),
                         C("MPI_Waitall", reqs=tuple(mine), compute=rnd.choice(computes))]
            req[x] += 2
    trace = whatif.from_calls(ranks)
    assert min(len(ranks[r]) for r in talkers) > 2 * 256 and sum(map(len, ranks)) == sum(len(ranks[r]) for r in talkers)
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])
    matches_reference(trace, net)


def test_a_collective_on_a_communicator_without_the_rank_is_a_clear_error():
    trace = whatif.from_calls([[C("MPI_Barrier", comm=3)], [C("MPI_Barrier", comm=3)]], {3: [1]})
    with pytest.raises(ScalewiseError, match="rank 0 calls a collective on communicator 3, which does not contain it"):
        finish(trace, "ideal")


def test_compute_scale_multiplies_each_ranks_recorded_compute():
    # rank 0 computes 1 ms then sends, rank 1 computes 3 ms then receives: 3 ms on the ideal network
    trace = whatif.from_calls([[C("MPI_Send", 1, 8, compute=1e-3)], [C("MPI_Recv", 0, 8, compute=3e-3)]])
    [slow_sender] = whatif.replay(trace, "ideal", compute_scale=np.array([5.0, 1.0]))
    assert slow_sender.ranks["compute"].to_list() == pytest.approx([5e-3, 3e-3])
    assert slow_sender.wall_time == pytest.approx(5e-3)  # the receiver now waits 2 ms
    assert slow_sender.functions.loc[1, "MPI_Recv"] == pytest.approx(2e-3)
    [doubled] = whatif.replay(trace, "ideal", compute_scale=np.array([2.0, 2.0]))
    assert doubled.wall_time == pytest.approx(6e-3)
    with pytest.raises(ScalewiseError, match="3 factors for 2 ranks"):
        whatif.replay(trace, "ideal", compute_scale=np.ones(3))
