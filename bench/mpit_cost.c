/* The time MPI_Init and MPI_Finalize take as the application sees them,
 * profiler included: each rank prints "init <rank> <ns>" and
 * "finalize <rank> <ns>" after MPI_Finalize (bench/mpit_cost.py). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank;
    long long t0 = now_ns();
    MPI_Init(&argc, &argv);
    long long t1 = now_ns();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    long long t2 = now_ns();
    MPI_Finalize();
    long long t3 = now_ns();
    printf("init %d %lld\nfinalize %d %lld\n", rank, t1 - t0, rank, t3 - t2);
    return 0;
}
