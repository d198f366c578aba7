"""The MPI libraries' own starters: Open MPI's mpirun (PRRTE's in Open MPI 5) and
MPICH's and Intel MPI's mpiexec (Hydra): Debian's by their names, any other
MPI's from its prefix or PATH (:func:`scalewise.launch.mpis.launcher_command`).

Both work on one machine and inside a Slurm allocation (they read it and
start remote ranks through Slurm).
"""

from __future__ import annotations

import os
import shutil

from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job, Launch, Launcher, register_launcher
from scalewise.launch.mpis import ALIASES, binding, family_of, launcher_command, launcher_mpi
from scalewise.launch.preload import openmpi_forwarding, with_mpich_ucx

OPENMPI_RUN = "mpirun.openmpi"
MPICH_RUN = "mpiexec.mpich"


def root_env(env: dict[str, str]) -> dict[str, str]:
    """Open MPI refuses to start as root unless told twice."""
    if os.geteuid() == 0:
        env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


@register_launcher("mpirun")
class OpenMpiRun(Launcher):
    """``mpirun.openmpi -x NAME ... -np P [--oversubscribe] --mca k v ... app``."""

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        forward, env = openmpi_forwarding(job.env, job.exported)
        argv = [launcher_command(job.mpi, "mpirun"), *forward, "-np", str(job.ranks)]
        if job.nodes > 1:
            argv += ["--map-by", f"ppr:{-(-job.ranks // job.nodes)}:node"]
        mca = dict(job.mca)
        if oversubscribe:
            argv += ["--oversubscribe"]
            # Open MPI yields by itself when it sees oversubscription; said
            # explicitly so that the run's record shows it (the study's own value wins).
            mca = {"mpi_yield_when_idle": "1", **mca}
        if oversubscribe or job.threads > 1:
            # Binding ranks to cores they must share, or threads to one core, would skew timings.
            argv += ["--bind-to", "none"]
        for name, value in mca.items():
            argv += ["--mca", name, value]
        settings = {f"mca.{k}": v for k, v in mca.items() if k not in job.mca}
        return Launch(argv + list(job.app_argv), root_env(env), settings)


@register_launcher("mpiexec")
class MpichExec(Launcher):
    """``mpiexec.mpich -n P [-ppn R] app``; hydra passes the whole environment on."""

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        argv = [launcher_command(job.mpi, "mpiexec"), "-n", str(job.ranks)]
        if job.nodes > 1:
            argv += ["-ppn", str(-(-job.ranks // job.nodes))]
        if job.mpi != "mpich":  # Debian's MPICH 4.0 over UCX only (preload.with_mpich_ucx)
            return Launch(argv + list(job.app_argv), dict(job.env), {})
        env, added = with_mpich_ucx(job.env, oversubscribe)
        return Launch(argv + list(job.app_argv), env, {f"env.{k}": v for k, v in added.items()})


def two_ranks(mpi: str, one_per_node: bool = False) -> list[str]:
    """The library's own launch words for 2 ranks (one on each of two nodes with ``one_per_node``)."""
    return ranks_line(mpi, 2, one_per_node)


def ranks_line(mpi: str, ranks: int, one_per_node: bool = False) -> list[str]:
    """The library's own launch words for ``ranks`` ranks: Debian's launchers by name, any other
    MPI's from PATH, checked to start that MPI (:func:`checked_launcher`)."""
    if mpi == "openmpi":
        return [OPENMPI_RUN, "-np", str(ranks), *(["-npernode", "1"] if one_per_node else [])]
    if mpi == "mpich":
        return [MPICH_RUN, "-n", str(ranks), *(["-ppn", "1"] if one_per_node else [])]
    exe = checked_launcher(mpi)
    if family_of(mpi) == "openmpi":  # PRRTE's mpirun (Open MPI 5) takes the mapping, not -npernode
        return [exe, "-np", str(ranks), *(["--map-by", "ppr:1:node"] if one_per_node else [])]
    return [exe, "-n", str(ranks), *(["-ppn", "1"] if one_per_node else [])]


def checked_launcher(mpi: str) -> str:
    """The launcher of ``mpi`` (an identity or a study's name), as a path; a one-line error when PATH
    has none or when the one it has starts another MPI (a module of another library loaded)."""
    command = launcher_command(mpi, native_launcher(mpi))
    exe = shutil.which(command)
    if exe is None:
        raise ScalewiseError(f"{mpi}: no {command} on PATH (put {mpi}'s bin/ first on PATH, e.g. module load it)")
    if binding(mpi) is None and mpi not in ALIASES:
        found = launcher_mpi(exe)
        if found is not None and found.identity != mpi:
            raise ScalewiseError(f"{mpi}: {exe} starts {found.identity}, not {mpi} (put {mpi}'s bin/ first on PATH)")
    return exe


def native_launcher(mpi: str) -> str:
    """The registry name of the launcher an MPI library ships (Intel MPI's is Hydra, like MPICH's)."""
    return "mpirun" if family_of(mpi) == "openmpi" else "mpiexec"
