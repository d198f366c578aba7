/* A rank's set-up and the machine's business during the run: cores, ranks
 * per node, threads, CPU time against wall, context switches, load average
 * and the node's CPU counters (/proc/stat).  Layout of the values in
 * docs/log-format.md, "rank setup". */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "buf.h"
#include "module.h"

typedef struct {
    int64_t mono;
    struct rusage ru;
    double load1;
    int stat_ok;
    uint64_t busy, total, steal; /* USER_HZ ticks over all CPUs */
} sw_snapshot;

static sw_snapshot sw_start;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The node's "cpu" line: busy = user+nice+system+irq+softirq+steal (guest
 * time is already in user and nice), total = busy+idle+iowait. */
static int read_proc_stat(uint64_t *busy, uint64_t *total, uint64_t *steal)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    int n =
        f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7)
          : 0;
    if (f)
        fclose(f);
    if (n < 7)
        return 0;
    *steal = n >= 8 ? v[7] : 0;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + *steal;
    *total = *busy + v[3] + v[4];
    return 1;
}

static void snap(sw_snapshot *s)
{
    s->mono = mono_ns();
    getrusage(RUSAGE_SELF, &s->ru);
    if (getloadavg(&s->load1, 1) != 1)
        s->load1 = -1;
    s->stat_ok = read_proc_stat(&s->busy, &s->total, &s->steal);
}

static void setup_start(void) { snap(&sw_start); }

static uint64_t tv_ns(struct timeval a, struct timeval b)
{
    int64_t d = ((int64_t)b.tv_sec - a.tv_sec) * 1000000000 + ((int64_t)b.tv_usec - a.tv_usec) * 1000;
    return d > 0 ? (uint64_t)d : 0;
}

static uint64_t diff(long a, long b) { return b > a ? (uint64_t)(b - a) : 0; }

static uint64_t milli(double load) { return load < 0 ? UINT64_MAX : (uint64_t)(load * 1000 + 0.5); }

/* OMP_NUM_THREADS's first level ("4,2" -> 4); 0 when unset or not a number. */
static uint64_t omp_threads(void)
{
    const char *s = getenv("OMP_NUM_THREADS");
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    return s && end != s && v > 0 ? (uint64_t)v : 0;
}

/* Ranks sharing this node and the union of their affinity masks: the cores
 * the job has there (the profiler's own calls, never counted). */
static int node_share(const cpu_set_t *mine, uint64_t *ranks, uint64_t *cpus)
{
    MPI_Comm node;
    int size;
    if (sw_pmpi.Comm_split_type(sw_job.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 0;
    cpu_set_t all;
    CPU_ZERO(&all);
    sw_pmpi.Comm_size(node, &size);
    sw_pmpi.Allreduce((void *)mine, &all, (int)sizeof all, MPI_BYTE, MPI_BOR, node);
    sw_pmpi.Comm_free(&node);
    *ranks = (uint64_t)size;
    *cpus = (uint64_t)CPU_COUNT(&all);
    return 1;
}

static void setup_values(int alone, uint32_t *flags, uint64_t out[SW_SETUP_VALUES])
{
    sw_snapshot end;
    snap(&end);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    int masked = sched_getaffinity(0, sizeof mask, &mask) == 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    memset(out, 0, sizeof(uint64_t) * SW_SETUP_VALUES);
    *flags = 0;
    out[0] = online > 0 ? (uint64_t)online : 0;
    out[1] = masked ? (uint64_t)CPU_COUNT(&mask) : out[0];
    /* Split and Allreduce are collective: every rank takes part, whatever it found. */
    if (!alone && node_share(&mask, &out[3], &out[2]))
        *flags |= SW_SETUP_NODE;
    out[4] = omp_threads();
    out[5] = end.mono > sw_start.mono ? (uint64_t)(end.mono - sw_start.mono) : 0;
    out[6] = tv_ns(sw_start.ru.ru_utime, end.ru.ru_utime);
    out[7] = tv_ns(sw_start.ru.ru_stime, end.ru.ru_stime);
    out[8] = diff(sw_start.ru.ru_nivcsw, end.ru.ru_nivcsw);
    out[9] = diff(sw_start.ru.ru_nvcsw, end.ru.ru_nvcsw);
    out[10] = milli(sw_start.load1);
    out[11] = milli(end.load1);
    if (sw_start.stat_ok && end.stat_ok) {
        double tick = 1e9 / (double)sysconf(_SC_CLK_TCK);
        *flags |= SW_SETUP_PROC_STAT;
        out[12] = (uint64_t)((double)(end.busy - sw_start.busy) * tick);
        out[13] = (uint64_t)((double)(end.total - sw_start.total) * tick);
        out[14] = (uint64_t)((double)(end.steal - sw_start.steal) * tick);
    }
}

/* This rank's entry of the rank setup section: rank, flags, the values.
 * Collective over the job's communicator unless the rank aborts. */
static void pack_setup(sw_buf *b, unsigned log_flags)
{
    uint32_t flags;
    uint64_t values[SW_SETUP_VALUES];
    setup_values((log_flags & SW_LOG_ABORTED) != 0, &flags, values);
    put32(b, (uint32_t)sw_job.rank);
    put32(b, flags);
    for (int k = 0; k < SW_SETUP_VALUES; k++)
        put64(b, values[k]);
}

SW_MODULE(setup_module) = {
    .name = "setup",
    .start = setup_start,
    .section = SW_SEC_RANK_SETUP,
    .raw = 1,
    .pack_rank = pack_setup,
};
