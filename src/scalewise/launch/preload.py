"""Which profiler library goes with which MPI, and how to inject it.

The runtime is built once per MPI (handle types differ between Open MPI and
MPICH, and between versions): Debian's two into ``build/openmpi`` and
``build/mpich``, any other MPI, named by its identity (:mod:`mpis`), on first
use into the user's cache.  This module finds the library, tells the MPI of an
application, and builds the environment that loads the library into every rank.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from scalewise.errors import ScalewiseError
from scalewise.launch import mpis

# Debian's two MPIs, built by `make setup`; any other is named by its identity.
FLAVOURS = tuple(mpis.ALIASES)
# Launchers known by name (Debian's; Open MPI 5's own); others by the MPI in their prefix.
_LAUNCHERS = {"prterun": "openmpi", "prte": "openmpi",
    "mpirun.openmpi": "openmpi", "mpiexec.openmpi": "openmpi", "orterun": "openmpi",
    "mpirun.mpich": "mpich", "mpiexec.mpich": "mpich", "mpiexec.hydra": "mpich",
}


def build_dir() -> Path:
    """Where the C build put its outputs (``SCALEWISE_BUILD`` overrides)."""
    env = os.environ.get("SCALEWISE_BUILD")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "build"


# The library each flavour was last found in (a hint where its compiler wrapper is).
_SEEN_LIBRARY: dict[str, str] = {}


def built_library(flavour: str, name: str, what: str) -> Path:
    """A library built per MPI: Debian's by ``make runtime`` (a clear error when it is
    missing), any other MPI's on first use."""
    bound = mpis.binding(flavour)
    if bound is not None and bound.mpi.flavour in FLAVOURS:
        flavour = bound.mpi.flavour
    if flavour not in FLAVOURS:
        from scalewise.launch.mpibuild import ensure_built  # builds only when asked
        part = "proxies" if name.startswith("proxies/") else "runtime"
        if bound is not None:
            return ensure_built(bound.mpi.build, part, mpicc=bound.mpicc, env=bound.environment()) / name
        mpis.check_name(flavour)
        return ensure_built(flavour, part, _SEEN_LIBRARY.get(flavour)) / name
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


# Ranks that sleep while they wait (runtime/compat/idle_sleep.c): opt-in, by this variable in the
# launch's environment (microseconds a waiting rank sleeps at each idle poll).  With it a launch also
# turns each MPI's yield when idle on, so that both MPIs' idle paths reach the shim's sched_yield.
IDLE_SLEEP = "SCALEWISE_IDLE_SLEEP_US"
IDLE_SLEEP_LIBRARY = "libscalewise-idle-sleep.so"
OPENMPI_YIELD = "OMPI_MCA_mpi_yield_when_idle"
MPICH_YIELD = "SCALEWISE_YIELD_WHEN_IDLE"


def idle_sleep_us(env: dict[str, str]) -> float:
    """The sleep a waiting rank takes, from ``env`` (0: off); a clear error when it is not a duration."""
    text = env.get(IDLE_SLEEP, "").strip()
    if not text:
        return 0.0
    try:
        us = float(text)
    except ValueError:
        us = -1.0
    if not 0 <= us < 1e6:
        raise ScalewiseError(f"{IDLE_SLEEP}='{text}': not a sleep in microseconds (0 to 999999)")
    return us


def with_idle_sleep(env: dict[str, str], family: str) -> dict[str, str]:
    """``env`` with the idle-sleep shim preloaded and the MPI's yield when idle on, when ``env`` asks
    for it (:data:`IDLE_SLEEP`); else ``env`` unchanged.  ``family``: "openmpi" or "mpich" (Hydra's)."""
    if idle_sleep_us(env) == 0:
        return env
    lib = build_dir() / "compat" / IDLE_SLEEP_LIBRARY
    if not lib.is_file():
        raise ScalewiseError(f"{IDLE_SLEEP} is set but {lib} is missing (run `make runtime`)")
    out = dict(env)
    preloaded = [p for p in env.get("LD_PRELOAD", "").split(":") if p]
    if str(lib) not in preloaded:
        out["LD_PRELOAD"] = ":".join([str(lib), *preloaded])
    out.setdefault(*_YIELD_ON[family])
    return out


# Each family's yield when idle, turned on: the variable and its value.
_YIELD_ON = {"openmpi": (OPENMPI_YIELD, "1"), "mpich": (MPICH_YIELD, YIELD_AFTER_IDLE_POLLS)}


def idle_sleep_forwards(env: dict[str, str], argv: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Open MPI's ``-x`` options that carry the shim and its setting to ranks on other nodes (mpirun
    hands a variable on only when named): none when ``env`` does not ask for the sleep, and none for a
    variable ``argv`` already names."""
    if idle_sleep_us(env) == 0:
        return []
    return [arg for name in ("LD_PRELOAD", IDLE_SLEEP) if not _forwarded(argv, name) for arg in ("-x", name)]


def _forwarded(argv: list[str] | tuple[str, ...], name: str) -> bool:
    return any(a == "-x" and i + 1 < len(argv) and argv[i + 1].split("=")[0] == name for i, a in enumerate(argv))


def binary_mpi(path: str | os.PathLike) -> mpis.Mpi | None:
    """The MPI an executable links (None without MPI), remembered as the hint for its build."""
    mpi = mpis.binary_mpi(path)
    if mpi is not None:
        _SEEN_LIBRARY.setdefault(mpi.build, mpi.library)
    return mpi


def binary_flavour(path: str | os.PathLike) -> str | None:
    """The build an executable is profiled with: its MPI's flavour, or the ABI build for libmpi_abi."""
    mpi = binary_mpi(path)
    return mpi.build if mpi else None


def launcher_flavour(launcher: str) -> str | None:
    """The MPI a launcher command belongs to (``mpirun`` follows alternatives; an
    ``mpirun`` or ``mpiexec`` of a module or a pip-installed MPI is told by the library in its prefix)."""
    exe = shutil.which(launcher) or launcher
    for candidate in (Path(exe).name, Path(os.path.realpath(exe)).name):
        if candidate.endswith((".openmpi", ".mpich")) or candidate == "orterun":
            return _LAUNCHERS.get(candidate)
    mpi = mpis.launcher_mpi(exe)
    if mpi is not None:
        return mpi.flavour
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
