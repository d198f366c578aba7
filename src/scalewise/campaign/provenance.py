"""What a result needs to be trusted later: machine, software and inputs.

Captured once per ``study run`` invocation (a session: the machine and the
MPI libraries) and once per run (its binary, its MPI, its flags and the
environment it added).  Tool versions are asked once and cached.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import socket
import subprocess
from pathlib import Path

from scalewise._version import __version__
from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import binding, family_of, library_version, wrapper_mpi

MPI_VERSION_COMMANDS = {"openmpi": ["mpirun.openmpi", "--version"], "mpich": ["mpichversion"]}
COMPILER_WRAPPERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
SHOW_FLAGS = {"openmpi": "--showme", "mpich": "-show"}
# Inherited variables that change how MPI programs behave; recorded when set.
RELEVANT_PREFIXES = ("OMPI_", "PMIX_", "MPIR_", "MPICH_", "HYDRA_", "UCX_", "FI_", "I_MPI_", "OMP_", "SCALEWISE_",
                     "LD_PRELOAD", "LD_LIBRARY_PATH", "SLURM_CONF")


def _first_line(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    if not shutil.which(argv[0], path=(env or os.environ).get("PATH")):
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0].strip() if text else None


@functools.lru_cache(maxsize=None)
def mpi_version(mpi: str) -> str | None:
    if mpi not in MPI_VERSION_COMMANDS:
        return _own_version(mpi)
    line = _first_line(MPI_VERSION_COMMANDS[mpi])
    return line.split(":", 1)[-1].strip() if line and mpi == "mpich" else line


def _own_version(mpi: str) -> str | None:
    """Any other MPI (a study's own, an identity on PATH): its identity and the first line its library gives."""
    bound = binding(mpi)
    try:
        found = bound.mpi if bound else wrapper_mpi("mpicc")
        return f"{found.identity}: {library_version(found.library).splitlines()[0].strip()}"
    except (ScalewiseError, IndexError):
        return None


@functools.lru_cache(maxsize=None)
def compiler_info(mpi: str) -> dict[str, str]:
    bound = binding(mpi)
    wrapper = COMPILER_WRAPPERS.get(mpi) or (bound.mpicc if bound else "mpicc")
    env = bound.environment() if bound else None
    info = {}
    if version := _first_line([wrapper, "--version"], env):
        info["compiler"] = version
    if show := _first_line([wrapper, SHOW_FLAGS.get(family_of(mpi), "-show")], env):
        info["compiler_wrapper"] = show
    return info


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def session_columns(scheduler: str, study_path: Path, study_sha: str, started: str) -> dict[str, object]:
    """The ``sessions`` row of this invocation."""
    return {"started_at": started, "scheduler": scheduler, "study_path": str(study_path), "study_sha256": study_sha,
            "scalewise_version": __version__, "hostname": socket.gethostname(), "kernel": platform.release(),
            "cpu_model": cpu_model(), "cpu_count": os.cpu_count()}


def session_provenance(mpis: list[str], scheduler: str) -> dict[str, str]:
    """MPI libraries, compilers, Python, Slurm and the relevant inherited environment."""
    out = {"python": platform.python_version(), "os": platform.platform()}
    for mpi in mpis:
        if version := mpi_version(mpi):
            out[f"mpi.{mpi}.version"] = version
        for key, value in compiler_info(mpi).items():
            out[f"mpi.{mpi}.{key}"] = value
    if scheduler == "slurm" and (version := _first_line(["sbatch", "--version"])):
        out["slurm.version"] = version
    for name, value in sorted(os.environ.items()):
        if name.startswith(RELEVANT_PREFIXES):
            out[f"env.{name}"] = value
    return out


@functools.lru_cache(maxsize=256)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str | None:
    """sha256 of a file (cached while its size and mtime stay the same)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return _file_sha256(str(path), st.st_mtime_ns, st.st_size)


def run_provenance(mpi: str, flags: str, executable: Path | None, launch_env: dict[str, str],
                   study_sha: str) -> dict[str, str]:
    """Per-run facts: binary hash, MPI and compiler, flags, and every variable the run added or changed."""
    out = {"study_sha256": study_sha, "scalewise_version": __version__, "runner_host": socket.gethostname()}
    if version := mpi_version(mpi):
        out["mpi_version"] = version
    out.update(compiler_info(mpi))
    if flags:
        out["flags"] = flags
    if executable is not None:
        out["binary"] = str(executable)
        if sha := file_sha256(executable):
            out["binary_sha256"] = sha
    for name, value in sorted(launch_env.items()):
        if os.environ.get(name) != value:
            out[f"env.{name}"] = value
    return out
