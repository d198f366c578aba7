"""Open MPI's coll/tuned, forced to each of its tree algorithms and run for real on this host, sends
each pair of ranks the messages and bytes the replay's schedule says (collectives/openmpi.py, along
collectives/ompi_topo.py's trees): Debian's Open MPI 4.1 and PyPI's 5.0.11, odd and even rank counts,
roots off rank 0.

coll_tuned_use_dynamic_rules=1 and coll_tuned_<coll>_algorithm=N force the algorithm, its segment size
and chain fan-out at their defaults (0 and 4).  The pml monitoring component counts every rank's internal
(collective) messages and bytes per peer.  A run of 2 calls less a run of none (MPI_Init and MPI_Finalize
alone, which send nothing through coll/tuned: one run per library and rank count serves every case), halved,
is one call's; a first call that differed from the second would leave half messages and fail the case."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from scalewise.whatif.collectives import openmpi
from support import pml_monitoring
from support.pml_monitoring import read_counts, sends_per_pair

PROGRAM = r"""#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *f = argv[1];
    int n = atoi(argv[2]) / 8, k = atoi(argv[3]), root = atoi(argv[4]), P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double *a = calloc((size_t)n * P + 1, 8), *b = calloc((size_t)n * P + 1, 8);
    for (int i = 0; i < k; i++) {
        if (!strcmp(f, "reduce")) MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        if (!strcmp(f, "bcast")) MPI_Bcast(a, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (!strcmp(f, "gather")) MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (!strcmp(f, "scatter")) MPI_Scatter(b, n, MPI_DOUBLE, a, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (!strcmp(f, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""
NBYTES = 808  # 101 doubles: split_binary_tree's halves differ by one element

# (collective, algorithm number, bytes): every tree algorithm of tuned, bcast's scatter-allgathers (with
# 9 doubles, 7 ranks' blocks run out), the fallbacks to linear below one element per rank (3 doubles),
# and (algorithm 0) the fixed rules' own choice on 5 to 7 ranks: binomial and binary trees, and the
# chain they pass fan-out 0, which runs as a pipeline
ALGORITHMS = [("bcast", a, NBYTES) for a in (2, 3, 4, 5, 6, 7, 8, 9)] + [("bcast", 8, 24), ("bcast", 9, 24)] \
    + [("bcast", 8, 72), ("bcast", 9, 72)] \
    + [("reduce", a, NBYTES) for a in (2, 3, 4, 5, 6)] + [("reduce", 7, 24)] \
    + [("gather", 2, NBYTES), ("scatter", 2, NBYTES), ("barrier", 6, 0)] \
    + [("bcast", 0, 64), ("bcast", 0, 1048576), ("reduce", 0, 8), ("reduce", 0, 8192)]
ROOTS = {5: 2, 6: 5, 7: 3}
# Both release lines build their trees with the same coll_base_topo.c and algorithm sources (diffed,
# docs/whatif.md), so `make test` forces every algorithm on 4.1 and takes 5.0's fixed rules (which differ);
# forcing each algorithm on 5.0 too is a sweep of 3+ minutes that `make validate` (also in CI) runs.
CASES = [pytest.param(mpi, P, func, alg, nbytes, marks=[pytest.mark.sweep] if mpi == "openmpi5" and alg else [])
         for mpi in ("openmpi-4.1", "openmpi5") for P in (5, 6, 7) for func, alg, nbytes in ALGORITHMS]


@pytest.fixture(scope="module")
def launch(mpi_env, tmp_path_factory):
    work = tmp_path_factory.mktemp("tuned")
    (work / "coll.c").write_text(PROGRAM)
    envs, runs = {}, {}

    def env_of(mpi):
        if mpi not in envs:
            if mpi == "openmpi5":
                env = mpi_env("openmpi5")
            else:  # Debian's: /usr/bin's mpicc and mpirun
                assert shutil.which("mpirun", path="/usr/bin"), "Debian's openmpi-bin is installed"
                env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""),
                           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            subprocess.run(["mpicc", "-O1", "-o", str(work / f"coll-{mpi}"), str(work / "coll.c")], env=env,
                           check=True, capture_output=True, timeout=300)
            envs[mpi] = env
        return envs[mpi]

    def run(mpi, P, func, alg, nbytes, calls, root):
        key = (mpi, P, func, alg, nbytes, calls, root)
        if key not in runs:
            runs[key] = launched(mpi, P, func, alg, nbytes, calls, root)
        return runs[key]

    def launched(mpi, P, func, alg, nbytes, calls, root):
        env = env_of(mpi)
        out = work / f"{mpi}-{P}-{func}-{alg}-{nbytes}-{calls}"
        out.mkdir()
        # coll/monitoring stays in: Debian's pml monitoring fails at finalize without it
        forcing = ["--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", f"coll_tuned_{func}_algorithm", str(alg)]
        cmd = ["mpirun", "-np", str(P), "--oversubscribe", "--mca", "coll", "basic,libnbc,tuned,self,monitoring",
               *(forcing if alg else []), "--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
               "--mca", "pml_monitoring_filename", str(out / "mon"),
               str(work / f"coll-{mpi}"), func, str(nbytes), str(calls), str(root)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return read_counts(out / "mon", P)
    return run


def one_call(launch, mpi, P, func, alg, nbytes, root):
    # the run without calls is the same job for every case of the library and rank count (launch caches it)
    return pml_monitoring.per_call(launch(mpi, P, "barrier", 0, 0, 0, 0), launch(mpi, P, func, alg, nbytes, 2, root), 2)


def modelled(mpi, P, func, alg, nbytes, root):
    name = "MPI_" + func.capitalize()
    line = "openmpi-5.0" if mpi == "openmpi5" else "openmpi-4.1"
    _, s = openmpi.forced(name, alg, P, nbytes, root) if alg else openmpi.choose(name, P, [nbytes] * P, root, line=line)
    return sends_per_pair(s)


@pytest.mark.parametrize("mpi, P, func, alg, nbytes", CASES)
def test_each_pair_exchanges_what_the_forced_algorithm_sends(launch, mpi, P, func, alg, nbytes):
    root = 0 if func == "barrier" else ROOTS[P]
    assert one_call(launch, mpi, P, func, alg, nbytes, root) == modelled(mpi, P, func, alg, nbytes, root)
