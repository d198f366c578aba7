"""Fixtures of the tests under PyPI's MPIs: each MPI installed once into the
user's cache (tests/support/pypi_mpis.py), the runtime and proxy apps built for
it by `make setup` into the checkout's build/pypi-mpis."""

from __future__ import annotations

import pytest

from support import pypi_mpis


@pytest.fixture(scope="session")
def mpi_env():
    """mpi_env(name) -> the environment of a shell after `module load name` (installed if missing)."""
    def env(name: str) -> dict[str, str]:
        return pypi_mpis.loaded_env(name)
    return env
