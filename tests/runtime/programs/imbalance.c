/* Planted load imbalance for the POP metrics (tests/runtime/test_pop_planted.py):
 * rank r "computes" (sleeps) (r + 1) x 250 ms, then every rank meets in a
 * barrier, STEPS times.  With 2 ranks the useful times are 1 : 2, so the load
 * balance is mean / max = 1.5 / 2 = 0.75.  Sleeping keeps the plant exact on a
 * shared machine: it needs no core. */
#include <mpi.h>
#include <unistd.h>

#define STEPS 2
#define SLICE_US 250000

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int step = 0; step < STEPS; step++) {
        usleep((useconds_t)(rank + 1) * SLICE_US);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
