/* trace_spool.c: a fixed in-memory buffer of records spooled to an unlinked
 * temporary file when it fills, so a rank's trace takes bounded memory. */
#ifndef SW_TRACE_SPOOL_H
#define SW_TRACE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* One event as recorded, before encoding (columns of docs/trace-format.md). */
typedef struct {
    uint64_t bytes;
    uint64_t compute; /* ticks since the end of the previous recorded call */
    int64_t req;      /* request created, -1: none */
    int32_t peer;     /* world rank, -1: none */
    int32_t tag, comm, root;
    uint32_t nreq;
    uint16_t func;
    uint8_t kind, flags;
} sw_tev;

typedef struct {
    size_t elsize, cap; /* record size, records the buffer holds */
    char *buf;
    uint64_t count;   /* records so far */
    uint64_t flushed; /* records already in the file */
    int fd;
} sw_spool;

int sw_spool_open(sw_spool *s, size_t elsize);
void *sw_spool_next(sw_spool *s);
void sw_spool_put_id(sw_spool *s, int64_t id);
int sw_spool_get(sw_spool *s, uint64_t i, void *out);
void sw_spool_set(sw_spool *s, uint64_t i, const void *in);
/* Calls each(ctx, records, n) over all records in order; non-zero on a read error. */
int sw_spool_scan(sw_spool *s, void (*each)(void *ctx, const void *recs, size_t n), void *ctx);
void sw_spool_close(sw_spool *s);

#endif
