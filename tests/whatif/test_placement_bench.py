"""bench/whatif_placement.py's app line: --app-args reaches every app's own command line, and the
line it makes runs (dft with its arithmetic slept, as the placement measurement runs it)."""

from __future__ import annotations

import os
import subprocess

import pytest
from support.benches import bench_module


def _bench():
    return bench_module("whatif_placement")


def test_app_args_reach_the_apps_line_and_it_runs():
    bench = _bench()
    a = bench.parser().parse_args(["--apps", "dft", "--size", "tiny", "--app-args", "--compute sleep --iters 2"])
    line = bench.app_line(a, "mpich", "dft")
    assert line[1:] == ["--size", "tiny", "--compute", "sleep", "--iters", "2"]
    done = subprocess.run(["mpiexec.mpich", "-n", "2", *line], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "compute=sleep" in done.stdout and "status=PASS" in done.stdout
    assert f"check={(3 + 2 * 4 * 2) * 16 ** 3} " in done.stdout  # tiny: 16^3 grid, 4 bands; 2 iterations
    defaults = bench.parser().parse_args([])
    assert bench.app_line(defaults, "openmpi", "sem")[1:] == ["--size", "small"]
    assert defaults.queue == 2_000 and bench.parser().parse_args(["--queue", "100ms"]).queue == 100_000


def test_mpich_yield_option_takes_a_count_of_polls(capsys):
    bench = _bench()
    assert bench.parser().parse_args([]).mpich_yield_after is None  # the launch's own setting
    assert bench.parser().parse_args(["--mpich-yield-after", "1"]).mpich_yield_after == 1
    for bad in ("0", "-3", "x"):
        with pytest.raises(SystemExit) as exited:
            bench.parser().parse_args(["--mpich-yield-after", bad])
        assert exited.value.code == 2
        assert f"'{bad}' is not a count of polls" in capsys.readouterr().err


def test_shared_memory_calibration_options():
    bench = _bench()
    a = bench.parser().parse_args([])
    assert (a.shm_on_one_core, a.shm_statistic) == (False, "best")  # calibrate's own way
    a = bench.parser().parse_args(["--shm-on-one-core", "--shm-statistic", "median", "--mpich-yield-after", "1"])
    argv, env = bench.pair_on_one_core(a, "mpich")(["pingpong"])
    assert argv[:3] == ["taskset", "-c", str(min(os.sched_getaffinity(0)))] and argv[-1] == "pingpong"
    assert env[bench.YIELD] == "1" and a.shm_statistic == "median"
    argv, env = bench.pair_on_one_core(a, "openmpi")(["pingpong"])
    assert "--oversubscribe" in argv and env["OMPI_MCA_mpi_yield_when_idle"] == "1"
    with pytest.raises(SystemExit):
        bench.parser().parse_args(["--shm-statistic", "fastest"])


def test_peer_options_take_a_count_of_messages(capsys):
    bench = _bench()
    defaults = bench.parser().parse_args([])
    assert defaults.peer_msgs == 8 and not defaults.no_peers  # calibrate's own
    assert bench.parser().parse_args(["--peer-msgs", "1", "--no-peers"]).peer_msgs == 1
    for bad in ("0", "-1", "x"):
        with pytest.raises(SystemExit) as exited:
            bench.parser().parse_args(["--peer-msgs", bad])
        assert exited.value.code == 2
        assert f"'{bad}' is not a count of messages" in capsys.readouterr().err


def test_ranks_option_picks_the_placements(capsys):
    """--ranks 2: one node, then 2 x 1 (a core for each rank on a 2-core host); the 4-rank default unchanged;
    every placement's ranks divide evenly over its nodes, as the replay's ranks_per_node takes them."""
    bench = _bench()
    assert bench.parser().parse_args([]).ranks == 4
    assert bench.PLACEMENTS[4] == {"1 node": 1, "2 x 2": 2, "4 x 1": 4}
    assert bench.PLACEMENTS[bench.parser().parse_args(["--ranks", "2"]).ranks] == {"1 node": 1, "2 x 1": 2}
    assert all(ranks % nodes == 0 for ranks, places in bench.PLACEMENTS.items() for nodes in places.values())
    assert not bench.parser().parse_args([]).paired and bench.parser().parse_args(["--paired"]).paired
    with pytest.raises(SystemExit) as exited:
        bench.parser().parse_args(["--ranks", "3"])
    assert exited.value.code == 2 and "invalid choice: 3" in capsys.readouterr().err


def test_local_calibration_runs_on_the_host_or_on_a_node_not_both(capsys):
    bench = _bench()
    assert not bench.parser().parse_args([]).local_on_node  # calibrate's own: on this host
    assert bench.parser().parse_args(["--local-on-node"]).local_on_node
    with pytest.raises(SystemExit) as exited:
        bench.parser().parse_args(["--local-on-node", "--shm-on-one-core"])
    assert exited.value.code == 2 and "not allowed with" in capsys.readouterr().err
