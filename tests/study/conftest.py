"""Fixtures for study analysis and report tests: planted studies and the real browser."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# The DevTools-pipe browser client lives with the profile report tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from study_synth import Planted, halo_profile, write_study_db  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "study"


def mpi_race(jitter=(0.97, 1.0, 1.03), slow_at_4=1.20, slow_elsewhere=1.01, profiles=True) -> list[Planted]:
    """Open MPI vs MPICH at 1, 2, 4 ranks, three repetitions, strong scaling of a 40 s job.

    MPICH is ``slow_at_4`` times slower at 4 ranks and ``slow_elsewhere`` times
    slower at 1 and 2 ranks; ``jitter`` multiplies the wall of each repetition.
    """
    runs = []
    for rep, j in enumerate(jitter):
        for ranks in (1, 2, 4):
            for mpi in ("openmpi", "mpich"):
                slow = 1.0 if mpi == "openmpi" else (slow_at_4 if ranks == 4 else slow_elsewhere)
                wall = 40.0 / ranks * slow * j
                prof = halo_profile(ranks, 0.8 * wall, 0.5 * ranks, 0.1 * wall) if profiles else None
                runs.append(Planted(mpi=mpi, ranks=ranks, repetition=rep, wall=wall, profile=prof))
    return runs


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


@pytest.fixture(scope="session")
def chromium() -> str:
    """The real browser; its absence is a set-up error, not a reason to skip."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(path).exists(), "chromium is required: make system installs it (Debian package 'chromium')"
    subprocess.run([path, "--version"], check=True, capture_output=True, timeout=60)
    return path
