"""Turn one planned run into a :class:`Job`: folder, argument list, environment.

Placeholders are filled per argument (``str.format`` on each list item), so a
value containing spaces or ``; rm -rf`` stays one literal argument: no shell
ever sees it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from scalewise.campaign.build import app_build_dir
from scalewise.campaign.expand import RunSpec
from scalewise.campaign.study import LoadedStudy
from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job
from scalewise.launch.mpis import environment_of
from scalewise.launch.preload import preload_env
from scalewise.launch.probe import probe_env, probe_library

PROFILE_NAME = "profile.swlog"


@dataclass
class Prepared:
    """A job ready to go, and where its evidence will be."""

    job: Job
    executable: Path | None
    profile_path: Path | None
    probe_dir: Path | None


def run_dir(output: Path, run_id: str) -> Path:
    return output / "runs" / run_id


def placeholder_values(loaded: LoadedStudy, run: RunSpec, rundir: Path) -> dict[str, object]:
    values = dict(run.settings())
    values.update(repetition=run.repetition, run_id=run.run_id, rundir=str(rundir), workdir=str(loaded.workdir),
                  flags=loaded.model.applications[run.app].variants[run.variant].flags,
                  builddir=str(app_build_dir(loaded.output, run.app, run.variant, run.mpi)),
                  ranks_per_node=run.ranks_per_node or -(-run.ranks // run.nodes))
    return values


def resolve_executable(argv0: str, workdir: Path) -> Path | None:
    """The file ``argv0`` names: relative paths are relative to the study's working folder."""
    if os.sep in argv0:
        path = Path(argv0)
        return path if path.is_absolute() else (workdir / path)
    found = shutil.which(argv0)
    return Path(found) if found else None


def run_environment(run: RunSpec) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """(environment, names the run sets, MCA parameters) for ``run``."""
    env = environment_of(run.mpi, dict(os.environ))  # a study's own MPI: as after its module load
    set_here = {"OMP_NUM_THREADS": str(run.threads)}
    mca = {}
    for kind, name, value in run.applied:
        if kind == "mca":
            mca[name] = value
        else:  # CVARs are environment variables MPICH reads at MPI_Init
            set_here[name] = value
    env.update(set_here)
    return env, sorted(set_here), mca


def prepare(loaded: LoadedStudy, run: RunSpec) -> Prepared:
    """Fresh run folder, filled-in command, environment with the profiler or the world-size probe."""
    rundir = run_dir(loaded.output, run.run_id)
    if rundir.exists():
        shutil.rmtree(rundir)  # leftovers of an interrupted attempt must not be mistaken for results
    rundir.mkdir(parents=True)
    values = placeholder_values(loaded, run, rundir)
    argv = [arg.format(**values) for arg in loaded.model.applications[run.app].command]
    executable = resolve_executable(argv[0], loaded.workdir)
    if executable is not None and os.sep in argv[0]:
        argv[0] = str(executable)
    env, exported, mca = run_environment(run)
    profile_path = probe_dir = None
    if loaded.model.profile:
        profile_path = rundir / PROFILE_NAME
        env = preload_env(run.mpi, profile_path, base=env)
        exported += ["LD_PRELOAD", "SCALEWISE_LOGFILE"]
    else:
        probe_dir = rundir / "probe"
        probe_dir.mkdir()
        env = probe_env(env, probe_library(run.mpi), probe_dir)
        exported += ["LD_PRELOAD", "SCALEWISE_PROBE_DIR"]
    job = Job(name=run.run_id, app_argv=argv, mpi=run.mpi, ranks=run.ranks, nodes=run.nodes, threads=run.threads,
              env=env, exported=exported, mca=mca, rundir=rundir, stdout=rundir / "stdout",
              stderr=rundir / "stderr", timeout=loaded.model.timeout,
              interconnect=run.interconnect)
    return Prepared(job, executable, profile_path, probe_dir)


def check_runnable(prepared: Prepared) -> None:
    """A missing executable is the run's failure, reported before any launcher muddles the message."""
    exe = prepared.executable
    if exe is None:
        raise ScalewiseError(f"executable '{prepared.job.app_argv[0]}' not found on PATH")
    if not exe.is_file() or not os.access(exe, os.X_OK):
        raise ScalewiseError(f"executable {exe} does not exist or is not executable")
