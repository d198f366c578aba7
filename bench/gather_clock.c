/* The log phase's clock, for bench/gather_cost.py: preloaded after the
 * profiler (LD_PRELOAD="libscalewise.so gather_clock.so"), it sits between
 * the profiler and the MPI library on PMPI_Barrier.  At MPI_Finalize the
 * profiler lines the ranks up with a Barrier, packs, gathers and writes the
 * log, and ends with a Barrier (lifecycle.c, logwrite.c): the span from the
 * exit of the one Barrier to the entry of the next, the last closed before
 * the process ends, is the log phase.  At exit rank 0 prints the CPU time
 * of its main thread over that span (the MPI library's helper threads are
 * not in it) and the wall time: "logphase cpu_us=... wall_us=...". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double wall_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int open_span;
static double cpu0, wall0, cpu_span, wall_span;

int PMPI_Barrier(MPI_Comm c)
{
    static int (*real)(MPI_Comm);
    if (!real)
        real = (int (*)(MPI_Comm))dlsym(RTLD_NEXT, "PMPI_Barrier");
    if (open_span) {
        cpu_span = cpu_us() - cpu0;
        wall_span = wall_us() - wall0;
    }
    int rc = real(c);
    open_span = 1;
    cpu0 = cpu_us();
    wall0 = wall_us();
    return rc;
}

__attribute__((destructor)) static void report(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    if (rank && !strcmp(rank, "0") && wall_span > 0)
        printf("logphase cpu_us=%.0f wall_us=%.0f\n", cpu_span, wall_span);
}
