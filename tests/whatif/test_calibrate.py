"""`scalewise calibrate`: the fit recovers planted parameters exactly, and a
real ping-pong run writes a file the replay accepts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scalewise import whatif
from scalewise.whatif.calibrate import SIZES, fit

SCALEWISE = Path(sys.executable).parent / "scalewise"


def test_fit_recovers_planted_latency_and_bandwidth_per_range():
    # eager: 2 us + s / 10 Gbit/s; rendezvous: 2 * 2 us handshake + 5 us + s / 40 Gbit/s
    eager = 4096
    points = {s: (2e-6 + s * 8 / 10e9) if s <= eager else (4e-6 + 5e-6 + s * 8 / 40e9) for s in SIZES}
    net = fit(points, eager, "planted", "")
    small, large = net.ranges
    assert (small.upto, large.upto) == (eager, float("inf")) and net.eager_limit == eager
    assert small.latency_us == pytest.approx(2.0, rel=1e-6)
    assert small.bandwidth_gbit_s == pytest.approx(10.0, rel=1e-6)
    assert large.latency_us == pytest.approx(5.0, rel=1e-6)
    assert large.bandwidth_gbit_s == pytest.approx(40.0, rel=1e-6)
    assert small.overhead_us == small.gap_us == 0.0


def test_calibrate_writes_a_network_the_replay_accepts(tmp_path):
    out = tmp_path / "here.yaml"
    res = subprocess.run([str(SCALEWISE), "calibrate", "--reps", "5", "-o", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    net = whatif.network(str(out))
    assert net.name == "calibrated" and net.eager_limit == 4096 and len(net.ranges) == 2
    trace = whatif.from_calls([[whatif.Call("MPI_Send", peer=1, bytes=1 << 20)],
                               [whatif.Call("MPI_Recv", peer=0, bytes=1 << 20)]])
    [p] = whatif.replay(trace, str(out))
    # a 1 MiB message costs at least its bytes at the larger range's bandwidth
    assert p.wall_time >= (1 << 20) * 8 / (net.ranges[1].bandwidth_gbit_s * 1e9)


@pytest.mark.parametrize("args, message", [
    (["--hosts", "a", "-o", "x.yaml"], "--hosts: expected two host names"),
    (["-o", "x.txt"], "x.txt: the parameter file must end in .yaml"),
])
def test_bad_options_are_one_line_errors(args, message, tmp_path):
    res = subprocess.run([str(SCALEWISE), "calibrate", *args], capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert res.returncode == 2 and message in res.stderr
