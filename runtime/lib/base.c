/* The bottom of the runtime (base.h): globals, the real MPI functions,
 * configuration, the partial flag, thread records and the clock. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"

__thread sw_thread *sw_self __attribute__((tls_model("initial-exec")));
volatile int sw_on;
int sw_mt;
int sw_hot_local;
sw_pmpi_table sw_pmpi;
sw_job_state sw_job = {.lock = PTHREAD_MUTEX_INITIALIZER, .mt_lock = PTHREAD_MUTEX_INITIALIZER};

/* A thread refused a record (cap reached) points here: depth 1 makes every
 * sw_enter() return NULL at once, without retrying the allocation. */
static sw_thread refused_thread = {.depth = 1};

void *sw_resolve(const char *symbol)
{
    void *p = dlsym(RTLD_NEXT, symbol);
    if (!p) {
        fprintf(stderr, "scalewise: %s not found in the MPI library; is the profiler built for this MPI?\n", symbol);
        abort();
    }
    return p;
}

void sw_pmpi_resolve(void)
{
#define SW_PMPI_REQUIRED(name) sw_pmpi.name = (__typeof__(&PMPI_##name))sw_resolve("PMPI_" #name);
    SW_PMPI_LIST(SW_PMPI_REQUIRED)
#undef SW_PMPI_REQUIRED
    sw_pmpi.has_mpit = 1;
#define SW_PMPI_OPTIONAL(name)                                                       \
    if (!(sw_pmpi.name = (__typeof__(&PMPI_##name))dlsym(RTLD_NEXT, "PMPI_" #name))) \
        sw_pmpi.has_mpit = 0;
    SW_PMPI_T_LIST(SW_PMPI_OPTIONAL)
#undef SW_PMPI_OPTIONAL
}

static unsigned env_uint(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return dflt;
    unsigned long x = strtoul(v, &end, 10);
    if (*end || x == 0 || x > 1u << 30) {
        fprintf(stderr, "scalewise: ignoring %s=%s (expected a positive integer)\n", name, v);
        return dflt;
    }
    return (unsigned)x;
}

/* A switch that is on unless set to 0. */
static int env_on(const char *name)
{
    const char *v = getenv(name);
    return !(v && strcmp(v, "0") == 0);
}

void sw_load_config(void)
{
    sw_config *c = &sw_job.cfg;
    const char *d = getenv("SCALEWISE_DISABLE"), *q = getenv("SCALEWISE_QUIET");
    c->disabled = d && *d && strcmp(d, "0") != 0;
    c->quiet = q && *q && strcmp(q, "0") != 0;
    c->max_peers = env_uint("SCALEWISE_MAX_PEERS", 65536);
    c->max_requests = env_uint("SCALEWISE_MAX_REQUESTS", 65536);
    c->max_comms = env_uint("SCALEWISE_MAX_COMMS", 4096);
    c->max_threads = env_uint("SCALEWISE_MAX_THREADS", 64);
    c->max_sites = env_uint("SCALEWISE_MAX_SITES", 4096);
    c->max_pvars = env_uint("SCALEWISE_MPIT_MAX_PVARS", 256);
    c->max_cvars = env_uint("SCALEWISE_MPIT_MAX_CVARS", 4096);
    c->max_phases = env_uint("SCALEWISE_MAX_PHASES", 64);
    c->sites = env_on("SCALEWISE_SITES");
    const char *m = getenv("SCALEWISE_MPIT");
    c->mpit = !env_on("SCALEWISE_MPIT") ? 0 : m && strcmp(m, "all") == 0 ? SW_MPIT_ALL : 1;
    const char *h = getenv("SCALEWISE_HOT_LOCAL");
    sw_hot_local = h && *h && strcmp(h, "0") != 0;
    /* Merging takes bins in pairs: an odd count is rounded up. */
    unsigned nb = env_on("SCALEWISE_BINS") ? env_uint("SCALEWISE_BINS", 64) : 0;
    nb = nb < SW_MAX_TIME_BINS ? nb : SW_MAX_TIME_BINS;
    c->bins = nb + (nb & 1);
}

void sw_set_partial(void) { sw_job.partial = 1; }

/* Zeroed memory starting on a cache line (n a multiple of 64: the types are so aligned). */
static void *sw_zalloc_lines(size_t n)
{
    void *p = aligned_alloc(64, n);
    return p ? memset(p, 0, n) : NULL;
}

sw_thread *sw_thread_attach(void)
{
    sw_thread *thread = sw_zalloc_lines(sizeof *thread);
    sw_fnstat *stats = sw_zalloc_lines(SW_NFN * sizeof *stats);
    pthread_mutex_lock(&sw_job.lock);
    if (!thread || !stats || sw_job.nthreads >= sw_job.cfg.max_threads) {
        sw_job.partial = 1;
        pthread_mutex_unlock(&sw_job.lock);
        free(thread);
        free(stats);
        sw_self = &refused_thread;
        return NULL;
    }
    for (int i = 0; i < SW_NFN; i++)
        stats[i].tmin = UINT64_MAX;
    thread->stats = stats;
    thread->own_left = 1; /* the first call places the first sample (hot.c, sw_own_sample) */
    sw_table_init(&thread->peers);
    sw_table_init(&thread->sites);
    thread->next = sw_job.threads;
    sw_job.threads = thread;
    sw_job.nthreads++;
    pthread_mutex_unlock(&sw_job.lock);
    sw_self = thread;
    return thread;
}

int sw_thread_refused(const sw_thread *thread) { return thread == &refused_thread; }

int64_t sw_clock_ns(int clock_id)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t sw_clock_read_ticks(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t a = sw_ticks(), b = sw_ticks();
        best = b - a < best ? b - a : best;
    }
    return best;
}

/* TSC ticks to nanoseconds, measured over the job's own window; a window too
 * short for a precise ratio is stretched to 20 ms. */
void sw_clock_calibrate(void)
{
    uint64_t dt = sw_job.tsc1 - sw_job.tsc0;
    int64_t dn = sw_job.mono1 - sw_job.mono0;
    if (dn < 20000000) {
        while (sw_clock_ns(CLOCK_MONOTONIC) - sw_job.mono0 < 20000000)
            ;
        dt = sw_ticks() - sw_job.tsc0;
        dn = sw_clock_ns(CLOCK_MONOTONIC) - sw_job.mono0;
    }
    sw_job.ns_per_tick = dt ? (double)dn / (double)dt : 1.0;
}
