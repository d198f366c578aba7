/* Life cycle: start at MPI_Init/Init_thread, stop at MPI_Finalize or
 * MPI_Abort; per-thread slabs; MPI_THREAD_MULTIPLE time accounting. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "hot.h"
#include "job.h"
#include "logwrite.h"
#include "mpit.h"
#include "phases.h"
#include "setup.h"
#include "sites.h"
#include "trace.h"

__thread sw_thread *sw_self __attribute__((tls_model("initial-exec")));
volatile int sw_on;
int sw_mt;
volatile unsigned sw_type_epoch;
sw_pmpi_table sw_pmpi;
sw_job sw_J = {.lock = PTHREAD_MUTEX_INITIALIZER, .mt_lock = PTHREAD_MUTEX_INITIALIZER};

/* A thread refused a slab (cap reached) points here: depth 1 makes every
 * sw_enter() return NULL at once, without retrying the allocation. */
static sw_thread sw_refused = {.depth = 1};

void *sw_resolve(const char *symbol)
{
    void *p = dlsym(RTLD_NEXT, symbol);
    if (!p) {
        fprintf(stderr, "scalewise: %s not found in the MPI library; is the profiler built for this MPI?\n", symbol);
        abort();
    }
    return p;
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

static void load_config(sw_config *c)
{
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
    const char *s = getenv("SCALEWISE_SITES");
    sw_sites_on = !(s && strcmp(s, "0") == 0);
    const char *b = getenv("SCALEWISE_BINS");
    sw_bins_on = !(b && strcmp(b, "0") == 0);
    /* Merging takes bins in pairs: an odd count is rounded up. */
    unsigned nb = sw_bins_on ? env_uint("SCALEWISE_BINS", 64) : 0;
    nb = nb < SW_MAX_TIME_BINS ? nb : SW_MAX_TIME_BINS;
    c->bins = nb + (nb & 1);
}

static int64_t clock_ns(int clock_id)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sw_set_partial(void) { sw_J.partial = 1; }

/* Resident memory now (the second field of /proc/self/statm, in pages);
 * 0 where it cannot be read.  read(2) only: no allocation inside MPI_Init. */
static uint64_t resident_bytes(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    unsigned long long size = 0, resident = 0;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return 0;
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Called by the MPI_Init wrappers before the real call. */
void sw_init_begin(void)
{
    if (!sw_J.active)
        sw_J.rss_init_start = resident_bytes();
}

sw_thread *sw_thread_attach(void)
{
    sw_thread *T = calloc(1, sizeof *T);
    sw_fnstat *stats = calloc(SW_NFN, sizeof *stats);
    pthread_mutex_lock(&sw_J.lock);
    if (!T || !stats || sw_J.nthreads >= sw_J.cfg.max_threads) {
        sw_J.partial = 1;
        pthread_mutex_unlock(&sw_J.lock);
        free(T);
        free(stats);
        sw_self = &sw_refused;
        return NULL;
    }
    for (int i = 0; i < SW_NFN; i++)
        stats[i].tmin = UINT64_MAX;
    T->stats = stats;
    sw_sites_init(&T->sites);
    T->next = sw_J.threads;
    sw_J.threads = T;
    sw_J.nthreads++;
    pthread_mutex_unlock(&sw_J.lock);
    sw_self = T;
    return T;
}

/* Under MPI_THREAD_MULTIPLE calls overlap: MPI time is the union of the
 * intervals during which at least one thread is inside MPI. */
void sw_mt_enter(void)
{
    pthread_mutex_lock(&sw_J.mt_lock);
    if (sw_J.mt_inside++ == 0)
        sw_J.mt_since = sw_ticks();
    pthread_mutex_unlock(&sw_J.mt_lock);
}

void sw_mt_leave(void)
{
    pthread_mutex_lock(&sw_J.mt_lock);
    if (--sw_J.mt_inside == 0) {
        uint64_t now = sw_ticks();
        sw_J.mt_ticks += now - sw_J.mt_since;
        if (sw_bins_on) /* the union of the threads' calls, under the lock */
            sw_bins_add(sw_J.mt_since, now);
    }
    pthread_mutex_unlock(&sw_J.mt_lock);
}

/* Record a call outside the measured window (Init, Finalize, Abort, Pcontrol). */
static void record_once(int fn, uint64_t ticks)
{
    sw_thread *T = sw_self ? sw_self : sw_thread_attach();
    if (!T || T == &sw_refused)
        return;
    sw_fnstat *s = &T->stats[fn];
    s->calls++;
    s->ticks += ticks;
    if (ticks < s->tmin)
        s->tmin = ticks;
    if (ticks > s->tmax)
        s->tmax = ticks;
}

static void resolve_pmpi(void)
{
#define SW_PMPI_RESOLVE(name) sw_pmpi.name = (__typeof__(&PMPI_##name))sw_resolve("PMPI_" #name);
    SW_PMPI_LIST(SW_PMPI_RESOLVE)
#undef SW_PMPI_RESOLVE
}

/* Every rank derives the same default log name from rank 0's clock and pid. */
static void choose_log_path(void)
{
    const char *file = getenv("SCALEWISE_LOGFILE");
    if (file && *file) {
        snprintf(sw_J.logpath, sizeof sw_J.logpath, "%s", file);
        return;
    }
    long long stamp[2] = {(long long)time(NULL), (long long)getpid()};
    sw_pmpi.Bcast(stamp, 2, MPI_LONG_LONG, 0, sw_J.comm);
    char exe[256] = "app", when[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = 0;
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    time_t t = (time_t)stamp[0];
    struct tm tm;
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
    const char *dir = getenv("SCALEWISE_LOGDIR");
    snprintf(sw_J.logpath, sizeof sw_J.logpath, "%s/%s-%s-%lld.swlog", dir && *dir ? dir : ".", base, when, stamp[1]);
}

void sw_started(int fn, uint64_t t0, uint64_t t1, int provided)
{
    if (sw_J.active)
        return;
    sw_J.rss_init_end = resident_bytes();
    load_config(&sw_J.cfg);
    if (sw_J.cfg.disabled)
        return;
    resolve_pmpi();
    sw_pmpi.Query_thread(&provided);
    sw_J.provided = provided;
    sw_mt = provided == MPI_THREAD_MULTIPLE;
    sw_pmpi.Comm_rank(MPI_COMM_WORLD, &sw_J.rank);
    sw_pmpi.Comm_size(MPI_COMM_WORLD, &sw_J.size);
    sw_pmpi.Comm_dup(MPI_COMM_WORLD, &sw_J.comm);
    sw_pmpi.Comm_group(MPI_COMM_WORLD, &sw_J.world_group);
    choose_log_path();
    sw_mpit_start();
    record_once(fn, t1 - t0);
    sw_J.active = sw_J.enabled = 1;
    /* Every rank's window, and so its time bins, starts as this barrier
     * ends: ranks' bins line up within the barrier's exit skew. */
    sw_pmpi.Barrier(sw_J.comm);
    sw_J.real0 = clock_ns(CLOCK_REALTIME);
    sw_J.mono0 = clock_ns(CLOCK_MONOTONIC);
    sw_J.tsc0 = sw_ticks();
    sw_setup_start();
    sw_bins_start(sw_J.tsc0, sw_J.cfg.bins);
    sw_phases_start(sw_J.tsc0);
    sw_trace_start();
    sw_on = 1;
}

/* TSC ticks to nanoseconds, measured over the job's own window; a window too
 * short for a precise ratio is stretched to 20 ms. */
static void calibrate(void)
{
    uint64_t dt = sw_J.tsc1 - sw_J.tsc0;
    int64_t dn = sw_J.mono1 - sw_J.mono0;
    if (dn < 20000000) {
        while (clock_ns(CLOCK_MONOTONIC) - sw_J.mono0 < 20000000)
            ;
        dt = sw_ticks() - sw_J.tsc0;
        dn = clock_ns(CLOCK_MONOTONIC) - sw_J.mono0;
    }
    sw_J.ns_per_tick = dt ? (double)dn / (double)dt : 1.0;
}

/* Stop the clock for the measured window: wall = Init return to here. */
static int stop(void)
{
    if (!sw_J.active)
        return 0;
    sw_J.tsc1 = sw_ticks();
    sw_J.mono1 = clock_ns(CLOCK_MONOTONIC);
    sw_J.real1 = clock_ns(CLOCK_REALTIME);
    sw_on = 0;
    sw_J.active = 0;
    sw_phases_stop(sw_J.tsc1);
    sw_J.rss_finalize = resident_bytes();
    sw_mpit_read();
    calibrate();
    return 1;
}

void sw_finishing(int fn)
{
    if (!stop())
        return;
    /* MPI_Finalize's own time, as far as a log written inside it can hold:
     * the wait for the last rank to arrive, which every MPI_Finalize implies
     * (docs/runtime.md).  The library's teardown after the log is not in it. */
    uint64_t t = sw_ticks();
    sw_pmpi.Barrier(sw_J.comm);
    sw_J.finalize_ticks = sw_ticks() - t;
    record_once(fn, sw_J.finalize_ticks);
    sw_write_log(0);
    sw_mpit_finish();
    sw_trace_finish();
    sw_pmpi.Group_free(&sw_J.world_group);
    sw_pmpi.Comm_free(&sw_J.comm);
}

void sw_aborting(int fn, int errorcode)
{
    if (!stop())
        return;
    record_once(fn, 0);
    sw_J.abort_code = errorcode;
    sw_write_log(SW_LOG_ABORTED | SW_LOG_PARTIAL);
}

/* Levels 0 and 1 switch recording off and on (the standard's meaning);
 * the others switch phases (phases.h).  The call belongs to the phase it ends. */
void sw_pcontrol(int fn, int level, const char *name)
{
    if (!sw_J.active)
        return;
    record_once(fn, 0);
    if (level != 0 && level != 1) {
        sw_phases_pcontrol(level, name, sw_ticks());
        return;
    }
    sw_J.enabled = level != 0;
    sw_on = sw_J.enabled;
}

uint64_t sw_type_size_slow(sw_thread *T, unsigned slot, uintptr_t key, MPI_Datatype dt)
{
    int size = 0;
    if (dt == MPI_DATATYPE_NULL || sw_pmpi.Type_size(dt, &size) != MPI_SUCCESS || size < 0)
        size = 0;
    T->dt_key[slot] = key;
    T->dt_size[slot] = (uint64_t)size;
    T->dt_epoch[slot] = sw_type_epoch;
    return (uint64_t)size;
}

void sw_type_freed(void) { __atomic_add_fetch(&sw_type_epoch, 1, __ATOMIC_RELAXED); }

/* Portable form of sw_status_bytes(), for MPIs whose status layout is unknown. */
uint64_t sw_status_bytes_slow(const MPI_Status *st)
{
    MPI_Count n = 0;
    if (sw_pmpi.Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}
