"""Open MPI 5.0's coll/han in the replay: the exact messages of small cases worked by hand from
open-mpi/ompi v5.0.10 (ompi/mca/coll/han/, ompi/mca/coll/libnbc/), where han runs and where it
hands the call to coll/tuned, and that every other library's schedules ignore the node layout."""

import random

import numpy as np
import pytest

from scalewise import whatif
from scalewise.whatif import templates
from scalewise.whatif.api import decode, nodes_of
from scalewise.whatif.collectives import han, layout, schedule
from scalewise.whatif.collectives.algorithms import RECV, SEND
from scalewise.whatif.trace import Call as C
from scalewise.logfile.tracefile import image_of

from whatif_reference import reference_replay
from whatif_streams import build_streams

OMPI5 = "openmpi-5.0.11"
S, R = SEND, RECV
TWO_NODES = (0, 0, 1, 1)  # --map-by slot, 2 ranks per node
ROUND_ROBIN = (0, 1, 0, 1)  # --map-by node


def han_schedule(func, nodes, nbytes, root=0, commutative=True, library=OMPI5):
    return schedule(library, func, len(nodes), nbytes, root, commutative, layout(library, nodes))


def test_allreduce_of_one_segment_is_reduce_on_node_reduce_and_bcast_between_leaders_bcast_on_node():
    # 8 B: one segment. lr: tuned reduce to low rank 0 (1 -> 0, 3 -> 2); ur: libnbc ireduce between
    # the leaders 0 and 2, p = 2 and 8 B < 65536: binomial (2 -> 0); ub: libnbc ibcast, p <= 4:
    # linear (0 -> 2); lb: tuned bcast from low rank 0 (0 -> 1, 2 -> 3)
    name, s = han_schedule("MPI_Allreduce", TWO_NODES, 8)
    assert name == "han_pipelined"
    assert s == [[[(R, 1, 8)], [(R, 2, 8)], [(S, 2, 8)], [(S, 1, 8)]],
                 [[(S, 0, 8)], [(R, 0, 8)]],
                 [[(R, 3, 8)], [(S, 0, 8)], [(R, 0, 8)], [(S, 3, 8)]],
                 [[(S, 2, 8)], [(R, 2, 8)]]]


def test_allreduce_pipelines_64k_segments_as_tasks_t0_to_t3_order_them():
    # 128 KiB of doubles: two segments of 8192 elements.  Between two leaders a 64 KiB ireduce is
    # libnbc's chain (p = 2, 65536 B is not < 65536) in 8 fragments of 8192 B, each its own round.
    # Leader 0: t0 lr(0); t1 ur(0), lr(1); t2 ub(0), ur(1); t3 ub(1), lb(0); t3 lb(1)
    seg = 65536
    chain_in = [[(R, 2, 8192)]] * 8
    chain_out = [[(S, 0, 8192)]] * 8
    _, s = han_schedule("MPI_Allreduce", TWO_NODES, 2 * seg)
    assert s[0] == ([[(R, 1, seg)]] + chain_in + [[(R, 1, seg)]] + [[(S, 2, seg)]] + chain_in
                    + [[(S, 2, seg)], [(S, 1, seg)], [(S, 1, seg)]])
    assert s[2] == ([[(R, 3, seg)]] + chain_out + [[(R, 3, seg)]] + [[(R, 0, seg)]] + chain_out
                    + [[(R, 0, seg)], [(S, 3, seg)], [(S, 3, seg)]])
    assert s[1] == [[(S, 0, seg)], [(S, 0, seg)], [(R, 0, seg)], [(R, 0, seg)]]


def test_allreduce_last_segment_is_the_remainder():
    # 65536 + 8 B: segments of 8192 and 1 doubles; the 8 B ones go binomial (8 < 65536) between leaders
    _, s = han_schedule("MPI_Allreduce", TWO_NODES, 65544)
    sent = [(q, b) for ph in s[2] for d, q, b in ph if d == S]
    assert sent == [(0, 8192)] * 8 + [(0, 8), (3, 65536), (3, 8)]


def test_bcast_from_a_root_off_low_rank_zero_runs_among_the_ranks_of_its_low_rank():
    # root 3: low rank 1 on node 1, up comm {1, 3} with root up rank 1.  t0: tuned bcast of segment 0
    # between 3 and 1; t1(0): libnbc ibcast (linear) of segment 1, then tuned bcast of segment 0 on
    # each node from low rank 1; t1(1): bcast of segment 1 on each node
    seg = 65536
    name, s = han_schedule("MPI_Bcast", TWO_NODES, 2 * seg, root=3)
    assert name == "han_pipelined"
    assert s == [[[(R, 1, seg)], [(R, 1, seg)]],
                 [[(R, 3, seg)], [(R, 3, seg)], [(S, 0, seg)], [(S, 0, seg)]],
                 [[(R, 3, seg)], [(R, 3, seg)]],
                 [[(S, 1, seg)], [(S, 1, seg)], [(S, 2, seg)], [(S, 2, seg)]]]


def test_reduce_with_ranks_round_robin_over_nodes():
    # --map-by node: node 0 holds 0 and 2, node 1 holds 1 and 3.  Root 1 is low rank 0 of node 1 and
    # up rank 1 of {0, 1}: lr on each node (2 -> 0, 3 -> 1), then ur between the leaders (0 -> 1)
    name, s = han_schedule("MPI_Reduce", ROUND_ROBIN, 8, root=1)
    assert name == "han_pipelined"
    assert s == [[[(R, 2, 8)], [(S, 1, 8)]], [[(R, 3, 8)], [(R, 0, 8)]], [[(S, 0, 8)]], [[(S, 1, 8)]]]


def test_an_up_comm_is_in_rank_order_whatever_the_nodes_order():
    # nodes {0, 5}, {1, 4}, {2, 3}: low rank 1's up comm is 3, 4, 5 (split keyed by rank), so with root 3
    # (up rank 0) and 2 doubles libnbc reduce-scatters with 4 folding into 3 (p = 3, rank 1 odd):
    # rank 4 gets its node's doubles from 1, swaps one double each way with 3, sends its half back
    _, s = han_schedule("MPI_Reduce", (0, 1, 2, 2, 1, 0), 16, root=3)
    assert s[4] == [[(R, 1, 16)], [(S, 3, 8), (R, 3, 8)], [(S, 3, 8)]]


def test_libnbc_reduce_scatter_and_gather_on_three_leaders():
    # red_sched_redscat_gather, p = 3, root 0, 8 doubles: rank 1 folds into rank 0 (halves of 4
    # doubles each way, then its reduced half back), ranks 0 and 2 halve (4 each way), and 2 sends
    # its half to the root
    s = han.nbc_ireduce(3, 0, 8, 8)
    assert s == [[[(S, 1, 32), (R, 1, 32)], [(R, 1, 32)], [(S, 2, 32), (R, 2, 32)], [(R, 2, 32)]],
                 [[(S, 0, 32), (R, 0, 32)], [(S, 0, 32)]],
                 [[(S, 0, 32), (R, 0, 32)], [(S, 0, 32)]]]


def test_libnbc_bcast_is_linear_up_to_four_and_binomial_above():
    assert han.nbc_ibcast(3, 1, 8) == [[[(R, 1, 8)]], [[(S, 0, 8), (S, 2, 8)]], [[(R, 1, 8)]]]
    # p = 5, root 0: 0 -> 1, 2, 4; 1 -> 3
    assert han.nbc_ibcast(5, 0, 8) == [[[(S, 1, 8), (S, 2, 8), (S, 4, 8)]], [[(R, 0, 8)], [(S, 3, 8)]],
                                       [[(R, 0, 8)]], [[(R, 1, 8)]], [[(R, 0, 8)]]]


def test_gather_scatter_allgather_barrier_two_levels():
    # gather (simple): tuned gather on each node to low rank 0, then the leaders' gather of 2 blocks
    _, g = han_schedule("MPI_Gather", TWO_NODES, 100)
    assert [(d, q, b) for ph in g[2] for d, q, b in ph] == [(R, 3, 100), (S, 0, 200)]
    # scatter: the leaders first (a node's 2 blocks), then each node
    _, sc = han_schedule("MPI_Scatter", TWO_NODES, 100)
    assert [(d, q, b) for ph in sc[2] for d, q, b in ph] == [(R, 0, 200), (S, 3, 100)]
    # allgather: gather on node, allgather of 200 B between leaders, bcast of all 400 B on node
    _, ag = han_schedule("MPI_Allgather", TWO_NODES, 100)
    assert [(d, q, b) for ph in ag[0] for d, q, b in ph] == [(R, 1, 100), (R, 2, 200), (S, 2, 200), (S, 1, 400)]
    # barrier: on node, between leaders, on node again; a non-leader only meets its leader
    _, ba = han_schedule("MPI_Barrier", TWO_NODES, 0)
    assert {q for ph in ba[1] for _, q, _ in ph} == {0}
    assert {q for ph in ba[0] for _, q, _ in ph} == {1, 2}


@pytest.mark.parametrize("func", han.IMPLEMENTED)
def test_han_does_not_run_on_one_node_or_with_one_rank_per_node(func):
    for nodes in ((0, 0, 0, 0), (0, 1, 2, 3), (3, 1, 0, 2)):
        assert han_schedule(func, nodes, 4096, 1) == schedule(OMPI5, func, 4, 4096, 1), nodes
    assert han_schedule(func, TWO_NODES, 4096, 1)[0].startswith("han")


def test_fallbacks_the_source_names():
    tuned = lambda func, P, **kw: schedule(OMPI5, func, P, 4096, **kw)  # noqa: E731
    # non-commutative operations: allreduce and reduce go to tuned
    assert han_schedule("MPI_Allreduce", TWO_NODES, 4096, commutative=False) == tuned(
        "MPI_Allreduce", 4, commutative=False)
    assert han_schedule("MPI_Reduce", TWO_NODES, 4096, commutative=False) == tuned(
        "MPI_Reduce", 4, commutative=False)
    # nodes of unequal size: bcast, reduce, gather, scatter, allgather go to tuned; allreduce and
    # barrier do not check
    uneven = (0, 0, 1)
    for func in ("MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter", "MPI_Allgather"):
        assert han_schedule(func, uneven, 4096) == tuned(func, 3), func
    assert han_schedule("MPI_Allreduce", uneven, 4096)[0] == "han_pipelined"
    assert han_schedule("MPI_Barrier", uneven, 0)[0] == "han_simple"
    # collectives han leaves to others
    for func in ("MPI_Alltoall", "MPI_Allgatherv", "MPI_Gatherv"):
        assert han_schedule(func, TWO_NODES, 4096) == tuned(func, 4), func
    # no count, no message (the MPI layer returns before any component)
    assert han_schedule("MPI_Bcast", TWO_NODES, 0) == ("none", [[], [], [], []])


@pytest.mark.parametrize("library", ["openmpi", "openmpi-4.1.4", "mpich", "mpich-5.0.2", "intelmpi-2021.19"])
def test_other_libraries_ignore_the_node_layout(library):
    assert layout(library, TWO_NODES) is None
    for func in han.IMPLEMENTED:
        assert han_schedule(func, TWO_NODES, 100_000, library=library) == schedule(library, func, 4, 100_000)


def _trace(seed, P):
    rnd = random.Random(seed)
    comms = {5: [3, 0, 4, 1], 9: list(range(P - 1, -1, -1))}
    ranks = [[] for _ in range(P)]
    for _ in range(8):
        comm = rnd.choice([0, 5, 9])
        members = comms.get(comm, list(range(P)))
        func = rnd.choice(han.IMPLEMENTED)
        root, commutative = rnd.randrange(len(members)), rnd.random() < 0.9
        n = rnd.choice([8, 4000, 65536, 200_000])
        for w in members:
            ranks[w].append(C(func, bytes=n, root=root, comm=comm, compute=rnd.random() * 1e-4,
                              commutative=commutative))
    return whatif.from_calls(ranks, comms)


@pytest.mark.parametrize("seed", range(6))
def test_han_schedules_replay_in_the_engine_as_in_the_python_reference(seed):
    # the engine walks han's schedules (no deadlock, every message matched) to the reference's answer
    P = [6, 8, 6][seed % 3]
    trace = _trace(seed, P)
    node_of = nodes_of(P, [2, 3, 2][seed % 3], "slot" if seed % 2 else "node")
    net = whatif.Network(name="pw", eager_limit=4096, ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])
    functions = list(trace.functions)
    with decode(trace) as decoded:
        tpl = templates.build(decoded, functions, trace.members, OMPI5, node_of)
        flat = templates.build(decoded, functions, trace.members, OMPI5)
        assert not np.array_equal(tpl.peer, flat.peer)  # han's schedules, not tuned's
        res = decoded.run(tpl, np.zeros(len(tpl.first)), net, None, None, None, None)
    clock, _, ftime = reference_replay(build_streams(image_of(trace), OMPI5, node_of), net)
    assert res.finish == pytest.approx(np.array(clock), rel=1e-12, abs=1e-15)
    assert res.func_time == pytest.approx(np.array(ftime)[:, :len(functions)], rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("library", ["openmpi", "mpich"])
def test_templates_of_other_libraries_are_the_same_with_a_node_layout(library):
    trace = _trace(1, 8)
    functions = list(trace.functions)
    with decode(trace) as decoded:
        placed = templates.build(decoded, functions, trace.members, library, nodes_of(8, 2))
        flat = templates.build(decoded, functions, trace.members, library)
    for field in ("first", "size", "start", "op", "peer", "bytes"):
        np.testing.assert_array_equal(getattr(placed, field), getattr(flat, field))


def test_only_the_leaders_messages_leave_a_node():
    # 8 ranks, 2 per node, 1 MiB of doubles: 16 segments of 8192.  Per segment, between the 4 leaders
    # 0, 2, 4, 6: libnbc's ireduce by reduce-scatter (4096 then 2048 doubles out of every leader) and
    # binomial gather to up rank 0 (2048 from up ranks 2 and 3, 4096 from up rank 1), then its linear
    # ibcast (8192 doubles to each of 3 leaders)
    nodes = tuple(nodes_of(8, 2).tolist())
    _, s = han_schedule("MPI_Allreduce", nodes, 1 << 20)
    out = {}
    for r, phases in enumerate(s):
        for ph in phases:
            for d, q, b in ph:
                if d == S and nodes[r] != nodes[q]:
                    out[r] = out.get(r, 0) + b
    per_segment = {0: 8 * (6144 + 3 * 8192), 2: 8 * (6144 + 4096), 4: 8 * (6144 + 2048), 6: 8 * (6144 + 2048)}
    assert out == {r: 16 * b for r, b in per_segment.items()}


def test_replay_with_ranks_on_nodes_uses_han_for_open_mpi_5():
    trace = whatif.from_calls([[C("MPI_Allreduce", bytes=1 << 20)] for _ in range(8)])
    shm = whatif.network("hdr-ib").model_copy(update={"name": "shm"})
    [tuned_placed] = whatif.replay(trace, "gige", "openmpi-4.1.4", ranks_per_node=2, local=shm)
    [han_placed] = whatif.replay(trace, "gige", OMPI5, ranks_per_node=2, local=shm)
    [tuned_flat], [ompi5_flat] = whatif.replay(trace, "gige", "openmpi-4.1.4"), whatif.replay(trace, "gige", OMPI5)
    assert ompi5_flat.wall_time == tuned_flat.wall_time  # one rank per node: han off, 4.1's rules
    assert han_placed.wall_time != tuned_placed.wall_time
