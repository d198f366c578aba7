/* Reads the rank blocks of a trace file (docs/trace-format.md) into rows:
 * inflate, decode each column, then one pass in program order gives each
 * request a slot, points each wait at its requests' slots and gives each
 * collective call its signature (the template the replay will walk). */
#define _DEFAULT_SOURCE
#include "decoded.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef SW_LIBDEFLATE
#include <libdeflate.h>
#endif

typedef struct {
    char *err;
    int64_t err_size;
} errbuf;

static int fail(errbuf *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err, (size_t)e->err_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- a map from int64 keys to int64 values (open addressing, backward-shift delete) ---- */

typedef struct {
    int64_t *keys, *vals;
    int64_t size, used; /* size a power of two; key INT64_MIN: empty */
} i64map;

#define EMPTY_KEY INT64_MIN

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int map_init(i64map *m, int64_t size)
{
    m->keys = malloc((size_t)size * sizeof *m->keys);
    m->vals = malloc((size_t)size * sizeof *m->vals);
    if (!m->keys || !m->vals)
        return -1;
    for (int64_t i = 0; i < size; i++)
        m->keys[i] = EMPTY_KEY;
    m->size = size;
    m->used = 0;
    return 0;
}

static void map_free(i64map *m)
{
    free(m->keys);
    free(m->vals);
}

static int64_t *map_find(const i64map *m, int64_t key)
{
    uint64_t mask = (uint64_t)m->size - 1, j = mix((uint64_t)key) & mask;
    while (m->keys[j] != EMPTY_KEY) {
        if (m->keys[j] == key)
            return &m->vals[j];
        j = (j + 1) & mask;
    }
    return NULL;
}

static int map_put(i64map *m, int64_t key, int64_t val);

static int map_grow(i64map *m)
{
    i64map fresh;
    if (map_init(&fresh, m->size * 2))
        return -1;
    for (int64_t i = 0; i < m->size; i++)
        if (m->keys[i] != EMPTY_KEY)
            map_put(&fresh, m->keys[i], m->vals[i]);
    map_free(m);
    *m = fresh;
    return 0;
}

/* 1: the key was there already (value unchanged). */
static int map_put(i64map *m, int64_t key, int64_t val)
{
    if (2 * (m->used + 1) > m->size && map_grow(m))
        return -1;
    uint64_t mask = (uint64_t)m->size - 1, j = mix((uint64_t)key) & mask;
    while (m->keys[j] != EMPTY_KEY) {
        if (m->keys[j] == key)
            return 1;
        j = (j + 1) & mask;
    }
    m->keys[j] = key;
    m->vals[j] = val;
    m->used++;
    return 0;
}

static void map_del(i64map *m, int64_t key)
{
    uint64_t mask = (uint64_t)m->size - 1, j = mix((uint64_t)key) & mask;
    while (m->keys[j] != key) {
        if (m->keys[j] == EMPTY_KEY)
            return;
        j = (j + 1) & mask;
    }
    /* shift later entries of the cluster back so lookups need no tombstones */
    uint64_t hole = j;
    for (;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == EMPTY_KEY)
            break;
        uint64_t home = mix((uint64_t)m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = EMPTY_KEY;
    m->used--;
}

/* ---- columns ---- */

typedef struct {
    const uint8_t *p, *end;
} reader;

static inline int varint(reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static inline int64_t unzigzag(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

#ifdef SW_LIBDEFLATE
/* The payload inflated whole into *buf, which is grown to `bound` bytes first: the most a rank's
 * columns can take, so a payload that inflates to more is damaged (libdeflate checks the Adler-32
 * too).  libdeflate decodes a whole buffer 2-3 times as fast as zlib's streaming inflate. */
static int inflate_all(struct libdeflate_decompressor *z, const uint8_t *in, int64_t in_len, int64_t bound,
                       uint8_t **buf, int64_t *cap, int64_t *len)
{
    if (bound > *cap) {
        uint8_t *b = realloc(*buf, (size_t)bound);
        if (!b)
            return -1;
        *buf = b;
        *cap = bound;
    }
    size_t out = 0;
    enum libdeflate_result rc = libdeflate_zlib_decompress(z, in, (size_t)in_len, *buf, (size_t)bound, &out);
    *len = (int64_t)out;
    return rc == LIBDEFLATE_SUCCESS ? 0 : -1;
}
#else
/* Inflate a whole payload into *buf (grown as needed); its length in *len. */
static int inflate_all(void *unused, const uint8_t *in, int64_t in_len, int64_t bound, uint8_t **buf, int64_t *cap,
                       int64_t *len)
{
    (void)unused;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return -1;
    z.next_in = (uint8_t *)in;
    z.avail_in = (uInt)in_len;
    int64_t out = 0;
    int rc;
    do {
        if (out == *cap) {
            int64_t grown = *cap ? *cap * 2 : 1 << 16;
            uint8_t *b = realloc(*buf, (size_t)grown);
            if (!b) {
                inflateEnd(&z);
                return -1;
            }
            *buf = b;
            *cap = grown;
        }
        uInt room = (uInt)(*cap - out < (int64_t)1 << 30 ? *cap - out : (int64_t)1 << 30);
        z.next_out = *buf + out;
        z.avail_out = room;
        rc = inflate(&z, Z_NO_FLUSH);
        out += room - z.avail_out;
        if (rc == Z_BUF_ERROR && z.avail_in == 0)
            break;
    } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0));
    inflateEnd(&z);
    *len = out;
    return rc == Z_STREAM_END && out <= bound ? 0 : -1; /* more than any columns take: damaged, as libdeflate finds */
}

#endif

/* Live requests of the rank being resolved: ids are mostly numbered in creation order, so a direct-mapped
 * table by the id's low bits finds almost all of them at once; the rest go to a hash map. */
#define DIRECT 4096
typedef struct {
    int64_t id, rank;
    int64_t slot;
} direct_entry;

typedef struct {
    sw_trace *t;
    const sw_source *src;
    errbuf *e;
    i64map comm_of;   /* comm id -> index into src->comm_id */
    i64map place;     /* (comm index, world rank) -> comm rank */
    uint8_t *buf;
    int64_t buf_cap;
    i64map live;      /* request id -> slot, one rank at a time, for ids the direct table had no room for */
    direct_entry *direct;
    int32_t *free_slots;
    int64_t free_cap;
    i64map pairs; /* (communicator, tag) -> its number */
    int64_t min_pair; /* the number of the pair whose key is the map's empty key, -1: none yet */
    struct pair_entry *pair_cache;
#ifdef SW_LIBDEFLATE
    struct libdeflate_decompressor *inflater;
#else
    void *inflater;
#endif
} decoder;

/* Past `count` varints from p (no further than end): a varint ends at its first byte below 0x80, so the
 * column's end is found by counting those, eight bytes at a time while at least eight remain to find.
 * NULL if the data ends first; *found: how many ended before it. */
static const uint8_t *skip_varints(const uint8_t *p, const uint8_t *end, int64_t count, int64_t *found)
{
    int64_t left = count;
    const uint64_t high = 0x8080808080808080ull, ones = 0x0101010101010101ull;
    while (left >= 32 && end - p >= 32) { /* four words hold at most 32 ends; each byte's sum is at most 4 */
        uint64_t w[4];
        memcpy(w, p, 32);
        uint64_t ends = ((~w[0] & high) >> 7) + ((~w[1] & high) >> 7) + ((~w[2] & high) >> 7) + ((~w[3] & high) >> 7);
        left -= (int64_t)((ends * ones) >> 56);
        p += 32;
    }
    while (left >= 8 && end - p >= 8) { /* a word holds at most eight ends: never past the column */
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t ends = (~w & high) >> 7;
        left -= (int64_t)((ends * ones) >> 56);
        p += 8;
    }
    while (left > 0 && p < end)
        left -= !(*p++ & 0x80);
    *found = count - left;
    return left ? NULL : p;
}

/* A varint of two bytes or more; its column's end is known to lie ahead, so only its length is checked. */
static uint64_t long_varint(const uint8_t **c, int *bad)
{
    uint64_t v = 0;
    const uint8_t *p = *c;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *c = p;
            return v;
        }
    }
    *bad = 1;
    *c = p;
    return 0;
}


enum { C_FUNC, C_PEER, C_BYTES, C_TAG, C_COMM, C_REQ, C_ROOT, C_FLAGS, C_NREQ, C_COMPUTE, C_WAITS, NCOLS };
static const char *const column_name[NCOLS] = {"func", "peer", "bytes", "tag", "comm", "req", "root", "flags",
                                               "nreq", "compute", "wait requests"};

/* Where each column after kind starts (at[]); in->p is left at the wait requests. */
static int columns_at(decoder *d, int64_t rank, int64_t n, reader *in, const uint8_t **at)
{
    const uint8_t *p = in->p;
    for (int c = 0; c < C_WAITS; c++) {
        at[c] = p;
        if (c == C_FLAGS) {
            if (in->end - p < n)
                return fail(d->e, "rank %lld: column 'flags' is cut short", (long long)rank);
            p += n;
            continue;
        }
        int64_t found;
        p = skip_varints(p, in->end, n, &found);
        if (!p)
            return fail(d->e, "rank %lld: column '%s': %lld values expected, the data ends after %lld",
                        (long long)rank, column_name[c], (long long)n, (long long)found);
    }
    in->p = p;
    return 0;
}

/* A value longer than ten bytes (the only thing that sets column_chunk's bad): name its column. */
static int overlong(decoder *d, int64_t rank, int64_t n, const uint8_t *const *at)
{
    for (int c = 0; c < C_WAITS; c++) {
        const uint8_t *q = at[c];
        for (int64_t i = 0; c != C_FLAGS && i < n; i++) {
            int over = 0;
            if (*q < 0x80)
                q++;
            else
                long_varint(&q, &over);
            if (over)
                return fail(d->e, "rank %lld: column '%s': value %lld is longer than 10 bytes", (long long)rank,
                            column_name[c], (long long)i);
        }
    }
    return fail(d->e, "rank %lld: a value is longer than 10 bytes", (long long)rank);
}

static int64_t sig_of(decoder *d, const sw_signature *key)
{
    sw_trace *t = d->t;
    uint64_t h = 0;
    const int64_t *f = &key->func;
    for (int i = 0; i < 6; i++)
        h = mix(h ^ (uint64_t)f[i]) + (uint64_t)i;
    if (2 * (t->nsigs + 1) > t->sig_hash_size) {
        int64_t size = t->sig_hash_size ? 2 * t->sig_hash_size : 64;
        int64_t *fresh = malloc((size_t)size * sizeof *fresh);
        if (!fresh)
            return -1;
        for (int64_t i = 0; i < size; i++)
            fresh[i] = -1;
        for (int64_t s = 0; s < t->nsigs; s++) {
            uint64_t g = 0;
            const int64_t *k = &t->sigs[s].func;
            for (int i = 0; i < 6; i++)
                g = mix(g ^ (uint64_t)k[i]) + (uint64_t)i;
            uint64_t j = g & (uint64_t)(size - 1);
            while (fresh[j] >= 0)
                j = (j + 1) & (uint64_t)(size - 1);
            fresh[j] = s;
        }
        free(t->sig_hash);
        t->sig_hash = fresh;
        t->sig_hash_size = size;
    }
    uint64_t mask = (uint64_t)t->sig_hash_size - 1, j = h & mask;
    for (; t->sig_hash[j] >= 0; j = (j + 1) & mask)
        if (!memcmp(&t->sigs[t->sig_hash[j]], key, sizeof *key))
            return t->sig_hash[j];
    if (t->nsigs == t->sig_cap) {
        int64_t cap = t->sig_cap ? 2 * t->sig_cap : 16;
        sw_signature *s = realloc(t->sigs, (size_t)cap * sizeof *s);
        int64_t *m = realloc(t->sig_members, (size_t)cap * sizeof *m);
        if (s)
            t->sigs = s;
        if (m)
            t->sig_members = m;
        if (!s || !m)
            return -1;
        t->sig_cap = cap;
    }
    t->sigs[t->nsigs] = *key;
    t->sig_hash[j] = t->nsigs;
    return t->nsigs++;
}

static int add_vcall(sw_trace *t, sw_vcall v)
{
    if (t->nvcalls == t->vcall_cap) {
        int64_t cap = t->vcall_cap ? 2 * t->vcall_cap : 64;
        sw_vcall *g = realloc(t->vcalls, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        t->vcalls = g;
        t->vcall_cap = cap;
    }
    t->vcalls[t->nvcalls++] = v;
    return 0;
}

/* The collective row's signature, and its place in its communicator (in peer). */
static int collective(decoder *d, int64_t rank, sw_row *x, int64_t comm, int64_t root, int64_t bytes, i64map *count)
{
    sw_trace *t = d->t;
    int64_t me = rank, members = -1;
    int64_t *idx = map_find(&d->comm_of, comm);
    if (idx) {
        int64_t *at = map_find(&d->place, *idx * t->nranks + rank);
        if (!at)
            return fail(d->e, "rank %lld calls a collective on communicator %lld, which does not contain it",
                        (long long)rank, (long long)comm);
        me = *at;
        members = d->src->comm_start[*idx];
    } else if (comm != 0) {
        return fail(d->e, "communicator %lld is used but not described", (long long)comm);
    }
    int64_t k = -1;
    int64_t *seen = map_find(count, comm);
    if (!seen) {
        if (map_put(count, comm, 0) < 0)
            return fail(d->e, "out of memory");
        seen = map_find(count, comm);
    }
    if (d->src->is_vector[x->func]) {
        k = *seen;
        if (add_vcall(t, (sw_vcall){rank, comm, k, x->func, bytes}))
            return fail(d->e, "out of memory");
    }
    ++*seen;
    sw_signature key = {x->func, comm, bytes, root, x->flags & 1, k};
    int64_t s = sig_of(d, &key);
    if (s < 0)
        return fail(d->e, "out of memory");
    if (s > INT32_MAX)
        return fail(d->e, "more than 2^31 distinct collective calls");
    t->sig_members[s] = members;
    x->ref = s;
    x->peer = (int32_t)me;
    return 0;
}

/* The number of a point-to-point (communicator, tag) pair: a trace has few, and a rank uses the same ones
 * over and over, so a small direct-mapped cache answers before the map. */
#define PAIR_CACHE 256
typedef struct pair_entry {
    int64_t pair, key;
} pair_entry;

static int64_t key_of(decoder *d, int32_t comm, int32_t tag)
{
    int64_t pair = (int64_t)((uint64_t)(uint32_t)comm << 32 | (uint32_t)tag);
    pair_entry *c = &d->pair_cache[(uint32_t)(tag * 31 + comm) & (PAIR_CACHE - 1)];
    if (c->key >= 0 && c->pair == pair)
        return c->key;
    sw_trace *t = d->t;
    /* the map's empty key is one pair (communicator INT32_MIN, tag 0): that one is kept apart */
    int64_t *known = pair == EMPTY_KEY ? (d->min_pair >= 0 ? &d->min_pair : NULL) : map_find(&d->pairs, pair);
    int64_t key = known ? *known : t->nkeys;
    if (!known) {
        if (t->nkeys == INT32_MAX)
            return -1;
        if (t->nkeys == t->key_cap) {
            int64_t cap = t->key_cap ? 2 * t->key_cap : 64;
            int32_t *gc = realloc(t->key_comm, (size_t)cap * sizeof *gc);
            if (gc)
                t->key_comm = gc;
            int32_t *gt = realloc(t->key_tag, (size_t)cap * sizeof *gt);
            if (gt)
                t->key_tag = gt;
            if (!gc || !gt)
                return -1;
            t->key_cap = cap;
        }
        if (pair == EMPTY_KEY)
            d->min_pair = key;
        else if (map_put(&d->pairs, pair, key) < 0)
            return -1;
        t->key_comm[key] = comm;
        t->key_tag[key] = tag;
        t->nkeys++;
    }
    *c = (pair_entry){pair, key};
    return key;
}

/* A value of 2^32 - 1 or more: SW_BIG in the row, the value in the table of large values. */
static int big_put(decoder *d, int64_t key, uint64_t value)
{
    return map_put(d->t->big, key, (int64_t)value) < 0 ? -1 : 0;
}

static int live_put(decoder *d, int64_t rank, int64_t id, int64_t slot)
{
    direct_entry *e = &d->direct[(uint64_t)id & (DIRECT - 1)];
    if (e->rank == rank && e->id == id)
        return 1;
    if (e->rank != rank) {
        *e = (direct_entry){id, rank, slot};
        return d->live.used && map_find(&d->live, id) ? 1 : 0;
    }
    return map_put(&d->live, id, slot);
}

/* The slot of a live request, which the wait completing it takes out of the live set; NULL: not live. */
static int64_t live_take(decoder *d, int64_t rank, int64_t id, int64_t *slot)
{
    direct_entry *e = &d->direct[(uint64_t)id & (DIRECT - 1)];
    if (e->rank == rank && e->id == id) {
        e->rank = -1;
        *slot = e->slot;
        return 1;
    }
    int64_t *known = d->live.used ? map_find(&d->live, id) : NULL;
    if (!known)
        return 0;
    *slot = *known;
    map_del(&d->live, id);
    return 1;
}

/* Whether the m slots are m distinct consecutive numbers (tried for up to 64). */
static int is_range(const int32_t *slot, int64_t m)
{
    if (m < 1 || m > 64)
        return 0;
    int32_t low = slot[0], high = slot[0];
    for (int64_t j = 1; j < m; j++) {
        low = slot[j] < low ? slot[j] : low;
        high = slot[j] > high ? slot[j] : high;
    }
    if ((int64_t)high - low + 1 != m)
        return 0;
    uint64_t seen = 0;
    for (int64_t j = 0; j < m; j++)
        seen |= (uint64_t)1 << (slot[j] - low);
    return seen == (m == 64 ? ~(uint64_t)0 : ((uint64_t)1 << m) - 1); /* each of the m numbers once */
}

/* Room for m more free slots. */
static int free_room(decoder *d, int64_t nfree, int64_t m)
{
    if (nfree + m <= d->free_cap)
        return 0;
    int64_t cap = 2 * (nfree + m);
    int32_t *g = realloc(d->free_slots, (size_t)cap * sizeof *g);
    if (!g)
        return -1;
    d->free_slots = g;
    d->free_cap = cap;
    return 0;
}

/* The columns are decoded a chunk of events at a time, each column in a loop of its own (the values of
 * most columns are one byte each: eight of them are widened at once), then the chunk's rows are built
 * from those values: fewer branches and live pointers per event than decoding row by row. */
#define CHUNK 256
enum { V_FUNC, V_PEER, V_BYTES, V_TAG, V_COMM, V_REQ, V_ROOT, V_NREQ, V_COMPUTE, NVALS };
static const int column_of_value[NVALS] = {C_FUNC, C_PEER, C_BYTES, C_TAG, C_COMM, C_REQ, C_ROOT, C_NREQ, C_COMPUTE};

/* m values of the column at *c (which ends at end, after at least m values) into out; returns how many
 * were read whole: fewer than m only after a value longer than ten bytes (*bad set).  A column whose
 * values all take one byte (its length is its number of values) is widened whole, without a test. */
static int64_t column_chunk(const uint8_t **c, const uint8_t *end, int one_byte, uint64_t *restrict out, int64_t m,
                            int *bad)
{
    const uint8_t *p = *c;
    if (one_byte) {
        const uint8_t *restrict q = p;
        for (int64_t i = 0; i < m; i++)
            out[i] = q[i];
        *c = p + m;
        return m;
    }
    int64_t i = 0;
    for (; i < m && p < end; i++) {
        uint64_t b0 = p[0];
        if (b0 < 0x80) {
            out[i] = b0;
            p++;
            continue;
        }
        uint64_t b1 = p[1]; /* the column's last value ends at end, so a value begun before it ends by it */
        if (b1 < 0x80) {
            out[i] = (b0 & 0x7F) | b1 << 7;
            p += 2;
            continue;
        }
        uint64_t b2 = p[2];
        if (b2 < 0x80) {
            out[i] = (b0 & 0x7F) | (b1 & 0x7F) << 7 | b2 << 14;
            p += 3;
            continue;
        }
        int over = 0;
        out[i] = long_varint(&p, &over);
        if (over) {
            *bad = 1;
            break;
        }
    }
    *c = p;
    return i;
}

/* The last collective call's signature, reused while a rank repeats the same call (the usual case): the
 * maps of collective() are looked up once per distinct call in a row, not once per call. */
typedef struct {
    int valid;
    int64_t func, comm, bytes, root, flags;
    int32_t sig, me;
    int64_t *seen; /* the call's count on its communicator (valid until the count map changes) */
} last_call;

/* The columns decoded into the rank's rows and resolved in the same pass, in program order: each row is
 * written once, while its line is in cache.  Requests get slots, waits are pointed at their requests'
 * slots, collectives at their signatures.  Root goes to tag for collectives (which have no tag of their
 * own), nreq to peer for waits (which have no peer). */
static int decode_events(decoder *d, int64_t rank, sw_row *rows, int64_t n, const uint8_t *kinds,
                         const uint8_t *const *at, const uint8_t *columns_end, const int64_t *wait_ids, int64_t nwait,
                         int32_t *wait_slots, int32_t *kept, int64_t *nkept, int64_t *nslots)
{
    const uint8_t *col[NVALS], *col_end[NVALS];
    int one_byte[NVALS];
    for (int v = 0; v < NVALS; v++) {
        int c = column_of_value[v];
        col[v] = at[c];
        col_end[v] = c + 1 < C_WAITS ? at[c + 1] : columns_end;
        one_byte[v] = col_end[v] - col[v] == n;
    }
    const uint8_t *cl = at[C_FLAGS];
    const uint8_t *is_vector = d->src->is_vector;
    uint64_t nfuncs = (uint64_t)d->t->nfuncs;
    int64_t nranks = d->t->nranks, prev_req = -1, next_slot = 1, nfree = 0, w = 0, k = 0, row0 = d->t->rank_start[rank];
    int bad = 0, rc = 0;
    int64_t bad_at = INT64_MAX; /* the first event a value longer than ten bytes threw out of step */
    uint64_t val[NVALS][CHUNK];
    last_call last = {0};
    d->live.used = 0;
    for (int64_t i = 0; i < d->live.size; i++)
        d->live.keys[i] = EMPTY_KEY;
    i64map count;
    if (map_init(&count, 8))
        return fail(d->e, "out of memory");
    for (int64_t base = 0; base < n && !rc; base += CHUNK) {
        int64_t m = n - base < CHUNK ? n - base : CHUNK;
        for (int v = 0; v < NVALS; v++) {
            int64_t got = column_chunk(&col[v], col_end[v], one_byte[v], val[v], m, &bad);
            if (got < m && base + got < bad_at)
                bad_at = base + got;
        }
        /* as if read row by row: damage is found at its event, before that event's checks */
        int64_t whole = bad_at - base < m ? bad_at - base : m;
        for (int64_t j = 0; j < whole; j++) {
            int64_t i = base + j;
            sw_row *x = &rows[i];
            uint8_t kind = kinds[i];
            uint64_t func = val[V_FUNC][j], peer = val[V_PEER][j], nbytes = val[V_BYTES][j], tag = val[V_TAG][j];
            uint64_t comm = val[V_COMM][j], req = val[V_REQ][j], root = val[V_ROOT][j], nreq = val[V_NREQ][j];
            uint64_t compute = val[V_COMPUTE][j];
            if (func >= nfuncs) {
                rc = fail(d->e, "rank %lld: event %lld: its function is not in the function table", (long long)rank,
                          (long long)i);
                goto done;
            }
            if (req)
                prev_req += unzigzag(req - 1) + 1;
            x->compute_ns = compute < SW_BIG ? (uint32_t)compute : SW_BIG;
            x->bytes = nbytes < SW_BIG ? (uint32_t)nbytes : SW_BIG;
            if ((compute >= SW_BIG && big_put(d, 2 * (row0 + i), compute)) ||
                (nbytes >= SW_BIG && big_put(d, 2 * (row0 + i) + 1, nbytes))) {
                rc = fail(d->e, "out of memory");
                goto done;
            }
            x->peer = kind == SW_WAIT ? (int32_t)nreq : peer ? (int32_t)(unzigzag(peer - 1) + rank) : -1;
            int32_t c32 = (int32_t)comm, t32 = kind == SW_COLLECTIVE ? (int32_t)((int64_t)root - 1) : (int32_t)unzigzag(tag);
            x->key = c32;
            x->func = (uint16_t)func;
            x->kind = kind;
            x->flags = cl[i];
            if (kind >= SW_ISEND && kind <= SW_RECV && kind != SW_WAIT) {
                int64_t key = key_of(d, c32, t32);
                if (key < 0) {
                    rc = fail(d->e, "out of memory");
                    goto done;
                }
                x->key = (int32_t)key;
            }
            switch (kind) {
            case SW_ISEND:
            case SW_IRECV: {
                if (x->peer < 0 || x->peer >= nranks) {
                    rc = fail(d->e, "rank %lld: event %lld: peer %d is not a rank", (long long)rank, (long long)i,
                              x->peer);
                    goto done;
                }
                int64_t id = req ? prev_req : -1;
                int64_t slot = nfree ? d->free_slots[--nfree] : next_slot++;
                int put = live_put(d, rank, id, slot);
                if (put) {
                    rc = put < 0 ? fail(d->e, "out of memory")
                                 : fail(d->e, "rank %lld: request id %lld is created twice", (long long)rank,
                                        (long long)id);
                    goto done;
                }
                x->ref = (int32_t)slot;
                break;
            }
            case SW_SEND:
            case SW_RECV:
                if (x->peer < 0 || x->peer >= nranks) {
                    rc = fail(d->e, "rank %lld: event %lld: peer %d is not a rank", (long long)rank, (long long)i,
                              x->peer);
                    goto done;
                }
                x->ref = 0;
                break;
            case SW_WAIT: {
                int64_t mreq = x->peer;
                if (mreq < 0 || w + mreq > nwait) {
                    rc = fail(d->e, "rank %lld: waits list more requests than the request column's %lld",
                              (long long)rank, (long long)nwait);
                    goto done;
                }
                if (free_room(d, nfree, mreq)) {
                    rc = fail(d->e, "out of memory");
                    goto done;
                }
                /* one pass: each request's slot, freed as it is found (a request the wait lists twice is
                 * found live the first time and among the wait's own earlier entries the second) */
                for (int64_t q = 0; q < mreq; q++) {
                    int64_t id = wait_ids[w + q], slot;
                    if (live_take(d, rank, id, &slot)) {
                        wait_slots[w + q] = (int32_t)slot;
                        d->free_slots[nfree++] = (int32_t)slot;
                        continue;
                    }
                    int64_t e = q - 1;
                    while (e >= 0 && wait_ids[w + e] != id)
                        e--;
                    if (e < 0) {
                        rc = fail(d->e, "rank %lld: a wait completes request %lld, which no Isend/Irecv created",
                                  (long long)rank, (long long)id);
                        goto done;
                    }
                    wait_slots[w + q] = wait_slots[w + e];
                }
                if (is_range(wait_slots + w, mreq)) {
                    int32_t low = wait_slots[w];
                    for (int64_t q = 1; q < mreq; q++)
                        low = wait_slots[w + q] < low ? wait_slots[w + q] : low;
                    x->ref = low;
                    x->flags = SW_WAIT_RANGE;
                } else { /* only these are kept: a range needs no list */
                    if (mreq)
                        memcpy(kept + k, wait_slots + w, (size_t)mreq * sizeof *kept);
                    x->ref = (int32_t)k; /* its first slot in the rank's kept waits (at most 2^31 - 1 of them) */
                    x->flags = 0;
                    k += mreq;
                }
                w += mreq;
                break;
            }
            case SW_COLLECTIVE: {
                int64_t flags = x->flags & 1;
                if (last.valid && last.func == (int64_t)func && last.comm == c32 && last.bytes == (int64_t)nbytes &&
                    last.root == t32 && last.flags == flags) {
                    ++*last.seen;
                    x->ref = last.sig;
                    x->peer = last.me;
                    break;
                }
                rc = collective(d, rank, x, c32, t32, (int64_t)nbytes, &count);
                if (!rc && !is_vector[func]) /* a v-collective's signature holds its place: never the same */
                    last = (last_call){1, (int64_t)func, c32, (int64_t)nbytes, t32, flags, x->ref, x->peer,
                                       map_find(&count, c32)};
                else
                    last.valid = 0;
                break;
            }
            case SW_OTHER:
                x->ref = -1;
                break;
            default:
                rc = fail(d->e, "rank %lld: unknown event kind %d", (long long)rank, kind);
            }
            if (rc)
                goto done;
        }
        if (whole < m)
            goto done;
    }
done:
    map_free(&count);
    if (!rc && bad_at < n) /* a value past ten bytes threw the columns out of step: that, not what followed */
        return overlong(d, rank, n, at);
    if (!rc && w != nwait)
        rc = fail(d->e, "rank %lld: waits list %lld requests, the request column has %lld", (long long)rank,
                  (long long)w, (long long)nwait);
    *nslots = next_slot;
    *nkept = k;
    return rc;
}

static int decode_rank(decoder *d, int64_t rank, int64_t **wait_ids, int32_t **wait_slots, int64_t *wait_cap)
{
    sw_trace *t = d->t;
    const sw_source *src = d->src;
    int64_t n = src->nevents[rank], nwait = src->nwait[rank], len;
    int64_t bound = 2 * n + 10 * (9 * n + nwait) + 1; /* kind and flags, 9 varint columns, the wait list */
    if (inflate_all(d->inflater, src->image + src->payload[rank], src->payload_len[rank], bound, &d->buf,
                    &d->buf_cap, &len))
        return fail(d->e, "rank %lld: compressed events are damaged", (long long)rank);
    reader in = {d->buf, d->buf + len};
    sw_row *rows = t->rows + t->rank_start[rank];
    if (len < n)
        return fail(d->e, "rank %lld: column 'kind' is cut short", (long long)rank);
    const uint8_t *kinds = in.p, *at[NCOLS];
    in.p += n;
    if (columns_at(d, rank, n, &in, at))
        return -1;
    const uint8_t *columns_end = in.p; /* the last of them (compute) ends where the wait requests begin */
    if (nwait > *wait_cap) {
        int64_t *g = realloc(*wait_ids, (size_t)nwait * sizeof *g);
        if (g)
            *wait_ids = g;
        int32_t *s = realloc(*wait_slots, (size_t)nwait * sizeof *s);
        if (s)
            *wait_slots = s;
        if (!g || !s)
            return fail(d->e, "out of memory");
        *wait_cap = nwait;
    }
    int64_t prev = -1;
    for (int64_t i = 0; i < nwait; i++) {
        uint64_t v;
        if (varint(&in, &v))
            return fail(d->e, "rank %lld: column 'wait requests': %lld values expected, the data ends after %lld",
                        (long long)rank, (long long)nwait, (long long)i);
        prev += unzigzag(v);
        (*wait_ids)[i] = prev;
    }
    if (in.p != in.end)
        return fail(d->e, "rank %lld: %lld bytes after the last column", (long long)rank, (long long)(in.end - in.p));
    if (nwait > INT32_MAX)
        return fail(d->e, "rank %lld: more than 2^31 - 1 wait requests", (long long)rank);
    int64_t nslots = 0, nkept = 0;
    if (decode_events(d, rank, rows, n, kinds, at, columns_end, *wait_ids, nwait, *wait_slots, t->waits + t->nwaits,
                      &nkept, &nslots))
        return -1;
    t->nwaits += nkept;
    t->wait_start[rank + 1] = t->nwaits;
    t->slot_start[rank + 1] = t->slot_start[rank] + nslots;
    return 0;
}

static int comm_tables(decoder *d)
{
    const sw_source *src = d->src;
    int64_t total = src->ncomms ? src->comm_start[src->ncomms] : 0;
    if (map_init(&d->comm_of, 16) || map_init(&d->place, 64))
        return fail(d->e, "out of memory");
    d->t->members = malloc((size_t)(total ? total : 1) * sizeof *d->t->members);
    if (!d->t->members)
        return fail(d->e, "out of memory");
    d->t->nmembers = total;
    for (int64_t c = 0; c < src->ncomms; c++) {
        if (map_put(&d->comm_of, src->comm_id[c], c) < 0)
            return fail(d->e, "out of memory");
        for (int64_t i = src->comm_start[c]; i < src->comm_start[c + 1]; i++) {
            int64_t w = src->members[i];
            if (w < 0 || w >= d->t->nranks)
                return fail(d->e, "communicator %lld: member %lld is not a rank", (long long)src->comm_id[c], (long long)w);
            d->t->members[i] = (int32_t)w;
            if (map_put(&d->place, c * d->t->nranks + w, i - src->comm_start[c]) < 0)
                return fail(d->e, "out of memory");
        }
    }
    return 0;
}

sw_trace *sw_open(const sw_source *src, char *err, int64_t err_size)
{
    errbuf e = {err, err_size};
    sw_trace *t = calloc(1, sizeof *t);
    decoder d = {.t = t, .src = src, .e = &e, .min_pair = -1};
    int64_t *wait_ids = NULL, wait_cap = 0, nwait = 0;
    int32_t *wait_slots = NULL;
    int rc = -1;
    if (!t) {
        fail(&e, "out of memory");
        return NULL;
    }
    t->nranks = src->nranks;
    t->nfuncs = src->nfuncs;
    t->rank_start = malloc((size_t)(src->nranks + 1) * sizeof *t->rank_start);
    t->slot_start = malloc((size_t)(src->nranks + 1) * sizeof *t->slot_start);
    t->wait_start = malloc((size_t)(src->nranks + 1) * sizeof *t->wait_start);
    t->big = calloc(1, sizeof(i64map));
    if (!t->rank_start || !t->slot_start || !t->wait_start || !t->big || src->nfuncs > 65535)
        goto out;
    t->rank_start[0] = t->slot_start[0] = t->wait_start[0] = 0;
    for (int64_t r = 0; r < src->nranks; r++) {
        t->rank_start[r + 1] = t->rank_start[r] + src->nevents[r];
        nwait += src->nwait[r];
    }
    t->nevents = t->rank_start[src->nranks];
    t->rows = malloc((size_t)(t->nevents ? t->nevents : 1) * sizeof *t->rows);
    t->waits = malloc((size_t)(nwait ? nwait : 1) * sizeof *t->waits);
    /* The rows stay on 4 KiB pages: a fresh 2 MiB page cost 3 times as much to touch first on the machine
     * measured (its freed blocks go back to the host), 2.4 GB for 100 million events; the replay fetches
     * the rows of the ranks it runs next instead (docs/decisions.md). */
    if (t->waits)
        sw_huge_pages(t->waits, (size_t)nwait * sizeof *t->waits);
    d.direct = malloc(DIRECT * sizeof *d.direct);
    d.pair_cache = malloc(PAIR_CACHE * sizeof *d.pair_cache);
#ifdef SW_LIBDEFLATE
    d.inflater = libdeflate_alloc_decompressor();
    if (!d.inflater) {
        fail(&e, "out of memory");
        goto out;
    }
#endif
    for (int64_t i = 0; d.direct && i < DIRECT; i++)
        d.direct[i].rank = -1;
    for (int64_t i = 0; d.pair_cache && i < PAIR_CACHE; i++)
        d.pair_cache[i] = (pair_entry){0, -1}; /* key -1: empty */
    if (!t->rows || !t->waits || !d.direct || !d.pair_cache || map_init(&d.live, 64) || map_init(&d.pairs, 64) ||
        map_init(t->big, 16)) {
        fail(&e, "out of memory");
        goto out;
    }
    if (comm_tables(&d))
        goto out;
    for (int64_t r = 0; r < src->nranks; r++)
        if (decode_rank(&d, r, &wait_ids, &wait_slots, &wait_cap))
            goto out;
    rc = 0;
    int32_t *fit = realloc(t->waits, (size_t)(t->nwaits ? t->nwaits : 1) * sizeof *fit); /* the lists kept */
    if (fit)
        t->waits = fit;
out:
    if (rc && !err[0])
        fail(&e, src->nfuncs > 65535 ? "more than 65535 functions" : "out of memory");
    free(wait_ids);
    free(wait_slots);
    free(d.buf);
    free(d.free_slots);
    free(d.direct);
    free(d.pair_cache);
    if (d.pairs.keys)
        map_free(&d.pairs);
#ifdef SW_LIBDEFLATE
    if (d.inflater)
        libdeflate_free_decompressor(d.inflater);
#endif
    if (d.live.keys)
        map_free(&d.live);
    if (d.comm_of.keys)
        map_free(&d.comm_of);
    if (d.place.keys)
        map_free(&d.place);
    if (rc) {
        sw_close(t);
        return NULL;
    }
    free(t->sig_hash); /* lookups are done */
    t->sig_hash = NULL;
    return t;
}

int64_t sw_nsigs(const sw_trace *t) { return t->nsigs; }
const sw_signature *sw_sigs(const sw_trace *t) { return t->sigs; }
int64_t sw_nvcalls(const sw_trace *t) { return t->nvcalls; }
const sw_vcall *sw_vcalls(const sw_trace *t) { return t->vcalls; }

uint64_t sw_big(const sw_trace *t, int64_t key)
{
    const int64_t *v = map_find(t->big, key);
    return v ? (uint64_t)*v : 0; /* a row holds SW_BIG only when its value is in the table */
}

int64_t sw_bytes(const sw_trace *t)
{
    const i64map *big = t->big;
    return t->nevents * (int64_t)sizeof(sw_row) + t->nwaits * (int64_t)sizeof(int32_t) +
           (t->nranks + 1) * 3 * (int64_t)sizeof(int64_t) + t->key_cap * 2 * (int64_t)sizeof(int32_t) +
           big->size * 2 * (int64_t)sizeof(int64_t) +
           t->sig_cap * (int64_t)(sizeof(sw_signature) + sizeof(int64_t)) + t->vcall_cap * (int64_t)sizeof(sw_vcall) +
           t->nmembers * (int64_t)sizeof(int32_t);
}

void sw_close(sw_trace *t)
{
    if (!t)
        return;
    free(t->rank_start);
    free(t->rows);
    free(t->waits);
    free(t->slot_start);
    free(t->wait_start);
    free(t->key_comm);
    free(t->key_tag);
    if (t->big && ((i64map *)t->big)->keys)
        map_free(t->big);
    free(t->big);
    free(t->sigs);
    free(t->sig_hash);
    free(t->sig_members);
    free(t->vcalls);
    free(t->members);
    free(t);
}
