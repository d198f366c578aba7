"""`scalewise run -- LAUNCHER ... APP`: the real command, real launchers, real logs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import scalewise
from rt_mpijob import REPO, launch_command

SCALEWISE = REPO / ".venv" / "bin" / "scalewise"


def scalewise_run(outdir: Path, argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEWISE), "run", "-o", str(outdir), "--", *argv],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_run_profiles_the_job_and_summarises_it(flavour, program, profiler_libs, tmp_path):
    iters, nbytes = 7, 300
    exe = program("ring.c", flavour)
    proc = scalewise_run(tmp_path, launch_command(flavour, 2, [str(exe), str(iters), str(nbytes)]))
    assert proc.returncode == 0, proc.stderr
    log = Path(proc.stdout.strip().splitlines()[-1].removeprefix("profile: "))
    assert log.parent == tmp_path and log.suffix == ".swlog"
    p = scalewise.load(log)
    assert p.nranks == 2 and not p.partial
    f = p.functions.set_index(["rank", "function"])
    for rank in (0, 1):
        assert f.loc[(rank, "MPI_Sendrecv"), "calls"] == iters
        assert f.loc[(rank, "MPI_Sendrecv"), "bytes"] == 2 * iters * nbytes  # sent + received
    assert "MPI_Sendrecv" in proc.stdout and "scalewise profile: ring" in proc.stdout


def test_a_crashed_job_leaves_no_log_and_a_one_line_error(program, profiler_libs, tmp_path):
    exe = program("ring.c", "mpich")
    proc = scalewise_run(tmp_path, launch_command("mpich", 2, [str(exe), "2", "8", "crash"]))
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("scalewise:")]
    assert len(errors) == 1 and "no profile was written" in errors[0]
    assert not list(tmp_path.glob("*.swlog"))


def test_missing_launcher_and_unknown_mpi_are_user_errors(tmp_path):
    proc = scalewise_run(tmp_path, ["no-such-mpirun", "-np", "2", "./app"])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "scalewise: error: cannot tell which MPI 'no-such-mpirun -np 2 ./app' uses; "
        "pass --mpi openmpi or --mpi mpich"]
    proc = subprocess.run([str(SCALEWISE), "run", "--mpi", "mpich", "-o", str(tmp_path), "--", "no-such-mpirun"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "scalewise: error: launcher not found: no-such-mpirun"


def test_an_aborted_job_is_summarised_as_partial_and_its_code_returned(program, profiler_libs, tmp_path):
    exe = program("abnormal_end.c", "mpich")
    proc = scalewise_run(tmp_path, launch_command("mpich", 2, [str(exe), "abort", "1", "7", "3"]))
    assert proc.returncode == 7
    assert "the job exited with code 7; the profile is partial" in proc.stderr
    log = Path(proc.stdout.strip().splitlines()[-1].removeprefix("profile: "))
    p = scalewise.load(log)
    assert p.aborted and p.partial and list(p.ranks["rank"]) == [1]
    assert p.functions.set_index("function").loc["MPI_Allreduce", "calls"] == 3
