"""The application's own wall as a figure of merit (fom source profile_wall)
and the launch-overhead warning, on a real profiled MPICH launch timed by
run_command: mpiexec's start and teardown against the ranks' own window."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import scalewise
from scalewise.analysis.overhead import LAUNCH_OVERHEAD_WARN, launch_overhead
from scalewise.campaign.evaluate import judge, read_fom
from scalewise.campaign.studyfile import Fom
from scalewise.launch.base import Outcome
from scalewise.launch.process import run_command

REPO = Path(__file__).resolve().parents[2]
RING = REPO / "tests" / "runtime" / "programs" / "ring.c"


@pytest.fixture(scope="module")
def profiled_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("overhead")
    exe = tmp / "ring"
    subprocess.run(["mpicc.mpich", "-O1", "-w", str(RING), "-o", str(exe)], check=True)
    env = dict(os.environ, LD_PRELOAD=str(REPO / "build" / "mpich" / "libscalewise.so"), SCALEWISE_QUIET="1",
               SCALEWISE_LOGFILE=str(tmp / "job.swlog"))
    done = run_command(["mpiexec.mpich", "-n", "2", str(exe), "200", "64"], env, tmp, tmp / "out", tmp / "err",
                       timeout=120)
    assert done.returncode == 0, (tmp / "err").read_text()
    return done, tmp / "job.swlog"


def test_profile_wall_is_the_slowest_ranks_window(profiled_run):
    done, log = profiled_run
    outcome = Outcome(exit_code=0, timed_out=False, started_at="", ended_at="", wall=done.wall, command=[])
    verdict = judge(outcome, 2, Fom(source="profile_wall"), "", log, None)
    profile = scalewise.load(log)
    assert verdict.status == "ok" and verdict.fom == float(profile.ranks["wall"].max()) == verdict.app_wall
    assert (verdict.fom_name, verdict.fom_unit) == ("profile_wall", "s")
    # The launcher's wall holds the ranks' window, plus mpiexec starting and tearing them down.
    assert 0 < verdict.app_wall < done.wall


def test_profile_wall_without_a_profile_is_a_stated_problem():
    value, *_, problem = read_fom(Fom(source="profile_wall"), "", [], 0.5, None)
    assert value is None and problem == ("figure of merit not found: fom source profile_wall needs a profile log "
                                         "(set profile: true)")


@pytest.mark.alone  # the ranks' window is a timing: beside the parallel tests it grew from ms to 0.8 s
def test_launch_overhead_of_the_real_run(profiled_run):
    done, log = profiled_run
    app = float(scalewise.load(log).ranks["wall"].max())
    o = launch_overhead([(done.wall, app)])
    assert o.share == pytest.approx((done.wall - app) / done.wall) and o.runs == 1
    assert o.warn == (o.share > LAUNCH_OVERHEAD_WARN)
    # 200 ring steps take milliseconds; mpiexec's start-up and teardown take far longer.
    assert o.warn and "launch and teardown take" in o.to_json_dict()["text"]


def test_launch_overhead_is_the_median_share_and_warns_above_a_third():
    o = launch_overhead([(1.0, 0.7), (1.0, 0.6), (2.0, 1.0), (None, 0.5), (1.0, None)])
    assert o.runs == 3 and o.share == pytest.approx(0.4) and o.warn
    assert o.launcher_wall == 1.0 and o.app_wall == 0.7
    assert not launch_overhead([(1.0, 0.7), (1.0, 0.68)]).warn  # 31%
    assert launch_overhead([(None, 1.0)]) is None
    assert o.to_json_dict()["text"].startswith("launch and teardown take 40% of the measured wall (median of 3 runs")


def test_profile_wall_of_a_log(profiled_run, tmp_path):
    from scalewise.campaign.evaluate import profile_wall
    _, log = profiled_run
    assert profile_wall(log) == float(scalewise.load(log).ranks["wall"].max())
    assert profile_wall(tmp_path / "none.swlog") is None
