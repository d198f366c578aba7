/* Fan-in on a link: ranks 1..k (each on a node of its own) send `msgs` messages of `bytes` each to
 * rank 0 at once, nonblocking, as an Alltoallv's large blocks go; rank 0 times from a barrier to
 * its last receive.  `--all`: every rank of ranks 0..k sends that to every other at once (the
 * all-to-all of k+1 nodes), and rank 0 times its own receives and sends.  Ranks above k only
 * take part in the barriers.  Prints one line per repetition: the seconds and the payload rate
 * into rank 0's node, Mbit/s.  A pause (slept, not polled) before each repetition lets the
 * links' buckets refill, as a compute between transposes does.
 *
 * usage: fanin K BYTES MSGS REPS [PAUSE_MS] [--all] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: fanin K BYTES MSGS REPS [PAUSE_MS] [--all]\n");
        MPI_Finalize(); /* every rank stops alike: rank 0's line is the one printed */
        return 2;
    }
    int k = atoi(argv[1]), msgs = atoi(argv[3]), reps = atoi(argv[4]);
    long bytes = atol(argv[2]), pause = argc > 5 ? atol(argv[5]) : 200;
    int all = argc > 6 && strcmp(argv[6], "--all") == 0;
    if (k < 1 || k >= size || bytes < 1 || msgs < 1 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "fanin: need 1 <= K < ranks, BYTES, MSGS, REPS >= 1\n");
        MPI_Finalize();
        return 2;
    }
    int peers = k; /* ranks 0..k talk; each has k others */
    char *sbuf = malloc((size_t)bytes * msgs * peers), *rbuf = malloc((size_t)bytes * msgs * peers);
    MPI_Request *req = malloc(sizeof *req * 2 * (size_t)msgs * peers);
    MPI_Status *stat = malloc(sizeof *stat * 2 * (size_t)msgs * peers);
    memset(sbuf, rank, (size_t)bytes * msgs * peers);
    for (int r = 0; r < reps; r++) {
        pause_ms(pause);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int n = 0;
        if (rank <= k) {
            for (int p = 0; p <= k; p++) {
                if (p == rank)
                    continue;
                int recv = all || rank == 0, send = all || p == 0;
                for (int m = 0; m < msgs; m++) {
                    size_t at = ((size_t)(p < rank ? p : p - 1) * msgs + m) * bytes;
                    if (recv)
                        MPI_Irecv(rbuf + at, (int)bytes, MPI_BYTE, p, m, MPI_COMM_WORLD, &req[n++]);
                    if (send)
                        MPI_Isend(sbuf + at, (int)bytes, MPI_BYTE, p, m, MPI_COMM_WORLD, &req[n++]);
                }
            }
            MPI_Waitall(n, req, stat);
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("rep=%d seconds=%.6f mbit_in=%.2f\n", r, t, 8e-6 * (double)bytes * msgs * k / t);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(stat);
    MPI_Finalize();
    return 0;
}
