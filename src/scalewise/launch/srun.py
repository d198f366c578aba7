"""Slurm's srun as the rank starter, with the PMI plugin each MPI needs.

Debian's Open MPI has no PMI-1/2 support, so it needs ``--mpi=pmix``; MPICH
needs ``--mpi=pmi2`` (under ``--mpi=pmix`` it starts N single-rank worlds and
still exits 0).  MCA parameters travel as ``OMPI_MCA_*`` variables because srun
has no ``--mca`` option.
"""

from __future__ import annotations

from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job, Launch, Launcher, register_launcher
from scalewise.launch.mpis import family_of
from scalewise.launch.preload import with_mpich_ucx

PMI_PLUGIN = {"openmpi": "pmix", "mpich": "pmi2", "intelmpi": "pmi2"}


@register_launcher("srun")
class Srun(Launcher):
    """``srun --mpi=<pmi> -N nodes -n P -c threads --export=ALL app``."""

    def __init__(self, pmi: dict[str, str] | None = None):
        # Sites differ (an Open MPI built with PMI-2, say): the study may override the plugin.
        self.pmi = dict(PMI_PLUGIN, **(pmi or {}))

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        # Debian's two by name, any other MPI by its family (a study may still set a plugin per name).
        key = job.mpi if job.mpi in self.pmi else family_of(job.mpi)
        if key not in self.pmi:
            raise ScalewiseError(f"srun cannot start {job.mpi} ranks (known: {', '.join(self.pmi)})")
        argv = ["srun", f"--mpi={self.pmi[key]}", "-N", str(job.nodes), "-n", str(job.ranks),
                "-c", str(job.threads), "--export=ALL"]
        if oversubscribe:
            argv.append("--overcommit")
        env = dict(job.env)
        env.update({f"OMPI_MCA_{name}": value for name, value in job.mca.items()})
        settings = {}
        if job.mpi == "mpich":
            env, added = with_mpich_ucx(env, oversubscribe)
            settings = {f"env.{k}": v for k, v in added.items()}
        return Launch(argv + list(job.app_argv), env, settings)
