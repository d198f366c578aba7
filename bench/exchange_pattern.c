/* exchange_pattern: dft's transposes between two nodes, alone.  Two ranks each send the other
 * --bytes (default 1 MiB) in one MPI_Alltoallv (or, with --prepost, in the calibration's way: receive
 * posted, a barrier, MPI_Send, wait), --reps times, each after --compute-us of busy computing (default
 * 10000, about dft's between its transposes at 1 Gbit/s); rank 1 computes --skew-us longer, so that
 * it arrives that much after rank 0.  Rank 0 prints, over the repetitions, the exchange's time from the
 * later rank's arrival to the later rank's return (the clocks are one machine's), median, fastest and mean:
 *   SCALEWISE_EXCHANGE bytes=N reps=R skew_us=K prepost=P median_us=T best_us=t mean_us=M
 * Used by bench/whatif_exchange.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void busy(double seconds) {
    double until = MPI_Wtime() + seconds;
    while (MPI_Wtime() < until) {
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = 1 << 20, reps = 67, compute_us = 10000, skew_us = 0;
    int prepost = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc) bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atol(argv[++i]);
        else if (!strcmp(argv[i], "--compute-us") && i + 1 < argc) compute_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--skew-us") && i + 1 < argc) skew_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--prepost")) prepost = 1;
        else {
            if (rank == 0) fprintf(stderr, "exchange_pattern: unknown argument '%s'\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (size != 2 || bytes < 1 || reps < 1 || compute_us < 0 || skew_us < 0) {
        if (rank == 0) fprintf(stderr, "exchange_pattern: needs 2 ranks, --bytes >= 1, --reps >= 1, times >= 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *out = calloc((size_t)bytes * 2, 1), *in = calloc((size_t)bytes * 2, 1);
    double *t = malloc(sizeof(double) * (size_t)reps * 2), *all = malloc(sizeof(double) * (size_t)reps * 4);
    if (!out || !in || !t || !all) MPI_Abort(MPI_COMM_WORLD, 3);
    int peer = 1 - rank;
    /* Alltoallv: nothing to itself, as dft's rank keeps its own block out of the network's way */
    int counts[2] = {0, 0}, displs[2] = {0, 0};
    counts[peer] = (int)bytes;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = -2; i < reps; i++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (prepost) MPI_Irecv(in, (int)bytes, MPI_CHAR, peer, 5, MPI_COMM_WORLD, &req);
        busy(1e-6 * (double)(compute_us + (rank == 1 ? skew_us : 0)));
        double t0 = MPI_Wtime();
        if (prepost) {
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Send(out, (int)bytes, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Alltoallv(out, counts, displs, MPI_CHAR, in, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
        }
        if (i >= 0) {
            t[2 * i] = t0;
            t[2 * i + 1] = MPI_Wtime();
        }
    }
    MPI_Gather(t, (int)reps * 2, MPI_DOUBLE, all, (int)reps * 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double sum = 0;
        for (long i = 0; i < reps; i++) {
            double in0 = all[2 * i], in1 = all[2 * reps + 2 * i], out0 = all[2 * i + 1], out1 = all[2 * reps + 2 * i + 1];
            t[i] = (out0 > out1 ? out0 : out1) - (in0 > in1 ? in0 : in1);
            sum += t[i];
        }
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        printf("SCALEWISE_EXCHANGE bytes=%ld reps=%ld skew_us=%ld prepost=%d median_us=%.1f best_us=%.1f mean_us=%.1f\n",
               bytes, reps, skew_us, prepost, t[reps / 2] * 1e6, t[0] * 1e6, sum / (double)reps * 1e6);
    }
    free(out);
    free(in);
    free(t);
    free(all);
    MPI_Finalize();
    return 0;
}
