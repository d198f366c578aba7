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
from scalewise.cluster import cluster_up, parse_rate
from scalewise.cluster.checks import LINE
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import bucket_bytes
from scalewise.launch.preload import built_library
from support.expect import function_differences, groundtruth_c, recorded_p2p
from support.mpijob import PROGRAMS, counted_calls
from support.pypi_mpis import IDENTITIES, LAUNCHERS, loaded_env

SW = str(Path(os.sys.executable).with_name("scalewise"))
PYPI = list(IDENTITIES)
REPS, COUNT, SIZES = 2, 3, [0, 1, 8, 1024, 65536]
MIB = 1 << 20


@pytest.fixture
def under(monkeypatch):
    """under(name) -> the MPI's identity, this process's environment that of its module loaded
    (what pair_launcher reads: the launcher on PATH, the runtime builds)."""
    def load(name: str) -> str:
        for key, value in loaded_env(name).items():
            if os.environ.get(key) != value:
                monkeypatch.setenv(key, value)
        return IDENTITIES[name]
    return load


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
def test_a_pypi_mpi_runs_across_two_nodes_over_the_shaped_links(emulation, under, name, tmp_path):
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
