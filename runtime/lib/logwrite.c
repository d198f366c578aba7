/* The job log: each rank packs and compresses its own record (record.c)
 * and its modules' records (module.h); rank 0 gathers their sizes, then the
 * blocks and every module's section in bounded batches (gather.h), each
 * written to the file as it arrives, which is renamed into place once whole
 * (atomicfile.h).  Layout in docs/log-format.md, the gather in
 * docs/log-gather.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "atomicfile.h"
#include "base.h"
#include "gather.h"
#include "logwrite.h"
#include "module.h"
#include "record.h"

#ifndef SW_VERSION
#define SW_VERSION "unknown"
#endif

static int compress_buf(const sw_buf *in, sw_buf *out)
{
    uLongf n = compressBound((uLong)in->n);
    out->p = malloc(n);
    if (!out->p || compress2(out->p, &n, in->p, (uLong)in->n, 6) != Z_OK)
        return 0;
    out->n = out->cap = n;
    return 1;
}

static void json_str(sw_buf *b, const char *s)
{
    put8(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put8(b, '\\');
            put8(b, c);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            puts_(b, esc);
        } else {
            put8(b, c);
        }
    }
    put8(b, '"');
}

static void json_file_args(sw_buf *b, const char *path)
{
    char buf[65536];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0)
        buf[n] = 0; /* a command line cut at the buffer's end still ends in NUL */
    put8(b, '[');
    for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1) {
        if (i)
            put8(b, ',');
        json_str(b, buf + i);
    }
    put8(b, ']');
}

static const char *thread_level(int p)
{
    return p == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
           : p == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : p == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                        : "MPI_THREAD_SINGLE";
}

static void pack_meta(sw_buf *b, unsigned log_flags)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "", cwd[4096] = "", num[128];
    int len = 0;
    sw_pmpi.Get_library_version(lib, &len);
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    puts_(b, "{\"format\":");
    snprintf(num, sizeof num, "\"%d.%d\"", SW_FORMAT_MAJOR, SW_FORMAT_MINOR);
    puts_(b, num);
    puts_(b, ",\"scalewise_version\":\"" SW_VERSION "\",\"command\":");
    json_file_args(b, "/proc/self/cmdline");
    puts_(b, ",\"cwd\":");
    json_str(b, cwd);
    puts_(b, ",\"mpi_library\":");
    json_str(b, lib);
    snprintf(num, sizeof num, ",\"mpi_version\":\"%d.%d\",\"nranks\":%d,\"thread_level\":", MPI_VERSION, MPI_SUBVERSION,
             sw_job.size);
    puts_(b, num);
    json_str(b, thread_level(sw_job.provided));
    snprintf(num, sizeof num, ",\"start_time\":%.6f,\"end_time\":%.6f,\"ns_per_tick\":%.9f", (double)sw_job.real0 / 1e9,
             (double)sw_job.real1 / 1e9, sw_job.ns_per_tick);
    puts_(b, num);
    const char *job = getenv("SLURM_JOB_ID");
    if (job) {
        puts_(b, ",\"slurm_job_id\":");
        json_str(b, job);
    }
    if (sw_job.mpit_mtl_unloaded)
        puts_(b, ",\"mpit_mtl_unloaded\":true");
    if (log_flags & SW_LOG_ABORTED) {
        snprintf(num, sizeof num, ",\"aborted_by_rank\":%d,\"abort_errorcode\":%d", sw_job.rank, sw_job.abort_code);
        puts_(b, num);
    }
    puts_(b, ",\"timer\":\"tsc\",\"histogram\":\"log2\"}");
}

static void pack_functions(sw_buf *b)
{
    for (int f = 0; f < SW_NFN; f++) {
        put(b, sw_fn_names[f], strlen(sw_fn_names[f]) + 1);
        put(b, sw_fn_classes[f], strlen(sw_fn_classes[f]) + 1);
    }
}

/* ---- the file, written section by section as the bytes arrive ---- */

/* One section being written: its bytes go to the file as they come (through
 * deflate when the section is compressed), its size and CRC add up on the way. */
typedef struct {
    FILE *f; /* NULL: the file failed, bytes are dropped */
    int failed, deflating;
    z_stream z;
    unsigned char out[1 << 16];
    uint64_t size;
    uLong crc;
} sw_out;

typedef struct {
    uint32_t id;
    uint16_t flags;
    uint64_t off, size;
    uint32_t crc;
} sw_entry;

static void out_stored(sw_out *o, const unsigned char *p, size_t n)
{
    if (!o->f || o->failed || !n)
        return;
    if (fwrite(p, 1, n, o->f) != n)
        o->failed = 1;
    for (size_t at = 0; at < n;) {
        uInt k = n - at < 0x40000000u ? (uInt)(n - at) : 0x40000000u;
        o->crc = crc32(o->crc, p + at, k);
        at += k;
    }
    o->size += n;
}

static void out_begin(sw_out *o, uint16_t flags)
{
    o->size = 0;
    o->crc = crc32(0, NULL, 0);
    o->deflating = (flags & SW_SEC_COMPRESSED) != 0;
    memset(&o->z, 0, sizeof o->z);
    if (o->deflating && deflateInit(&o->z, 6) != Z_OK) {
        o->deflating = 0;
        o->failed = 1;
    }
}

/* Runs deflate over what is queued in o->z, storing what comes out. */
static void out_deflate(sw_out *o, int flush)
{
    int rc;
    do {
        o->z.next_out = o->out;
        o->z.avail_out = sizeof o->out;
        rc = deflate(&o->z, flush);
        if (rc == Z_STREAM_ERROR)
            o->failed = 1;
        out_stored(o, o->out, sizeof o->out - o->z.avail_out);
    } while (!o->failed && (o->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END)));
}

/* The gather's sink (gather.h): the section's next bytes. */
static int out_put(void *ctx, const unsigned char *p, size_t n)
{
    sw_out *o = ctx;
    if (!o->deflating) {
        out_stored(o, p, n);
        return o->failed;
    }
    while (n && !o->failed) {
        uInt k = n < 0x40000000u ? (uInt)n : 0x40000000u;
        o->z.next_in = (unsigned char *)p;
        o->z.avail_in = k;
        out_deflate(o, Z_NO_FLUSH);
        p += k;
        n -= k;
    }
    return o->failed;
}

/* The section is whole: its table entry, placed after the previous one. */
static void out_end(sw_out *o, sw_entry *e, const sw_entry *prev)
{
    if (o->deflating) {
        o->z.next_in = NULL;
        o->z.avail_in = 0;
        out_deflate(o, Z_FINISH);
        deflateEnd(&o->z);
    }
    e->off = prev->off + prev->size;
    e->size = o->size;
    e->crc = (uint32_t)o->crc;
}

static int discard(void *ctx, const unsigned char *p, size_t n)
{
    (void)ctx, (void)p, (void)n;
    return 0;
}

/* Header and section table, over the space left for them at the start. */
static int write_head(FILE *f, unsigned log_flags, uint32_t nblocks, const sw_entry *sec, int nsec)
{
    sw_buf head = {0}, table = {0};
    put(&head, SW_MAGIC, SW_MAGIC_LEN);
    put32(&head, SW_BYTE_ORDER_MARK);
    put16(&head, SW_FORMAT_MAJOR);
    put16(&head, SW_FORMAT_MINOR);
    put32(&head, log_flags);
    put32(&head, (uint32_t)sw_job.size);
    put32(&head, nblocks);
    put32(&head, (uint32_t)nsec);
    put64(&head, sec[nsec - 1].off + sec[nsec - 1].size);
    for (int i = 0; i < nsec; i++) {
        put32(&table, sec[i].id);
        put16(&table, 1); /* section version */
        put16(&table, sec[i].flags);
        put64(&table, sec[i].off);
        put64(&table, sec[i].size);
        put32(&table, sec[i].crc);
        put32(&table, 0);
    }
    uLong crc = crc32(crc32(0, head.p, (uInt)head.n), table.p, (uInt)table.n);
    put32(&head, (uint32_t)crc);
    put32(&head, 0);
    int failed = head.failed || table.failed || fseek(f, 0, SEEK_SET) != 0 || fwrite(head.p, 1, head.n, f) != head.n ||
                 fwrite(table.p, 1, table.n, f) != table.n;
    free(head.p);
    free(table.p);
    return failed;
}

/* The fixed sections every log has, then one per module that packed one. */
#define SW_FIXED_SECTIONS 5
#define SW_MAX_SECTIONS   32
#define SW_MAX_MODULES    (SW_MAX_SECTIONS - SW_FIXED_SECTIONS)

/* A module's section: this rank's record of it, and rank 0's head. */
typedef struct {
    uint32_t id;
    uint16_t flags;
    sw_buf mine, head;
} sw_module_part;

/* What rank 0 (or an aborting rank, alone) knows of every rank: info
 * (rank, stored size, raw size, flags; stored size 0: no block), the
 * lifecycles, and each module's record length, lens[rank * nmod + module]. */
typedef struct {
    const int *info;
    const uint64_t *life;
    const int *lens;
    int n, nmod;
} sw_index;

/* A fixed section made of one small record per rank with a block. */
static void put_index(sw_out *o, const sw_index *x, int lifecycle)
{
    uint64_t off = 0;
    for (int i = 0; i < x->n; i++) {
        const int *e = x->info + 4 * i;
        if (e[1] <= 0)
            continue;
        unsigned char rec[8 + 8 * SW_LIFE_VALUES];
        sw_buf b = {rec, 0, sizeof rec, 0};
        put32(&b, (uint32_t)e[0]);
        if (lifecycle) {
            put32(&b, 0);
            for (int k = 0; k < SW_LIFE_VALUES; k++)
                put64(&b, x->life[SW_LIFE_VALUES * i + k]);
        } else {
            put32(&b, (uint32_t)e[3]);
            put64(&b, off);
            put32(&b, (uint32_t)e[1]);
            put32(&b, (uint32_t)e[2]);
            off += (uint64_t)e[1];
        }
        out_put(o, b.p, b.n);
    }
}

static void put_compressed(sw_out *o, sw_buf *b, sw_entry *e, const sw_entry *prev)
{
    out_begin(o, SW_SEC_COMPRESSED);
    if (b->failed)
        o->failed = 1;
    out_put(o, b->p, b->n);
    out_end(o, e, prev);
}

/* Rank 0: the file, its blocks and module sections gathered as they are
 * written; every other rank: its own block and records, sent when asked. */
static void collect(sw_gather *g, unsigned log_flags, const sw_buf *block, sw_module_part *mods, int nmod,
                    const sw_index *x)
{
    static sw_out o;                                    /* 64 KiB of deflate output: not on the stack */
    int kept = g->root ? x->info[1] > 0 : block->n > 0; /* rank 0's own entry comes first */
    if (!g->root) {
        sw_gather_stream(g, block->p, kept ? block->n : 0, NULL, 0, NULL, NULL);
        for (int k = 0; k < nmod; k++)
            sw_gather_stream(g, mods[k].mine.p, kept ? mods[k].mine.n : 0, NULL, 0, NULL, NULL);
        return;
    }
    uint32_t nblocks = 0;
    for (int i = 0; i < x->n; i++)
        if (x->info[4 * i + 1] > 0) {
            nblocks++;
            if (x->info[4 * i + 3] & SW_RANK_PARTIAL)
                log_flags |= SW_LOG_PARTIAL;
        }
    if (nblocks < (uint32_t)sw_job.size)
        log_flags |= SW_LOG_PARTIAL;
    /* A module's section is left out when it is empty, or rank 0 had no
     * memory for its head: the log is whole without it. */
    int present[SW_MAX_MODULES], nsec = SW_FIXED_SECTIONS;
    for (int k = 0; k < nmod; k++) {
        uint64_t total = 0;
        for (int i = 0; i < x->n; i++)
            total += (uint64_t)x->lens[i * x->nmod + k];
        present[k] = total + mods[k].head.n > 0 && !mods[k].head.failed;
        nsec += present[k];
    }
    sw_buf meta = {0}, names = {0};
    pack_meta(&meta, log_flags);
    pack_functions(&names);
    sw_entry sec[SW_MAX_SECTIONS + 1] = {{0, 0, 0, SW_HEADER_SIZE + (uint64_t)nsec * SW_SECTION_ENTRY_SIZE, 0}};
    sw_entry *e = sec + 1; /* sec[0]: the header and table, before the first section */
    sw_atomic_file file;
    memset(&o, 0, sizeof o);
    o.f = sw_atomic_open(&file, sw_job.logpath);
    o.failed = !o.f; /* the ranks' bytes are still taken, so none waits */
    static const unsigned char zeros[SW_HEADER_SIZE + SW_MAX_SECTIONS * SW_SECTION_ENTRY_SIZE];
    if (o.f && fwrite(zeros, 1, (size_t)sec[0].size, o.f) != sec[0].size)
        o.failed = 1;
    e[0] = (sw_entry){SW_SEC_META, SW_SEC_COMPRESSED, 0, 0, 0};
    put_compressed(&o, &meta, &e[0], &sec[0]);
    e[1] = (sw_entry){SW_SEC_FUNCTIONS, SW_SEC_COMPRESSED, 0, 0, 0};
    put_compressed(&o, &names, &e[1], &e[0]);
    e[2] = (sw_entry){SW_SEC_RANK_INDEX, 0, 0, 0, 0};
    out_begin(&o, 0);
    put_index(&o, x, 0);
    out_end(&o, &e[2], &e[1]);
    e[3] = (sw_entry){SW_SEC_RANKS, 0, 0, 0, 0};
    out_begin(&o, 0);
    sw_gather_stream(g, block->p, kept ? block->n : 0, x->info + 1, 4, out_put, &o);
    out_end(&o, &e[3], &e[2]);
    e[4] = (sw_entry){SW_SEC_RANK_LIFECYCLE, 0, 0, 0, 0};
    out_begin(&o, 0);
    put_index(&o, x, 1);
    out_end(&o, &e[4], &e[3]);
    int at = SW_FIXED_SECTIONS;
    for (int k = 0; k < nmod; k++) {
        const unsigned char *mine = mods[k].mine.p;
        uint64_t n = kept ? mods[k].mine.n : 0;
        if (!present[k]) {
            sw_gather_stream(g, mine, n, x->lens + k, (size_t)x->nmod, discard, NULL);
            continue;
        }
        e[at] = (sw_entry){mods[k].id, mods[k].flags, 0, 0, 0};
        out_begin(&o, mods[k].flags);
        out_put(&o, mods[k].head.p, mods[k].head.n);
        sw_gather_stream(g, mine, n, x->lens + k, (size_t)x->nmod, out_put, &o);
        out_end(&o, &e[at], &e[at - 1]);
        at++;
    }
    int failed = o.failed || meta.failed || names.failed || (o.f && write_head(o.f, log_flags, nblocks, e, nsec));
    int err = sw_atomic_close(&file, failed);
    if (err)
        fprintf(stderr, "scalewise: cannot write log %s: %s\n", sw_job.logpath,
                meta.failed || names.failed ? strerror(ENOMEM) : strerror(err));
    else if (!sw_job.cfg.quiet && g->batches > (uint64_t)(1 + nsec - SW_FIXED_SECTIONS))
        /* more than one batch per gathered section: the bound split it */
        fprintf(stderr,
                "scalewise: profile of %d rank%s written to %s (gathered in %llu batches of at most %llu bytes)\n",
                sw_job.size, sw_job.size == 1 ? "" : "s", sw_job.logpath, (unsigned long long)g->batches,
                (unsigned long long)g->cap);
    else if (!sw_job.cfg.quiet)
        fprintf(stderr, "scalewise: profile of %d rank%s written to %s\n", sw_job.size, sw_job.size == 1 ? "" : "s",
                sw_job.logpath);
    free(meta.p);
    free(names.p);
}

/* Every module's record of this rank (pack_rank is collective unless the
 * rank aborts), and on rank 0 or an aborting rank the sections' heads. */
static int pack_modules(unsigned log_flags, int root, sw_module_part *out)
{
    unsigned n;
    int nout = 0;
    const sw_module *const *modules = sw_modules(&n);
    for (unsigned i = 0; i < n && nout < SW_MAX_MODULES; i++) {
        const sw_module *m = modules[i];
        if (!m->section || !m->pack_rank)
            continue;
        sw_module_part *part = &out[nout++];
        *part = (sw_module_part){m->section, m->raw ? 0 : SW_SEC_COMPRESSED, {0}, {0}};
        m->pack_rank(&part->mine, log_flags);
        if (part->mine.failed || part->mine.n > 0x7fffffff)
            part->mine.n = 0;
        if (m->pack_head && root)
            m->pack_head(&part->head);
    }
    return nout;
}

/* log_flags & SW_LOG_ABORTED: only this rank writes, without communicating. */
void sw_write_log(unsigned log_flags)
{
    int aborted = (log_flags & SW_LOG_ABORTED) != 0, root = aborted || sw_job.rank == 0;
    int n = aborted ? 1 : sw_job.size;
    sw_buf raw = {0}, z = {0};
    uint32_t flags = 0;
    sw_pack_rank(&raw, &flags);
    int ok = !raw.failed && compress_buf(&raw, &z) && z.n <= 0x7fffffff;
    int mine[4] = {sw_job.rank, ok ? (int)z.n : 0, ok ? (int)raw.n : 0, (int)flags};
    if (!ok)
        z.n = 0;
    uint64_t life[SW_LIFE_VALUES];
    sw_rank_lifecycle(life);
    sw_module_part mods[SW_MAX_MODULES];
    int nmod = pack_modules(log_flags, root, mods), lens[SW_MAX_MODULES + 1] = {0};
    for (int k = 0; k < nmod; k++)
        lens[k] = ok ? (int)mods[k].mine.n : 0;
    /* Rank 0's index: about 48 + 4 * nmod bytes per rank, all it keeps
     * of the whole job besides one batch (docs/log-gather.md). */
    int *info = root ? malloc(sizeof(int) * 4 * (size_t)n) : NULL;
    uint64_t *lives = root ? malloc(sizeof(uint64_t) * SW_LIFE_VALUES * (size_t)n) : NULL;
    int *all_lens = root ? malloc(sizeof(int) * (size_t)n * (size_t)(nmod + 1)) : NULL;
    sw_gather g;
    sw_gather_open(&g, aborted, info && lives && all_lens);
    if (g.ready && aborted) {
        memcpy(info, mine, sizeof mine);
        memcpy(lives, life, sizeof life);
        memcpy(all_lens, lens, sizeof(int) * (size_t)nmod);
    } else if (g.ready) {
        sw_pmpi.Gather(mine, 4, MPI_INT, info, 4, MPI_INT, 0, sw_job.comm);
        sw_pmpi.Gather(life, SW_LIFE_VALUES, MPI_UINT64_T, lives, SW_LIFE_VALUES, MPI_UINT64_T, 0, sw_job.comm);
        if (nmod)
            sw_pmpi.Gather(lens, nmod, MPI_INT, all_lens, nmod, MPI_INT, 0, sw_job.comm);
        uint64_t total = 0, largest = 0;
        for (int s = 0; root && s <= nmod; s++) { /* the blocks, then each module's records */
            uint64_t stream = 0;
            for (int i = 0; i < n; i++)
                stream += (uint64_t)(s == 0 ? info[4 * i + 1] : all_lens[i * nmod + s - 1]);
            total += stream;
            largest = stream > largest ? stream : largest;
        }
        sw_gather_plan(&g, total, largest);
    }
    sw_index x = {info, lives, all_lens, n, nmod};
    if (g.ready && (!aborted || ok))
        collect(&g, log_flags, &z, mods, nmod, root ? &x : NULL);
    else if (root && !aborted)
        fprintf(stderr, "scalewise: cannot write log %s: out of memory\n", sw_job.logpath);
    /* Leave no message in flight when MPI_Finalize starts: MPICH 4.0 over
     * UCX/TCP can hang in finalize while a rank's last send is still
     * being acknowledged. */
    if (!aborted)
        sw_pmpi.Barrier(sw_job.comm);
    sw_gather_close(&g);
    for (int k = 0; k < nmod; k++) {
        free(mods[k].mine.p);
        free(mods[k].head.p);
    }
    free(info);
    free(lives);
    free(all_lens);
    free(raw.p);
    free(z.p);
}
