"""Where the ranks of a job on the emulated nodes land, against where the what-if replay puts them.

The placement prediction (bench/whatif_placement.py, docs/benchmarks.md) replays a one-node trace with
``ranks_per_node`` by slot and compares it with the job run at that placement; it means something only if
the launch `scalewise run --cluster` makes puts each rank on the node ``whatif.api.nodes_of`` gives it."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from scalewise.cluster import cluster_up, parse_rate
from scalewise.launch.preload import build_dir
from scalewise.logfile.reader import read_profile
from scalewise.whatif.api import nodes_of
from support.benches import bench_module

SW = str(Path(os.sys.executable).with_name("scalewise"))
LAUNCHER = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.mpich"}


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_ranks_land_on_the_nodes_the_placement_prediction_assumes(emulation, mpi, tmp_path):
    exe = str(build_dir() / mpi / "proxies" / "sem")
    for nodes in (2, 4):
        c = cluster_up(nodes, parse_rate("1gbit"))
        done = subprocess.run([SW, "run", "--cluster", "-o", str(tmp_path / str(nodes)), "--quiet", "--",
                               LAUNCHER[mpi], "-np", "4", exe, "--size", "tiny"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "status=PASS" in done.stdout, done.stderr
        hosts = read_profile(re.search(r"profile: (\S+)", done.stdout).group(1)).ranks.set_index("rank")["host"]
        # 4 ranks on 2 nodes: ranks 0, 1 on the first (by slot); by node would give 0, 2 there instead
        expected = [c.hostnames[n] for n in nodes_of(4, 4 // nodes, "slot")]
        assert hosts.sort_index().tolist() == expected, (nodes, hosts.to_dict())


def test_placement_bench_sets_mpich_idle_polls_where_the_launch_yields(emulation, tmp_path):
    """bench/whatif_placement.py --mpich-yield-after: MPICH's launches that yield (more ranks than the node's
    cores) yield after that many idle polls; a launch that does not yield, and Open MPI's, are left as made."""
    bench = bench_module("whatif_placement")
    exe = [str(build_dir() / "mpich" / "proxies" / "dft"), "--size", "tiny", "--compute", "sleep", "--iters", "2"]
    c = cluster_up(1, parse_rate("1gbit"))
    own = bench.launch_line(c, "mpich", exe)[1][bench.YIELD]
    argv, env, per_node = bench.launch_line(c, "mpich", exe, 1)
    assert per_node == 4 and env[bench.YIELD] == "1" != own
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "status=PASS" in done.stdout, done.stderr
    assert bench.YIELD not in bench.launch_line(c, "openmpi", exe, 1)[1]
    c = cluster_up(4, parse_rate("1gbit"))
    cores_each = min(len(n.cpus) for n in c.nodes)
    if 4 <= c.cpus_total:  # one rank per node and enough cores: the launch does not yield, nor does the option
        assert bench.YIELD not in bench.launch_line(c, "mpich", exe, 1)[1], cores_each


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_placement_bench_two_ranks_land_where_its_replay_puts_them(emulation, mpi, tmp_path):
    """bench/whatif_placement.py --ranks 2: both ranks on the one node, then one on each of 2 nodes, as its
    check (and the replay's nodes_of) has them; and its --local-on-node calibration's launch puts its 2 ranks
    on one node with the cluster's transport (MPICH 4.0: UCX kept to TCP, no shared memory of its own)."""
    bench = bench_module("whatif_placement")
    exe = [str(build_dir() / mpi / "proxies" / "sem"), "--size", "tiny"]
    for nodes in bench.PLACEMENTS[2].values():
        c = cluster_up(nodes, parse_rate("1gbit"))
        argv, env, per_node = bench.launch_line(c, mpi, exe, ranks=2)
        assert per_node == 2 // nodes
        log, _ = bench.traced(mpi, argv, env, tmp_path / str(nodes))
        bench.check_placement(log, c.hostnames, per_node, 2)  # exits if a rank is elsewhere
        hosts = read_profile(log).ranks.set_index("rank")["host"].sort_index().tolist()
        assert len(set(hosts)) == nodes, hosts
    c = cluster_up(1, parse_rate("1gbit"))
    argv, env = bench.pair_on_node(c, mpi)([*exe])
    if mpi == "mpich":
        assert env["UCX_TLS"] == "tcp,self"
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "status=PASS" in done.stdout, done.stderr
