"""Fixtures for launcher tests: the test MPI program and a localhost Slurm."""

from __future__ import annotations

import pytest

from swtest_support import build_swtest, running_slurm


@pytest.fixture(scope="session")
def swtest_dir(tmp_path_factory):
    """Folder holding ``openmpi/swtest`` and ``mpich/swtest``, compiled for this test session."""
    return build_swtest(tmp_path_factory.mktemp("swtest"))


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
