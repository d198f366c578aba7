/* ring ITERS BYTES [crash]: each rank exchanges BYTES with both ring
 * neighbours ITERS times with MPI_Sendrecv; with "crash", rank 1 dies from
 * SIGSEGV after the loop, so the job never reaches MPI_Finalize. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = atoi(argv[1]), bytes = atoi(argv[2]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *out = calloc((size_t)bytes + 1, 1), *in = calloc((size_t)bytes + 1, 1);
    for (int i = 0; i < iters; i++)
        MPI_Sendrecv(out, bytes, MPI_BYTE, (rank + 1) % size, 0, in, bytes, MPI_BYTE, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (argc > 3 && !strcmp(argv[3], "crash") && rank == 1 % size)
        raise(SIGSEGV);
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
