/* Tight MPI loops for measuring the profiler's cost per call.
 * usage: overhead ITERS REPS
 * Prints, on rank 0, one line per kernel with the time per iteration of
 * every repetition, and the process's memory high-water mark. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(const char *name, int calls, const double *t, int reps, int iters)
{
    printf("kernel=%s calls_per_iter=%d ns_per_iter=", name, calls);
    for (int i = 0; i < reps; i++)
        printf("%s%.2f", i ? "," : "", t[i] / iters * 1e9);
    printf("\n");
}

static long vm_hwm_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100000, reps = argc > 2 ? atoi(argv[2]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *t = calloc((size_t)reps, sizeof *t), x = 1.0, y;
    int peer = size == 1 ? rank : rank ^ 1;
    if (peer >= size)
        peer = rank;
    char buf[1];
    MPI_Request rq[2];

    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[r] = MPI_Wtime() - t0;
    }
    if (rank == 0)
        report("allreduce8", 1, t, reps, iters);

    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(buf, 0, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(buf, 0, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        }
        t[r] = MPI_Wtime() - t0;
    }
    if (rank == 0) {
        report("irecv_isend_waitall0", 3, t, reps, iters);
        printf("vm_hwm_kib=%ld\n", vm_hwm_kib());
    }
    free(t);
    MPI_Finalize();
    return 0;
}
