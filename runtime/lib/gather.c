/* Batched, streamed gather to rank 0 (gather.h).  Runs at MPI_Finalize only. */
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "gather.h"

#define SW_GATHER_TAG_GO   0x5747
#define SW_GATHER_TAG_DATA 0x5748
#define SW_GATHER_MIN_CAP  ((uint64_t)64 << 10) /* a buffer rank 0 always has */
#define SW_GATHER_MAX_CAP  ((uint64_t)1 << 30)  /* a piece's length stays an int */

/* The bound rank 0 wants: SCALEWISE_GATHER_BATCH_BYTES, or the default. */
static uint64_t wanted_cap(void)
{
    const char *v = getenv(SW_GATHER_BATCH_ENV);
    char *end = NULL;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end || n == 0)
        return SW_GATHER_BATCH_BYTES;
    return n > SW_GATHER_MAX_CAP ? SW_GATHER_MAX_CAP : (uint64_t)n;
}

void sw_gather_open(sw_gather *g, int solo, int root_ready)
{
    *g = (sw_gather){solo || sw_job.rank == 0, solo, 0, 0, 0, NULL, 0};
    g->ready = g->root && root_ready;
    if (!solo)
        sw_pmpi.Bcast(&g->ready, 1, MPI_INT, 0, sw_job.comm);
}

static unsigned char fallback[SW_GATHER_MIN_CAP];

/* Rank 0's batch buffer: the bound, or the largest stream if smaller,
 * halved while memory is short; below the floor, the static one. */
static void reserve(sw_gather *g, uint64_t largest)
{
    uint64_t cap = wanted_cap();
    if (cap > largest)
        cap = largest ? largest : 1;
    while (!(g->buf = malloc(cap)) && cap > SW_GATHER_MIN_CAP)
        cap /= 2;
    if (!g->buf) {
        g->buf = fallback;
        cap = cap < sizeof fallback ? cap : sizeof fallback;
    }
    g->cap = cap;
}

void sw_gather_plan(sw_gather *g, uint64_t total, uint64_t largest)
{
    int eager = 0;
    if (g->root) {
        reserve(g, largest);
        eager = sw_job.size <= SW_GATHER_BATCH_RANKS && total <= g->cap;
    }
    sw_pmpi.Bcast(&eager, 1, MPI_INT, 0, sw_job.comm);
    g->eager = eager;
}

/* Rank 0: waits for the batch's pieces, then hands the batch on. */
static int flush(sw_gather *g, MPI_Request *reqs, int *npend, uint64_t *fill, sw_gather_sink sink, void *ctx,
                 int failed)
{
    /* not MPI_STATUSES_IGNORE: MPICH 4.0's is a pointer gcc sees as overflowing */
    static MPI_Status st[2 * SW_GATHER_BATCH_RANKS];
    sw_pmpi.Waitall(2 * *npend, reqs, st);
    if (*fill)
        g->batches++;
    if (!failed && *fill)
        failed = sink(ctx, g->buf, (size_t)*fill);
    *npend = 0;
    *fill = 0;
    return failed;
}

static int stream_root(sw_gather *g, const unsigned char *mine, const int *lens, size_t stride, sw_gather_sink sink,
                       void *ctx)
{
    static MPI_Request reqs[2 * SW_GATHER_BATCH_RANKS];
    static uint64_t go[SW_GATHER_BATCH_RANKS];
    int failed = 0, npend = 0, nranks = sw_job.size;
    uint64_t fill = 0;
    for (int r = 0; r < nranks; r++) {
        uint64_t len = lens[(size_t)r * stride] > 0 ? (uint64_t)lens[(size_t)r * stride] : 0;
        for (uint64_t at = 0; at < len;) {
            uint64_t k = len - at < g->cap - fill ? len - at : g->cap - fill;
            if (r == 0) {
                memcpy(g->buf + fill, mine + at, (size_t)k);
            } else {
                go[npend] = k;
                sw_pmpi.Irecv(g->buf + fill, (int)k, MPI_BYTE, r, SW_GATHER_TAG_DATA, sw_job.comm, &reqs[2 * npend]);
                reqs[2 * npend + 1] = MPI_REQUEST_NULL;
                if (!g->eager)
                    sw_pmpi.Isend(&go[npend], 1, MPI_UINT64_T, r, SW_GATHER_TAG_GO, sw_job.comm, &reqs[2 * npend + 1]);
                npend++;
            }
            at += k;
            fill += k;
            if (fill == g->cap || npend == SW_GATHER_BATCH_RANKS)
                failed = flush(g, reqs, &npend, &fill, sink, ctx, failed);
        }
    }
    return flush(g, reqs, &npend, &fill, sink, ctx, failed);
}

int sw_gather_stream(sw_gather *g, const unsigned char *p, uint64_t n, const int *lens, size_t stride,
                     sw_gather_sink sink, void *ctx)
{
    if (g->solo)
        return n ? sink(ctx, p, (size_t)n) : 0;
    if (!g->ready)
        return 1;
    if (g->root)
        return stream_root(g, p, lens, stride, sink, ctx);
    if (g->eager) /* the whole stream fits one batch: rank 0 takes every rank's bytes at once */
        return n ? sw_pmpi.Send(p, (int)n, MPI_BYTE, 0, SW_GATHER_TAG_DATA, sw_job.comm) != MPI_SUCCESS : 0;
    /* Each go names the length of this rank's next piece. */
    for (uint64_t at = 0; at < n;) {
        uint64_t k = 0;
        sw_pmpi.Recv(&k, 1, MPI_UINT64_T, 0, SW_GATHER_TAG_GO, sw_job.comm, MPI_STATUS_IGNORE);
        if (k == 0 || k > n - at)
            return 1; /* cannot happen while every rank agrees on the lengths */
        sw_pmpi.Send(p + at, (int)k, MPI_BYTE, 0, SW_GATHER_TAG_DATA, sw_job.comm);
        at += k;
    }
    return 0;
}

void sw_gather_close(sw_gather *g)
{
    if (g->buf != fallback)
        free(g->buf);
    g->buf = NULL;
}
