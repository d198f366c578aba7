"""The MPI libraries' own starters: Open MPI's mpirun (PRRTE's in Open MPI 5) and
MPICH's and Intel MPI's mpiexec (Hydra): Debian's by their names, any other
MPI's from its prefix or PATH (:func:`scalewise.launch.mpis.launcher_command`).

Both work on one machine and inside a Slurm allocation (they read it and
start remote ranks through Slurm).
"""

from __future__ import annotations

import os

from scalewise.launch.base import Job, Launch, Launcher, register_launcher
from scalewise.launch.mpis import family_of, launcher_command
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
    if mpi == "openmpi":
        return [OPENMPI_RUN, "-np", "2", *(["-npernode", "1"] if one_per_node else [])]
    return [MPICH_RUN, "-n", "2", *(["-ppn", "1"] if one_per_node else [])]


def native_launcher(mpi: str) -> str:
    """The registry name of the launcher an MPI library ships (Intel MPI's is Hydra, like MPICH's)."""
    return "mpirun" if family_of(mpi) == "openmpi" else "mpiexec"
