/* Collectives whose bytes do not all move: MPI_IN_PLACE at every rank or at
 * the root (the rank's own block stays where it is) on MPI_COMM_WORLD, and
 * collectives on one-rank communicators (MPI_COMM_SELF and a split of one
 * rank), which move nothing.  Blocks are N = 4 ints; tests/runtime/
 * test_inplace_bytes.py holds what each call must credit. */
#include <mpi.h>
#include <stdlib.h>

enum { N = 4 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm W = MPI_COMM_WORLD, solo;
    int me, P;
    MPI_Comm_rank(W, &me);
    MPI_Comm_size(W, &P);
    int *sbuf = calloc((size_t)(N * P * P + N), sizeof(int)), *rbuf = calloc((size_t)(N * P * P + N), sizeof(int));
    int *counts = malloc(sizeof(int) * (size_t)P), *displs = malloc(sizeof(int) * (size_t)P);
    int *twos = malloc(sizeof(int) * (size_t)P), *tdispls = malloc(sizeof(int) * (size_t)P);
    for (int i = 0, at = 0; i < P; at += i + 1, i++)
        counts[i] = i + 1, displs[i] = at, twos[i] = 2, tdispls[i] = 2 * i;
    int root = me == 0;

    /* MPI_COMM_WORLD, in place */
    MPI_Gather(root ? MPI_IN_PLACE : sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, W);
    MPI_Gatherv(root ? MPI_IN_PLACE : sbuf, me + 1, MPI_INT, rbuf, counts, displs, MPI_INT, 0, W);
    MPI_Reduce(root ? MPI_IN_PLACE : sbuf, rbuf, N, MPI_INT, MPI_SUM, 0, W);
    MPI_Scatter(sbuf, N, MPI_INT, root ? MPI_IN_PLACE : rbuf, N, MPI_INT, 0, W);
    MPI_Scatterv(sbuf, counts, displs, MPI_INT, root ? MPI_IN_PLACE : rbuf, me + 1, MPI_INT, 0, W);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, rbuf, N, MPI_INT, W);
    MPI_Alltoallv(MPI_IN_PLACE, twos, tdispls, MPI_INT, rbuf, twos, tdispls, MPI_INT, W);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, rbuf, N, MPI_INT, W);
    MPI_Allreduce(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, W);

    /* one rank: a split of its own, and MPI_COMM_SELF */
    MPI_Comm_split(W, me, 0, &solo);
    int one = 1, zero = 0;
    MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, rbuf, &one, &zero, MPI_INT, 0, solo);
    MPI_Bcast(rbuf, N, MPI_INT, 0, solo);
    MPI_Request rq;
    MPI_Ibcast(rbuf, N, MPI_INT, 0, solo, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Allreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_SELF);
    MPI_Alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_SELF);
    MPI_Comm_free(&solo);

    free(sbuf), free(rbuf), free(counts), free(displs), free(twos), free(tdispls);
    MPI_Finalize();
    return 0;
}
