"""The what-if replay against reality on emulated nodes: a trace recorded on one
link rate, predicted for another from that link's own calibration, and the run
measured there (the small version of the accuracy table in docs/benchmarks.md)."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from scalewise import whatif
from scalewise.cluster import cluster_up, current_cluster, parse_rate
from scalewise.cluster.links import bucket_bytes
from scalewise.launch.mpirun import two_ranks
from scalewise.launch.preload import build_dir
from scalewise.whatif.network import load_network
from scalewise.whatif.trace import Call as C

SW = str(Path(os.sys.executable).with_name("scalewise"))
# dft is network-bound on the slower link (about 90% MPI at 100 Mbit/s); sem sends an 8 KiB halo
# message after each millisecond of computation, which the shaped link's bucket lets through at
# memory speed (without the bucket in the model its MPI share came out 13-20 points high).
APPS = {"dft": ["--size", "small", "--iters", "4"], "sem": ["--size", "small"]}
WALL_BOUND, SHARE_BOUND = 0.15, 10.0
ROUNDS = 5


def _sw(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([SW, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """calibrated(mpi) -> the file `scalewise calibrate --cluster` wrote for the running cluster's links:
    measured once per MPI and link shape in this module, so the calibration test checks the very file
    the cross-link prediction of the same MPI reads (one 20-repetition calibration less, about 40 s).
    Its collectives at 8 bytes only: the replay charges each collective what its smallest measured size
    cost beyond its replay (whatif/percall.py), and the larger sizes' rows are a report that nothing
    here reads (at 100 Mbit/s the collectives' step took 7.4-7.7 s with them, 0.6-0.8 s without)."""
    made: dict[tuple, Path] = {}

    def calibrate(mpi: str) -> Path:
        c = current_cluster()
        shape = (mpi, len(c.nodes), c.blocking, c.rate_bits, c.queue_us, c.tcp_defaults)
        if shape not in made:
            out = tmp_path_factory.mktemp("calibration") / f"{mpi}.yaml"
            done = _sw("calibrate", "--cluster", "--mpi", mpi, "--reps", "20", "--coll-sizes", "8", "-o", str(out))
            out.with_suffix(".txt").write_text(done.stdout)  # what it printed, beside the file
            made[shape] = out
        return made[shape]
    return calibrate


def _traced_run(mpi: str, app: str, out: Path) -> tuple[Path, Path]:
    exe = str(build_dir() / mpi / "proxies" / app)
    line = [*two_ranks(mpi, one_per_node=True), exe, *APPS[app]]
    done = _sw("run", "--cluster", "--trace", "--quiet", "-o", str(out), "--", *line)
    assert "status=PASS" in done.stdout
    log = Path(re.search(r"profile: (\S+)", done.stdout).group(1))
    return log, log.with_suffix(".swtrace")


def test_calibrate_between_two_emulated_nodes_measures_the_link(two_nodes, calibrated):
    cluster_up(2, parse_rate("100mbit"))
    calibration = calibrated("openmpi")
    net = load_network(calibration)
    assert net.eager_limit == 65536  # Open MPI's TCP transport between nodes, not shared memory
    assert net.shaping.rate_gbit_s == 0.1 and net.shaping.bucket_bytes == bucket_bytes(10**8)
    # the packets' headers and the acknowledgements take a few percent of the shaped rate
    assert 0.85 <= net.shaping.payload_share < 1.0, net.shaping
    # measured by default: both directions at once, as the cluster launches Open MPI (without put),
    # each a little slower than alone
    assert net.duplex == "full" and 1.0 <= net.both_ways < 1.5 and not net.doubts, net
    # both_ways is the median launch's median exchange over the fastest one way; the mean exchange of
    # each launch (its slow ones included) is measured and reported beside it
    said = calibration.with_suffix(".txt").read_text()
    found = re.search(r"both ways at once: ([\d., ]+) times the fastest one way in 3 launches \(median exchange\), "
                      r"([\d., ]+) \(mean exchange\)", said)
    assert found, said
    medians, means = ([float(x) for x in g.split(", ")] for g in found.groups())
    assert len(medians) == len(means) == 3, said
    assert net.both_ways == pytest.approx(min(max(statistics.median(medians), 1.0), 2.0), abs=0.006), said
    assert all(m > 0 for m in means), said
    # The model of the link carries 4 MiB at the shaped 100 Mbit/s, not this machine's memory bandwidth.
    n = 4 << 20
    [one_way] = whatif.replay(whatif.from_calls([[C("MPI_Send", 1, n)], [C("MPI_Recv", 0, n)]]), net)
    assert 0.080 <= 8 * n / one_way.wall_time / 1e9 <= 0.105, one_way.wall_time


# Open MPI's dft: with its TCP defaults its transport takes turns between the two directions of most
# exchanges at 100 Mbit/s, not all, and its self-replay was 15-68% slow; the cluster launches it without
# the put protocol, which keeps the directions together (docs/cluster.md), so it is checked too.
@pytest.mark.parametrize("mpi, apps", [("mpich", ["dft", "sem"]), ("openmpi", ["dft", "sem"])])
def test_a_run_recorded_on_one_link_is_predicted_on_another(two_nodes, calibrated, mpi, apps, tmp_path):
    # Rounds, as bench/whatif_cluster.py: each round records at 1 Gbit/s and measures at 100 Mbit/s
    # within seconds (the link reshaped in place), so a slow spell of this machine (single runs a
    # minute apart differed by half here) falls on both; each error's median over the rounds is checked.
    # The two_nodes fixture holds the cluster lock, so these runs are ahead of the host's other work
    # (cluster/dedicated.py): at load 11 without it sem's measured MPI share was 67-74%, not about 30%.
    cluster_up(2, parse_rate("100mbit"))
    net = calibrated(mpi)
    errors: dict[str, list[dict]] = {app: [] for app in apps}
    for k in range(ROUNDS):
        for app in apps:
            cluster_up(2, parse_rate("1gbit"))
            _, trace = _traced_run(mpi, app, tmp_path / f"gige{k}")
            cluster_up(2, parse_rate("100mbit"))
            measured, _ = _traced_run(mpi, app, tmp_path / f"fe{k}")
            done = _sw("whatif", str(trace), "--network", str(net), "--mpi", mpi, "--measured", str(measured), "--json")
            errors[app].append(json.loads(done.stdout)["vs_measured"][0])
    misses = []
    for app, rounds in errors.items():
        # The replay keeps the trace's compute; the measured run's compute differs from it by the
        # machine's noise (in CI rounds it was 31% less to 41% more, and the wall error followed it
        # round by round).  The network model's error is the change left when the replay is given the
        # measured run's compute, rank by rank; the plain change is printed beside it.
        wall = statistics.median(e["wall_change_same_compute"] for e in rounds)
        share = statistics.median(e["mpi_share_points_same_compute"] for e in rounds)
        plain = statistics.median(e["wall_change"] for e in rounds)
        compute = statistics.median(e["compute_change"] for e in rounds)
        detail = (f"{mpi} {app}: recorded at 1 Gbit/s, predicted for 100 Mbit/s at the measured compute: median "
                  f"wall error {wall:+.1%}, MPI share {share:+.1f} points (with the trace's compute, {compute:+.1%} "
                  f"off the measured: wall {plain:+.1%}; rounds: {rounds})")
        print(detail)
        if abs(wall) > WALL_BOUND or abs(share) > SHARE_BOUND:
            misses.append(detail)
    assert not misses, misses
