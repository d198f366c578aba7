"""The library is preloaded into launchers and shells as well as ranks: in a
process that never calls MPI_Init it must change nothing and write nothing."""

from __future__ import annotations

import subprocess

import pytest

from support.mpijob import FLAVOURS, job_env

COMMANDS = {
    "true": ["/bin/true"],
    "bash": ["bash", "-c", "echo ok"],
    "mpirun.openmpi": ["mpirun.openmpi", "--version"],
    "mpiexec.mpich": ["mpiexec.mpich", "--version"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("flavour", FLAVOURS)
def test_process_without_mpi_is_untouched(flavour, command, tmp_path, profiler_libs):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    env = job_env(flavour, logdir / "never.swlog", {"SCALEWISE_LOGDIR": str(logdir), "SCALEWISE_QUIET": "0"})
    plain = subprocess.run(COMMANDS[command], capture_output=True, text=True, timeout=30)
    res = subprocess.run(COMMANDS[command], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    assert res.stdout == plain.stdout  # same output as without the library
    assert "scalewise" not in res.stderr
    assert list(logdir.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["logs"]
