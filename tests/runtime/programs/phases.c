/* Planted phases (tests/runtime/test_timeline.py): with MPI_Pcontrol,
 *   "compute"  100 ms of sleep, entered twice: 200 ms of compute in all;
 *   "wait"     rank 0 sleeps 150 ms before a Barrier the others wait in:
 *              150 ms of MPI time on ranks >= 1, of compute on rank 0;
 *   phase 3    50 Allreduce of one double (numbered, as Fortran marks phases);
 * then one Barrier outside phases.  Profiling paused with MPI_Pcontrol(0)
 * around one uncounted Barrier inside "compute". */
#include <mpi.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t))
        ;
}

int main(int argc, char **argv)
{
    int rank;
    double x = 1, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Pcontrol(-2, "compute");
    sleep_ms(100);
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Pcontrol(-2, "wait");
    if (rank == 0)
        sleep_ms(150);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(3);
    for (int i = 0; i < 50; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(-2, "compute");
    sleep_ms(100);
    MPI_Pcontrol(-1);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
