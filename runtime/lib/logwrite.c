/* The job log: each rank packs and compresses its own record, rank 0
 * collects them with one Gather of sizes and one Gatherv of blocks, then
 * writes one file atomically (temporary file, fsync, rename).  Layout in
 * docs/log-format.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <dlfcn.h>

#include "buf.h"
#include "job.h"
#include "bins.h"
#include "logwrite.h"
#include "mpit.h"
#include "phases.h"
#include "setup.h"
#include "sites.h"

#ifndef SW_VERSION
#define SW_VERSION "unknown"
#endif

static uint64_t ns(uint64_t ticks) { return (uint64_t)((double)ticks * sw_J.ns_per_tick + 0.5); }

static int by_peer(const void *a, const void *b)
{
    uint32_t x = ((const sw_peer *)a)->peer1, y = ((const sw_peer *)b)->peer1;
    return (x > y) - (x < y);
}

/* Sum every thread's slab and peer row into one record. */
static void merge(sw_fnstat *tot, sw_buf *peers, uint64_t *mpi_ticks)
{
    for (int f = 0; f < SW_NFN; f++)
        tot[f].tmin = UINT64_MAX;
    *mpi_ticks = sw_J.mt_ticks;
    for (sw_thread *T = sw_J.threads; T; T = T->next) {
        *mpi_ticks += T->mpi_ticks;
        for (int f = 0; f < SW_NFN; f++) {
            sw_fnstat *s = &T->stats[f], *t = &tot[f];
            if (!s->calls && !s->bytes)
                continue;
            t->calls += s->calls;
            t->ticks += s->ticks;
            t->bytes += s->bytes;
            t->tmin = s->tmin < t->tmin ? s->tmin : t->tmin;
            t->tmax = s->tmax > t->tmax ? s->tmax : t->tmax;
            for (int k = 0; k < SW_NBINS; k++)
                t->hist[k] += s->hist[k];
        }
        for (unsigned i = 0; T->peers.slots && i <= T->peers.mask; i++)
            if (T->peers.slots[i].peer1)
                put(peers, &T->peers.slots[i], sizeof(sw_peer));
    }
    size_t n = peers->n / sizeof(sw_peer), out = 0;
    sw_peer *p = (sw_peer *)peers->p;
    if (n)
        qsort(p, n, sizeof *p, by_peer);
    for (size_t i = 0; i < n; i++) {
        if (out && p[out - 1].peer1 == p[i].peer1) {
            p[out - 1].messages += p[i].messages;
            p[out - 1].bytes += p[i].bytes;
        } else {
            p[out++] = p[i];
        }
    }
    peers->n = out * sizeof(sw_peer);
}

/* This rank's record, uncompressed (docs/log-format.md, "Rank record"). */
static void pack_rank(sw_buf *b, uint32_t *flags_out)
{
    static sw_fnstat tot[SW_NFN];
    sw_buf peers = {0};
    uint64_t mpi_ticks;
    memset(tot, 0, sizeof tot);
    merge(tot, &peers, &mpi_ticks);
    uint32_t flags = (sw_J.partial || peers.failed) ? SW_RANK_PARTIAL : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t wall = ns(sw_J.tsc1 - sw_J.tsc0), mpi = ns(mpi_ticks);
    put32(b, (uint32_t)sw_J.rank);
    put32(b, flags);
    put32(b, (uint32_t)getpid());
    put32(b, sw_J.nthreads);
    put64(b, wall);
    put64(b, mpi < wall ? mpi : wall);
    put64(b, (uint64_t)sw_J.real0);
    put64(b, (uint64_t)ru.ru_maxrss * 1024);
    put16(b, (uint16_t)strlen(host));
    puts_(b, host);
    uint32_t nfn = 0;
    for (int f = 0; f < SW_NFN; f++)
        nfn += tot[f].calls || tot[f].bytes;
    put32(b, nfn);
    for (int f = 0; f < SW_NFN; f++) {
        sw_fnstat *t = &tot[f];
        if (!t->calls && !t->bytes)
            continue;
        uint16_t nbins = 0;
        for (int k = 0; k < SW_NBINS; k++)
            nbins += t->hist[k] != 0;
        put16(b, (uint16_t)f);
        put16(b, nbins);
        put64(b, t->calls);
        put64(b, ns(t->ticks));
        put64(b, t->calls ? ns(t->tmin) : 0);
        put64(b, ns(t->tmax));
        put64(b, t->bytes);
        for (int k = 0; k < SW_NBINS; k++)
            if (t->hist[k]) {
                put8(b, (uint8_t)k);
                put64(b, t->hist[k]);
            }
    }
    uint32_t npeer = (uint32_t)(peers.n / sizeof(sw_peer));
    put32(b, npeer);
    for (uint32_t i = 0; i < npeer; i++) {
        sw_peer *p = (sw_peer *)peers.p + i;
        put32(b, p->peer1 - 1);
        put64(b, p->messages);
        put64(b, p->bytes);
    }
    free(peers.p);
    *flags_out = flags;
}

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
    return p == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : p == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
         : p == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SINGLE";
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
    snprintf(num, sizeof num, ",\"mpi_version\":\"%d.%d\",\"nranks\":%d,\"thread_level\":", MPI_VERSION, MPI_SUBVERSION, sw_J.size);
    puts_(b, num);
    json_str(b, thread_level(sw_J.provided));
    snprintf(num, sizeof num, ",\"start_time\":%.6f,\"end_time\":%.6f,\"ns_per_tick\":%.9f", (double)sw_J.real0 / 1e9, (double)sw_J.real1 / 1e9, sw_J.ns_per_tick);
    puts_(b, num);
    const char *job = getenv("SLURM_JOB_ID");
    if (job) {
        puts_(b, ",\"slurm_job_id\":");
        json_str(b, job);
    }
    if (log_flags & SW_LOG_ABORTED) {
        snprintf(num, sizeof num, ",\"aborted_by_rank\":%d,\"abort_errorcode\":%d", sw_J.rank, sw_J.abort_code);
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

typedef struct {
    uint32_t id;
    uint16_t flags;
    sw_buf data;
} sw_section;

/* Header, section table and sections, to a temporary file renamed into place. */
static int write_file(const char *path, unsigned log_flags, uint32_t nranks, uint32_t nblocks, sw_section *sec, int nsec)
{
    sw_buf head = {0};
    uint64_t off = SW_HEADER_SIZE + (uint64_t)nsec * SW_SECTION_ENTRY_SIZE, size = off;
    for (int i = 0; i < nsec; i++)
        size += sec[i].data.n;
    put(&head, SW_MAGIC, SW_MAGIC_LEN);
    put32(&head, SW_BYTE_ORDER_MARK);
    put16(&head, SW_FORMAT_MAJOR);
    put16(&head, SW_FORMAT_MINOR);
    put32(&head, log_flags);
    put32(&head, nranks);
    put32(&head, nblocks);
    put32(&head, (uint32_t)nsec);
    put64(&head, size);
    sw_buf table = {0};
    for (int i = 0; i < nsec; i++) {
        put32(&table, sec[i].id);
        put16(&table, 1); /* section version */
        put16(&table, sec[i].flags);
        put64(&table, off);
        put64(&table, sec[i].data.n);
        put32(&table, (uint32_t)crc32(0, sec[i].data.p, (uInt)sec[i].data.n));
        put32(&table, 0);
        off += sec[i].data.n;
    }
    uLong crc = crc32(crc32(0, head.p, (uInt)head.n), table.p, (uInt)table.n);
    put32(&head, (uint32_t)crc);
    put32(&head, 0);
    if (head.failed || table.failed) {
        free(head.p);
        free(table.p);
        return ENOMEM;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    int err = f ? 0 : errno;
    if (f) {
        fwrite(head.p, 1, head.n, f);
        fwrite(table.p, 1, table.n, f);
        for (int i = 0; i < nsec; i++)
            fwrite(sec[i].data.p, 1, sec[i].data.n, f);
        if (fflush(f) != 0 || fsync(fileno(f)) != 0)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err)
            err = errno;
        if (!err && rename(tmp, path) != 0)
            err = errno;
        if (err)
            unlink(tmp);
    }
    free(head.p);
    free(table.p);
    return err;
}

/* The object a return address lies in, as an absolute path, and the
 * address's offset from the object's load base: the same on every rank
 * whatever the address randomisation.  "" when no object holds it. */
static const char *site_object(uintptr_t ra, uint64_t *offset)
{
    static char exe[4096];
    Dl_info info;
    *offset = ra;
    if (ra <= 1 || !dladdr((void *)ra, &info) || !info.dli_fname)
        return "";
    *offset = ra - (uintptr_t)info.dli_fbase;
    if (info.dli_fname[0] == '/')
        return info.dli_fname;
    /* The main program: glibc names it as it was started (argv[0]). */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    return exe;
}

/* This rank's call-site record (docs/log-format.md, "call sites"). */
static void pack_sites(sw_buf *b)
{
    sw_site *sites;
    size_t n = sw_sites_merged(&sites);
    put32(b, (uint32_t)sw_J.rank);
    put32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        uint64_t offset;
        const char *obj = site_object(sites[i].ra, &offset);
        size_t len = strlen(obj);
        len = len < SW_MAX_PATH ? len : SW_MAX_PATH;
        put16(b, (uint16_t)sites[i].fn);
        put16(b, (uint16_t)len);
        put(b, obj, len);
        put64(b, offset);
        put64(b, sites[i].calls);
        put64(b, ns(sites[i].ticks));
        put64(b, sites[i].bytes);
    }
    free(sites);
}

/* This rank's rank lifecycle values, in the section's order after the rank. */
static void lifecycle_values(uint64_t out[SW_LIFE_VALUES])
{
    out[0] = sw_J.rss_init_start;
    out[1] = sw_J.rss_init_end;
    out[2] = sw_J.rss_finalize;
    out[3] = ns(sw_J.finalize_ticks);
}

/* n ticks cut into pieces whose running totals are rounded to ns: the pieces'
 * ns add up to exactly ns(total), the value the rank record holds. */
typedef struct {
    uint64_t ns_so_far;
} sw_ns_run;
static uint64_t ns_piece(sw_ns_run *r, uint64_t ticks_so_far)
{
    uint64_t now = ns(ticks_so_far), piece = now > r->ns_so_far ? now - r->ns_so_far : 0;
    r->ns_so_far = now > r->ns_so_far ? now : r->ns_so_far;
    return piece;
}

/* This rank's time bins and phases (docs/log-format.md, "timeline"). */
static void pack_timeline(sw_buf *b)
{
    unsigned np;
    int capped;
    const sw_phase *ph = sw_phases(&np, &capped);
    uint64_t wall = sw_J.tsc1 - sw_J.tsc0, m = 0;
    uint32_t nb = sw_B.n && wall ? (uint32_t)(((wall - 1) >> sw_B.shift) + 1) : 0;
    put32(b, (uint32_t)sw_J.rank);
    put32(b, capped ? SW_TIMELINE_CAPPED : 0);
    put64(b, sw_B.n ? ns(1ull << sw_B.shift) : 0);
    put32(b, nb);
    sw_ns_run mpi_run = {0}, compute_run = {0};
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t edge = (uint64_t)(i + 1) << sw_B.shift;
        edge = edge < wall ? edge : wall;
        m += sw_B.mpi[i];
        m = m < edge ? m : edge;
        put64(b, ns_piece(&mpi_run, m));
        put64(b, ns_piece(&compute_run, edge - m));
    }
    put32(b, np);
    for (unsigned i = 0; i < np; i++) {
        const sw_phase *p = &ph[i];
        uint64_t pw = ns(p->wall_ticks), pm = ns(p->mpi_ticks);
        put8(b, p->kind);
        put16(b, (uint16_t)strlen(p->name));
        puts_(b, p->name);
        put64(b, pw);
        put64(b, pm < pw ? pm : pw);
        uint32_t nfn = 0;
        for (int f = 0; f < SW_NFN; f++)
            nfn += p->fn[f].calls || p->fn[f].bytes;
        put32(b, nfn);
        for (int f = 0; f < SW_NFN; f++)
            if (p->fn[f].calls || p->fn[f].bytes) {
                put16(b, (uint16_t)f);
                put64(b, p->fn[f].calls);
                put64(b, ns(p->fn[f].ticks));
                put64(b, p->fn[f].bytes);
            }
    }
}

/* This rank's setup entry as gathered: the flags, then the values. */
#define SW_SETUP_WORDS (1 + SW_SETUP_VALUES)
static void setup_words(unsigned log_flags, uint64_t out[SW_SETUP_WORDS])
{
    uint32_t flags;
    sw_setup_values((log_flags & SW_LOG_ABORTED) != 0, &flags, out + 1);
    out[0] = flags;
}

/* Rank 0's part: the index and the blocks from every rank, then the file. */
static void write_root(unsigned log_flags, const int *info, const uint64_t *life, const uint64_t *setup,
                       const unsigned char *blocks, uint32_t nblocks, const sw_buf *sites, const sw_buf *timeline,
                       const sw_buf *mpit)
{
    sw_section sec[9] = {{SW_SEC_META, SW_SEC_COMPRESSED, {0}}, {SW_SEC_FUNCTIONS, SW_SEC_COMPRESSED, {0}},
                         {SW_SEC_RANK_INDEX, 0, {0}}, {SW_SEC_RANKS, 0, {0}}, {SW_SEC_RANK_LIFECYCLE, 0, {0}},
                         {SW_SEC_RANK_SETUP, 0, {0}}, {SW_SEC_CALL_SITES, SW_SEC_COMPRESSED, {0}},
                         {SW_SEC_TIMELINE, SW_SEC_COMPRESSED, {0}}, {SW_SEC_MPIT, SW_SEC_COMPRESSED, {0}}};
    sw_buf meta = {0}, names = {0};
    uint64_t off = 0;
    for (uint32_t i = 0; i < nblocks; i++) {
        const int *e = info + 4 * i; /* rank, stored size, raw size, flags */
        if (e[3] & SW_RANK_PARTIAL)
            log_flags |= SW_LOG_PARTIAL;
        put32(&sec[2].data, (uint32_t)e[0]);
        put32(&sec[2].data, (uint32_t)e[3]);
        put64(&sec[2].data, off);
        put32(&sec[2].data, (uint32_t)e[1]);
        put32(&sec[2].data, (uint32_t)e[2]);
        off += (uint64_t)e[1];
        put32(&sec[4].data, (uint32_t)e[0]);
        put32(&sec[4].data, 0);
        for (int k = 0; k < SW_LIFE_VALUES; k++)
            put64(&sec[4].data, life[SW_LIFE_VALUES * i + k]);
        const uint64_t *w = setup + SW_SETUP_WORDS * i;
        put32(&sec[5].data, (uint32_t)e[0]);
        put32(&sec[5].data, (uint32_t)w[0]);
        for (int k = 1; k < SW_SETUP_WORDS; k++)
            put64(&sec[5].data, w[k]);
    }
    if (nblocks < (uint32_t)sw_J.size)
        log_flags |= SW_LOG_PARTIAL;
    sec[3].data = (sw_buf){(unsigned char *)blocks, off, off, 0};
    pack_meta(&meta, log_flags);
    pack_functions(&names);
    int err = ENOMEM;
    /* Call sites, the timeline and MPI_T are optional: a log without them
     * (SCALEWISE_SITES=0, or no memory to gather them) is still whole. */
    int nsec = 6;
    const sw_buf *optional[3] = {sites, timeline, mpit};
    for (int k = 0; k < 3; k++) {
        sw_section *to = &sec[nsec];
        if (optional[k]->n && !optional[k]->failed) {
            *to = sec[6 + k];
            nsec += compress_buf(optional[k], &to->data);
        }
    }
    if (!meta.failed && !names.failed && !sec[2].data.failed && !sec[4].data.failed && !sec[5].data.failed && compress_buf(&meta, &sec[0].data) && compress_buf(&names, &sec[1].data))
        err = write_file(sw_J.logpath, log_flags, (uint32_t)sw_J.size, nblocks, sec, nsec);
    if (err)
        fprintf(stderr, "scalewise: cannot write log %s: %s\n", sw_J.logpath, strerror(err));
    else if (!sw_J.cfg.quiet)
        fprintf(stderr, "scalewise: profile of %d rank%s written to %s\n", sw_J.size, sw_J.size == 1 ? "" : "s", sw_J.logpath);
    free(meta.p);
    free(names.p);
    free(sec[0].data.p);
    free(sec[1].data.p);
    free(sec[2].data.p);
    free(sec[4].data.p);
    free(sec[5].data.p);
    for (int k = 6; k < nsec; k++)
        free(sec[k].data.p);
}

/* Every rank's record of an optional section (call sites, timeline, MPI_T) to rank
 * 0 (counts non-NULL there), kept in rank order for the ranks whose block
 * arrived (info: rank, stored size, ...). */
static void gather_section(const sw_buf *mine, sw_buf *out, const int *info, int *counts, int *displs)
{
    int n = sw_J.size, len = (int)mine->n;
    sw_pmpi.Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, sw_J.comm);
    unsigned char *all = NULL;
    if (counts && displs && info) {
        int64_t total = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = (int)total;
            total += counts[i];
        }
        all = total <= 0x7fffffff ? malloc((size_t)total + 1) : NULL;
    }
    sw_pmpi.Gatherv(mine->p, len, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, sw_J.comm);
    for (int i = 0; all && i < n; i++)
        if (info[4 * i + 1] > 0)
            put(out, all + displs[i], (size_t)counts[i]);
    free(all);
}

/* log_flags & SW_LOG_ABORTED: only this rank writes, without communicating. */
void sw_write_log(unsigned log_flags)
{
    sw_buf raw = {0}, z = {0};
    uint32_t flags = 0;
    pack_rank(&raw, &flags);
    int ok = !raw.failed && compress_buf(&raw, &z);
    int mine[4] = {sw_J.rank, ok ? (int)z.n : 0, ok ? (int)raw.n : 0, (int)flags};
    uint64_t life[SW_LIFE_VALUES];
    lifecycle_values(life);
    uint64_t setup[SW_SETUP_WORDS];
    setup_words(log_flags, setup);
    sw_buf sites = {0}, timeline = {0}, pvars = {0}, mpit = {0};
    if (sw_sites_on)
        pack_sites(&sites);
    if (sites.failed || sites.n > 0x7fffffff)
        sites.n = 0;
    /* Bins as wide on every rank, so bin k is the same span of time on all. */
    int shift = (int)sw_bins_cover(sw_J.tsc1 - sw_J.tsc0, 0), widest = shift;
    if (!(log_flags & SW_LOG_ABORTED))
        sw_pmpi.Allreduce(&shift, &widest, 1, MPI_INT, MPI_MAX, sw_J.comm);
    sw_bins_cover(sw_J.tsc1 - sw_J.tsc0, (unsigned)widest);
    pack_timeline(&timeline);
    if (timeline.failed || timeline.n > 0x7fffffff)
        timeline.n = 0;
    sw_mpit_pack_rank(&pvars);
    if (pvars.failed || pvars.n > 0x7fffffff)
        pvars.n = 0;
    if (sw_J.rank == 0 || (log_flags & SW_LOG_ABORTED))
        sw_mpit_pack_head(&mpit);
    if (log_flags & SW_LOG_ABORTED) {
        put(&mpit, pvars.p, pvars.n);
        if (ok)
            write_root(log_flags, mine, life, setup, z.p, 1, &sites, &timeline, &mpit);
    } else {
        int root = sw_J.rank == 0, n = sw_J.size;
        int *info = root ? malloc(sizeof(int) * 4 * (size_t)n) : NULL;
        int *counts = root ? malloc(sizeof(int) * (size_t)n) : NULL, *displs = root ? malloc(sizeof(int) * (size_t)n) : NULL;
        uint64_t *lives = root ? malloc(sizeof(uint64_t) * SW_LIFE_VALUES * (size_t)n) : NULL;
        uint64_t *setups = root ? malloc(sizeof(uint64_t) * SW_SETUP_WORDS * (size_t)n) : NULL;
        sw_pmpi.Gather(mine, 4, MPI_INT, info, 4, MPI_INT, 0, sw_J.comm);
        sw_pmpi.Gather(life, SW_LIFE_VALUES, MPI_UINT64_T, lives, SW_LIFE_VALUES, MPI_UINT64_T, 0, sw_J.comm);
        sw_pmpi.Gather(setup, SW_SETUP_WORDS, MPI_UINT64_T, setups, SW_SETUP_WORDS, MPI_UINT64_T, 0, sw_J.comm);
        unsigned char *all = NULL;
        int64_t total = 0;
        if (root && info && counts && displs && lives && setups) {
            for (int i = 0; i < n; i++) {
                counts[i] = info[4 * i + 1];
                displs[i] = (int)total;
                total += counts[i];
            }
            all = total <= 0x7fffffff ? malloc((size_t)total + 1) : NULL;
        }
        sw_pmpi.Gatherv(z.p, mine[1], MPI_BYTE, all, counts, displs, MPI_BYTE, 0, sw_J.comm);
        sw_buf site_all = {0}, timeline_all = {0};
        gather_section(&sites, &site_all, info, root ? counts : NULL, displs);
        gather_section(&timeline, &timeline_all, info, root ? counts : NULL, displs);
        gather_section(&pvars, &mpit, info, root ? counts : NULL, displs);
        /* Leave no message in flight when MPI_Finalize starts: MPICH 4.0 over
         * UCX/TCP can hang in finalize while a rank's last send is still
         * being acknowledged. */
        sw_pmpi.Barrier(sw_J.comm);
        if (root && all) {
            /* A rank that could not pack its record sends nothing: drop it. */
            uint32_t kept = 0;
            for (int i = 0; i < n; i++)
                if (info[4 * i + 1] > 0) {
                    memmove(lives + SW_LIFE_VALUES * kept, lives + SW_LIFE_VALUES * i, sizeof(uint64_t) * SW_LIFE_VALUES);
                    memmove(setups + SW_SETUP_WORDS * kept, setups + SW_SETUP_WORDS * i, sizeof(uint64_t) * SW_SETUP_WORDS);
                    memmove(info + 4 * kept++, info + 4 * i, sizeof(int) * 4);
                }
            write_root(log_flags, info, lives, setups, all, kept, &site_all, &timeline_all, &mpit);
        } else if (root) {
            fprintf(stderr, "scalewise: cannot write log %s: out of memory\n", sw_J.logpath);
        }
        free(all);
        free(site_all.p);
        free(timeline_all.p);
        free(lives);
        free(setups);
        free(info);
        free(counts);
        free(displs);
    }
    free(raw.p);
    free(z.p);
    free(sites.p);
    free(timeline.p);
    free(pvars.p);
    free(mpit.p);
}
