/* A growing byte buffer and the appenders the log writer packs records
 * with (logwrite.c, mpit.c): native byte order, no padding, as
 * docs/log-format.md specifies.  A failed allocation sets `failed` and
 * every later append is dropped, so callers check once at the end. */
#ifndef SW_BUF_H
#define SW_BUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *p;
    size_t n, cap;
    int failed;
} sw_buf;

static inline void put(sw_buf *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static inline void put8(sw_buf *b, uint8_t v) { put(b, &v, 1); }
static inline void put16(sw_buf *b, uint16_t v) { put(b, &v, 2); }
static inline void put32(sw_buf *b, uint32_t v) { put(b, &v, 4); }
static inline void put64(sw_buf *b, uint64_t v) { put(b, &v, 8); }
static inline void puts_(sw_buf *b, const char *s) { put(b, s, strlen(s)); }

#endif
