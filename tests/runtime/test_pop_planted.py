"""POP metrics of a real run with a planted imbalance, under Open MPI and MPICH.

imbalance.c: rank 1 computes twice as long as rank 0 before each barrier, so
the load balance is 0.75.  The run is traced too: its replay on the ideal
network splits the communication efficiency, TE x SerE = CE by construction.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import scalewise
from scalewise.analysis.run.pop import pop_metrics
from scalewise.whatif.pop import traced_pop
from scalewise.whatif.traceformat import read_trace

NRANKS = 2
# Every wake from a sleep, and every return from a barrier, may wait for a core
# on a loaded 2-core machine; that wait is the rank's own time outside MPI, so
# it counts as compute.  A few such waits of a time slice (up to ~10 ms) each,
# over 1.5 s of planted compute, move the load balance by less than this,
# which still tells the plant from its neighbours (1:1.5 gives 0.83, 1:3 0.67).
LB_WITHIN = 0.04


def imbalanced(mpi_job, program, flavour):
    exe = program("imbalance.c", flavour)
    env = {"SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": "{workdir}/job.swtrace"}
    job = mpi_job(f"pop-imbalance-{flavour}", flavour, NRANKS, [str(exe)], extra_env=env)
    assert job.returncode == 0, job.stderr
    return job


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_planted_imbalance_gives_its_load_balance(mpi_job, program, flavour):
    job = imbalanced(mpi_job, program, flavour)
    m = pop_metrics(scalewise.load(job.logfile))
    assert m.ranks == NRANKS
    assert m.load_balance == pytest.approx(0.75, abs=LB_WITHIN)
    # Rank 0 sleeps 2 x 250 ms, rank 1 2 x 500 ms: sleeps never end early.
    assert m.useful_max >= 0.999 and m.useful_mean >= 0.749 and m.communication_efficiency <= 1.0
    assert m.parallel_efficiency == pytest.approx(m.load_balance * m.communication_efficiency, rel=1e-12)


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_ideal_network_splits_communication_efficiency(mpi_job, program, flavour):
    job = imbalanced(mpi_job, program, flavour)
    profile, trace = scalewise.load(job.logfile), read_trace(job.workdir / "job.swtrace")
    m = traced_pop(profile, trace, flavour)
    assert m.split_missing == ""
    assert m.ideal_runtime <= m.runtime
    assert m.serialisation_efficiency * m.transfer_efficiency == pytest.approx(m.communication_efficiency, rel=1e-12)
    assert 0 < m.serialisation_efficiency <= 1 and 0 < m.transfer_efficiency <= 1


def test_pop_command_reads_a_run_directory(mpi_job, program):
    job = imbalanced(mpi_job, program, "openmpi")
    cli = Path(sys.executable).parent / "scalewise"
    res = subprocess.run([str(cli), "pop", str(job.workdir), "--json"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["trace"] == str(job.workdir / "job.swtrace") and out["log"] == str(job.logfile)
    assert out["load_balance"] == pytest.approx(0.75, abs=LB_WITHIN) and out["split_missing"] == ""
    assert out["serialisation_efficiency"] * out["transfer_efficiency"] == pytest.approx(
        out["communication_efficiency"], rel=1e-12)
    text = subprocess.run([str(cli), "pop", str(job.workdir / "job.swtrace")], capture_output=True, text=True,
                          timeout=120)
    assert text.returncode == 0 and "Serialisation efficiency" in text.stdout and "\u2014" not in text.stdout
