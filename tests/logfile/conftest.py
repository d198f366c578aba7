"""A real job log to damage: a two-rank MPICH job with the profiler preloaded
(MPICH starts fastest; the format does not depend on the flavour)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROGRAM = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    int r;
    double x = 1, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(&y, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="session")
def real_log(tmp_path_factory) -> bytes:
    """The bytes of a complete, valid log of a 2-rank job."""
    lib = REPO / "build" / "mpich" / "libscalewise.so"
    assert lib.is_file(), f"{lib} missing: run make -C runtime"
    d = tmp_path_factory.mktemp("real-log")
    (d / "app.c").write_text(PROGRAM)
    subprocess.run(["mpicc.mpich", str(d / "app.c"), "-o", str(d / "app")], check=True, timeout=120)
    env = dict(os.environ, LD_PRELOAD=str(lib), SCALEWISE_LOGFILE=str(d / "job.swlog"), SCALEWISE_QUIET="1")
    env.pop("SCALEWISE_DISABLE", None)
    subprocess.run(["mpiexec.mpich", "-n", "2", str(d / "app")], env=env, check=True, timeout=60, cwd=d)
    return (d / "job.swlog").read_bytes()
