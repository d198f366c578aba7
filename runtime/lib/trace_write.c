/* The trace file writer, run by every rank at MPI_Finalize: the ranks agree
 * on communicator ids, each encodes and deflates its own columns, and rank 0
 * writes the header, the tables and every rank's block in rank order
 * (docs/trace-format.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "atomicfile.h"
#include "base.h"
#include "gather.h"
#include "trace_spool.h"
#include "trace_write.h"

#define SW_TRACE_VERSION 1
#define SW_TRACE_CAPPED  1
#define SW_TRACE_TAG     0x5754
#define SW_CHUNK         (1 << 30) /* largest message of a block sent to rank 0 */

/* ---- deflate into a growing buffer, fed through a small staging area ---- */

typedef struct {
    z_stream z;
    unsigned char stage[1 << 16];
    size_t staged;
    unsigned char *out;
    size_t cap;
    int failed;
    /* column state */
    int col, rank;
    int64_t prev;
    const int *comm_ids;
    double ns_per_tick;
} sw_enc;

/* Doubles the output buffer once deflate has filled it. */
static int enc_grow(sw_enc *e)
{
    size_t used = e->z.total_out, grown = e->cap * 2;
    unsigned char *p = realloc(e->out, grown);
    if (!p) {
        e->failed = 1;
        return -1;
    }
    e->out = p;
    e->cap = grown;
    e->z.next_out = p + used;
    e->z.avail_out = (uInt)(grown - used);
    return 0;
}

static int enc_init(sw_enc *e)
{
    memset(&e->z, 0, sizeof e->z);
    e->staged = 0;
    e->failed = 0;
    e->cap = 1 << 16;
    if (!(e->out = malloc(e->cap)) || deflateInit(&e->z, 6) != Z_OK)
        return -1;
    e->z.next_out = e->out;
    e->z.avail_out = (uInt)e->cap;
    return 0;
}

/* Finishes the stream; returns its length (the data is in e->out). */
static size_t enc_finish(sw_enc *e)
{
    int rc;
    e->z.next_in = e->stage;
    e->z.avail_in = (uInt)e->staged;
    while ((rc = deflate(&e->z, Z_FINISH)) == Z_OK || (rc == Z_BUF_ERROR && e->z.avail_out == 0))
        if (enc_grow(e))
            break;
    if (rc != Z_STREAM_END)
        e->failed = 1;
    size_t n = e->z.total_out;
    deflateEnd(&e->z);
    return n;
}

static void put_byte(sw_enc *e, unsigned char b)
{
    if (e->staged == sizeof e->stage) {
        e->z.next_in = e->stage;
        e->z.avail_in = (uInt)e->staged;
        while (e->z.avail_in && !e->failed)
            if (e->z.avail_out || !enc_grow(e))
                deflate(&e->z, Z_NO_FLUSH);
        e->staged = 0;
    }
    e->stage[e->staged++] = b;
}

static void put_varint(sw_enc *e, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(e, (unsigned char)(v | 0x80));
        v >>= 7;
    }
    put_byte(e, (unsigned char)v);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* One column of a run of events (e->col is the column number of the format). */
static void put_events(void *ctx, const void *recs, size_t n)
{
    sw_enc *e = ctx;
    const sw_tev *ev = recs;
    for (size_t i = 0; i < n; i++) {
        const sw_tev *x = &ev[i];
        switch (e->col) {
        case 1: put_byte(e, x->kind); break;
        case 2: put_varint(e, x->func); break;
        case 3: put_varint(e, x->peer < 0 ? 0 : zigzag((int64_t)x->peer - e->rank) + 1); break;
        case 4: put_varint(e, x->bytes); break;
        case 5: put_varint(e, zigzag(x->tag)); break;
        case 6: put_varint(e, (uint64_t)e->comm_ids[x->comm]); break;
        case 7:
            if (x->req < 0) {
                put_varint(e, 0);
            } else {
                put_varint(e, zigzag(x->req - e->prev - 1) + 1);
                e->prev = x->req;
            }
            break;
        case 8: put_varint(e, (uint64_t)((int64_t)x->root + 1)); break;
        case 9: put_byte(e, x->flags); break;
        case 10: put_varint(e, x->nreq); break;
        default: put_varint(e, (uint64_t)((double)x->compute * e->ns_per_tick + 0.5)); break;
        }
    }
}

static void put_waits(void *ctx, const void *recs, size_t n)
{
    sw_enc *e = ctx;
    const int64_t *id = recs;
    for (size_t i = 0; i < n; i++) {
        put_varint(e, zigzag(id[i] - e->prev));
        e->prev = id[i];
    }
}

/* This rank's payload: the twelve columns, deflated.  NULL on failure. */
static unsigned char *encode_rank(const sw_trace_file *f, const int *comm_ids, size_t *len)
{
    static sw_enc e; /* 64 KiB of staging: not on the stack */
    if (enc_init(&e))
        return NULL;
    e.rank = sw_job.rank;
    e.comm_ids = comm_ids;
    e.ns_per_tick = sw_job.ns_per_tick;
    for (e.col = 1; e.col <= 11; e.col++) {
        e.prev = -1;
        if (sw_spool_scan(f->events, put_events, &e))
            e.failed = 1;
    }
    e.prev = -1;
    if (sw_spool_scan(f->waits, put_waits, &e))
        e.failed = 1;
    *len = enc_finish(&e);
    if (e.failed) {
        free(e.out);
        return NULL;
    }
    return e.out;
}

/* ---- communicator ids: the same communicator gets the same id on every rank ---- */

typedef struct {
    int n;         /* communicators other than world */
    int **members; /* [id-1]: size, then members */
} sw_comm_ids;

/* Id of the member list m (size first) in the table, added if new; world is 0. */
static int comm_id(sw_comm_ids *t, const int *m)
{
    int world = m[0] == sw_job.size;
    for (int r = 0; world && r < m[0]; r++)
        world = m[1 + r] == r;
    if (world)
        return 0;
    for (int i = 0; i < t->n; i++)
        if (t->members[i][0] == m[0] && !memcmp(t->members[i] + 1, m + 1, sizeof(int) * (size_t)m[0]))
            return i + 1;
    int **grown = realloc(t->members, sizeof(int *) * (size_t)(t->n + 1));
    if (!grown)
        return 0;
    t->members = grown;
    t->members[t->n] = (int *)m;
    return ++t->n;
}

/* Rank 0's reading of every rank's member lists (each its size, then its
 * members), arriving in rank order cut anywhere by the gather's batches
 * (gather.h): a list is assembled whole, then numbered; a new one is kept
 * for the table, a known one dropped. */
typedef struct {
    sw_comm_ids *table;
    int *every; /* the id of each list, in rank order */
    size_t nevery;
    int *cur, have, need; /* the list being assembled */
    unsigned char part[4];
    int npart; /* bytes of an int cut by a batch */
    int failed;
} sw_list_reader;

static void take_int(sw_list_reader *r, int v)
{
    if (r->have == 0) {
        r->need = 1 + (v > 0 ? v : 0);
        r->cur = malloc(sizeof(int) * (size_t)r->need);
        if (!r->cur)
            r->failed = 1;
    }
    if (r->cur)
        r->cur[r->have] = v;
    if (++r->have < r->need)
        return;
    int known = r->table->n, id = r->cur ? comm_id(r->table, r->cur) : 0;
    if (r->table->n == known)
        free(r->cur);
    r->every[r->nevery++] = id;
    r->cur = NULL;
    r->have = 0;
}

static int read_lists(void *ctx, const unsigned char *p, size_t n)
{
    sw_list_reader *r = ctx;
    for (size_t i = 0; i < n; i++) {
        r->part[r->npart++] = p[i];
        if (r->npart == 4) {
            int v;
            memcpy(&v, r->part, 4);
            take_int(r, v);
            r->npart = 0;
        }
    }
    return 0;
}

/* Bytes of every rank's member lists (the first of each pair). */
static uint64_t bytes_of(const int *pairs, int nranks)
{
    uint64_t n = 0;
    for (int r = 0; r < nranks; r++)
        n += (uint64_t)pairs[2 * r];
    return n;
}

/* Fills ids[0..ncomms] (local number -> file id).  Rank 0 also gets the
 * table of every id, for the file, owning its member lists; it holds the
 * distinct lists only, never all ranks' at once. */
static void agree_comms(const sw_trace_file *f, int *ids, sw_comm_ids *table)
{
    int len = 0, nranks = sw_job.size, root = sw_job.rank == 0;
    for (int i = 0; i < f->ncomms; i++)
        len += 1 + f->comm_sizes[i];
    int *mine = malloc(sizeof(int) * (size_t)(len + 1)), *p = mine;
    for (int i = 0; mine && i < f->ncomms; i++) {
        *p++ = f->comm_sizes[i];
        memcpy(p, f->comm_members[i], sizeof(int) * (size_t)f->comm_sizes[i]);
        p += f->comm_sizes[i];
    }
    /* per rank: bytes of its lists and number of lists (pairs), where its
     * ids start, how many it gets */
    int sizes[2] = {mine ? 4 * len : 0, mine ? f->ncomms : 0}; /* no memory: this rank's as world */
    int *lens = root ? malloc(sizeof(int) * 4 * (size_t)nranks) : NULL;
    int *idispl = lens ? lens + 2 * (size_t)nranks : NULL, *nids = lens ? lens + 3 * (size_t)nranks : NULL;
    int *every = NULL, ok = 0;
    sw_gather g;
    sw_gather_open(&g, 0, lens != NULL);
    if (g.ready) {
        sw_pmpi.Gather(sizes, 2, MPI_INT, lens, 2, MPI_INT, 0, sw_job.comm);
        size_t nall = 0;
        for (int r = 0; root && r < nranks; r++) {
            idispl[r] = (int)nall;
            nids[r] = lens[2 * r + 1];
            nall += (size_t)nids[r];
        }
        every = root ? calloc(nall + 1, sizeof(int)) : NULL;
        ok = !root || every;
        sw_pmpi.Bcast(&ok, 1, MPI_INT, 0, sw_job.comm);
    }
    if (ok) {
        sw_list_reader reader = {table, every, 0, NULL, 0, 0, {0}, 0, 0};
        uint64_t bytes = root ? bytes_of(lens, nranks) : 0;
        sw_gather_plan(&g, bytes, bytes);
        sw_gather_stream(&g, (const unsigned char *)mine, (uint64_t)sizes[0], lens, 2, read_lists, &reader);
        free(reader.cur);
        memset(ids, 0, sizeof(int) * (size_t)(f->ncomms + 1));
        sw_pmpi.Scatterv(every, nids, idispl, MPI_INT, ids + 1, sizes[1], MPI_INT, 0, sw_job.comm);
    } else {
        memset(ids, 0, sizeof(int) * (size_t)(f->ncomms + 1)); /* rank 0 had no memory: all as world */
    }
    ids[0] = 0;
    sw_gather_close(&g);
    free(every);
    free(lens);
    free(mine);
}

/* ---- the file ---- */

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A table: u32 length, then the zlib data. */
static int write_table(FILE *out, const unsigned char *data, size_t n)
{
    uLongf len = compressBound(n);
    unsigned char *z = malloc(len), le[4];
    int ok = z && compress2(z, &len, data, n, 6) == Z_OK;
    put_le(le, len, 4);
    ok = ok && fwrite(le, 4, 1, out) == 1 && fwrite(z, 1, len, out) == len;
    free(z);
    return ok ? 0 : -1;
}

static int write_head(FILE *out, int capped, const sw_comm_ids *t)
{
    unsigned char h[24];
    memcpy(h, "SWTRACE\0", 8);
    put_le(h + 8, SW_TRACE_VERSION, 2);
    put_le(h + 10, capped ? SW_TRACE_CAPPED : 0, 2);
    put_le(h + 12, (uint64_t)sw_job.size, 4);
    put_le(h + 16, SW_NFN, 4);
    put_le(h + 20, (uint64_t)t->n, 4);
    size_t n = 0;
    for (int i = 0; i < SW_NFN; i++)
        n += strlen(sw_fn_names[i]) + 1;
    char *names = malloc(n + 1), *p = names;
    for (int i = 0; names && i < SW_NFN; i++)
        p += sprintf(p, i ? "\n%s" : "%s", sw_fn_names[i]);
    /* communicators: varint id, varint size, zigzag deltas of members from -1 */
    size_t cap = 16;
    for (int i = 0; i < t->n; i++)
        cap += 20 + 10 * (size_t)t->members[i][0];
    unsigned char *c = malloc(cap), *q = c;
    for (int i = 0; c && i < t->n; i++) {
        uint64_t v[2] = {(uint64_t)i + 1, (uint64_t)t->members[i][0]};
        int prev = -1;
        for (int k = 0; k < 2 + t->members[i][0]; k++) {
            uint64_t x = k < 2 ? v[k] : zigzag((int64_t)t->members[i][k - 1] - prev);
            if (k >= 2)
                prev = t->members[i][k - 1];
            for (; x >= 0x80; x >>= 7)
                *q++ = (unsigned char)(x | 0x80);
            *q++ = (unsigned char)x;
        }
    }
    int rc = (!names || !c || fwrite(h, 24, 1, out) != 1 || write_table(out, (unsigned char *)names, p - names) ||
              write_table(out, c, (size_t)(q - c)))
                 ? -1
                 : 0;
    free(names);
    free(c);
    return rc;
}

static int write_block(FILE *out, int rank, const uint64_t *info, const unsigned char *data)
{
    unsigned char h[32];
    put_le(h, (uint64_t)rank, 4);
    put_le(h + 4, info[0], 4);
    put_le(h + 8, info[1], 8);
    put_le(h + 16, info[2], 8);
    put_le(h + 24, info[3], 8);
    return out && (fwrite(h, 32, 1, out) != 1 || fwrite(data, 1, info[3], out) != info[3]) ? -1 : 0;
}

void sw_trace_write(const sw_trace_file *f)
{
    int nranks = sw_job.size, root = sw_job.rank == 0;
    int *ids = malloc(sizeof(int) * (size_t)(f->ncomms + 1));
    sw_comm_ids table = {0, NULL};
    agree_comms(f, ids, &table);
    size_t len = 0;
    unsigned char *data = ids ? encode_rank(f, ids, &len) : NULL;
    uint64_t info[4] = {f->capped || !data, data ? f->events->count : 0, data ? f->waits->count : 0, len};
    uint64_t *infos = root ? malloc(sizeof(uint64_t) * 4 * (size_t)nranks) : NULL;
    sw_pmpi.Gather(info, 4, MPI_LONG_LONG, infos, 4, MPI_LONG_LONG, 0, sw_job.comm);
    if (!root) {
        for (uint64_t at = 0; at < len; at += SW_CHUNK)
            sw_pmpi.Send(data + at, (int)(len - at < SW_CHUNK ? len - at : SW_CHUNK), MPI_BYTE, 0, SW_TRACE_TAG,
                         sw_job.comm);
    } else {
        int capped = 0;
        for (int r = 0; r < nranks; r++)
            capped |= (int)infos[4 * r];
        sw_atomic_file file;
        FILE *out = sw_atomic_open(&file, f->path);
        int err = out ? write_head(out, capped, &table) : 1;
        err = err || write_block(out, 0, info, data);
        /* every rank's block is received even when the file failed, so none waits forever */
        for (int r = 1; r < nranks; r++) {
            uint64_t n = infos[4 * r + 3];
            unsigned char *buf = malloc(n ? n : 1);
            for (uint64_t at = 0; at < n; at += SW_CHUNK)
                sw_pmpi.Recv(buf ? buf + at : NULL, buf ? (int)(n - at < SW_CHUNK ? n - at : SW_CHUNK) : 0, MPI_BYTE, r,
                             SW_TRACE_TAG, sw_job.comm, MPI_STATUS_IGNORE);
            err = err || !buf || write_block(out, r, infos + 4 * r, buf);
            free(buf);
        }
        if (sw_atomic_close(&file, err)) {
            fprintf(stderr, "scalewise: cannot write trace %s\n", f->path);
        } else if (!sw_job.cfg.quiet) {
            fprintf(stderr, "scalewise: trace of %d rank%s written to %s%s\n", nranks, nranks == 1 ? "" : "s", f->path,
                    capped ? " (capped: a rank reached SCALEWISE_TRACE_MAX_EVENTS)" : "");
        }
    }
    free(infos);
    free(data);
    free(ids);
    for (int i = 0; i < table.n; i++)
        free(table.members[i]);
    free(table.members);
}
