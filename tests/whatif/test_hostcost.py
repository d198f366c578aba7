"""The traced run's host cost per message (scalewise.whatif.hostcost): worked out by hand on a small
exchange, against the Python reference on random traces, and read from a run's own log."""

import random

import numpy as np
import pandas as pd
import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.logfile.tracefile import image_of
from scalewise.model.profile import FUNCTION_COLUMNS, Profile
from scalewise.whatif.hostcost import HostCosts, host_costs
from scalewise.whatif.trace import Call as C

from whatif_nets import loggp
from whatif_reference import reference_replay
from whatif_streams import build_streams
from support.traces import random_trace

US = 1e-6
HOST = HostCosts(per_message=np.array([10 * US, 4 * US]), irecv=np.array([2 * US, 0.0]))


def exchange(nbytes=1000):
    return whatif.from_calls([[C("MPI_Irecv", 1 - r, nbytes, req=0), C("MPI_Isend", 1 - r, nbytes, req=1),
                               C("MPI_Waitall", reqs=(0, 1))] for r in (0, 1)])


def calibrated(library="openmpi"):
    # L 2 us, o 1 us, G 1 ns per byte, as calibrate writes it: with the library it was measured with
    return loggp(latency_us=2, overhead_us=1).model_copy(update={"library": library})


def test_a_ranks_own_messages_cost_its_host_cost_at_both_ends():
    [p] = whatif.replay(exchange(), calibrated(), "openmpi", host=HOST)
    # rank 0: irecv posted at 0, costs 2; isend at 2 costs max(o, 10) = 10, its message arrives at
    # 2 + 10 + L 2 + 1000 ns = 15; rank 1: isend at 0 costs 4, arrives at 0 + 4 + 2 + 1 = 7.
    # rank 0's waitall: at 12, the message of 7 is there, costs 10 to take in: 22.
    # rank 1's waitall: at 4, rank 0's message arrives at 15, costs 4 to take in: 19.
    assert p.ranks["finish"].to_list() == pytest.approx([22 * US, 19 * US], rel=1e-12)
    assert p.functions.loc[0, ["MPI_Irecv", "MPI_Isend", "MPI_Waitall"]].to_list() == pytest.approx(
        [2 * US, 10 * US, 10 * US], rel=1e-12)
    assert p.functions.loc[1, ["MPI_Irecv", "MPI_Isend", "MPI_Waitall"]].to_list() == pytest.approx(
        [0.0, 4 * US, 15 * US], rel=1e-12)
    # without them, o alone: each message leaves at 0, costs 1, arrives at 1 + 2 + 1 = 4, costs 1 more
    [plain] = whatif.replay(exchange(), calibrated(), "openmpi")
    assert plain.ranks["finish"].to_list() == pytest.approx([5 * US, 5 * US], rel=1e-12)


def test_a_host_cost_below_o_changes_nothing():
    low = HostCosts(per_message=np.array([0.5 * US, 0.0]), irecv=np.zeros(2))
    [p] = whatif.replay(exchange(), calibrated(), "openmpi", host=low)
    assert p.ranks["finish"].to_list() == pytest.approx([5 * US, 5 * US], rel=1e-12)


@pytest.mark.parametrize("net", [loggp(latency_us=2, overhead_us=1), calibrated("mpich")],
                         ids=["preset without a library", "another library's calibration"])
def test_host_costs_apply_only_to_a_network_calibrated_with_the_replayed_library(net):
    [p] = whatif.replay(exchange(), net, "openmpi", host=HOST)
    assert p.ranks["finish"].to_list() == pytest.approx([5 * US, 5 * US], rel=1e-12)


def test_a_collectives_messages_and_shared_memory_keep_their_o():
    coll = whatif.from_calls([[C("MPI_Allreduce", bytes=8000)] for _ in range(2)])
    [with_host] = whatif.replay(coll, calibrated(), "openmpi", host=HOST)
    [without] = whatif.replay(coll, calibrated(), "openmpi")
    assert with_host.wall_time == without.wall_time
    # both ranks on one node: the exchange goes through shared memory, costed with the local network's o
    [local] = whatif.replay(exchange(), calibrated(), "openmpi", host=HOST, ranks_per_node=2,
                            local=loggp(latency_us=2, overhead_us=1))
    assert local.ranks["finish"].to_list() == pytest.approx([5 * US, 5 * US], rel=1e-12)


def test_a_one_node_traces_host_cost_costs_the_messages_inside_a_node():
    inside = HostCosts(HOST.per_message, HOST.irecv, inside=True)
    one_node = dict(ranks_per_node=2, local=calibrated())
    # as between nodes above, now through shared memory: rank 0 posts its irecv (2), sends at 2 for 10
    # (in at 15), takes rank 1's message (in at 7) at 12 for 10: 22; rank 1 sends for 4, takes rank 0's
    # at 15 for 4: 19
    [p] = whatif.replay(exchange(), calibrated(), "openmpi", host=inside, **one_node)
    assert p.ranks["finish"].to_list() == pytest.approx([22 * US, 19 * US], rel=1e-12)
    # measured inside a node, replayed with each rank on a node of its own: o alone between nodes
    [apart] = whatif.replay(exchange(), calibrated(), "openmpi", host=inside)
    assert apart.ranks["finish"].to_list() == pytest.approx([5 * US, 5 * US], rel=1e-12)


def _piecewise(shaping=None, name="pw"):
    return whatif.Network(name=name, eager_limit=4096, shaping=shaping, library="openmpi", ranges=[
        dict(upto=1024, latency_us=1.5, overhead_us=0.4, gap_us=0.2, bandwidth_gbit_s=20),
        dict(upto=float("inf"), latency_us=4.0, overhead_us=1.5, gap_us=1.0, bandwidth_gbit_s=50)])


@pytest.mark.parametrize("seed", range(20))
def test_engine_matches_the_python_reference_with_host_costs(seed):
    """Seeds 0-7: measured between nodes, each rank on its own; 8-15: ranks sharing nodes, half of them
    measured inside a node; 16-19: measured inside a node, each rank on its own (so it never applies)."""
    rnd = random.Random(seed)
    P = rnd.choice([2, 3, 5, 8])
    trace = random_trace(seed, P)
    host = HostCosts(per_message=np.array([rnd.choice([0.0, 0.3, 4.0, 25.0]) * US for _ in range(P)]),
                     irecv=np.array([rnd.choice([0.0, 2.5]) * US for _ in range(P)]),
                     inside=seed >= 16 or (seed >= 8 and seed % 4 >= 2))
    shaping = None if seed % 2 else whatif.Shaping(rate_gbit_s=1.0, bucket_bytes=8192)
    net = _piecewise(shaping)
    placed = 8 <= seed < 16
    node_of = whatif.api.nodes_of(P, 2) if placed else None
    shm = _piecewise(name="shm") if placed else None
    where = dict(ranks_per_node=2, local=shm) if placed else {}
    [got] = whatif.replay(trace, net, "openmpi", host=host, **where)
    [plain] = whatif.replay(trace, net, "openmpi", **where)
    streams = build_streams(image_of(trace), "openmpi", node_of)
    clock, comp, ftime = reference_replay(streams, net, host, node_of, shm)
    assert got.ranks["finish"].to_numpy() == pytest.approx(np.array(clock), rel=1e-12, abs=1e-15)
    assert got.functions.to_numpy() == pytest.approx(np.array(ftime)[:, :len(streams.functions)], rel=1e-9,
                                                      abs=1e-15)
    if host.inside and not placed:  # measured inside a node, no message inside one: nothing changes
        assert got.ranks["finish"].to_numpy().tolist() == plain.ranks["finish"].to_numpy().tolist()
    elif host.per_message.max() > 1.5 * US and host.inside == placed:  # above o where it applies: slower
        assert got.wall_time > plain.wall_time


def _profile(rows):
    functions = pd.DataFrame(rows, columns=["rank", "function", "calls", "time"]).assign(
        fclass="p2p", tmin=0.0, tmax=0.0, bytes=0)[FUNCTION_COLUMNS]
    return Profile(meta={"nranks": 3}, ranks=pd.DataFrame(), functions=functions, hist=pd.DataFrame(),
                   p2p=pd.DataFrame())


def test_host_costs_are_each_ranks_mean_per_call_of_its_nonblocking_posts():
    prof = _profile([(0, "MPI_Isend", 100, 2e-3), (0, "MPI_Issend", 100, 4e-3), (0, "MPI_Irecv", 50, 1e-4),
                     (0, "MPI_Waitall", 100, 9.0), (0, "MPI_Sendrecv", 10, 5.0),
                     (1, "MPI_Send", 10, 1.0), (2, "MPI_Isend", 0, 0.0)])
    h = host_costs(prof, 3)
    assert h.per_message.tolist() == pytest.approx([3e-5, 0.0, 0.0])  # 6 ms over 200 sends; none; no calls
    assert h.irecv.tolist() == pytest.approx([2e-6, 0.0, 0.0])


def test_host_costs_of_another_trace_are_a_clear_error():
    with pytest.raises(ScalewiseError, match="host costs: 3 ranks for a trace of 2"):
        whatif.replay(exchange(), calibrated(), "openmpi", host=HostCosts(np.zeros(3), np.zeros(3)))
    with pytest.raises(ScalewiseError, match="host cost per message"):
        HostCosts(per_message=np.array([-1.0, 0.0]), irecv=np.zeros(2))


def _on_hosts(hosts):
    """A profile whose ranks ran on ``hosts``."""
    functions = _profile([(r, "MPI_Isend", 10, 1e-4) for r in range(len(hosts))]).functions
    return Profile(meta={"nranks": len(hosts)}, ranks=pd.DataFrame({"rank": range(len(hosts)), "host": hosts}),
                   functions=functions, hist=pd.DataFrame(), p2p=pd.DataFrame())


def test_host_costs_are_inside_a_node_when_the_run_had_one_node():
    assert host_costs(_on_hosts(["n1", "n1"]), 2).inside
    assert not host_costs(_on_hosts(["n1", "n2"]), 2).inside
    assert not host_costs(_on_hosts(["n1"]), 1).inside  # one rank: no message inside a node measured
    assert not host_costs(_profile([(0, "MPI_Isend", 10, 1e-4)]), 3).inside  # hosts not in the log


def test_one_node_is_read_from_a_logs_plain_rows_too():
    from types import SimpleNamespace

    from scalewise.whatif.hostcost import on_one_node
    assert on_one_node(SimpleNamespace(ranks=[{"rank": 0, "host": "n1"}, {"rank": 1, "host": "n1"}]))
    assert not on_one_node(SimpleNamespace(ranks=[{"rank": 0, "host": "n1"}, {"rank": 1, "host": "n2"}]))
