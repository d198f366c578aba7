"""`scalewise run` with the launch lines HPC users write: every common launcher
option keeps working with the profiler injected, wrong launches are caught, and
a stopped `scalewise run` leaves no launcher, rank or temporary file behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.swtest import ranks_running

import scalewise
from scalewise.errors import EXIT_USER

SCALEWISE = Path(sys.executable).parent / "scalewise"
OMPI = ["mpirun.openmpi", "--oversubscribe", "--mca", "btl", "self,vader"]


def scalewise_run(outdir: Path, argv: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "SWTEST_ECHO_ENV": "FOO"}
    return subprocess.run([str(SCALEWISE), "run", "--quiet", "-o", str(outdir), "--", *argv], env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def _hostfile(tmp_path: Path) -> str:
    path = tmp_path / "hosts"
    path.write_text("localhost slots=2\n")
    return str(path)


LINES = {
    "openmpi -x": lambda app, tmp: [*OMPI, "-x", "FOO=from-x", "-np", "2", app],
    "openmpi --mca": lambda app, tmp: ["mpirun.openmpi", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include",
                                       "lo", "-x", "FOO=with-mca", "-np", "2", app],
    "openmpi --hostfile": lambda app, tmp: [*OMPI, "--hostfile", _hostfile(tmp), "-x", "FOO=hostfile", "-np", "2",
                                            app],
    "openmpi -H": lambda app, tmp: [*OMPI, "-H", "localhost:2", "-x", "FOO=dash-H", app],
    "mpich -genv": lambda app, tmp: ["mpiexec.mpich", "-genv", "FOO", "genv", "-n", "2", app],
    "mpich -env": lambda app, tmp: ["mpiexec.mpich", "-n", "2", "-env", "FOO", "env", app],
}
EXPECTED_FOO = {"openmpi -x": "from-x", "openmpi --mca": "with-mca", "openmpi --hostfile": "hostfile",
                "openmpi -H": "dash-H", "mpich -genv": "genv", "mpich -env": "env"}


@pytest.mark.parametrize("name", list(LINES))
def test_launcher_options_compose_with_the_profiler(name, swtest_dir, tmp_path):
    flavour = name.split()[0]
    proc = scalewise_run(tmp_path / "logs", LINES[name](str(swtest_dir / flavour / "swtest"), tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"ENV[FOO]={EXPECTED_FOO[name]}" in proc.stdout  # the user's own option still took effect
    logs = list((tmp_path / "logs").glob("*.swlog"))
    assert len(logs) == 1 and logs[0].name.startswith("swtest-")
    profile = scalewise.load(logs[0])
    assert profile.nranks == 2 and sorted(profile.ranks["rank"]) == [0, 1]
    assert (profile.functions["function"] == "MPI_Allreduce").sum() == 2


def test_separate_single_rank_jobs_are_reported_and_every_log_kept(swtest_dir, tmp_path):
    # `env` hides the launcher from the line check: MPICH's launcher then starts two
    # Open MPI singletons, each writing its own log.
    proc = scalewise_run(tmp_path, ["env", "mpiexec.mpich", "-n", "2", str(swtest_dir / "openmpi" / "swtest")])
    assert proc.returncode == EXIT_USER
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith("scalewise: error: the launch started 2 separate MPI jobs instead of one "
                            "(world sizes 1, 1): does the launcher belong to the application's MPI (Open MPI)?")
    assert len(list(tmp_path.glob("*.swlog"))) == 2


def test_several_app_contexts_are_one_job(swtest_dir, tmp_path):
    # MPMD: two contexts of one rank each make one world of 2, not a mismatch with "-n 1".
    app = str(swtest_dir / "mpich" / "swtest")
    proc = scalewise_run(tmp_path, ["mpiexec.mpich", "-n", "1", app, ":", "-n", "1", app])
    assert proc.returncode == 0, proc.stderr
    assert scalewise.load(next(tmp_path.glob("*.swlog"))).nranks == 2


def test_temporary_logs_of_killed_ranks_are_removed(swtest_dir, tmp_path):
    # A rank killed while writing leaves <log>.swlog.tmp.<pid> in the log folder; here it is planted.
    plant = f'touch "$SCALEWISE_LOGDIR/swtest-1-2.swlog.tmp.99" && exec {swtest_dir}/mpich/swtest'
    proc = scalewise_run(tmp_path, ["mpiexec.mpich", "-n", "1", "sh", "-c", plant])
    assert proc.returncode == 0, proc.stderr
    assert [p.suffix for p in tmp_path.iterdir()] == [".swlog"]


def _processes_running(exe: str) -> list[int]:
    """Processes whose executable is ``exe`` (the ranks), or whose command line names it (the launcher)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if os.readlink(entry / "exe") == exe or (exe in cmdline and "run" not in cmdline):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.parametrize("flavour, sig", [("openmpi", signal.SIGTERM), ("mpich", signal.SIGINT)])
def test_a_stopped_run_stops_the_launcher_and_every_rank(flavour, sig, swtest_dir, tmp_path):
    app = str(swtest_dir / flavour / "swtest")
    launch = [*OMPI, "-np", "2"] if flavour == "openmpi" else ["mpiexec.mpich", "-n", "2"]
    proc = subprocess.Popen([str(SCALEWISE), "run", "-o", str(tmp_path), "--", *launch, app, "--sleep", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while ranks_running(app) < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert ranks_running(app) == 2
    time.sleep(0.5)  # both ranks inside MPI_Init or beyond
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert err.strip().splitlines()[-1] == "scalewise: error: interrupted: the job was stopped"
    assert _processes_running(app) == []
    assert list(tmp_path.iterdir()) == []


def test_run_json_is_the_only_thing_on_stdout(swtest_dir, tmp_path):
    env = {**os.environ, "SWTEST_ECHO_ENV": "FOO"}
    proc = subprocess.run([str(SCALEWISE), "run", "--json", "-o", str(tmp_path), "--",
                           *LINES["openmpi -x"](str(swtest_dir / "openmpi" / "swtest"), tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the application's own output went to stderr
    assert "ENV[FOO]=from-x" in proc.stderr and "ENV[FOO]" not in proc.stdout
    assert Path(doc["log"]).parent == tmp_path and Path(doc["log"]).exists()
    assert doc["nranks"] == 2 and [r["rank"] for r in doc["ranks"]] == [0, 1]
    assert doc == {"log": doc["log"], **scalewise.load(doc["log"]).to_json_dict()} | {"meta": doc["meta"]}
