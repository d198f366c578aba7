/* Known CPU time for the rank setup section (tests/runtime/test_setup.py):
 * every rank burns BUSY_MS of its own CPU time (CLOCK_PROCESS_CPUTIME_ID, so
 * a rank waiting for a core burns nothing meanwhile), then all meet in a
 * barrier, STEPS times.  The log must hold at least STEPS x BUSY_MS of user
 * and system time per rank, within its wall. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <time.h>

#define STEPS 3
#define BUSY_MS 100

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    volatile double sink = 0;
    for (int step = 0; step < STEPS; step++) {
        double until = cpu_now() + BUSY_MS / 1000.0;
        while (cpu_now() < until)
            sink += 1.0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return sink < 0;
}
