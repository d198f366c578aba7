/* collbench: the time of single collectives over MPI_COMM_WORLD, for
 * `scalewise calibrate` to set beside what the replay predicts for them.
 *
 * For each collective (--colls, comma-separated from allreduce, bcast,
 * alltoall, barrier; default all four) and each size (--sizes, bytes,
 * comma-separated; default 8,65536,1048576) every rank runs --warmup untimed
 * calls (default 3), then --reps timed ones (default 20), each after
 * --pause-us microseconds of busy rest on every rank (default 0; a shaped
 * link's token bucket refills, as the replay of one call assumes).  Flags as in every
 * proxy (common/swproxy.h): a bad one is one line on rank 0, exit 2.  Each timed call starts right after an
 * MPI_Barrier, so all ranks enter it together, as the replay assumes; a rank
 * times only its own call.  The time of a repetition is the slowest rank's
 * (the collective is over when the last rank leaves it); rank 0 prints, per
 * collective and size,
 *   SCALEWISE_COLL name=MPI_Allreduce bytes=N ranks=P reps=R median_us=T best_us=t
 * with T the median and t the fastest repetition.
 *
 * Sizes are what the replay's rules look at (docs/trace-format.md): the
 * reduced or broadcast buffer, and for Alltoall the block sent to each rank.
 * Buffers are doubles (MPI_SUM for Allreduce, root 0 for Bcast), the element
 * the replay assumes, so a size must be a whole number of doubles.  Barrier
 * moves no data: it is timed once, with bytes=0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swproxy.h"

enum { ALLREDUCE, BCAST, ALLTOALL, BARRIER, NCOLLS };
static const char *const OPTION[NCOLLS] = {"allreduce", "bcast", "alltoall", "barrier"};
static const char *const MPI_NAME[NCOLLS] = {"MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Barrier"};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run(int coll, double *send, double *recv, int count) {
    switch (coll) {
    case ALLREDUCE: MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(send, count, MPI_DOUBLE, 0, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, MPI_COMM_WORLD); break;
    default: MPI_Barrier(MPI_COMM_WORLD); break;
    }
}

/* Times `reps` calls after `warmup` ones, each after `pause` seconds of rest; rank 0 gets each
 * repetition's slowest rank in `slowest`. */
static void time_calls(int coll, long bytes, int reps, int warmup, double pause, int rank, int size,
                       double *mine, double *slowest) {
    int count = (int)(bytes / 8);
    size_t elements = (size_t)(count > 0 ? count : 1) * (size_t)(coll == ALLTOALL ? size : 1);
    double *send = calloc(elements, sizeof(double)), *recv = calloc(elements, sizeof(double));
    if (!send || !recv) MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t j = 0; j < elements; j++) send[j] = (double)(rank + 1);
    for (int i = -warmup; i < reps; i++) {
        sw_rest_busy(pause);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run(coll, send, recv, count);
        if (i >= 0) mine[i] = MPI_Wtime() - t0;
    }
    /* After the loop, not inside it: a reduction between calls would be traffic the timed calls wait behind. */
    MPI_Reduce(mine, slowest, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    free(send);
    free(recv);
}

/* The collectives named in `list` (comma-separated OPTION names) marked in `chosen`. */
static void choose(const char *list, int chosen[NCOLLS]) {
    char copy[256], message[320];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        int c = 0;
        while (c < NCOLLS && strcmp(tok, OPTION[c])) c++;
        if (c == NCOLLS) {
            snprintf(message, sizeof message, "unknown collective '%s' for --colls (known: allreduce, bcast, "
                     "alltoall, barrier)", tok);
            sw_args_fail(message);
        }
        chosen[c] = 1;
    }
}

/* The sizes in `list` into `out` (at most 64); each a whole number of doubles, and an Alltoall's
 * buffer of P blocks under 1 GiB. */
static int parse_sizes(const char *list, int P, long out[64]) {
    char copy[1024], message[320];
    int n = 0;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        char *end;
        long bytes = strtol(tok, &end, 10);
        if (*end || bytes < 8 || bytes % 8 || bytes > (1L << 30) / P || n == 64) {
            snprintf(message, sizeof message, "bad size '%s' for --sizes: expected up to 64 multiples of 8 "
                     "bytes from 8 to 1 GiB / ranks", tok);
            sw_args_fail(message);
        }
        out[n++] = bytes;
    }
    return n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, chosen[NCOLLS] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sw_args_begin("collbench", argc, argv);
    const char *colls = sw_flag_text("--colls", "allreduce,bcast,alltoall,barrier", "collectives to time");
    const char *sizes = sw_flag_text("--sizes", "8,65536,1048576", "bytes per call, comma-separated");
    int reps = (int)sw_flag_long("--reps", 1, 100000, 20, 20, 20);
    int warmup = (int)sw_flag_long("--warmup", 0, 100000, 3, 3, 3);
    double pause = 1e-6 * (double)sw_flag_long("--pause-us", 0, 10000000, 0, 0, 0);
    sw_args_end();
    if (size < 2) sw_args_fail("needs 2 or more ranks");
    choose(colls, chosen);
    long bytes_of[64];
    int nsizes = parse_sizes(sizes, size, bytes_of);
    double *mine = malloc(sizeof(double) * (size_t)reps), *slowest = malloc(sizeof(double) * (size_t)reps);
    if (!mine || !slowest) MPI_Abort(MPI_COMM_WORLD, 3);
    for (int c = 0; c < NCOLLS; c++) {
        if (!chosen[c]) continue;
        for (int k = 0; k < (c == BARRIER ? 1 : nsizes); k++) {
            long bytes = c == BARRIER ? 0 : bytes_of[k];
            time_calls(c, bytes, reps, warmup, pause, rank, size, mine, slowest);
            if (rank == 0) {
                qsort(slowest, (size_t)reps, sizeof(double), cmp_double);
                printf("SCALEWISE_COLL name=%s bytes=%ld ranks=%d reps=%d median_us=%.3f best_us=%.3f\n",
                       MPI_NAME[c], bytes, size, reps, slowest[reps / 2] * 1e6, slowest[0] * 1e6);
                fflush(stdout);
            }
        }
    }
    free(mine);
    free(slowest);
    MPI_Finalize();
    return 0;
}
