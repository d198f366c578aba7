/* gather.c: every rank's bytes to rank 0 in bounded batches, handed on as
 * they arrive, so that neither MPI's int counts nor rank 0's memory depend
 * on the number of ranks or the size of their records (docs/log-gather.md).
 *
 * Rank 0 walks the ranks in order and cuts their bytes into pieces that fill
 * a batch buffer of at most `cap` bytes (a rank's bytes may span batches);
 * for each piece it posts a receive and sends the rank a go message holding
 * the piece's length, and a rank sends a piece only once asked, so nothing
 * waits unexpected in rank 0's MPI buffers.  A full batch goes to the sink. */
#ifndef SW_GATHER_H
#define SW_GATHER_H

#include <stddef.h>
#include <stdint.h>

/* Rank 0's consumer of the gathered bytes, called in rank order; returns
 * non-zero once it has failed (the gather goes on, so no rank waits). */
typedef int (*sw_gather_sink)(void *ctx, const unsigned char *p, size_t n);

typedef struct {
    int root;           /* this rank receives and writes */
    int solo;           /* no communication: the caller's own bytes only */
    int ready;          /* rank 0 has its index: the gather takes place */
    int eager;          /* every stream fits one batch: ranks send without being asked */
    uint64_t cap;       /* rank 0: batch bound in bytes (sw_gather_reserve) */
    unsigned char *buf; /* rank 0: the batch buffer */
    uint64_t batches;   /* rank 0: batches handed to a sink so far */
} sw_gather;

/* Default batch bound, and the variable that overrides it (bytes, >= 1). */
#define SW_GATHER_BATCH_BYTES ((uint64_t)64 << 20)
#define SW_GATHER_BATCH_ENV   "SCALEWISE_GATHER_BATCH_BYTES"
/* At most this many pieces (ranks) per batch: bounds rank 0's requests. */
#define SW_GATHER_BATCH_RANKS 1024

/* Collective over sw_job.comm unless solo: rank 0 tells every rank whether
 * it could allocate its index (root_ready); ready 0 afterwards means
 * nothing is to be gathered. */
void sw_gather_open(sw_gather *g, int solo, int root_ready);
/* Collective, before the first stream, once rank 0 knows the sizes: the
 * gathered bytes of all streams (total) and of the largest, on rank 0.  Rank
 * 0 allocates its batch buffer: the bound, or the largest stream if smaller,
 * halved while memory is short (a static 64 KiB at worst).  When every
 * stream together fits that buffer and the ranks fit one batch, the ranks
 * send at once without a go message (eager): what can wait unexpected at
 * rank 0 is still at most one batch. */
void sw_gather_plan(sw_gather *g, uint64_t total, uint64_t largest);
/* Collective: n bytes at p from every rank, to the sink on rank 0 in rank
 * order.  Rank 0 passes each rank's length: lens[r * stride]. */
int sw_gather_stream(sw_gather *g, const unsigned char *p, uint64_t n, const int *lens, size_t stride,
                     sw_gather_sink sink, void *ctx);
void sw_gather_close(sw_gather *g);

#endif
