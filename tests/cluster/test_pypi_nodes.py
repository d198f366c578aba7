"""The MPIs a user installs from PyPI across emulated nodes, each started by its own launcher
(Open MPI 5's PRRTE mpirun, MPICH 5's and Intel MPI's Hydra): every count exact, each rank on the
node the placement gives it, and the traffic between nodes on the shaped links, not on shared memory
or the loopback between "nodes" that share this machine."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import scalewise
from scalewise import whatif
from scalewise.cluster import cluster_up, parse_rate
from scalewise.cluster.checks import LINE
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import bucket_bytes
from scalewise.launch.preload import built_library
from scalewise.whatif.trace import Call as C
from support.expect import function_differences, groundtruth_c, recorded_p2p
from support.mpijob import PROGRAMS, counted_calls
from support.pypi_mpis import IDENTITIES, LAUNCHERS

SW = str(Path(os.sys.executable).with_name("scalewise"))
PYPI = list(IDENTITIES)
REPS, COUNT, SIZES = 2, 3, [0, 1, 8, 1024, 65536]
MIB = 1 << 20


def _tx(dev: str) -> int:
    return int(Path(f"/sys/class/net/{dev}/statistics/tx_bytes").read_text())


def _pingpong(c, identity: str, reps: int) -> tuple[float, tuple[str, str]]:
    """The fastest half round trip of a 1 MiB message between the first two nodes, in seconds, and their hosts."""
    exe = built_library(identity, "proxies/pingpong", "ping-pong proxy")
    argv, env = pair_launcher(c, identity, "test")([str(exe), "--sizes", str(MIB), "--reps", str(reps)])
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    row = LINE.search(done.stdout)
    assert row and int(row.group(1)) == MIB, done.stdout
    return float(row.group(5)) * 1e-6, (row.group(7), row.group(8))


@pytest.mark.parametrize("name", PYPI)
def test_a_pypi_mpi_runs_across_two_nodes_over_the_shaped_links(two_nodes, under, name, tmp_path):
    identity = under(name)
    c = cluster_up(2, parse_rate("100mbit"))
    exe = tmp_path / "groundtruth"
    subprocess.run(["mpicc", "-O1", "-w", str(PROGRAMS / "groundtruth.c"), "-o", str(exe)], check=True,
                   capture_output=True, timeout=300)
    done = subprocess.run([SW, "run", "--cluster", "--json", "-o", str(tmp_path / "out"), "--", LAUNCHERS[name],
                           "-n", "4", str(exe), str(tmp_path / "io.dat"), str(REPS), str(COUNT), *map(str, SIZES)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    profile = scalewise.load(json.loads(done.stdout)["log"])
    assert identity.split("-")[1] in profile.meta["mpi_library"]
    # Two ranks on each node, by slot: what the placement (and the what-if's nodes_of) says.
    hosts = profile.ranks.set_index("rank")["host"].sort_index().tolist()
    assert hosts == ["swnode1", "swnode1", "swnode2", "swnode2"]
    expected = groundtruth_c(4, REPS, COUNT, SIZES, counted_calls(done.stderr))
    for what in ("calls", "bytes", "hist"):
        diffs = function_differences(profile, expected, what)
        assert not diffs, "\n".join(diffs)
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))

    # A 1 MiB message each way crosses the two shaped links: at 100 Mbit/s no faster than the rate lets
    # through beyond a full bucket, and every byte on node 1's link.
    before = _tx("swv1")
    slow, pair = _pingpong(c, identity, reps=3)
    assert pair == ("swnode1", "swnode2")
    assert _tx("swv1") - before >= 3 * MIB
    assert slow >= (MIB - bucket_bytes(c.rate_bits)) * 8 / c.rate_bits, slow
    cluster_up(2, parse_rate("10gbit"))  # the same nodes, their links reshaped in place
    fast, _ = _pingpong(c, identity, reps=3)
    assert fast < slow / 4, (fast, slow)
    # A user's own line through `cluster exec`: the launcher's MPI told from its prefix, a rank on each node.
    pingpong = built_library(identity, "proxies/pingpong", "ping-pong proxy")
    done = subprocess.run([SW, "cluster", "exec", "--", LAUNCHERS[name], "-n", "2", str(pingpong), "--sizes", "8"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "host0=swnode1 host1=swnode2" in done.stdout, done.stderr[-3000:]


def test_a_study_compares_the_pypi_mpis_across_emulated_nodes(emulation, under, tmp_path):
    """The studies' MPI-library comparison across nodes: each library's 4 ranks on 2 nodes, 2 on each,
    every ring message counted."""
    import sqlite3

    from scalewise.campaign.runner import run_study
    from scalewise.campaign.study import load_study
    from support.expect import assert_ring_on_two_nodes
    from support.pypi_mpis import ring_study

    under("mpich5")  # for its SCALEWISE_MPI_BUILDS: the runtime builds the other tests made
    iters, nbytes = 20, 4096
    path = tmp_path / "study.yaml"
    path.write_text(ring_study(tmp_path, "libraries-across-nodes", {"ranks": [4], "nodes": [2], "interconnect": ["fe"],
                                                                     "mpi": list(PYPI)}, iters, nbytes))
    loaded = load_study(path)
    assert run_study(loaded, "local").counts == {"ok": 3}
    db = sqlite3.connect(loaded.output / "results.sqlite")
    runs = db.execute("SELECT mpi, nodes, hosts, profile_path FROM runs ORDER BY mpi").fetchall()
    assert [r[:3] for r in runs] == [(m, 2, "swnode1,swnode2") for m in sorted(PYPI)]
    for mpi, _, _, profile_path in runs:
        profile = scalewise.load(loaded.output / profile_path)
        assert IDENTITIES[mpi].split("-")[1] in profile.meta["mpi_library"]
        assert_ring_on_two_nodes(profile, iters, nbytes, mpi)


@pytest.mark.parametrize("name", PYPI)
def test_calibrate_measures_a_pypi_mpi_between_two_emulated_nodes(two_nodes, under, name, tmp_path):
    from scalewise.launch.releases import release_line
    from scalewise.whatif.calibrate.pingpong import EAGER
    from scalewise.whatif.network import load_network

    identity = under(name)
    cluster_up(2, parse_rate("100mbit"))
    out = tmp_path / "fe.yaml"
    # Without the both-ways exchanges (3 launches of 10 exchanges of 4 MiB each way: the test took 38 s and
    # 47 s with them, 7 s and 11 s without, MPICH 5 and Intel MPI): nothing below reads them, and the
    # Debian MPIs' calibrations across the nodes (tests/cluster/test_whatif_accuracy.py) check their terms.
    done = subprocess.run([SW, "calibrate", "--cluster", "--mpi", identity, "--reps", "3", "--collectives", "barrier",
                           "--coll-sizes", "8", "--no-duplex", "-o", str(out)], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    net = load_network(out)
    assert (net.library, net.eager_limit) == (identity, EAGER[(release_line(identity, "test"), False)])
    assert net.description.startswith(f"measured with scalewise calibrate, {identity}, between swnode1 and swnode2")
    assert net.shaping.rate_gbit_s == 0.1 and net.shaping.bucket_bytes == bucket_bytes(10**8)
    # The model of the link the library's messages crossed carries 4 MiB at the shaped 100 Mbit/s
    # (less the headers), not at this machine's memory bandwidth.
    n = 4 << 20
    [one_way] = whatif.replay(whatif.from_calls([[C("MPI_Send", 1, n)], [C("MPI_Recv", 0, n)]]), net)
    assert 0.080 <= 8 * n / one_way.wall_time / 1e9 <= 0.105, one_way.wall_time


@pytest.mark.parametrize("name", PYPI)
def test_memory_probe_runs_a_pypi_mpi_across_emulated_nodes(emulation, under, name):
    from click.testing import CliRunner

    from scalewise.cli.main import cli
    from scalewise.cluster import current_cluster
    from scalewise.memory.measure import setups

    identity = under(name)
    # In this process, which holds the cluster lock the measurement takes (a child would wait for it).
    result = CliRunner().invoke(cli, ["memory", "--mpi", identity, "--ranks", "2,4", "--peers", "none,all",
                                      "--repeats", "1", "--emulated-nodes", "2", "--nodes", "1..4", "--json"])
    assert result.exit_code == 0, result.output[-3000:]
    out = json.loads(result.stdout)
    assert out["hosts"] == ["swnode1", "swnode2"]  # the ranks ran on both nodes
    assert [(f["mpi"], f["setup"], f["runs"]) for f in out["fits"]] == [(identity, s.name, 4) for s in setups(identity)]
    assert current_cluster() is None  # brought up for the measurement, taken down after
