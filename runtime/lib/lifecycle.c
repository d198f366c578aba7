/* Life cycle: start at MPI_Init/Init_thread, stop at MPI_Finalize or
 * MPI_Abort.  Every module's part is reached through the module table
 * (module.h); this file names none of them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "lifecycle.h"
#include "logwrite.h"
#include "module.h"

/* Runs one hook of every module that has it, in the table's order. */
#define SW_EACH_MODULE(hook)                          \
    do {                                              \
        unsigned n_;                                  \
        const sw_module *const *m_ = sw_modules(&n_); \
        for (unsigned i_ = 0; i_ < n_; i_++)          \
            if (m_[i_]->hook)                         \
                m_[i_]->hook();                       \
    } while (0)

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

void sw_init_begin(void)
{
    if (!sw_job.active) {
        sw_job.own_init_entry = sw_ticks();
        sw_job.rss_init_start = resident_bytes();
    }
}

/* Record a call outside the measured window (Init, Finalize, Abort, Pcontrol). */
static void record_once(int fn, uint64_t ticks)
{
    sw_thread *thread = sw_self ? sw_self : sw_thread_attach();
    if (!thread || sw_thread_refused(thread))
        return;
    sw_stat_add(&thread->stats[fn], ticks);
}

/* Every rank derives the same default log name from rank 0's clock and pid. */
static void choose_log_path(void)
{
    const char *file = getenv("SCALEWISE_LOGFILE");
    if (file && *file) {
        snprintf(sw_job.logpath, sizeof sw_job.logpath, "%s", file);
        return;
    }
    long long stamp[2] = {(long long)time(NULL), (long long)getpid()};
    sw_pmpi.Bcast(stamp, 2, MPI_LONG_LONG, 0, sw_job.comm);
    char exe[256] = "app", when[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0)
        exe[n] = 0;
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    time_t t = (time_t)stamp[0];
    struct tm tm;
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
    const char *dir = getenv("SCALEWISE_LOGDIR");
    snprintf(sw_job.logpath, sizeof sw_job.logpath, "%s/%s-%s-%lld.swlog", dir && *dir ? dir : ".", base, when,
             stamp[1]);
}

void sw_started(int fn, uint64_t t0, uint64_t t1, int provided)
{
    if (sw_job.active)
        return;
    sw_job.rss_init_end = resident_bytes();
    sw_load_config();
    if (sw_job.cfg.disabled)
        return;
    sw_pmpi_resolve();
    sw_pmpi.Query_thread(&provided);
    sw_job.provided = provided;
    sw_mt = provided == MPI_THREAD_MULTIPLE;
    sw_pmpi.Comm_rank(MPI_COMM_WORLD, &sw_job.rank);
    sw_pmpi.Comm_size(MPI_COMM_WORLD, &sw_job.size);
    sw_pmpi.Comm_dup(MPI_COMM_WORLD, &sw_job.comm);
    sw_pmpi.Comm_group(MPI_COMM_WORLD, &sw_job.world_group);
    choose_log_path();
    SW_EACH_MODULE(init);
    record_once(fn, t1 - t0);
    sw_job.own_clock_read = sw_clock_read_ticks();
    sw_job.active = sw_job.enabled = 1;
    /* The profiler's set-up: its entry before PMPI_Init, and all after it up
     * to this barrier, whose wait for the last rank is not the profiler's. */
    uint64_t ready = sw_ticks();
    sw_job.own_init_ticks = (t0 - sw_job.own_init_entry) + (ready - t1);
    /* Every rank's window, and so its time bins, starts as this barrier
     * ends: ranks' bins line up within the barrier's exit skew. */
    sw_pmpi.Barrier(sw_job.comm);
    sw_job.real0 = sw_clock_ns(CLOCK_REALTIME);
    sw_job.mono0 = sw_clock_ns(CLOCK_MONOTONIC);
    sw_job.tsc0 = sw_ticks();
    SW_EACH_MODULE(start);
    sw_job.own_window_ticks = sw_ticks() - sw_job.tsc0; /* inside the window: not compute */
    sw_on = 1;
}

/* Stop the clock for the measured window: wall = Init return to here. */
static int stop(void)
{
    if (!sw_job.active)
        return 0;
    sw_job.own_fin_start = sw_job.tsc1 = sw_ticks();
    sw_job.mono1 = sw_clock_ns(CLOCK_MONOTONIC);
    sw_job.real1 = sw_clock_ns(CLOCK_REALTIME);
    sw_on = 0;
    sw_job.active = 0;
    sw_job.rss_finalize = resident_bytes();
    SW_EACH_MODULE(stop);
    sw_clock_calibrate();
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
    sw_pmpi.Barrier(sw_job.comm);
    sw_job.finalize_ticks = sw_ticks() - t;
    record_once(fn, sw_job.finalize_ticks);
    sw_write_log(0);
    SW_EACH_MODULE(finish);
    sw_pmpi.Group_free(&sw_job.world_group);
    sw_pmpi.Comm_free(&sw_job.comm);
}

void sw_aborting(int fn, int errorcode)
{
    if (!stop())
        return;
    record_once(fn, 0);
    sw_job.abort_code = errorcode;
    sw_write_log(SW_LOG_ABORTED | SW_LOG_PARTIAL);
}

int sw_pcontrol(int fn, int level)
{
    if (!sw_job.active)
        return 0;
    record_once(fn, 0);
    if (level != 0 && level != 1)
        return 1;
    sw_job.enabled = level != 0;
    sw_on = sw_job.enabled;
    return 0;
}
