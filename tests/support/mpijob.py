"""Compile test programs and launch them under each MPI flavour with the
profiler preloaded.  Used by the runtime tests; no pytest in here."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from scalewise.launch.preload import FLAVOURS as FLAVOURS  # the product's own list, for tests to run over
REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "tests" / "runtime" / "programs"
JOB_TIMEOUT = 90


def library(flavour: str) -> Path:
    return REPO / "build" / flavour / "libscalewise.so"


def compile_command(flavour: str, source: Path, out: Path, defines: tuple[str, ...] = ()) -> list[str]:
    """C through mpicc, Fortran through mpifort; gfortran >= 10 rejects the
    type-less buffers of mpif.h and `use mpi` without -fallow-argument-mismatch."""
    flags = [f"-D{d}" for d in defines]
    if source.suffix in (".c",):
        return [f"mpicc.{flavour}", "-O1", "-w", "-pthread", *flags, str(source), "-o", str(out)]
    return [f"mpifort.{flavour}", "-O1", "-w", "-fallow-argument-mismatch", *flags,
            "-J", str(out.parent), str(source), "-o", str(out)]


def launch_command(flavour: str, nranks: int, argv: list[str]) -> list[str]:
    if flavour == "openmpi":
        # osc sm,pt2pt: the default one-sided component of Open MPI 4.1 fails
        # MPI_Win_create on a single rank with shared-memory transports only.
        return ["mpirun.openmpi", "--oversubscribe", "--mca", "btl", "self,vader",
                "--mca", "osc", "sm,pt2pt", "-np", str(nranks), *argv]
    return ["mpiexec.mpich", "-n", str(nranks), *argv]


def job_env(flavour: str, logfile: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the launcher: both launchers pass it to every rank,
    so the library is preloaded into the launcher too (it must be harmless there)."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               LD_PRELOAD=str(library(flavour)), SCALEWISE_QUIET="1")
    # Keep a developer's own settings from leaking into the ground truth.
    for key in ("SCALEWISE_DISABLE", "SCALEWISE_LOGDIR"):
        env.pop(key, None)
    if logfile is not None:
        env["SCALEWISE_LOGFILE"] = str(logfile)
    env.update(extra or {})
    return env


def run(flavour: str, nranks: int, argv: list[str], logfile: Path | None, *, cwd: Path,
        timeout: float = JOB_TIMEOUT, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Launch argv on nranks ranks; returns the finished process (never raises on a
    non-zero exit, only on a timeout: a hung job is a failure of its own)."""
    cmd = launch_command(flavour, nranks, argv)
    # A session of its own, so a hung job is killed whole: launcher and ranks.
    with subprocess.Popen(cmd, env=job_env(flavour, logfile, extra_env), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def counted_calls(stdout: str) -> dict[tuple[str, int], int]:
    """The "calls <function> <rank> <n>" lines a program prints for loops whose
    number of iterations depends on timing."""
    out: dict[tuple[str, int], int] = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "calls":
            key = (parts[1], int(parts[2]))
            out[key] = out.get(key, 0) + int(parts[3])
    return out
