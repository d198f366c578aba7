"""Fixtures for study analysis and report tests: planted studies and the real browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from study_synth import Planted, write_study_db

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "study"


@pytest.fixture
def planted(tmp_path):
    """Write a planted study into a fresh folder; returns the database path."""
    def make(runs: list[Planted], name: str = "planted") -> Path:
        return write_study_db(tmp_path / name, runs, name)
    return make


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS

