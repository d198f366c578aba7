"""Which profiler library goes with which MPI, and how to inject it.

The runtime is built once per MPI flavour (handle types differ between Open MPI
and MPICH) into ``build/<flavour>/libscalewise.so``.  This module finds the
library, tells the flavour of an application, and builds the environment that
loads the library into every rank.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from scalewise.errors import ScalewiseError

FLAVOURS = ("openmpi", "mpich")
# The SONAME each flavour's libmpi carries on Debian.
_SONAMES = {"libmpi.so.40": "openmpi", "libmpich.so.12": "mpich", "libmpi.so.12": "mpich"}
_LAUNCHERS = {
    "mpirun.openmpi": "openmpi", "mpiexec.openmpi": "openmpi", "orterun": "openmpi",
    "mpirun.mpich": "mpich", "mpiexec.mpich": "mpich", "mpiexec.hydra": "mpich",
}


def build_dir() -> Path:
    """Where the C build put its outputs (``SCALEWISE_BUILD`` overrides)."""
    env = os.environ.get("SCALEWISE_BUILD")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "build"


def library_path(flavour: str) -> Path:
    """The profiler library for ``flavour``; a clear error when it is not built."""
    if flavour not in FLAVOURS:
        raise ScalewiseError(f"unknown MPI flavour '{flavour}' (expected one of {', '.join(FLAVOURS)})")
    lib = build_dir() / flavour / "libscalewise.so"
    if not lib.is_file():
        raise ScalewiseError(f"profiler library for {flavour} not built: {lib} is missing (run `make runtime`)")
    return lib


def binary_flavour(path: str | os.PathLike) -> str | None:
    """The MPI flavour an executable is linked against, from its dynamic dependencies."""
    try:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        name = line.strip().split(" ", 1)[0]
        if name in _SONAMES:
            return _SONAMES[name]
    return None


def launcher_flavour(launcher: str) -> str | None:
    """The flavour a launcher command belongs to (``mpirun`` follows alternatives)."""
    exe = shutil.which(launcher) or launcher
    for candidate in (Path(exe).name, Path(os.path.realpath(exe)).name):
        if candidate in _LAUNCHERS:
            return _LAUNCHERS[candidate]
    return None


def command_app(argv: list[str]) -> str | None:
    """The application in a launch command: the first argument after the launcher
    that is an executable linked against an MPI library."""
    for arg in argv[1:]:
        exe = shutil.which(arg) if os.sep not in arg else arg
        if exe and os.path.isfile(exe) and os.access(exe, os.X_OK) and binary_flavour(exe):
            return exe
    return None


def command_flavour(argv: list[str]) -> str | None:
    """Guess the flavour for a launch command: the application's MPI wins,
    then the launcher's own flavour."""
    app = command_app(argv)
    if app:
        return binary_flavour(app)
    return launcher_flavour(argv[0]) if argv else None


def preload_env(flavour: str, logfile: str | os.PathLike | None = None,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment that loads the profiler into every rank started from it.

    Open MPI's mpirun forwards only what it is told to remote nodes, so the
    variables are also listed in ``OMPI_MCA_mca_base_env_list``; hydra and srun
    forward the whole environment.
    """
    env = dict(os.environ if base is None else base)
    lib = str(library_path(flavour))
    env["LD_PRELOAD"] = lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    names = ["LD_PRELOAD"]
    if logfile is not None:
        env["SCALEWISE_LOGFILE"] = str(logfile)
        names.append("SCALEWISE_LOGFILE")
    names += sorted(k for k in env if k.startswith("SCALEWISE_") and k not in names)
    if flavour == "openmpi":
        existing = env.get("OMPI_MCA_mca_base_env_list")
        env["OMPI_MCA_mca_base_env_list"] = ";".join(([existing] if existing else []) + names)
    return env
