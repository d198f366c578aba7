/* A job that does not reach MPI_Finalize.
 *
 * Usage: abnormal_end abort RANK CODE REPS   RANK calls MPI_Abort(CODE)
 *        abnormal_end kill RANK REPS         RANK raises SIGKILL on itself
 *
 * Every rank first does REPS Allreduce of one double; then the chosen rank
 * ends the job while the others wait in a receive that never completes. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, abort_mode = argc == 5 && strcmp(argv[1], "abort") == 0;
    if (!abort_mode && !(argc == 4 && strcmp(argv[1], "kill") == 0)) {
        fprintf(stderr, "usage: abnormal_end abort RANK CODE REPS | kill RANK REPS\n");
        return 2;
    }
    int victim = atoi(argv[2]), reps = atoi(argv[argc - 1]);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    double x = 1.0, y;
    for (int k = 0; k < reps; k++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (r == victim) {
        if (abort_mode)
            MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
        raise(SIGKILL);
    }
    MPI_Recv(&y, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
