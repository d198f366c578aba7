"""Build steps of applications, run once per (application, variant, MPI) and session.

Steps are argument lists run in the study's working folder, with the
variant's environment plus ``MPICC``/``MPICXX``/``MPIFORT`` for the MPI, and
placeholders such as ``{flags}`` and ``{builddir}`` filled in.  Their output goes
to ``builds/<app>-<variant>-<mpi>.log``; a failed build fails (and records)
every run that needs it, and the campaign goes on with the others.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from scalewise.campaign.study import LoadedStudy
from scalewise.launch.mpibuild import fortran_wrapper
from scalewise.launch.mpis import binding, environment_of

WRAPPERS = {"openmpi": ("mpicc.openmpi", "mpicxx.openmpi", "mpifort.openmpi"),
            "mpich": ("mpicc.mpich", "mpicxx.mpich", "mpifort.mpich")}


def wrappers(mpi: str) -> tuple[str, str, str]:
    """C, C++ and Fortran wrappers of an MPI: Debian's by name, a study's own from its prefix
    (Fortran: mpifort or mpif90, empty when the MPI has none), an identity's from PATH."""
    if mpi in WRAPPERS:
        return WRAPPERS[mpi]
    bound = binding(mpi)
    if bound is None:
        return "mpicc", "mpicxx", "mpifort"
    return bound.mpicc, f"{bound.prefix}/bin/mpicxx", fortran_wrapper(bound.mpicc)


def app_build_dir(output: Path, app: str, variant: str, mpi: str) -> Path:
    return output / "builds" / app / variant / mpi


class Builder:
    """Runs each needed build at most once; remembers failures as reasons."""

    def __init__(self, loaded: LoadedStudy):
        self.loaded = loaded
        self.done: dict[tuple[str, str, str], str | None] = {}

    def values(self, app: str, variant: str, mpi: str) -> dict[str, str]:
        """Placeholder values of a build (a subset of what commands see)."""
        cc, cxx, fc = wrappers(mpi)
        flags = self.loaded.model.applications[app].variants[variant].flags
        return {"app": app, "variant": variant, "flags": flags, "mpi": mpi, "workdir": str(self.loaded.workdir),
                "builddir": str(app_build_dir(self.loaded.output, app, variant, mpi)),
                "mpicc": cc, "mpicxx": cxx, "mpifort": fc}

    def ensure(self, app: str, variant: str, mpi: str) -> str | None:
        """Build if not yet done this session; the failure reason, or None when built."""
        key = (app, variant, mpi)
        if key not in self.done:
            self.done[key] = self._build(app, variant, mpi)
        return self.done[key]

    def _build(self, app: str, variant: str, mpi: str) -> str | None:
        spec = self.loaded.model.applications[app]
        if not spec.build:
            return None
        values = self.values(app, variant, mpi)
        Path(values["builddir"]).mkdir(parents=True, exist_ok=True)
        env = environment_of(mpi, dict(os.environ, MPICC=values["mpicc"], MPICXX=values["mpicxx"],
                                       MPIFORT=values["mpifort"]))
        env.update(spec.variants[variant].env)
        log = self.loaded.output / "builds" / f"{app}-{variant}-{mpi}.log"
        with open(log, "wb") as out:
            for step in spec.build:
                argv = [arg.format(**values) for arg in step]
                out.write(f"$ {argv}\n".encode())
                out.flush()
                try:
                    done = subprocess.run(argv, cwd=self.loaded.workdir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                          timeout=self.loaded.model.build_timeout)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    return f"build of {app}/{variant} for {mpi} failed: {exc} (log: {log})"
                if done.returncode != 0:
                    return f"build of {app}/{variant} for {mpi} failed: {argv[0]} exited {done.returncode} (log: {log})"
        return None
