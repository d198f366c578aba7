/* The decoded trace the replay runs on: one 24-byte row per event, shared by
 * decode.c (which fills it) and replay.c (which walks it). */
#ifndef SW_DECODED_H
#define SW_DECODED_H

#include "replay.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* Ask for 2 MiB pages (transparent huge pages, where the kernel grants them
 * only on request) on a large array not yet touched.  The replay reads the
 * ranks' blocks and tables at every rank's own place: with 4 KiB pages
 * nearly every resumed rank's request and match slot is a TLB miss.  (The
 * rows, the largest array, are not asked: see sw_open.) */
static inline void sw_huge_pages(void *p, size_t bytes)
{
    const uintptr_t page = 4096;
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + bytes) & ~(page - 1);
    if (bytes >= ((size_t)2 << 20) && to > from)
        madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice only: without it, small pages */
}

/* One event.  24 bytes: a 100-million-event trace takes 2.4 GB, and a rank's
 * next rows share its cache lines.  The few values too large for 32 bits (a
 * compute of 4.3 s or more, a message of 4 GiB or more) are BIG here and kept
 * in the trace's table of large values (sw_big). */
#define SW_BIG UINT32_MAX
/* flags of a WAIT row: its requests are the rank's slots ref .. ref + peer - 1, in some order (the order
 * of a wait's requests changes nothing), so the replay needs no list.  A collective's flags are the
 * trace's (its signature reads them); other rows' flags are not read. */
#define SW_WAIT_RANGE 0x80
typedef struct {
    uint32_t compute_ns; /* nanoseconds of computation before the call */
    uint32_t bytes;
    int32_t ref;  /* ISEND/IRECV: the rank's request slot; WAIT: first slot (SW_WAIT_RANGE) or first entry in the rank's
                   * waits; COLLECTIVE: signature */
    int32_t peer; /* world rank; WAIT: number of requests; COLLECTIVE: the rank's place in its communicator */
    int32_t key;  /* point-to-point: the (communicator, tag) pair's number (key_comm, key_tag); COLLECTIVE: communicator */
    uint16_t func;
    uint8_t kind;
    uint8_t flags;
} sw_row;

struct sw_trace {
    int64_t nranks, nfuncs, nevents;
    int64_t *rank_start; /* nranks + 1 offsets into rows */
    sw_row *rows;
    int32_t *waits;      /* request slots completed by the waits not flagged SW_WAIT_RANGE, in order */
    int64_t nwaits;
    int64_t *wait_start; /* nranks + 1 offsets into waits */
    int32_t *key_comm, *key_tag; /* the point-to-point rows' (communicator, tag) pairs, by number */
    int64_t nkeys, key_cap;
    void *big; /* the large values: row index * 2 (compute) or * 2 + 1 (bytes) -> value */
    /* Request slots: rank r owns slots slot_start[r] .. slot_start[r+1]; its
     * slot 0 serves its blocking sends and receives.  A slot is reused once
     * the wait that completed its request is past, so their number is the
     * most requests a rank had open at once, not its number of requests. */
    int64_t *slot_start;
    sw_signature *sigs;
    int64_t nsigs, sig_cap;
    int64_t *sig_hash; /* open addressing, -1 empty */
    int64_t sig_hash_size;
    int64_t *sig_members; /* nsigs: offset of the communicator's members in members, -1: world in order */
    sw_vcall *vcalls;
    int64_t nvcalls, vcall_cap;
    int32_t *members; /* every described communicator's members, back to back */
    int64_t nmembers;
};

/* A row's compute in seconds and its size, out of the row or the table of large values. */
uint64_t sw_big(const sw_trace *t, int64_t key);

static inline double sw_compute(const sw_trace *t, const sw_row *x)
{
    uint64_t ns = x->compute_ns != SW_BIG ? x->compute_ns : sw_big(t, 2 * (x - t->rows));
    return (double)ns * 1e-9; /* as numpy: uint64 to double, then times 1e-9 */
}

static inline int64_t sw_bytes_of(const sw_trace *t, const sw_row *x)
{
    return x->bytes != SW_BIG ? (int64_t)x->bytes : (int64_t)sw_big(t, 2 * (x - t->rows) + 1);
}

#endif
