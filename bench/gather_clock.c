/* The log phase's clock, for bench/gather_cost.py: preloaded after the
 * profiler (LD_PRELOAD="libscalewise.so gather_clock.so"), it sits between
 * the profiler and the MPI library on PMPI_Barrier and PMPI_Finalize.  At
 * MPI_Finalize the profiler lines the ranks up with a Barrier, then packs,
 * gathers and writes the log, with one more Barrier inside (before the file
 * is written in the one-Gatherv writer, after it in the batched one), then
 * calls PMPI_Finalize: the log phase is the span from the exit of the last
 * Barrier but one to the entry of PMPI_Finalize, the same work in both.  At
 * exit rank 0 prints the CPU time of its main thread over that span (the MPI
 * library's helper threads are not in it) and the wall time:
 * "logphase cpu_us=... wall_us=...". */
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

static double cpu_exit[2], wall_exit[2]; /* the last two Barrier exits, newest first */
static double cpu_span, wall_span;

int PMPI_Barrier(MPI_Comm c)
{
    static int (*real)(MPI_Comm);
    if (!real)
        real = (int (*)(MPI_Comm))dlsym(RTLD_NEXT, "PMPI_Barrier");
    int rc = real(c);
    cpu_exit[1] = cpu_exit[0];
    wall_exit[1] = wall_exit[0];
    cpu_exit[0] = cpu_us();
    wall_exit[0] = wall_us();
    return rc;
}

int PMPI_Finalize(void)
{
    static int (*real)(void);
    if (!real)
        real = (int (*)(void))dlsym(RTLD_NEXT, "PMPI_Finalize");
    cpu_span = cpu_us() - cpu_exit[1];
    wall_span = wall_us() - wall_exit[1];
    return real();
}

__attribute__((destructor)) static void report(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    if (rank && !strcmp(rank, "0") && wall_span > 0)
        printf("logphase cpu_us=%.0f wall_us=%.0f\n", cpu_span, wall_span);
}
