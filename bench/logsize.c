/* A job that uses 20 MPI functions (Init and Finalize included) and exchanges point-to-point messages
 * with 6 peers per rank (+-1, +-2, +-3): the log-size benchmark. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, steps = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 4096 };
    double *a = calloc(N * (size_t)size, sizeof *a), *b = calloc(N * (size_t)size, sizeof *b);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = 16;
        displs[i] = 16 * i;
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int s = 0; s < steps; s++) {
        MPI_Request rq[12];
        int n = 0;
        for (int d = 1; d <= 3; d++) {
            int up = (rank + d) % size, down = (rank - d + size) % size;
            MPI_Irecv(b + d * 64, 8 << d, MPI_DOUBLE, down, d, MPI_COMM_WORLD, &rq[n++]);
            MPI_Irecv(b + 512 + d * 64, 8 << d, MPI_DOUBLE, up, 10 + d, MPI_COMM_WORLD, &rq[n++]);
            MPI_Isend(a + d * 64, 8 << d, MPI_DOUBLE, up, d, MPI_COMM_WORLD, &rq[n++]);
            MPI_Isend(a + 512 + d * 64, 8 << d, MPI_DOUBLE, down, 10 + d, MPI_COMM_WORLD, &rq[n++]);
        }
        MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
        MPI_Sendrecv(a, 100, MPI_DOUBLE, (rank + 1) % size, 0, b, 100, MPI_DOUBLE, (rank - 1 + size) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Allreduce(a, b, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(a, 10, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Reduce(a, b, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Allgather(a, 2, MPI_DOUBLE, b, 2, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoall(a, 4, MPI_DOUBLE, b, 4, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Gather(a, 3, MPI_DOUBLE, b, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, half);
        MPI_Request r1;
        MPI_Iallreduce(a, b, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r1);
        MPI_Wait(&r1, MPI_STATUS_IGNORE);
        MPI_Ibcast(a, 32, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r1);
        int flag = 0;
        while (!flag)
            MPI_Test(&r1, &flag, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&half);
    free(a);
    free(b);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
