/* The job log: each rank packs and compresses its own record (record.c),
 * rank 0 collects them with one Gather of sizes and one Gatherv of blocks,
 * then every module's section the same way (module.h), and rank 0 writes
 * one file atomically (atomicfile.h).  Layout in docs/log-format.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "atomicfile.h"
#include "base.h"
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

typedef struct {
    uint32_t id;
    uint16_t flags;
    sw_buf data;
} sw_section;

/* Header, section table and sections, to a temporary file renamed into place. */
static int write_file(const char *path, unsigned log_flags, uint32_t nranks, uint32_t nblocks, sw_section *sec,
                      int nsec)
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
    sw_atomic_file file;
    FILE *f = sw_atomic_open(&file, path);
    if (f) {
        fwrite(head.p, 1, head.n, f);
        fwrite(table.p, 1, table.n, f);
        for (int i = 0; i < nsec; i++)
            fwrite(sec[i].data.p, 1, sec[i].data.n, f);
    }
    free(head.p);
    free(table.p);
    return sw_atomic_close(&file, 0);
}

/* The fixed sections every log has, then one per module that packed one. */
#define SW_FIXED_SECTIONS 5
#define SW_MAX_SECTIONS   32

/* Rank 0's part: the index and the blocks from every rank, the modules'
 * sections (gathered, uncompressed), then the file. */
static void write_root(unsigned log_flags, const int *info, const uint64_t *life, const unsigned char *blocks,
                       uint32_t nblocks, const sw_section *modules, int nmodules)
{
    sw_section sec[SW_MAX_SECTIONS] = {{SW_SEC_META, SW_SEC_COMPRESSED, {0}},
                                       {SW_SEC_FUNCTIONS, SW_SEC_COMPRESSED, {0}},
                                       {SW_SEC_RANK_INDEX, 0, {0}},
                                       {SW_SEC_RANKS, 0, {0}},
                                       {SW_SEC_RANK_LIFECYCLE, 0, {0}}};
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
    }
    if (nblocks < (uint32_t)sw_job.size)
        log_flags |= SW_LOG_PARTIAL;
    sec[3].data = (sw_buf){(unsigned char *)blocks, off, off, 0};
    pack_meta(&meta, log_flags);
    pack_functions(&names);
    int err = ENOMEM;
    /* The modules' sections are optional: a log without one (SCALEWISE_SITES=0,
     * or no memory to gather it) is still whole. */
    int nsec = SW_FIXED_SECTIONS;
    for (int k = 0; k < nmodules && nsec < SW_MAX_SECTIONS; k++) {
        sw_section *to = &sec[nsec];
        if (modules[k].data.n && !modules[k].data.failed) {
            to->id = modules[k].id;
            to->flags = modules[k].flags;
            if (to->flags & SW_SEC_COMPRESSED) {
                nsec += compress_buf(&modules[k].data, &to->data);
            } else {
                to->data = (sw_buf){0};
                put(&to->data, modules[k].data.p, modules[k].data.n);
                nsec += !to->data.failed;
            }
        }
    }
    if (!meta.failed && !names.failed && !sec[2].data.failed && !sec[4].data.failed &&
        compress_buf(&meta, &sec[0].data) && compress_buf(&names, &sec[1].data))
        err = write_file(sw_job.logpath, log_flags, (uint32_t)sw_job.size, nblocks, sec, nsec);
    if (err)
        fprintf(stderr, "scalewise: cannot write log %s: %s\n", sw_job.logpath, strerror(err));
    else if (!sw_job.cfg.quiet)
        fprintf(stderr, "scalewise: profile of %d rank%s written to %s\n", sw_job.size, sw_job.size == 1 ? "" : "s",
                sw_job.logpath);
    free(meta.p);
    free(names.p);
    free(sec[0].data.p);
    free(sec[1].data.p);
    free(sec[2].data.p);
    free(sec[4].data.p);
    for (int k = SW_FIXED_SECTIONS; k < nsec; k++)
        free(sec[k].data.p);
}

/* Every rank's record of a module's section to rank 0 (counts non-NULL
 * there), kept in rank order for the ranks whose block arrived (info: rank,
 * stored size, ...). */
static void gather_section(const sw_buf *mine, sw_buf *out, const int *info, int *counts, int *displs)
{
    int n = sw_job.size, len = (int)mine->n;
    sw_pmpi.Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, sw_job.comm);
    unsigned char *all = NULL;
    if (counts && displs && info) {
        int64_t total = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = (int)total;
            total += counts[i];
        }
        all = total <= 0x7fffffff ? malloc((size_t)total + 1) : NULL;
    }
    sw_pmpi.Gatherv(mine->p, len, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, sw_job.comm);
    for (int i = 0; all && i < n; i++)
        if (info[4 * i + 1] > 0)
            put(out, all + displs[i], (size_t)counts[i]);
    free(all);
}

/* Every module's section: this rank's record, after rank 0's head; gathered
 * to rank 0 unless the rank aborts, when its own record is the section.
 * Returns how many of out[] were filled. */
static int module_sections(unsigned log_flags, sw_section *out, const int *info, int *counts, int *displs)
{
    int aborted = (log_flags & SW_LOG_ABORTED) != 0, root = sw_job.rank == 0, nout = 0;
    unsigned n;
    const sw_module *const *modules = sw_modules(&n);
    for (unsigned i = 0; i < n && nout < SW_MAX_SECTIONS - SW_FIXED_SECTIONS; i++) {
        const sw_module *m = modules[i];
        if (!m->section || !m->pack_rank)
            continue;
        sw_buf mine = {0};
        sw_section *sec = &out[nout++];
        *sec = (sw_section){m->section, m->raw ? 0 : SW_SEC_COMPRESSED, {0}};
        m->pack_rank(&mine, log_flags);
        if (mine.failed || mine.n > 0x7fffffff)
            mine.n = 0;
        if (m->pack_head && (root || aborted))
            m->pack_head(&sec->data);
        if (aborted)
            put(&sec->data, mine.p, mine.n);
        else
            gather_section(&mine, &sec->data, info, root ? counts : NULL, displs);
        free(mine.p);
    }
    return nout;
}

/* log_flags & SW_LOG_ABORTED: only this rank writes, without communicating. */
void sw_write_log(unsigned log_flags)
{
    sw_buf raw = {0}, z = {0};
    uint32_t flags = 0;
    sw_pack_rank(&raw, &flags);
    int ok = !raw.failed && compress_buf(&raw, &z);
    int mine[4] = {sw_job.rank, ok ? (int)z.n : 0, ok ? (int)raw.n : 0, (int)flags};
    uint64_t life[SW_LIFE_VALUES];
    sw_rank_lifecycle(life);
    sw_section modules[SW_MAX_SECTIONS - SW_FIXED_SECTIONS];
    int nmodules;
    if (log_flags & SW_LOG_ABORTED) {
        nmodules = module_sections(log_flags, modules, NULL, NULL, NULL);
        if (ok)
            write_root(log_flags, mine, life, z.p, 1, modules, nmodules);
    } else {
        int root = sw_job.rank == 0, n = sw_job.size;
        int *info = root ? malloc(sizeof(int) * 4 * (size_t)n) : NULL;
        int *counts = root ? malloc(sizeof(int) * (size_t)n) : NULL,
            *displs = root ? malloc(sizeof(int) * (size_t)n) : NULL;
        uint64_t *lives = root ? malloc(sizeof(uint64_t) * SW_LIFE_VALUES * (size_t)n) : NULL;
        sw_pmpi.Gather(mine, 4, MPI_INT, info, 4, MPI_INT, 0, sw_job.comm);
        sw_pmpi.Gather(life, SW_LIFE_VALUES, MPI_UINT64_T, lives, SW_LIFE_VALUES, MPI_UINT64_T, 0, sw_job.comm);
        unsigned char *all = NULL;
        int64_t total = 0;
        if (root && info && counts && displs && lives) {
            for (int i = 0; i < n; i++) {
                counts[i] = info[4 * i + 1];
                displs[i] = (int)total;
                total += counts[i];
            }
            all = total <= 0x7fffffff ? malloc((size_t)total + 1) : NULL;
        }
        sw_pmpi.Gatherv(z.p, mine[1], MPI_BYTE, all, counts, displs, MPI_BYTE, 0, sw_job.comm);
        nmodules = module_sections(log_flags, modules, info, counts, displs);
        /* Leave no message in flight when MPI_Finalize starts: MPICH 4.0 over
         * UCX/TCP can hang in finalize while a rank's last send is still
         * being acknowledged. */
        sw_pmpi.Barrier(sw_job.comm);
        if (root && all) {
            /* A rank that could not pack its record sends nothing: drop it. */
            uint32_t kept = 0;
            for (int i = 0; i < n; i++)
                if (info[4 * i + 1] > 0) {
                    memmove(lives + SW_LIFE_VALUES * kept, lives + SW_LIFE_VALUES * i,
                            sizeof(uint64_t) * SW_LIFE_VALUES);
                    memmove(info + 4 * kept++, info + 4 * i, sizeof(int) * 4);
                }
            write_root(log_flags, info, lives, all, kept, modules, nmodules);
        } else if (root) {
            fprintf(stderr, "scalewise: cannot write log %s: out of memory\n", sw_job.logpath);
        }
        free(all);
        free(lives);
        free(info);
        free(counts);
        free(displs);
    }
    for (int k = 0; k < nmodules; k++)
        free(modules[k].data.p);
    free(raw.p);
    free(z.p);
}
