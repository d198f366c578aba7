/* ring ITERS BYTES [crash|fan]: each rank exchanges BYTES with both ring
 * neighbours ITERS times with MPI_Sendrecv.  "crash": rank 1 then dies from
 * SIGSEGV, so the job never reaches MPI_Finalize.  "fan": every rank then
 * sends one BYTES message to every other rank, all requests in flight at once. */
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
    if (argc > 3 && !strcmp(argv[3], "fan")) {
        MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
        int n = 0;
        for (int p = 0; p < size; p++)
            if (p != rank) {
                MPI_Irecv(in, bytes, MPI_BYTE, p, 1, MPI_COMM_WORLD, &rq[n++]);
                MPI_Isend(out, bytes, MPI_BYTE, p, 1, MPI_COMM_WORLD, &rq[n++]);
            }
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        free(rq);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
