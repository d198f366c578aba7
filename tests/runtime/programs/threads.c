/* Four threads calling MPI at once under MPI_THREAD_MULTIPLE, each on its own
 * duplicate of MPI_COMM_WORLD.  Thread t does ITERS x (Sendrecv of SIZE_t
 * bytes right, Irecv + Isend of SIZE_t bytes + Waitall, Allreduce of t + 1
 * doubles).  tests/support/expect.py (threads) mirrors it.
 *
 * Usage: threads ITERS SIZE_0 SIZE_1 SIZE_2 SIZE_3 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4

static int P, r, iters, sizes[NT];
static MPI_Comm comms[NT];

static void *worker(void *arg)
{
    int t = (int)(size_t)arg, s = sizes[t], right = (r + 1) % P, left = (r + P - 1) % P;
    char *sbuf = calloc((size_t)s + 1, 1), *rbuf = calloc((size_t)s + 1, 1);
    double x[NT] = {0}, y[NT];
    MPI_Request rq[2];
    for (int k = 0; k < iters; k++) {
        MPI_Sendrecv(sbuf, s, MPI_BYTE, right, t, rbuf, s, MPI_BYTE, left, t, comms[t], MPI_STATUS_IGNORE);
        MPI_Irecv(rbuf, s, MPI_BYTE, left, t, comms[t], &rq[0]);
        MPI_Isend(sbuf, s, MPI_BYTE, right, t, comms[t], &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        MPI_Allreduce(x, y, t + 1, MPI_DOUBLE, MPI_SUM, comms[t]);
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE || argc != 2 + NT) {
        fprintf(stderr, "threads: need MPI_THREAD_MULTIPLE (got %d) and ITERS SIZE x %d\n", provided, NT);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    iters = atoi(argv[1]);
    for (int t = 0; t < NT; t++) {
        sizes[t] = atoi(argv[2 + t]);
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    }
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return 0;
}
