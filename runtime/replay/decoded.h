/* The decoded trace the replay runs on: one 40-byte row per event, shared by
 * decode.c (which fills it) and replay.c (which walks it). */
#ifndef SW_DECODED_H
#define SW_DECODED_H

#include "replay.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/* Ask for 2 MiB pages (transparent huge pages, where the kernel grants them
 * only on request) on a large array not yet touched.  The replay reads the
 * rows of every rank at once, each rank at its own place: with 4 KiB pages
 * nearly every resumed rank's row, request and match slot is a TLB miss. */
static inline void sw_huge_pages(void *p, size_t bytes)
{
    const uintptr_t page = 4096;
    uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + bytes) & ~(page - 1);
    if (bytes >= ((size_t)2 << 20) && to > from)
        madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice only: without it, small pages */
}

/* One event.  40 bytes: a 100-million-event trace takes 4 GB, and a rank's
 * next rows share its cache lines. */
typedef struct {
    double compute; /* seconds of computation before the call */
    int64_t bytes;
    int64_t ref;  /* ISEND/IRECV: the rank's request slot; WAIT: first entry in waits; COLLECTIVE: signature */
    int32_t peer; /* world rank; WAIT: number of requests; COLLECTIVE: the rank's place in its communicator */
    int32_t tag;
    int32_t comm;
    uint16_t func;
    uint8_t kind;
    uint8_t flags;
} sw_row;

struct sw_trace {
    int64_t nranks, nfuncs, nevents;
    int64_t *rank_start; /* nranks + 1 offsets into rows */
    sw_row *rows;
    int32_t *waits;      /* request slots completed by the waits, in order */
    int64_t nwaits;
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

#endif
