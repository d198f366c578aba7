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
