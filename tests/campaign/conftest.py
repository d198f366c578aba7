"""Fixtures for campaign tests: the test MPI program (the study-file writer is in tests/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The test program's source and build helper live with the launcher tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "launch"))

from swtest_support import build_swtest  # noqa: E402


@pytest.fixture(scope="session")
def swtest_dir(tmp_path_factory):
    """Folder holding ``openmpi/swtest`` and ``mpich/swtest``, compiled for this test session."""
    return build_swtest(tmp_path_factory.mktemp("swtest"))

