/* pingpong: latency and bandwidth between rank 0 and rank 1.
 *
 * For each message size (--sizes, bytes, comma-separated; default 8 and
 * 4 MiB) ranks 0 and 1 bounce a message --reps times after --warmup untimed
 * bounces; rank 0 prints, per size,
 *   SCALEWISE_PINGPONG bytes=N reps=R half_rtt_us=T mbit_s=B best_half_rtt_us=t best_mbit_s=b host0=H host1=H
 *                      mean_half_rtt_us=M
 * with T the median half round trip, B = 8 * N / T, and t, b the same for the
 * fastest round trip (what the link can carry when nothing else interferes), M
 * the mean (what a run of many such messages pays on average, its slow ones included).  --pause-us P
 * makes rank 0 rest (busy) P microseconds before each round trip, outside the
 * timing, so that a rate-limited link (a token bucket) starts every round
 * trip rested: the round trips then show the link without its limit, for
 * messages the bucket holds (scalewise calibrate --cluster).  --stream N
 * then has ranks 0 and 1 post N receives each and send each other N 8-byte
 * messages back to back, --reps times; rank 0 prints
 *   SCALEWISE_STREAM bytes=8 msgs=N reps=R stream_us=T best_stream_us=t mean_stream_us=M
 * (--stream-bytes B sends B-byte messages instead: the CPU time of a send
 * grows with its size; --pause-us rests before each stream too, so that a
 * stream a shaped link's bucket holds passes at the link's unlimited speed)
 * (median, fastest and mean time of the slower rank): each rank's CPU pays every
 * message it sends and every one it receives, which a ping-pong cannot
 * separate from the latency (scalewise calibrate fits the overhead o from
 * it).  Both ways at once, as a halo exchange: one way, the sender's time
 * per message is both sides' work here, since the emulated links run the
 * receiver's TCP stack on the sender's CPU.
 * Other ranks only
 * take part in MPI_Init and MPI_Finalize.  Used by the emulated cluster's
 * link checks (docs/cluster.md). */
#define _GNU_SOURCE /* gethostname */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swproxy.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double mean_of(const double *t, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i];
    return sum / n;
}

/* Ranks 0 and 1 each post n receives, then send each other n messages of `bytes` back to back and
 * complete the receives; rank 0 prints the slower rank's time. */
static void stream_of_messages(int rank, long n, long bytes, long pause_us, int reps, int warmup, double *t) {
    char *out = calloc((size_t)bytes, 1), *in = malloc((size_t)(n * bytes));
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)n);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)n); /* not STATUSES_IGNORE: gcc misreads MPICH's */
    if (!out || !in || !req || !st) MPI_Abort(MPI_COMM_WORLD, 3);
    int peer = rank < 2 ? 1 - rank : MPI_PROC_NULL; /* other ranks join only the barrier and reduce */
    for (int i = -warmup; i < reps; i++) {
        for (long k = 0; k < n; k++)
            MPI_Irecv(in + bytes * k, (int)bytes, MPI_CHAR, peer, 3, MPI_COMM_WORLD, &req[k]);
        if (rank == 0) sw_rest_busy((double)pause_us * 1e-6); /* both directions' buckets refill */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long k = 0; k < n; k++) MPI_Send(out, (int)bytes, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
        MPI_Waitall((int)n, req, st);
        double mine = MPI_Wtime() - t0, slowest = mine;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (i >= 0) t[i] = slowest;
    }
    if (rank == 0) {
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        printf("SCALEWISE_STREAM bytes=%ld msgs=%ld reps=%d stream_us=%.3f best_stream_us=%.3f mean_stream_us=%.3f\n",
               bytes, n, reps, t[reps / 2] * 1e6, t[0] * 1e6, mean_of(t, reps) * 1e6);
    }
    free(out);
    free(in);
    free(req);
    free(st);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, reps = 20, warmup = 3;
    long pause_us = 0, stream = 0, stream_bytes = 8;
    char sizes[1024] = "8,4194304";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) snprintf(sizes, sizeof sizes, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--pause-us") && i + 1 < argc) pause_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc) stream = atol(argv[++i]);
        else if (!strcmp(argv[i], "--stream-bytes") && i + 1 < argc) stream_bytes = atol(argv[++i]);
        else {
            if (rank == 0) fprintf(stderr, "pingpong: unknown argument '%s' (usage: pingpong [--sizes N,N] [--reps R] [--warmup W] [--pause-us P] [--stream N] [--stream-bytes B])\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2 || reps < 1 || warmup < 0 || pause_us < 0 || stream < 0 || stream_bytes < 1) {
        if (rank == 0) fprintf(stderr, "pingpong: needs 2 or more ranks, --reps >= 1, --pause-us >= 0, --stream >= 0 and --stream-bytes >= 1\n");
        MPI_Finalize();
        return 2;
    }
    char host[64] = "?", peer[64] = "?";
    gethostname(host, sizeof host - 1);
    if (rank == 1) MPI_Send(host, sizeof host, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    if (rank == 0) MPI_Recv(peer, sizeof peer, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
        long n = atol(tok);
        char *buf = calloc((size_t)(n > 0 ? n : 1), 1);
        if (!buf || !t) MPI_Abort(MPI_COMM_WORLD, 3);
        for (int i = -warmup; i < reps; i++) {
            if (rank == 0) sw_rest_busy((double)pause_us * 1e-6);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
            if (i >= 0) t[i] = (MPI_Wtime() - t0) / 2;
        }
        if (rank == 0) {
            qsort(t, (size_t)reps, sizeof(double), cmp_double);
            double half = t[reps / 2], best = t[0];
            printf("SCALEWISE_PINGPONG bytes=%ld reps=%d half_rtt_us=%.3f mbit_s=%.3f best_half_rtt_us=%.3f "
                   "best_mbit_s=%.3f host0=%s host1=%s mean_half_rtt_us=%.3f\n", n, reps, half * 1e6,
                   8.0 * (double)n / half / 1e6, best * 1e6, 8.0 * (double)n / best / 1e6, host, peer,
                   mean_of(t, reps) * 1e6);
        }
        free(buf);
    }
    if (stream > 0) stream_of_messages(rank, stream, stream_bytes, pause_us, reps, warmup, t);
    free(t);
    MPI_Finalize();
    return 0;
}
