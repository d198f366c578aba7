"""The what-if replay against reality on one node: a run traced here, replayed on the
network `scalewise calibrate` measured here with the same MPI, must come within 5% of
its own measured wall time (the first accuracy bound of docs/whatif.md; the table over
every proxy is bench/whatif_accuracy.py in docs/benchmarks.md).  Timing against a real
run: marked to run alone, so another test's ranks do not share these cores."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from scalewise.launch.mpirun import two_ranks
from scalewise.launch.preload import build_dir

SW = str(Path(os.sys.executable).with_name("scalewise"))
WALL_BOUND = 0.05
# sem: halo exchanges of mixed sizes plus small Allreduces, about a second at --size small.
APP = ["sem", "--size", "small"]

pytestmark = pytest.mark.alone


def _sw(*args: str) -> str:
    done = subprocess.run([SW, *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_run_replayed_on_its_calibrated_node_is_within_five_percent(mpi, tmp_path):
    net = tmp_path / "here.yaml"
    _sw("calibrate", "--mpi", mpi, "--reps", "30", "-o", str(net))
    out = _sw("run", "--trace", "--quiet", "-o", str(tmp_path / "runs"), "--",
              *two_ranks(mpi), str(build_dir() / mpi / "proxies" / APP[0]), *APP[1:])
    assert "status=PASS" in out
    trace = Path(re.search(r"profile: (\S+)", out).group(1)).with_suffix(".swtrace")
    err = json.loads(_sw("whatif", str(trace), "--network", str(net), "--mpi", mpi, "--json"))["errors"][0]
    detail = f"{mpi} {' '.join(APP)}: replayed on this node's calibration: {err}"
    print(detail)
    assert abs(err["wall_error"]) <= WALL_BOUND, detail
