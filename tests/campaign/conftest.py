"""Fixtures for campaign tests: the test MPI program and a study-file writer."""

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


@pytest.fixture
def write_study(tmp_path):
    """Write a study file into a fresh folder and return its path."""
    def write(text: str, name: str = "study.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write
