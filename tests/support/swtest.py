"""The small MPI program of the campaign and launcher tests (built by the
``swtest_dir`` fixture, tests/conftest.py), and what its campaigns store."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

from scalewise.campaign.runner import store_path

# Rank 0 echoes its arguments and the variables named in SWTEST_ECHO_ENV, then
# prints the result line the proxy apps print.  --sleep S holds every rank in
# MPI for S seconds, --exit N ends with status N, --fail reports status=FAIL,
# --abort N has the last rank call MPI_Abort with code N, --segv crashes rank 0.
SWTEST_C = r"""
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, code = 0, fail = 0, abort_code = -1, segv = 0;
    double sleep_s = 0;
    const char *sz = "none";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sleep") && i + 1 < argc) sleep_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--exit") && i + 1 < argc) code = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) sz = argv[++i];
        else if (!strcmp(argv[i], "--fail")) fail = 1;
        else if (!strcmp(argv[i], "--abort") && i + 1 < argc) abort_code = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--segv")) segv = 1;
    }
    double t0 = MPI_Wtime(), one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sleep_s > 0) usleep((useconds_t)(sleep_s * 1e6));
    if (abort_code >= 0 && rank == size - 1) MPI_Abort(MPI_COMM_WORLD, abort_code);
    if (segv && rank == 0) raise(SIGSEGV);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < argc; i++) printf("ARGV[%d]=%s\n", i, argv[i]);
        const char *names = getenv("SWTEST_ECHO_ENV");
        if (names) {
            char buf[4096];
            snprintf(buf, sizeof buf, "%s", names);
            for (char *n = strtok(buf, ","); n; n = strtok(NULL, ",")) {
                const char *v = getenv(n);
                printf("ENV[%s]=%s\n", n, v ? v : "(unset)");
            }
        }
        printf("elapsed: %.6f seconds\n", MPI_Wtime() - t0);
        printf("SCALEWISE_RESULT app=swtest ranks=%d size=%s fom=%g fom_unit=widgets/s higher_is_better=1 "
               "wall=%.6f check=%g status=%s\n", size, sz, 100.0 * size, MPI_Wtime() - t0, sum,
               (fail || sum != size) ? "FAIL" : "PASS");
        fflush(stdout);
    }
    MPI_Finalize();
    return fail ? 3 : code;
}
"""

COMPILERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


def stored_rows(loaded, sql: str, *args) -> list[dict]:
    """Rows of a query on a loaded study's results database."""
    db = sqlite3.connect(store_path(loaded))
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(sql, args)]
    finally:
        db.close()


def stored_runs(loaded) -> list[dict]:
    """The runs table of a loaded study's results, in plan order."""
    return stored_rows(loaded, "SELECT * FROM runs ORDER BY position")


def build_swtest(folder: Path) -> Path:
    """Compile the test program for both MPIs into ``folder/<mpi>/swtest``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "swtest.c"
    src.write_text(SWTEST_C)
    for mpi, cc in COMPILERS.items():
        (folder / mpi).mkdir(parents=True, exist_ok=True)
        subprocess.run([cc, "-O1", "-o", str(folder / mpi / "swtest"), str(src)], check=True)
    return folder


def ranks_running(exe: str) -> int:
    """How many live processes run ``exe`` (the ranks of a test job still alive)."""
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            count += entry.name.isdigit() and os.readlink(entry / "exe") == exe
        except OSError:
            continue
    return count
