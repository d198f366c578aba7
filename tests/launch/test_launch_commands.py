"""Launchers and the Slurm scheduler, checked by the commands and scripts they emit."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from scalewise.errors import ScalewiseError
from scalewise.launch import Job, get_launcher, get_scheduler
from scalewise.launch.base import plain_variables
from scalewise.launch.local import LocalScheduler
from scalewise.launch.process import run_command
from scalewise.launch.slurm import batch_script, read_status, sbatch_command


def _job(**kw):
    base = dict(name="abc123", app_argv=["./app", "--size", "tiny"], mpi="openmpi", ranks=4, env={"A": "1"},
                exported=["OMP_NUM_THREADS"], mca={"btl": "self,tcp"}, rundir=Path("/r"), timeout=90)
    base.update(kw)
    return Job(**base)


def test_openmpi_mpirun_command():
    launch = get_launcher("mpirun").launch(_job(), oversubscribe=True)
    assert launch.argv == ["mpirun.openmpi", "-x", "OMP_NUM_THREADS", "-np", "4", "--oversubscribe", "--bind-to",
                           "none", "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,tcp",
                           "./app", "--size", "tiny"]
    assert launch.settings == {"mca.mpi_yield_when_idle": "1"}
    assert get_launcher("mpirun").launch(_job()).settings == {}
    assert "OMPI_MCA_mca_base_env_list" not in launch.env  # Open MPI refuses it next to -x
    # A list the user's environment already sets is extended instead (-x would then be refused).
    merged = get_launcher("mpirun").launch(_job(env={"OMPI_MCA_mca_base_env_list": "LD_PRELOAD;OMP_NUM_THREADS"}))
    assert merged.env["OMPI_MCA_mca_base_env_list"] == "LD_PRELOAD;OMP_NUM_THREADS"
    assert "-x" not in merged.argv
    if os.geteuid() == 0:
        assert launch.env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and launch.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    multi = get_launcher("mpirun").launch(_job(nodes=2))
    assert multi.argv[:7] == ["mpirun.openmpi", "-x", "OMP_NUM_THREADS", "-np", "4", "--map-by", "ppr:2:node"]


def test_mpich_mpiexec_command():
    launch = get_launcher("mpiexec").launch(_job(mpi="mpich", mca={}, nodes=2))
    assert launch.argv == ["mpiexec.mpich", "-n", "4", "-ppn", "2", "./app", "--size", "tiny"]
    lib = launch.env.pop("LD_PRELOAD")
    assert lib.endswith("/mpich/libscalewise-mpich-ucx.so") and os.path.isfile(lib)
    assert launch.env == {"A": "1", "SCALEWISE_UCX_CLOSE_GRACE": "0.5"}
    busy = get_launcher("mpiexec").launch(_job(mpi="mpich", mca={}, env={"LD_PRELOAD": "/x.so"}), oversubscribe=True)
    assert busy.env["LD_PRELOAD"] == lib + ":/x.so"
    assert busy.settings == {"env.SCALEWISE_UCX_CLOSE_GRACE": "0.5", "env.SCALEWISE_YIELD_WHEN_IDLE": "64"}


def test_srun_picks_the_pmi_plugin_and_passes_mca_as_environment():
    ompi = get_launcher("srun").launch(_job(nodes=2, threads=2))
    assert ompi.argv == ["srun", "--mpi=pmix", "-N", "2", "-n", "4", "-c", "2", "--export=ALL", "./app", "--size", "tiny"]
    assert ompi.env["OMPI_MCA_btl"] == "self,tcp"
    mpich = get_launcher("srun").launch(_job(mpi="mpich", mca={}))
    assert mpich.argv[1] == "--mpi=pmi2"
    assert get_launcher("srun", pmi={"mpich": "pmix"}).launch(_job(mpi="mpich")).argv[1] == "--mpi=pmix"


def test_local_scheduler_oversubscribes_only_beyond_the_cores():
    local = LocalScheduler(cores=2)
    assert not local.oversubscribed(_job(ranks=2))
    assert local.oversubscribed(_job(ranks=4)) and local.oversubscribed(_job(ranks=2, threads=2))
    assert local.launcher_for("mpich").name == "mpiexec"


def test_batch_script_quotes_every_argument(tmp_path):
    nasty = ["/bin/echo", "a b", "; rm -rf /", "$(id)", "`id`", "'q'"]
    script = batch_script(nasty, tmp_path / "out file", tmp_path / "err")
    line = next(l for l in script.splitlines() if l.startswith("/bin/echo"))
    assert line.startswith(shlex.join(nasty) + " > ")
    # Run the generated script with bash itself: the arguments come out literally.
    (tmp_path / "job.sh").write_text(script)
    subprocess.run(["bash", str(tmp_path / "job.sh")], cwd=tmp_path, check=True,
                   env={"PATH": "/usr/bin:/bin", "SLURM_JOB_NODELIST": "n[1-4]"})
    assert (tmp_path / "out file").read_text() == "a b ; rm -rf / $(id) `id` 'q'\n"
    assert (tmp_path / "exit.status").read_text().split()[0] == "0"
    # the allocation as the job saw it: scontrol names only the nodes still completing after the end
    assert (tmp_path / "nodes.list").read_text() == "n[1-4]\n"


def test_sbatch_command():
    argv = sbatch_command(_job(nodes=2, threads=3, interconnect="10gige"), Path("/r/job.sbatch"), "debug",
                          ["--exclusive"])
    assert argv == ["sbatch", "--parsable", "--no-requeue", "--job-name=sw-abc123", "--nodes=2", "--ntasks=4",
                    "--cpus-per-task=3", "--time=3", "--chdir=/r", "--output=/r/slurm.out", "--partition=debug",
                    "--constraint=10gige", "--exclusive", "/r/job.sbatch"]
    assert get_scheduler("slurm", launcher="mpirun").launcher_for("mpich").name == "mpiexec"
    with pytest.raises(ScalewiseError, match="timeout must be a positive number of seconds, got inf"):
        sbatch_command(_job(timeout=float("inf")), Path("/r/job.sbatch"), None, [])


def test_exit_status_is_read_as_untrusted_text(tmp_path):
    status = tmp_path / "exit.status"
    for text, expected in [("0 1.5 2.5\n", (0, 1.5, 2.5)), ("141 1 2\n", (141, 1.0, 2.0)), ("0  \n", None),
                           ("", None), ("x 1 2", None), ("0 1 2 3", None), ("0 nan 2", None), ("999 1 2", None),
                           ("0 5 1", None)]:
        status.write_text(text)
        assert read_status(status) == expected, text
    assert read_status(tmp_path / "missing") is None


def test_only_plain_variables_reach_a_shell():
    env = {"PATH": "/bin", "BASH_FUNC_date%%": "() { touch x; }", "BASH_FUNC_ls": "x", "A=B": "1", "_ok1": "v"}
    assert plain_variables(env) == {"PATH": "/bin", "_ok1": "v"}


def test_timeout_kills_the_whole_process_group(tmp_path):
    marker = tmp_path / "child.pid"
    argv = ["bash", "-c", f"sleep 30 & echo $! > {marker}; wait"]
    done = run_command(argv, dict(os.environ), tmp_path, tmp_path / "o", tmp_path / "e", timeout=0.5, grace=1)
    assert done.timed_out and done.wall < 5
    child = int(marker.read_text())
    # SIGKILL is delivered asynchronously: give the grandchild a moment to die.
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the grandchild must be killed with its group"


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_local_scheduler_real_run(tmp_path, swtest_dir):
    job = _job(app_argv=[str(swtest_dir / "mpich" / "swtest"), "--exit", "7"], mpi="mpich", ranks=2, mca={},
               env=dict(os.environ), rundir=tmp_path, stdout=tmp_path / "out", stderr=tmp_path / "err", timeout=30)
    outcome = LocalScheduler().run(job)
    assert outcome.exit_code == 7 and not outcome.timed_out
    assert "ranks=2" in (tmp_path / "out").read_text()
    assert outcome.command[:3] == ["mpiexec.mpich", "-n", "2"]
