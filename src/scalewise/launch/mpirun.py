"""The MPI libraries' own starters: Open MPI's mpirun and MPICH's mpiexec (hydra).

Both work on one machine and inside a Slurm allocation (they read it and
start remote ranks through Slurm).
"""

from __future__ import annotations

import os

from scalewise.launch.base import Job, Launch, Launcher, register_launcher

OPENMPI_RUN = "mpirun.openmpi"
MPICH_RUN = "mpiexec.mpich"


def root_env(env: dict[str, str]) -> dict[str, str]:
    """Open MPI refuses to start as root unless told twice."""
    if os.geteuid() == 0:
        env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def forward_env(env: dict[str, str], names: list[str]) -> dict[str, str]:
    """Have mpirun forward ``names`` to ranks on other nodes.

    Uses ``OMPI_MCA_mca_base_env_list`` rather than ``-x``: the profiler's
    environment already uses that list, and Open MPI refuses a mix of both.
    """
    listed = [n for n in env.get("OMPI_MCA_mca_base_env_list", "").split(";") if n]
    listed += [n for n in names if n not in listed]
    return dict(env, OMPI_MCA_mca_base_env_list=";".join(listed)) if listed else dict(env)


@register_launcher("mpirun")
class OpenMpiRun(Launcher):
    """``mpirun.openmpi -np P [--oversubscribe] --mca k v ... app``."""

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        argv = [OPENMPI_RUN, "-np", str(job.ranks)]
        if job.nodes > 1:
            argv += ["--map-by", f"ppr:{-(-job.ranks // job.nodes)}:node"]
        if oversubscribe:
            argv += ["--oversubscribe"]
        if oversubscribe or job.threads > 1:
            # Binding ranks to cores they must share, or threads to one core, would skew timings.
            argv += ["--bind-to", "none"]
        for name, value in job.mca.items():
            argv += ["--mca", name, value]
        return Launch(argv + list(job.app_argv), root_env(forward_env(job.env, job.exported)))


@register_launcher("mpiexec")
class MpichExec(Launcher):
    """``mpiexec.mpich -n P [-ppn R] app``; hydra passes the whole environment on."""

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        argv = [MPICH_RUN, "-n", str(job.ranks)]
        if job.nodes > 1:
            argv += ["-ppn", str(-(-job.ranks // job.nodes))]
        return Launch(argv + list(job.app_argv), dict(job.env))


def native_launcher(mpi: str) -> str:
    """The registry name of the launcher an MPI library ships."""
    return {"openmpi": "mpirun", "mpich": "mpiexec"}[mpi]
