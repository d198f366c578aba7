"""`scalewise run -- LAUNCHER ... APP`: the real command, real launchers, real logs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import scalewise
from scalewise.errors import EXIT_APPLICATION, EXIT_PROFILER, EXIT_USER
from support.mpijob import REPO, launch_command

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


def test_a_crashed_job_leaves_no_log_and_names_the_signal(program, profiler_libs, tmp_path):
    exe = program("ring.c", "openmpi")
    proc = scalewise_run(tmp_path, launch_command("openmpi", 2, [str(exe), "2", "8", "crash"]))
    assert proc.returncode == EXIT_APPLICATION
    errors = [line for line in proc.stderr.splitlines() if line.startswith("scalewise:")]
    assert len(errors) == 1 and "no profile was written" in errors[0] and "SIGSEGV" in errors[0], errors
    assert not list(tmp_path.iterdir()), "no log, no staging folder, no temporary file"


def test_user_errors_exit_2_with_one_line(program, tmp_path):
    app = str(program("ring.c", "openmpi"))
    cases = [
        (["mpirunx", "-np", "2", app], "scalewise: error: mpirunx: not found (neither a launcher nor an executable on PATH)"),
        (["mpirun.openmpi", "-np", "2", "./no-such-app"],
         "scalewise: error: ./no-such-app: application not found (launch line: mpirun.openmpi -np 2 ./no-such-app)"),
        (["mpiexec.mpich", "-n", "2", app], f"scalewise: error: MPI mismatch: {app} is built with Open MPI but "
         "mpiexec.mpich is MPICH's launcher; start it with Open MPI's mpirun/mpiexec"),
    ]
    for argv, message in cases:
        proc = scalewise_run(tmp_path, argv)
        assert (proc.returncode, proc.stderr.strip()) == (EXIT_USER, message)
    proc = subprocess.run([str(SCALEWISE), "run", "--mpi", "mpich", "-o", str(tmp_path), "--", app],
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr.strip()) == (
        EXIT_USER, f"scalewise: error: MPI mismatch: --mpi mpich but {app} is built with Open MPI")
    proc = subprocess.run([str(SCALEWISE), "run", "--mpi", "lam", "--", app], capture_output=True, text=True)
    assert proc.returncode == EXIT_USER
    assert proc.stderr.strip() == ("scalewise: error: Invalid value for '--mpi': 'lam' names no MPI (expected openmpi, "
                                   "mpich, mpi-abi-1 or an identity such as openmpi-5.0.11, mpich-5.0.2, "
                                   "intelmpi-2021.19)")
    assert not list(tmp_path.iterdir()), "nothing ran"


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_a_singleton_is_profiled_and_named_after_the_executable(flavour, program, profiler_libs, tmp_path):
    exe = program("ring.c", flavour)
    proc = scalewise_run(tmp_path, [str(exe), "3", "16"])
    assert proc.returncode == 0, proc.stderr
    log = Path(proc.stdout.strip().splitlines()[-1].removeprefix("profile: "))
    assert log.parent == tmp_path and log.name.startswith("ring-"), log
    assert scalewise.load(log).nranks == 1


def test_a_job_that_ends_well_without_a_log_is_a_profiler_failure(program, profiler_libs, tmp_path):
    exe = program("ring.c", "mpich")
    proc = subprocess.run([str(SCALEWISE), "run", "-o", str(tmp_path), "--",
                           *launch_command("mpich", 2, [str(exe), "2", "8"])],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "SCALEWISE_DISABLE": "1"})
    assert proc.returncode == EXIT_PROFILER
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "scalewise: error: no profile was written although the job exited with code 0")


def test_an_aborted_job_is_summarised_as_partial_and_its_code_named(program, profiler_libs, tmp_path):
    exe = program("abnormal_end.c", "mpich")
    proc = scalewise_run(tmp_path, launch_command("mpich", 2, [str(exe), "abort", "1", "7", "3"]))
    assert proc.returncode == EXIT_APPLICATION
    assert proc.stderr.strip().splitlines()[-1] == \
        "scalewise: error: the application exited with code 7; the profile is partial"
    log = Path(proc.stdout.strip().splitlines()[-1].removeprefix("profile: "))
    p = scalewise.load(log)
    assert p.aborted and p.partial and list(p.ranks["rank"]) == [1]
    assert p.functions.set_index("function").loc["MPI_Allreduce", "calls"] == 3


def test_quiet_names_a_partial_profile_as_the_summary_does(program, profiler_libs, tmp_path):
    """--quiet reads only the log's container (logfile/container.py): the same verdict and message."""
    exe = program("abnormal_end.c", "mpich")
    proc = subprocess.run([str(SCALEWISE), "run", "--quiet", "-o", str(tmp_path), "--",
                           *launch_command("mpich", 2, [str(exe), "abort", "1", "7", "3"])],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == EXIT_APPLICATION
    assert proc.stderr.strip().splitlines()[-1] == \
        "scalewise: error: the application exited with code 7; the profile is partial"
    assert proc.stdout.strip().startswith("profile: ") and len(proc.stdout.strip().splitlines()) == 1


QUIET_RUN = """import sys
from scalewise.cli.main import cli
code = None
try:
    cli(sys.argv[1:])
except SystemExit as done:
    code = done.code
heavy = [m for m in ("pandas", "numpy", "pydantic", "rich", "scalewise.analysis", "scalewise.report")
         if any(k == m or k.startswith(m + ".") for k in sys.modules)]
print("exit", code, "imported:", *heavy)
"""


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_quiet_imports_no_analysis_stack_and_runs_no_ldd(flavour, program, profiler_libs, tmp_path):
    """What `scalewise run --quiet` costs beyond the job: no pandas, numpy, pydantic or rich,
    and once the application's MPI is known, no ldd (its answer is kept, launch/mpis.py)."""
    exe = program("ring.c", flavour)
    argv = [sys.executable, "-c", QUIET_RUN, "run", "--quiet", "-o", str(tmp_path), "--",
            *launch_command(flavour, 2, [str(exe), "2", "8"])]
    subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)  # the first run may ask ldd
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ldd").write_text("#!/bin/sh\necho called >> \"$(dirname \"$0\")/calls\"\nexec /usr/bin/ldd \"$@\"\n")
    (bin_dir / "ldd").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert proc.stdout.strip().splitlines()[-1] == "exit 0 imported:", proc.stdout + proc.stderr
    assert not (bin_dir / "calls").exists(), "ldd ran although the executable had not changed"
