/* The rank record (docs/log-format.md, "Rank record"): every thread's
 * statistics and point-to-point row summed into one block, and the rank's
 * lifecycle entry.  The log writer (logwrite.c) gathers both. */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base.h"
#include "p2p.h"
#include "record.h"

static int by_peer(const void *a, const void *b)
{
    uintptr_t x = ((const sw_peer *)a)->peer1, y = ((const sw_peer *)b)->peer1;
    return (x > y) - (x < y);
}

/* Sum every thread's slab and peer row into one record. */
static void merge(sw_fnstat *tot, sw_buf *peers, uint64_t *mpi_ticks)
{
    for (int f = 0; f < SW_NFN; f++)
        tot[f].tmin = UINT64_MAX;
    *mpi_ticks = sw_job.mt_ticks;
    for (sw_thread *thread = sw_job.threads; thread; thread = thread->next) {
        *mpi_ticks += thread->mpi_ticks;
        for (int f = 0; f < SW_NFN; f++) {
            sw_fnstat *s = &thread->stats[f], *t = &tot[f];
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
        const sw_peer *row = thread->peers.slots;
        for (unsigned i = 0; !sw_table_empty(&thread->peers) && i <= thread->peers.mask; i++)
            if (row[i].peer1)
                put(peers, &row[i], sizeof(sw_peer));
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
void sw_pack_rank(sw_buf *b, uint32_t *flags_out)
{
    static sw_fnstat tot[SW_NFN];
    sw_buf peers = {0};
    uint64_t mpi_ticks;
    memset(tot, 0, sizeof tot);
    merge(tot, &peers, &mpi_ticks);
    uint32_t flags = (sw_job.partial || peers.failed) ? SW_RANK_PARTIAL : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t wall = sw_ns(sw_job.tsc1 - sw_job.tsc0), mpi = sw_ns(mpi_ticks);
    put32(b, (uint32_t)sw_job.rank);
    put32(b, flags);
    put32(b, (uint32_t)getpid());
    put32(b, sw_job.nthreads);
    put64(b, wall);
    put64(b, mpi < wall ? mpi : wall);
    put64(b, (uint64_t)sw_job.real0);
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
        put64(b, sw_ns(t->ticks));
        put64(b, t->calls ? sw_ns(t->tmin) : 0);
        put64(b, sw_ns(t->tmax));
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

/* This rank's rank lifecycle values, in the section's order after the rank. */
void sw_rank_lifecycle(uint64_t out[SW_LIFE_VALUES])
{
    out[0] = sw_job.rss_init_start;
    out[1] = sw_job.rss_init_end;
    out[2] = sw_job.rss_finalize;
    out[3] = sw_ns(sw_job.finalize_ticks);
}
