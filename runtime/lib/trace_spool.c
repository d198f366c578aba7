/* The spool behind trace mode's bounded memory (see trace_spool.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace_spool.h"

#define SW_SPOOL_BYTES (1u << 20) /* memory per spool */

int sw_spool_open(sw_spool *s, size_t elsize)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/scalewise-trace-XXXXXX", dir && *dir ? dir : "/tmp");
    memset(s, 0, sizeof *s);
    s->fd = mkstemp(path);
    if (s->fd < 0)
        return -1;
    unlink(path); /* gone with the process, whatever happens to it */
    s->elsize = elsize;
    s->cap = SW_SPOOL_BYTES / elsize;
    if (!(s->buf = malloc(s->cap * elsize))) {
        close(s->fd);
        return -1;
    }
    return 0;
}

static int write_all(int fd, const char *p, size_t n, off_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}

static int read_all(int fd, char *p, size_t n, off_t at)
{
    while (n) {
        ssize_t r = pread(fd, p, n, at);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
        at += r;
    }
    return 0;
}

/* The slot of a new record; NULL when the buffer cannot be spooled. */
void *sw_spool_next(sw_spool *s)
{
    size_t used = (size_t)(s->count - s->flushed);
    if (used == s->cap) {
        if (write_all(s->fd, s->buf, used * s->elsize, (off_t)(s->flushed * s->elsize)))
            return NULL;
        s->flushed = s->count;
        used = 0;
    }
    s->count++;
    return s->buf + used * s->elsize;
}

void sw_spool_put_id(sw_spool *s, int64_t id)
{
    void *slot = sw_spool_next(s);
    if (slot)
        memcpy(slot, &id, sizeof id);
}

int sw_spool_get(sw_spool *s, uint64_t i, void *out)
{
    if (i >= s->count)
        return 0;
    if (i >= s->flushed) {
        memcpy(out, s->buf + (i - s->flushed) * s->elsize, s->elsize);
        return 1;
    }
    return !read_all(s->fd, out, s->elsize, (off_t)(i * s->elsize));
}

void sw_spool_set(sw_spool *s, uint64_t i, const void *in)
{
    if (i >= s->flushed)
        memcpy(s->buf + (i - s->flushed) * s->elsize, in, s->elsize);
    else
        write_all(s->fd, in, s->elsize, (off_t)(i * s->elsize));
}

int sw_spool_scan(sw_spool *s, void (*each)(void *ctx, const void *recs, size_t n), void *ctx)
{
    char *chunk = malloc(s->cap * s->elsize);
    if (!chunk)
        return -1;
    for (uint64_t at = 0; at < s->flushed; at += s->cap) {
        size_t n = (size_t)(s->flushed - at < s->cap ? s->flushed - at : s->cap);
        if (read_all(s->fd, chunk, n * s->elsize, (off_t)(at * s->elsize))) {
            free(chunk);
            return -1;
        }
        each(ctx, chunk, n);
    }
    free(chunk);
    each(ctx, s->buf, (size_t)(s->count - s->flushed));
    return 0;
}

void sw_spool_close(sw_spool *s)
{
    free(s->buf);
    s->buf = NULL;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
