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


def built_library(flavour: str, name: str, what: str) -> Path:
    """A library ``make runtime`` builds per MPI flavour; a clear error when it is missing."""
    if flavour not in FLAVOURS:
        raise ScalewiseError(f"unknown MPI flavour '{flavour}' (expected one of {', '.join(FLAVOURS)})")
    lib = build_dir() / flavour / name
    if not lib.is_file():
        raise ScalewiseError(f"{what} for {flavour} not built: {lib} is missing (run `make runtime`)")
    return lib


def library_path(flavour: str) -> Path:
    """The profiler library for ``flavour``."""
    return built_library(flavour, "libscalewise.so", "profiler library")


# MPICH 4.0 over UCX: yield when idle and end MPI_Finalize's hung endpoint
# closes (runtime/compat/mpich_ucx.c says why).  64 idle polls before a yield
# took 4 tiny proxy runs on 2 cores from 0.4 s to 2-6 ms, Open MPI's speed.
MPICH_UCX_LIBRARY = "libscalewise-mpich-ucx.so"
YIELD_AFTER_IDLE_POLLS = "64"
UCX_CLOSE_GRACE_SECONDS = "0.5"


def mpich_ucx_settings(oversubscribed: bool) -> dict[str, str]:
    """The variables that switch the MPICH work-arounds on (yielding only when the node is oversubscribed)."""
    out = {"SCALEWISE_UCX_CLOSE_GRACE": UCX_CLOSE_GRACE_SECONDS}
    if oversubscribed:
        out["SCALEWISE_YIELD_WHEN_IDLE"] = YIELD_AFTER_IDLE_POLLS
    return out


def with_mpich_ucx(env: dict[str, str], oversubscribed: bool) -> tuple[dict[str, str], dict[str, str]]:
    """``env`` with the MPICH work-around library preloaded, and the settings it adds (for the run's record)."""
    lib = built_library("mpich", MPICH_UCX_LIBRARY, "MPICH support library")
    settings = mpich_ucx_settings(oversubscribed)
    out = dict(env, **settings)
    out["LD_PRELOAD"] = str(lib) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    return out, settings


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


def preload_env(flavour: str, logfile: str | os.PathLike | None = None,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment that loads the profiler into every rank started from it.

    Hydra and srun pass the whole environment on; Open MPI's mpirun forwards to
    other nodes only what it is told (:func:`openmpi_forwarding`).
    """
    env = dict(os.environ if base is None else base)
    lib = str(library_path(flavour))
    env["LD_PRELOAD"] = lib + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    if logfile is not None:
        env["SCALEWISE_LOGFILE"] = str(logfile)
    return env


def profiler_variables(env: dict[str, str]) -> list[str]:
    """The variables every rank needs to be profiled: LD_PRELOAD and the SCALEWISE_* settings."""
    return ["LD_PRELOAD"] + sorted(k for k in env if k.startswith("SCALEWISE_"))


ENV_LIST = "OMPI_MCA_mca_base_env_list"


def openmpi_forwarding(env: dict[str, str], names: list[str]) -> tuple[list[str], dict[str, str]]:
    """How Open MPI's mpirun forwards ``names`` to ranks on other nodes: ``-x NAME``
    arguments, to go right after the launcher, and the environment.

    Open MPI refuses ``-x`` together with ``mca_base_env_list``, and ``-x`` is
    what users write, so ``-x`` it is; only when the environment already sets
    the list are the names added to it instead.
    """
    if env.get(ENV_LIST):
        return [], with_env_list(env, names)
    return [arg for name in dict.fromkeys(names) for arg in ("-x", name)], dict(env)


def with_env_list(env: dict[str, str], names: list[str]) -> dict[str, str]:
    """``env`` with ``names`` added to Open MPI's ``mca_base_env_list``."""
    listed = [n for n in env.get(ENV_LIST, "").split(";") if n]
    return dict(env, **{ENV_LIST: ";".join(listed + [n for n in names if n not in listed])})
