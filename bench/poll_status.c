/* Bare MPI, no profiler: what a poll that completes nothing costs with
 * MPI_STATUS(ES)_IGNORE and with a real status, the one the profiler's
 * Test wrappers pass in its place so that received sizes are known.
 * Thread CPU time, the minimum of 15 loops of 100,000 calls, twice.
 * usage: mpirun -np 1 poll_status */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define N 100000
#define KERNEL(name, body)                                                                                  \
    do {                                                                                                    \
        double best = 1e9;                                                                                  \
        for (int r = 0; r < 15; r++) {                                                                      \
            double t0 = cpu();                                                                              \
            for (int i = 0; i < N; i++) {                                                                   \
                body;                                                                                       \
            }                                                                                               \
            double t = (cpu() - t0) / N * 1e9;                                                              \
            best = t < best ? t : best;                                                                     \
        }                                                                                                   \
        printf("%-16s %6.1f ns\n", name, best);                                                             \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char b[1];
    int flag, index, outcount, indices[1];
    MPI_Request rq;
    MPI_Status st, sts[1];
    MPI_Irecv(b, 1, MPI_BYTE, 0, 99, MPI_COMM_WORLD, &rq); /* never sent: every poll completes nothing */
    for (int round = 0; round < 2; round++) {
        KERNEL("test ignore", MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        KERNEL("test status", MPI_Test(&rq, &flag, &st));
        KERNEL("testany ignore", MPI_Testany(1, &rq, &index, &flag, MPI_STATUS_IGNORE));
        KERNEL("testany status", MPI_Testany(1, &rq, &index, &flag, &st));
        KERNEL("testall ignore", MPI_Testall(1, &rq, &flag, MPI_STATUSES_IGNORE));
        KERNEL("testall status", MPI_Testall(1, &rq, &flag, sts));
        KERNEL("testsome ignore", MPI_Testsome(1, &rq, &outcount, indices, MPI_STATUSES_IGNORE));
        KERNEL("testsome status", MPI_Testsome(1, &rq, &outcount, indices, sts));
    }
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    MPI_Finalize();
    return 0;
}
