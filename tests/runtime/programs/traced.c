/* Planted sequence for trace mode (tests/runtime/test_trace.py knows every
 * event it must produce).  Run with an even number of ranks, at least 4. */
#include <mpi.h>
#include <unistd.h>

static void first_wins(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt; /* a non-commutative reduction */
}

int main(int argc, char **argv)
{
    int rank, size, ibuf[64] = {0}, n = 0;
    double dbuf[1000] = {0}, dout[1000];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, partner = rank ^ 1;
    usleep(20000); /* 20 ms of "compute" before the first recorded call */
    /* 1. ring: blocking send and a wildcard receive */
    if (rank % 2 == 0) {
        MPI_Send(ibuf, 10, MPI_INT, right, 7, MPI_COMM_WORLD);
        MPI_Recv(ibuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(ibuf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(ibuf, 10, MPI_INT, right, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* no later message can match the wildcards above */
    /* 2. non-blocking pair, completed in the other order */
    MPI_Request rq[2];
    MPI_Isend(dbuf, 1000, MPI_DOUBLE, partner, 11, MPI_COMM_WORLD, &rq[1]);
    MPI_Irecv(dout, 1000, MPI_DOUBLE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &rq[0]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    /* 3. sendrecv around the ring */
    MPI_Sendrecv(ibuf, 4, MPI_INT, right, 3, ibuf + 8, 4, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* 4. collectives */
    MPI_Allreduce(dbuf, dout, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Op op;
    MPI_Op_create(first_wins, 0, &op);
    MPI_Reduce(ibuf, ibuf + 32, 6, MPI_INT, op, 2, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Bcast(ibuf, 3, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Alltoall(ibuf, 2, MPI_INT, ibuf + 32, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Scatter(ibuf, 2, MPI_INT, ibuf + 32, 2, MPI_INT, 0, MPI_COMM_WORLD);
    /* 5. a sub-communicator: the even and the odd ranks */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Allreduce(dbuf, dout, 1, MPI_DOUBLE, MPI_MAX, half);
    MPI_Comm_free(&half);
    /* 6. nothing to record: a receive from MPI_PROC_NULL */
    MPI_Request none;
    MPI_Irecv(ibuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &none);
    MPI_Wait(&none, MPI_STATUS_IGNORE);
    /* 7. polled completion: only the Test that completes is an event */
    MPI_Request t;
    int done = 0;
    if (rank % 2 == 0) {
        MPI_Isend(ibuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &t);
        while (!done)
            MPI_Test(&t, &done, MPI_STATUS_IGNORE), n++;
    } else {
        MPI_Irecv(ibuf, 1, MPI_INT, partner, 5, MPI_COMM_WORLD, &t);
        MPI_Wait(&t, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return n < 0;
}
