/* Planted MPI_T traffic: rank 0 sends UNEXPECTED (10) one-int messages to
 * rank 1 with a tag rank 1 never receives, so at MPI_Finalize they are all
 * still in rank 1's unexpected-message queue for peer 0, whatever the
 * timing (eager sends of 4 bytes complete without a matching receive).
 * A barrier after the sends makes sure they arrived before finalize. */
#include <mpi.h>

#define UNEXPECTED 10
#define NEVER_RECEIVED 77

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && size > 1)
        for (int i = 0; i < UNEXPECTED; i++)
            MPI_Send(&i, 1, MPI_INT, 1, NEVER_RECEIVED, MPI_COMM_WORLD);
    if (rank == 1) {
        /* Probe until all of them are here: a barrier alone does not wait for eager data. */
        int flag = 0, arrived = 0;
        MPI_Status st;
        while (arrived < UNEXPECTED) {
            MPI_Iprobe(0, NEVER_RECEIVED, MPI_COMM_WORLD, &flag, &st);
            if (flag)
                arrived = UNEXPECTED;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
