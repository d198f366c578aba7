"""Fixtures of the tests under PyPI's MPIs: each MPI installed once into the
user's cache (tests/support/pypi_mpis.py), the runtime built for it on first use
by scalewise itself into a cache that lives as long as the installs."""

from __future__ import annotations

import pytest

from support import pypi_mpis


@pytest.fixture(scope="session")
def mpi_env():
    """mpi_env(name) -> the environment of a shell after `module load name` (installed if missing)."""
    def env(name: str) -> dict[str, str]:
        prefix = pypi_mpis.install(name)
        out = pypi_mpis.module_env(name, prefix)
        # The runtime builds live beside the installs: made once, reused by every later run.
        out["SCALEWISE_MPI_BUILDS"] = str(pypi_mpis.root() / "scalewise-build")
        out.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SCALEWISE_QUIET="1")
        for key in ("SCALEWISE_DISABLE", "SCALEWISE_LOGDIR", "SCALEWISE_LOGFILE", "MPICC", "MPICC_ABI"):
            out.pop(key, None)
        return out
    return env
