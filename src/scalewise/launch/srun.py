"""Slurm's srun as the rank starter, with the PMI plugin each MPI needs.

Which plugins start which library's ranks as one world is a fact of each
release line (:data:`SRUN_PMI`): Open MPI speaks PMIx only (Debian's 4.1 and
5.0 have no PMI-1/2 component, so ``--mpi=pmi2`` or ``none`` starts N
single-rank worlds); MPICH 4.0 and PyPI's MPICH 5.0 speak PMI-1/2 (under
``--mpi=pmix`` 4.0 starts N single-rank worlds and 5.0 aborts in MPI_Init);
Intel MPI 2021 takes either.  A line asking for another plugin, or for one
this Slurm does not have (``srun --mpi=list``), is a one-line error before
anything starts.  MCA parameters travel as ``OMPI_MCA_*`` variables because
srun has no ``--mca`` option.
"""

from __future__ import annotations

import os
import subprocess
from functools import lru_cache

from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job, Launch, Launcher, register_launcher
from scalewise.launch.mpis import binary_mpi, family_of
from scalewise.launch.preload import with_mpich_ucx
from scalewise.launch.releases import line_of_identity, release_line

PMI_PLUGIN = {"openmpi": "pmix", "mpich": "pmi2", "intelmpi": "pmi2"}
# Per release line: the srun plugins that start its ranks as one world, and why the others do not.
SRUN_PMI: dict[str, tuple[tuple[str, ...], str]] = {
    "openmpi-4.1": (("pmix",), "Open MPI speaks PMIx only: other plugins start single-rank worlds"),
    "openmpi-5.0": (("pmix",), "Open MPI 5 speaks PMIx only: other plugins start single-rank worlds"),
    "mpich-4.0": (("pmi2",), "MPICH 4.0 speaks PMI-1/2: under pmix it starts single-rank worlds"),
    # MPICH 5 speaks PMIx when built with it (then its library links libpmix: :func:`check_srun_app`).
    "mpich-5.0": (("pmi2",), "this MPICH build speaks PMI-1/2, not PMIx"),
    "intelmpi-2021": (("pmi2", "pmix"), "Intel MPI speaks PMI-2 or PMIx"),
}


@lru_cache(maxsize=8)
def _plugins(conf: str | None) -> tuple[str, ...] | None:
    try:
        out = subprocess.run(["srun", "--mpi=list"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, **({"SLURM_CONF": conf} if conf else {})))
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    listed = [word for line in out.stdout.splitlines() if line.startswith("\t") for word in line.split()]
    versions = [w.rstrip(",") for line in out.stdout.splitlines() if "plugin versions available" in line
                for w in line.split(":", 1)[1].split()]
    return tuple(dict.fromkeys([*listed, *versions]))


def srun_plugins(env: dict[str, str] | None = None) -> tuple[str, ...] | None:
    """The MPI plugins of the Slurm ``env`` points at (``srun --mpi=list``); None when srun cannot say."""
    return _plugins((os.environ if env is None else env).get("SLURM_CONF"))


def _family_plugin(plugin: str) -> str:
    return "pmix" if plugin.startswith("pmix") else plugin  # pmix_v4 is a version of pmix


def check_plugin(plugin: str, env: dict[str, str] | None = None) -> None:
    """A one-line error when this Slurm has no plugin ``plugin`` (a site's own mapping is trusted)."""
    have = srun_plugins(env)
    if have is not None and plugin not in have:
        raise ScalewiseError(f"srun --mpi={plugin}: this Slurm has no {plugin} plugin "
                             f"(srun --mpi=list: {', '.join(have)})")


def check_srun_line(mpi: str, plugin: str | None, env: dict[str, str] | None = None, pmix: bool = False) -> None:
    """A one-line error when ``srun --mpi=<plugin>`` cannot start ``mpi``'s ranks as one world, naming the cause;
    ``plugin`` None: the line names none (Slurm's MpiDefault decides, not checked here); ``pmix``: the
    library links libpmix, so it speaks PMIx whatever its line's usual build."""
    if plugin is None:
        return
    line = release_line(mpi, "srun")
    works, why = SRUN_PMI[line]
    works = (*works, "pmix") if pmix else works
    if _family_plugin(plugin) not in works:
        raise ScalewiseError(f"srun --mpi={plugin} cannot start {mpi} ranks as one world ({why}): "
                             f"use --mpi={works[0]}")
    have = srun_plugins(env)
    if have is not None and plugin not in have:
        usable = [p for p in have if _family_plugin(p) in works]
        instead = (f"use --mpi={usable[0]}" if usable else
                   f"start {mpi} with its own launcher inside an allocation (sbatch or salloc, then mpirun/mpiexec)")
        raise ScalewiseError(f"srun --mpi={plugin}: this Slurm has no {plugin} plugin (srun --mpi=list: "
                             f"{', '.join(have)}); {instead}")


def line_plugin(argv: list[str], env: dict[str, str] | None = None) -> str | None:
    """The plugin an srun line asks for: ``--mpi=X`` / ``--mpi X``, else ``SLURM_MPI_TYPE``; None if neither."""
    for i, word in enumerate(argv):
        if word.startswith("--mpi="):
            return word.split("=", 1)[1]
        if word == "--mpi" and i + 1 < len(argv):
            return argv[i + 1]
    return (os.environ if env is None else env).get("SLURM_MPI_TYPE") or None


def check_srun_app(argv: list[str], app: str | None, env: dict[str, str] | None = None) -> None:
    """:func:`check_srun_line` for a user's srun line, by the library its application loads (the ABI
    build's too); a library of no known release line is not checked."""
    mpi = binary_mpi(app) if app else None
    if mpi is not None and line_of_identity(mpi.identity):
        check_srun_line(mpi.identity, line_plugin(argv, env), env, _links_pmix(mpi.library))


def _links_pmix(library: str) -> bool:
    try:
        out = subprocess.run(["ldd", library], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "libpmix.so" in out


@register_launcher("srun")
class Srun(Launcher):
    """``srun --mpi=<pmi> -N nodes -n P -c threads --export=ALL app``."""

    def __init__(self, pmi: dict[str, str] | None = None):
        # Sites differ (an Open MPI built with PMI-2, say): the study may override the plugin.
        self.pmi = dict(PMI_PLUGIN, **(pmi or {}))

    def plugin(self, mpi: str) -> str:
        # Debian's two by name, any other MPI by its family (a study may still set a plugin per name).
        key = mpi if mpi in self.pmi else family_of(mpi)
        if key not in self.pmi:
            raise ScalewiseError(f"srun cannot start {mpi} ranks (known: {', '.join(self.pmi)})")
        return self.pmi[key]

    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        argv = ["srun", f"--mpi={self.plugin(job.mpi)}", "-N", str(job.nodes), "-n", str(job.ranks),
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
