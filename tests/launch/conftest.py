"""Fixtures for launcher tests: a localhost Slurm (the test MPI program is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from support.slurm import running_slurm


@pytest.fixture(scope="session")
def slurm_cluster():
    """slurmctld + 4 emulated slurmd + munged, from a fresh folder on free ports; all stopped at the end."""
    with running_slurm(nodes=4) as cluster:
        yield cluster


@pytest.fixture
def slurm_env(slurm_cluster, monkeypatch):
    """Point sbatch/squeue/scontrol (and the campaign) at the test cluster."""
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster
