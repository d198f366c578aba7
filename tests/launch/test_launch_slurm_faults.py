"""Slurm faults on a real localhost Slurm: nodes DOWN, a node lost mid-run, hostile environments, failed launches.

Node states are changed on a cluster of this module's own (never the shared
session cluster): the lost node's slurmd is killed and the node marked DOWN,
which is what slurmctld itself does once the node misses SlurmdTimeout.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from support.slurm import SlurmCluster, running_slurm
from support.swtest import stored_runs

from scalewise.campaign.progress import Reporter
from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study


@pytest.fixture(scope="module")
def own_slurm():
    with running_slurm(nodes=2) as cluster:
        yield cluster


def _study(tmp_path: Path, swtest_dir: Path, body: str = "", args: str = "") -> Path:
    path = tmp_path / "faults.yaml"
    path.write_text(f"""name: faults
applications:
  swtest:
    command: ["{swtest_dir}/openmpi/swtest"{args}]
    fom: {{source: result_line}}
axes:
  ranks: [1]
timeout: 60
{body}""")
    return path


def _scontrol(cluster: SlurmCluster, *args: str) -> None:
    subprocess.run(["scontrol", *args], env=cluster.env, check=True, capture_output=True)


def test_a_job_pending_on_down_nodes_is_reported_and_given_up_at_the_limit(own_slurm, swtest_dir, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(own_slurm.conf))
    _scontrol(own_slurm, "update", "nodename=n[1-2]", "state=down", "reason=swtest_maintenance")
    try:
        path = _study(tmp_path, swtest_dir, "slurm: {pending_limit: 4}\n")
        shown = StringIO()
        summary = run_study(load_study(path), "slurm", reporter=Reporter(Console(file=shown, width=300)))
    finally:
        _scontrol(own_slurm, "update", "nodename=n[1-2]", "state=resume")
    assert summary.counts == {"failed": 1}
    run = stored_runs(load_study(path))[0]
    job = run["job_id"]
    assert run["reason"].startswith(f"Slurm job {job} still pending after 4 s (slurm.pending_limit): ")
    assert "ReqNodeNotAvail" in run["reason"] or "DOWN" in run["reason"], run["reason"]
    assert f"Slurm job {job} pending: " in shown.getvalue()
    gone = subprocess.run(["squeue", "-h", "-j", job], env=own_slurm.env, capture_output=True, text=True)
    assert gone.stdout.strip() == ""  # cancelled, not left in the queue


def _kill_ranks(exe: str) -> None:
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "exe") == exe:
                os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue


def test_a_run_on_a_lost_node_names_the_node(own_slurm, swtest_dir, tmp_path):
    path = _study(tmp_path, swtest_dir, args=", --sleep, '30'")
    env = dict(own_slurm.env, PYTHONUNBUFFERED="1")
    campaign = subprocess.Popen([sys.executable, "-m", "scalewise.cli.main", "study", "run", "--launcher", "slurm",
                                 "--quiet", str(path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    exe = str(swtest_dir / "openmpi" / "swtest")
    try:
        deadline = time.time() + 60  # until the rank is past MPI_Init (its world-size probe file is written)
        while time.time() < deadline and not list(path.parent.glob("faults.study/runs/*/probe/*")):
            time.sleep(0.3)
        out = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-o", "%N"], env=own_slurm.env,
                             capture_output=True, text=True).stdout.split()
        node = out[0] if out else ""
        assert node in ("n1", "n2")
        pid = int((own_slurm.base / f"slurmd-{node}.pid").read_text())
        os.kill(pid, signal.SIGKILL)
        _scontrol(own_slurm, "update", f"nodename={node}", "state=down", "reason=lost_power")
        _, err = campaign.communicate(timeout=120)
    finally:
        campaign.kill()
        _kill_ranks(exe)  # the ranks of the lost node outlive their slurmd, as they would not on a real one
    try:
        run = stored_runs(load_study(path))[0]
        assert campaign.returncode == 1, err
        assert run["status"] == "failed"
        # srun may exit 0, 141 or the job end as NODE_FAIL: whichever, the run fails naming the node.
        assert re.match(rf"node {node} is DOWN(, not responding)? \(lost_power\)", run["reason"]), run["reason"]
    finally:
        subprocess.run(["slurmd", "-N", node], env=own_slurm.env, check=True)
        subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], env=own_slurm.env,
                       capture_output=True)


def test_exported_bash_functions_never_become_code_in_the_job(slurm_env, swtest_dir, tmp_path, monkeypatch):
    # The batch script calls `date`: inherited as BASH_FUNC_date%%, bash would run this instead.
    marker = tmp_path / "pwned"
    monkeypatch.setenv("BASH_FUNC_date%%", f"() {{ touch {marker}; }}")
    path = _study(tmp_path, swtest_dir)
    summary = run_study(load_study(path), "slurm")
    assert summary.counts == {"ok": 1} and not marker.exists()
    run = stored_runs(load_study(path))[0]
    assert run["wall"] > 0 and run["exit_code"] == 0


def test_a_launch_that_raises_fails_its_run_and_the_campaign_goes_on(slurm_env, swtest_dir, tmp_path):
    # 80 values of 30 KiB: sbatch cannot even be started (E2BIG), which no study check can foresee
    # (the inherited environment counts too).  The run is failed with why; the next app still runs.
    big = f"V0: &big {'x' * 30000}, " + ", ".join(f"V{i}: *big" for i in range(1, 80))
    path = tmp_path / "big.yaml"
    path.write_text(f"""name: big
applications:
  huge:
    command: ["{swtest_dir}/openmpi/swtest"]
    env: {{{big}}}
    fom: {{source: result_line}}
  small:
    command: ["{swtest_dir}/openmpi/swtest"]
    fom: {{source: result_line}}
timeout: 60
""")
    summary = run_study(load_study(path), "slurm")
    assert summary.counts == {"failed": 1, "ok": 1}
    huge, small = stored_runs(load_study(path))
    assert huge["status"] == "failed" and huge["reason"].startswith("could not run: OSError: ")
    assert "Argument list too long" in huge["reason"]
    assert small["status"] == "ok"
