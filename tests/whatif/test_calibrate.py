"""`scalewise calibrate`: the fit recovers planted parameters exactly, and a
real ping-pong run writes a file the replay accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scalewise import whatif
from scalewise.whatif.calibrate.pingpong import (HALF_DUPLEX_RATIO, SIZES, calibration_doubts, duplex_terms,
                                                 exchange_ratios, fit, link_payload_share, measure_both, measure_overheads,
                                                 payload_share, share_sizes)
from scalewise.whatif.network import Shaping
from scalewise.whatif.trace import Call as C

SCALEWISE = Path(sys.executable).parent / "scalewise"


def _model_half_rtt(net, size: int) -> float:
    """What the replay charges a ping-pong message: 2o + L + s*G, plus the 2 * L0 handshake above the eager limit."""
    r = next(r for r in net.ranges if size <= r.upto)
    handshake = 2 * net.ranges[0].latency_us * 1e-6 if size > net.eager_limit else 0.0
    return handshake + (2 * r.overhead_us + r.latency_us) * 1e-6 + size * r.per_byte


def test_fit_takes_the_measured_overhead_out_of_the_latency():
    # eager only: 2o + L = 10 us with o = 3 us, 10 Gbit/s
    points = {s: 10e-6 + s * 8 / 10e9 for s in SIZES}
    net = fit(points, 1 << 30, "planted", "", overhead=3e-6)
    assert all(r.overhead_us == pytest.approx(3.0) and r.latency_us == pytest.approx(4.0) for r in net.ranges)
    for size, t in points.items():
        assert _model_half_rtt(net, size) == pytest.approx(t, rel=1e-9)
    # never more than half the intercept: L stays >= 0 and the points are still reproduced
    tight = fit(points, 1 << 30, "planted", "", overhead=8e-6)
    assert tight.ranges[0].overhead_us == pytest.approx(5.0) and tight.ranges[0].latency_us == pytest.approx(0.0)
    # in the replay, the calibration's streams (each rank posts n receives, sends n, waits) take 2 n o
    n = 200
    stream = [[C("MPI_Irecv", 1 - r, 8, req=k) for k in range(n)] + [C("MPI_Send", 1 - r, 8)] * n
              + [C("MPI_Waitall", reqs=tuple(range(n)))] for r in (0, 1)]
    [p] = whatif.replay(whatif.from_calls(stream), net)
    assert p.wall_time == pytest.approx(2 * n * 3e-6, rel=1e-9)


def test_fit_charges_the_overhead_measured_at_each_size():
    # o grows from 2 us at 8 B to 18 us at 8 KiB; 2o + L + s G with L = 40 us, 1 Gbit/s
    o_by_size = {8: 2e-6, 1024: 4e-6, 8192: 18e-6}

    def o_of(s):
        return float(np.interp(s, sorted(o_by_size), [o_by_size[k] for k in sorted(o_by_size)]))
    points = {s: 2 * o_of(s) + 40e-6 + s * 8 / 1e9 for s in SIZES}
    net = fit(points, 1 << 30, "growing", "", overhead=o_by_size)
    by_upto = {r.upto: r for r in net.ranges}
    assert by_upto[1024].overhead_us == pytest.approx(4.0) and by_upto[8192].overhead_us == pytest.approx(18.0)
    assert by_upto[4096].overhead_us == pytest.approx(1e6 * o_of(4096))
    assert net.ranges[-1].overhead_us == pytest.approx(18.0)  # flat beyond the largest stream
    for size, t in points.items():  # the ping-pong is still reproduced at every measured size
        assert _model_half_rtt(net, size) == pytest.approx(t, rel=1e-9)
    # a stream of 8 KiB messages both ways costs each rank 2 n o(8 KiB) of CPU in the replay
    n = 6
    stream = [[C("MPI_Irecv", 1 - r, 8192, req=k) for k in range(n)] + [C("MPI_Send", 1 - r, 8192)] * n
              + [C("MPI_Waitall", reqs=tuple(range(n)))] for r in (0, 1)]
    [p] = whatif.replay(whatif.from_calls(stream), net)
    assert p.wall_time >= 2 * n * 18e-6


def test_fit_on_a_shaped_link_describes_the_link_without_its_bucket():
    # rested round trips on a link shaped to 0.1 Gbit/s with a 64 KiB bucket: 10 us + s / 8 Gbit/s
    # below the bucket, plus (s - bucket) / 0.1 Gbit/s above it
    shaping = whatif.Shaping(rate_gbit_s=0.1, bucket_bytes=65536)
    points = {s: 10e-6 + s * 8 / 8e9 + max(s - 65536, 0) * 8 / 0.1e9 for s in SIZES}
    net = fit(points, 1 << 30, "shaped", "", shaping)
    assert net.shaping == shaping
    assert all(r.bandwidth_gbit_s == pytest.approx(8.0, rel=1e-6) for r in net.ranges)
    for size, t in points.items():  # a message sent on a rested link costs what was measured
        trace = whatif.from_calls([[C("MPI_Send", 1, size)], [C("MPI_Recv", 0, size)]])
        [p] = whatif.replay(trace, net)
        assert p.wall_time == pytest.approx(t, rel=1e-9)


def test_fit_recovers_planted_latency_and_bandwidth_per_range():
    # eager: 2 us + s / 10 Gbit/s; rendezvous: 2 * 2 us handshake + 5 us + s / 40 Gbit/s
    eager = 4096
    points = {s: (2e-6 + s * 8 / 10e9) if s <= eager else (4e-6 + 5e-6 + s * 8 / 40e9) for s in SIZES}
    net = fit(points, eager, "planted", "")
    assert net.eager_limit == eager and len(net.ranges) == len(SIZES) - 1
    assert [r.upto for r in net.ranges] == [*SIZES[1:-1], float("inf")]
    for r in net.ranges:
        assert r.overhead_us == r.gap_us == 0.0
        if r.upto <= eager:  # wholly eager
            assert (r.latency_us, r.bandwidth_gbit_s) == (pytest.approx(2.0, rel=1e-6), pytest.approx(10.0, rel=1e-6))
        elif r.upto > 2 * eager:  # wholly rendezvous
            assert (r.latency_us, r.bandwidth_gbit_s) == (pytest.approx(5.0, rel=1e-6), pytest.approx(40.0, rel=1e-6))
    for size, t in points.items():  # and every measured point exactly, the range across the limit too
        assert _model_half_rtt(net, size) == pytest.approx(t, rel=1e-9)


def test_fit_follows_a_step_and_never_makes_a_larger_message_cheaper():
    # a shaped link: 9 us up to 1 KiB, then 100 Mbit/s; one noisy point cheaper than its smaller neighbour
    points = {s: 9e-6 if s <= 1024 else s * 8 / 100e6 for s in SIZES}
    points[4096] = points[2048] * 0.9
    net = fit(points, 65536, "shaped", "")
    assert _model_half_rtt(net, 4096) == pytest.approx(points[2048], rel=1e-9)  # the running maximum
    assert _model_half_rtt(net, 1 << 20) == pytest.approx(points[1 << 20], rel=1e-9)
    step = next(r for r in net.ranges if r.upto == 2048)
    assert step.latency_us == 0.0 and _model_half_rtt(net, 2048) == pytest.approx(points[2048], rel=1e-9)


def test_calibrate_writes_a_network_the_replay_accepts(tmp_path):
    out = tmp_path / "here.yaml"
    res = subprocess.run([str(SCALEWISE), "calibrate", "--reps", "5", "-o", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    net = whatif.network(str(out))
    # named after its file; the table shows the measured sizes, fastest and median, not the fit's pieces
    assert net.name == "here" and net.library == "openmpi"
    assert net.eager_limit == 4096 and len(net.ranges) == len(SIZES) - 1
    assert "median/fastest" in res.stdout and "4 MiB" in res.stdout and "network: " in res.stdout
    assert net.ranges[0].overhead_us > 0 and net.shaping is None  # o from the stream of small messages
    trace = whatif.from_calls([[whatif.Call("MPI_Send", peer=1, bytes=1 << 20)],
                               [whatif.Call("MPI_Recv", peer=0, bytes=1 << 20)]])
    [p] = whatif.replay(trace, str(out))
    # a 1 MiB message costs what the ping-pong measured at 1 MiB (a measured size), handshake included
    assert p.wall_time == pytest.approx(_model_half_rtt(net, 1 << 20), rel=1e-6)


@pytest.mark.parametrize("args, message", [
    (["--hosts", "a", "-o", "x.yaml"], "--hosts: expected two host names"),
    (["-o", "x.txt"], "x.txt: the parameter file must end in .yaml"),
    (["--peers", "-o", "x.yaml"], "--peers: exchanges with several nodes are measured on the emulated cluster"),
])
def test_bad_options_are_one_line_errors(args, message, tmp_path):
    res = subprocess.run([str(SCALEWISE), "calibrate", *args], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert res.returncode == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def _points(best: dict[int, float], spread: float) -> dict[str, dict[int, float]]:
    return {"best": best, "median": {s: t * spread for s, t in best.items()}}


def test_a_busy_or_off_link_calibration_says_why_it_is_not_trusted():
    shaping = Shaping(rate_gbit_s=0.1, bucket_bytes=65536)
    rate = shaping.bytes_per_second * 0.9  # 90% of the configured rate carries payload
    best = {s: 10e-6 + max(s - 0.9 * 65536, 0) / rate for s in SIZES}
    assert payload_share(best, shaping) == pytest.approx(0.9, rel=1e-6)
    assert calibration_doubts(_points(best, 1.2), shaping.model_copy(update={"payload_share": 0.9})) == ()
    [busy] = calibration_doubts(_points(best, 70), None)
    assert "busy" in busy and "70 times" in busy
    [slow] = calibration_doubts(_points(best, 1.0), shaping.model_copy(update={"payload_share": 0.5}))
    assert "50% of the link's configured 0.1 Gbit/s" in slow


def test_a_shaped_links_payload_share_is_its_median_round_trips_rate():
    # the fastest round trips carry 95% of the rate as payload, the median ones 85%: the link is given 85%
    shaping = Shaping(rate_gbit_s=1.0, bucket_bytes=65536)
    points = {name: {s: 10e-6 + max(s - share * 65536, 0) / (shaping.bytes_per_second * share) for s in SIZES}
              for name, share in (("best", 0.95), ("median", 0.85))}
    assert link_payload_share(points, shaping) == 0.85
    assert link_payload_share({**points, "median": points["best"]}, shaping) == 0.95


def test_a_share_the_headers_cannot_explain_is_measured_again_from_more_round_trips():
    # At 100 Mbit/s 95.5% is payload; a median 4 MiB round trip that hit TCP's retransmission timeout
    # is 100 ms longer, which reads as a share of about 0.69: below what headers take, so the two sizes
    # are measured again and the new medians give the share.
    shaping = Shaping(rate_gbit_s=0.1, bucket_bytes=65536)
    clean = {s: 10e-6 + max(s - 0.955 * 65536, 0) / (shaping.bytes_per_second * 0.955) for s in SIZES}
    big = tuple(share_sizes(clean, shaping))
    assert big == (1 << 20, 4 << 20)
    asked = []

    def again(points):
        def measure(sizes):
            asked.append(sizes)
            return {"best": {s: clean[s] for s in sizes}, "median": {s: points[s] for s in sizes}}
        return measure

    late = {**clean, 4 << 20: clean[4 << 20] + 0.1}
    assert payload_share(late, shaping) == pytest.approx(0.69, abs=0.01)
    assert link_payload_share({"best": clean, "median": late}, shaping, again(clean)) == 0.955
    assert asked == [big]
    # a rate above the link's (the 1 MiB round trip late) is measured again too
    assert link_payload_share({"best": clean, "median": {**clean, 1 << 20: clean[1 << 20] + 0.1}}, shaping,
                              again(clean)) == 0.955
    # within what headers allow: not measured again; and a link that is slow again keeps its low share
    asked.clear()
    assert link_payload_share({"best": clean, "median": clean}, shaping, again(late)) == 0.955 and not asked
    assert link_payload_share({"best": clean, "median": late}, shaping, again(late)) == pytest.approx(0.69, abs=0.01)
    # without a way to measure again (a sweep of SHARE_REPS or more), the sweep's share stands
    assert link_payload_share({"best": clean, "median": late}, shaping) == pytest.approx(0.69, abs=0.01)


def test_a_shaped_link_charges_its_headers_to_the_bucket():
    # 0.95 of 100 Mbit/s is payload: 4 MiB beyond the bucket leaves at 95 Mbit/s, not 100
    shaping = Shaping(rate_gbit_s=0.1, bucket_bytes=65536, payload_share=0.95)
    net = fit({s: 10e-6 for s in SIZES}, 65536, "fe", "", shaping, 0.0)
    n = 4 << 20
    [one_way] = whatif.replay(whatif.from_calls([[C("MPI_Send", 1, n)], [C("MPI_Recv", 0, n)]]), net)
    assert (n - 0.95 * 65536) / one_way.wall_time == pytest.approx(0.95 * 12.5e6, rel=0.01)
    ideal = shaping.model_copy(update={"payload_share": 1.0})
    [pure] = whatif.replay(whatif.from_calls([[C("MPI_Send", 1, n)], [C("MPI_Recv", 0, n)]]),
                           net.model_copy(update={"shaping": ideal}))
    assert one_way.wall_time / pure.wall_time == pytest.approx(1 / 0.95, rel=0.01)


def test_streams_of_larger_messages_give_an_overhead_per_size():
    points = {1024: 5e-6, 8192: 10e-6}  # half round trips: what the stream's time is compared with
    found = measure_overheads("openmpi", points, reps=3)
    assert sorted(found) == [8, 1024, 8192]
    assert all(found[s] >= found[8] > 0 for s in found)


@pytest.mark.parametrize("ratios, terms", [
    ((2.00, 2.01, 2.00), {"duplex": "half"}),  # every launch took turns
    ((1.03, 1.05, 1.02), {"both_ways": 1.03}),  # both at once, each a little slower: the median launch
    ((0.96, 0.98, 0.99), {"both_ways": 1.0}),  # faster than one way is noise: never below 1
    ((1.6, 1.7, 1.8), {"duplex": "half"}),
    ((1.16, 1.45, 1.17), {"both_ways": 1.17}),  # one launch slowed by other jobs: the median holds
])
def test_the_launches_median_sets_the_duplex(ratios, terms):
    assert duplex_terms(ratios) == (terms, None)


def test_the_ping_pong_and_the_exchange_report_a_mean_of_their_repetitions():
    # a mean is never below the fastest: the proxy's figures, parsed, are its own
    both = measure_both("openmpi", sizes=(8, 1 << 20), reps=5)
    assert sorted(both) == ["best", "mean", "median"]
    assert all(0 < both["best"][s] <= both["mean"][s] for s in (8, 1 << 20)), both
    one_way = both["best"][1 << 20]
    ratios = exchange_ratios("openmpi", one_way, reps=3)
    assert sorted(ratios) == ["mean", "median"] and all(r > 0 for r in ratios.values()), ratios


def test_launches_that_disagree_give_a_doubt_and_no_term():
    # Open MPI's TCP defaults at 100 Mbit/s: some launches' exchanges take turns, others do not
    terms, doubt = duplex_terms((2.00, 1.04, 2.01))
    assert terms == {} and doubt == ("a 4 MiB message both ways at once took 2.00, 1.04, 2.01 times one way in 3 "
                                     "launches: neither half nor full duplex holds, none recorded")
    # a launch at the threshold took turns
    assert duplex_terms((1.02, HALF_DUPLEX_RATIO, 1.03))[0] == {}
    assert duplex_terms((1.02, HALF_DUPLEX_RATIO - 0.01, 1.03)) == ({"both_ways": 1.03}, None)


def test_both_ways_peers_are_the_exchanges_median_over_the_fan_ins_from_1_to_2():
    from scalewise.errors import ScalewiseError
    from scalewise.whatif.calibrate.peers import peers_ratios

    fan_in = {1: [0.020, 0.021, 0.030], 2: [0.040, 0.041, 0.042], 3: [0.060, 0.061, 0.090]}
    exchange = {1: [0.019, 0.020, 0.020], 2: [0.050, 0.0513, 0.090], 3: [0.200, 0.300, 0.400]}
    # medians: 0.020 / 0.021 (faster is noise: 1), 0.0513 / 0.041, 0.300 / 0.061 (capped at 2)
    assert peers_ratios(fan_in, exchange) == [1.0, round(0.0513 / 0.041, 4), 2.0]
    with pytest.raises(ScalewiseError, match="need 1, 2, ... in both"):
        peers_ratios({1: [0.1], 3: [0.1]}, {1: [0.1], 3: [0.1]})
