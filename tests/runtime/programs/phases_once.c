/* Phases run once each, one after another (tests/runtime/test_phase_marks_real.py):
 *   80 ms of set-up outside phases;
 *   "exchange": each rank in turn sleeps 60 ms while the other waits in a Barrier (60 ms of MPI on each);
 *   "solve":    150 ms of sleep;
 * then MPI_Pcontrol(-1) and 40 ms outside phases before MPI_Finalize. */
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
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sleep_ms(80);
    MPI_Pcontrol(-2, "exchange");
    for (int turn = 0; turn < 2; turn++) {
        if (rank == turn)
            sleep_ms(60);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Pcontrol(-2, "solve");
    sleep_ms(150);
    MPI_Pcontrol(-1);
    sleep_ms(40);
    MPI_Finalize();
    return 0;
}
