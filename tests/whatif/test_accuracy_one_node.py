"""The what-if replay as a prediction on one node: a run traced with the ranks talking
over shared memory is predicted for the same two ranks talking over TCP on the loopback
(the network `scalewise calibrate` measured with that transport), and compared with the
run measured over TCP in the same round.  The trace's computation is the shared-memory
run's; the network, its transport and its measured costs are the TCP run's: a zero-cost
network would miss by the TCP run's whole MPI time.  Timing against real runs: marked
to run alone, so another test's ranks do not share these cores."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
from pathlib import Path

import pytest

from scalewise.launch.mpirun import two_ranks
from scalewise.launch.preload import build_dir
from scalewise.whatif.calibrate import TCP_LOOPBACK

SW = str(Path(os.sys.executable).with_name("scalewise"))
WALL_BOUND = 0.05
ROUNDS = 3
# sem: halo exchanges of mixed sizes plus small Allreduces, about a second at --size small.
APP = ["sem", "--size", "small"]
# The TCP transport's eager limit: Open MPI's btl_tcp_eager_limit; MPICH over UCX switches at 8 KiB.
TCP_EAGER = {"openmpi": 65536, "mpich": 8192}

pytestmark = pytest.mark.alone


def _sw(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([SW, *args], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _run(mpi: str, out: Path, env: dict[str, str] | None) -> Path:
    """One traced run of APP; its job log (the trace is beside it)."""
    stdout = _sw("run", "--trace", "--quiet", "-o", str(out), "--",
                 *two_ranks(mpi), str(build_dir() / mpi / "proxies" / APP[0]), *APP[1:], env=env)
    assert "status=PASS" in stdout
    return Path(re.search(r"profile: (\S+)", stdout).group(1))


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_run_traced_over_shared_memory_is_predicted_over_tcp(mpi, tmp_path):
    tcp = dict(os.environ, **TCP_LOOPBACK[mpi])
    net = tmp_path / "tcp.yaml"
    _sw("calibrate", "--mpi", mpi, "--reps", "30", "--eager-limit", str(TCP_EAGER[mpi]), "-o", str(net), env=tcp)
    rounds = []
    for k in range(ROUNDS):  # paired: a slow spell of this machine falls on both runs of a round
        shm = _run(mpi, tmp_path / f"shm{k}", None)
        measured = _run(mpi, tmp_path / f"tcp{k}", tcp)
        out = json.loads(_sw("whatif", str(shm.with_suffix(".swtrace")), "--network", str(net),
                             "--measured", str(measured), "--json"))
        assert out["library"] == mpi  # the run's own library, from its log
        rounds.append(out["vs_measured"][0])
    wall = statistics.median(r["wall_change"] for r in rounds)
    detail = f"{mpi} {' '.join(APP)}: traced over shared memory, predicted over TCP: median {wall:+.1%} ({rounds})"
    print(detail)
    assert abs(wall) <= WALL_BOUND, detail
