"""`scalewise run -- srun ...` on the localhost Slurm: the profiler reaches every
rank through srun's environment, under both MPIs, on 2 emulated nodes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import scalewise

SCALEWISE = Path(sys.executable).parent / "scalewise"
# Emulated nodes share one host: Open MPI must not use shared memory between them.
OMPI_TCP = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}


@pytest.mark.parametrize("flavour, pmi", [("mpich", "pmi2"), ("openmpi", "pmix")])
def test_run_through_srun_profiles_every_rank(slurm_env, swtest_dir, tmp_path, flavour, pmi):
    argv = ["srun", f"--mpi={pmi}", "-N", "2", "-n", "2", str(swtest_dir / flavour / "swtest")]
    env = {**os.environ, **(OMPI_TCP if flavour == "openmpi" else {})}
    proc = subprocess.run([str(SCALEWISE), "run", "--quiet", "-o", str(tmp_path), "--", *argv],
                          env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    log = Path(proc.stdout.strip().splitlines()[-1].removeprefix("profile: "))
    p = scalewise.load(log)
    assert p.nranks == 2 and sorted(p.ranks["rank"]) == [0, 1]
    f = p.functions.set_index(["rank", "function"])
    for rank in (0, 1):  # swtest: one 8-byte Allreduce and one Barrier per rank
        assert f.loc[(rank, "MPI_Allreduce"), "calls"] == 1
        assert f.loc[(rank, "MPI_Allreduce"), "bytes"] == 8
        assert f.loc[(rank, "MPI_Barrier"), "calls"] == 1
    assert p.meta.get("slurm_job_id")
