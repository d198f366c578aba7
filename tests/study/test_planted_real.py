"""End to end with the real MPIs: a program with a planted 1.6x load imbalance, swept like a user would.

Ranks 1, 2, 4 x Open MPI and MPICH x imbalance 1 and 1.6 (rank 0 computes that
many times the others' work), 5 repetitions (with 3 the exact test's smallest
p, 0.05, survives the report's false discovery control only if every test
reaches it), profiled, on this machine: the
4-rank runs are oversubscribed when it has fewer than 4 cores.  The report
must open with at most ten findings, none from oversubscribed runs or from
fewer than three repetitions, none contradicted by another, and the planted
imbalance among them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.analysis.study.noise import MIN_REPS
from scalewise.analysis.study.ranking import OPENING_SIZE, opening
from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study

# Each step: rank 0 computes `slow` times the others' work, then a ring halo and an Allreduce.
PLANTED_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double spin(double seconds) {
    double t0 = MPI_Wtime(), x = 0;
    while (MPI_Wtime() - t0 < seconds) x += 1e-9;
    return x;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, steps = 20, n = 8192;
    double slow = argc > 1 ? atof(argv[1]) : 1.0, work = 0.01;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *out = calloc(2 * n, sizeof *out), *in = calloc(2 * n, sizeof *in), sink = 0, sum = 0;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        sink += spin(rank == 0 ? slow * work : work);
        MPI_Request req[4];
        MPI_Irecv(in, n, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in + n, n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(out, n, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out + n, n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Status st[4];
        MPI_Waitall(4, req, st);
        MPI_Allreduce(&sink, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double elapsed = MPI_Wtime() - t0;
    if (rank == 0)
        printf("SCALEWISE_RESULT app=planted ranks=%d fom=%.6f fom_unit=steps/s higher_is_better=1 status=PASS\n",
               size, steps / elapsed);
    free(out); free(in);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def planted_exe(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("planted")
    (folder / "planted.c").write_text(PLANTED_C)
    for mpi, cc in (("openmpi", "mpicc.openmpi"), ("mpich", "mpicc.mpich")):
        (folder / mpi).mkdir()
        subprocess.run([cc, "-O1", "-o", str(folder / mpi / "planted"), str(folder / "planted.c")], check=True)
    return folder


@pytest.mark.verdict
def test_planted_imbalance_opens_the_report_and_nothing_untrue_does(planted_exe, write_study):
    path = write_study(f"""name: planted-real
applications:
  planted:
    command: ["{planted_exe}/{{mpi}}/planted", "{{imbalance}}"]
    fom: {{source: result_line}}
axes:
  ranks: [1, 2, 4]
  mpi: [openmpi, mpich]
  custom: {{imbalance: [1, 1.6]}}
repetitions: 5
scaling: weak                  # every rank gets the same work, whatever the rank count
profile: true
timeout: 60
""")
    loaded = load_study(path)
    run_study(loaded, "local")
    study = scalewise.open_study(path)
    assert (study.runs["status"] == "ok").all(), study.runs[["run_id", "status", "reason"]]
    over = set(study.runs.loc[study.runs["oversubscribed"], "run_id"])
    assert (study.runs["ranks"] * 1 > (os.cpu_count() or 1)).sum() == len(over)
    a = analyse_study(study)
    key = opening(a.findings)
    assert 0 < len(key) <= OPENING_SIZE
    thin = set(a.summary.loc[a.summary["n"] < MIN_REPS, "run_ids"].str.split(",").sum() or [])
    for f in key:
        assert not over & set(f.runs), f"from oversubscribed runs: {f.text}"
        assert not thin & set(f.runs), f"from fewer than {MIN_REPS} repetitions: {f.text}"
    pairs = [(f.numbers["axis"], tuple(f.numbers["pair"])) for f in key if f.kind in ("faster", "interaction")]
    assert len(pairs) == len(set(pairs)), "one sentence per setting and pair: nothing contradicts it"
    planted = [f for f in key if f.kind == "faster" and f.numbers["axis"] == "imbalance"]
    print("\n".join(f.text for f in key))
    assert planted and float(planted[0].numbers["winner"]) == 1.0, [f.text for f in key]
    assert planted[0].numbers["min_gain_pct"] > 10.0
