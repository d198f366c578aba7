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
        return pypi_mpis.loaded_env(name)
    return env
