"""The cluster's launch settings beyond the transport: Open MPI's TCP transport without its put
protocol, so that a peer's control message does not wait behind bulk data in one socket (the
cluster stands for an HPC interconnect), unless the cluster keeps each MPI's own settings; and ranks
that yield their core when idle on nodes with more ranks than cores, under both MPIs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from click.testing import CliRunner

from scalewise.cli.cluster import cluster
from scalewise.cluster import cluster_up, current_cluster, parse_rate
from scalewise.cluster.launching import CONTROL_APART, cluster_launch, pair_launcher
from scalewise.launch.preload import build_dir
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.calibrate.pingpong import BOTH_WAYS_BYTES, HALF_DUPLEX_RATIO, exchange_launches, measure, rest_for

NO_PUT = "send,inplace,need-ack,need-csum,hetero-rdma"


def _mca(argv: list[str], name: str) -> list[str]:
    """Every value the launch line sets for the MCA parameter ``name``."""
    return [argv[i + 2] for i in range(len(argv) - 2) if argv[i] == "--mca" and argv[i + 1] == name]


def _flags(argv: list[str]) -> list[str]:
    return _mca(argv, "btl_tcp_flags")


def test_openmpi_launches_drop_put_unless_the_cluster_keeps_the_defaults(two_nodes):
    exe = str(build_dir() / "openmpi" / "proxies" / "pingpong")
    c = cluster_up(2, parse_rate("fe"))
    assert c.tcp_defaults is False and CONTROL_APART["openmpi-4.1"] == {"btl_tcp_flags": NO_PUT}
    assert _flags(cluster_launch(c, ["mpirun", "-np", "2", exe]).argv) == [NO_PUT]
    # the user's own setting wins, given on the line or as a variable
    own = cluster_launch(c, ["mpirun", "--mca", "btl_tcp_flags", "send", "-np", "2", exe]).argv
    assert _flags(own) == ["send"]
    assert _flags(cluster_launch(c, ["mpirun", "-np", "2", exe], base_env={"OMPI_MCA_btl_tcp_flags": "send"}).argv) == []
    mpich = cluster_launch(c, ["mpiexec.mpich", "-n", "2", str(build_dir() / "mpich" / "proxies" / "pingpong")])
    assert not any("btl_tcp" in a for a in mpich.argv) and not any("OMPI_MCA_btl_tcp_flags" in k for k in mpich.env)
    assert "control messages apart from bulk data" in CliRunner().invoke(cluster, ["status"]).output

    up = CliRunner().invoke(cluster, ["up", "--nodes", "2", "--rate", "100mbit", "--tcp-defaults"])
    assert up.exit_code == 0 and "the MPIs' own TCP settings" in up.output, up.output
    kept = current_cluster()  # the same nodes, the setting recorded for the next launches
    assert [n.pid for n in kept.nodes] == [n.pid for n in c.nodes] and kept.tcp_defaults is True
    assert _flags(cluster_launch(kept, ["mpirun", "-np", "2", exe]).argv) == []
    assert "each MPI's own TCP settings" in CliRunner().invoke(cluster, ["status"]).output
    assert cluster_up(2, parse_rate("gige")).tcp_defaults is True  # not asked: the running cluster's kept
    assert cluster_up(2, parse_rate("gige"), tcp_defaults=False).tcp_defaults is False


def test_a_cluster_recorded_before_the_setting_launched_with_the_defaults(two_nodes):
    c = cluster_up(2, parse_rate("fe"))
    state = Path(c.folder) / "state.json"
    raw = json.loads(state.read_text())
    del raw["tcp_defaults"]
    state.write_text(json.dumps(raw))
    assert current_cluster().tcp_defaults is True


def test_openmpi_moves_both_directions_of_an_exchange_at_once(two_nodes):
    # With its TCP defaults Open MPI's 4 MiB exchanges at 100 Mbit/s took turns (about 2.0 times one
    # way) in 3 or 4 of each 5 launches; without put, 1.02-1.07 in every one of 10 (docs/benchmarks.md).
    c = cluster_up(2, parse_rate("100mbit"))
    on_nodes = pair_launcher(c, "openmpi", "the exchange test")
    rest = rest_for(cluster_shaping(c))
    one_way = measure("openmpi", sizes=(BOTH_WAYS_BYTES,), reps=3, launcher=on_nodes, pause=rest)[BOTH_WAYS_BYTES]
    ratios, _ = exchange_launches("openmpi", one_way, launcher=on_nodes, pause=rest, launches=5)
    assert all(r < HALF_DUPLEX_RATIO for r in ratios), ratios


def _yield(argv: list[str]) -> list[str]:
    return _mca(argv, "mpi_yield_when_idle")


def test_ranks_yield_when_idle_on_oversubscribed_nodes_under_both_mpis(emulation):
    # 4 ranks on this machine's cores at every placement the placement bench runs: 1 node, 2 x 2, 4 x 1
    ompi, mpich = (str(build_dir() / f / "proxies" / "sem") for f in ("openmpi", "mpich"))
    for nodes in (1, 2, 4):
        c = cluster_up(nodes, parse_rate("1gbit"))
        if c.cpus_total >= 4:
            pytest.skip(f"{c.cpus_total} cores: 4 ranks are not oversubscribed here")
        line = cluster_launch(c, ["mpirun", "-np", "4", ompi, "--size", "tiny"])
        assert line.oversubscribed and _yield(line.argv) == ["1"], (nodes, line.argv)
        done = subprocess.run(line.argv, env=line.env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "status=PASS" in done.stdout, done.stderr
        assert cluster_launch(c, ["mpiexec.mpich", "-n", "4", mpich]).env["SCALEWISE_YIELD_WHEN_IDLE"] == "64"
    # the user's own setting wins; a node with a core for each rank does not yield
    own = cluster_launch(c, ["mpirun", "-np", "4", ompi], base_env={"OMPI_MCA_mpi_yield_when_idle": "0"})
    assert _yield(own.argv) == []
    assert _yield(cluster_launch(c, ["mpirun", "-np", "1", ompi]).argv) == []
