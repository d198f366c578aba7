/* Many cheap recorded calls, for the profiler's own time
 * (tests/runtime/test_owntime.py): CALLS MPI_Comm_rank (recorded with
 * SCALEWISE_HOT_LOCAL=1), then EXCHANGES rounds of Isend/Irecv/Waitall of
 * one int with both neighbours on a ring.
 *
 * Usage: owntime CALLS EXCHANGES */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = atol(argv[1]), exchanges = atol(argv[2]);
    int me = 0, P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    for (long i = 0; i < calls; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int left = (me + P - 1) % P, right = (me + 1) % P, out = me, in[2];
    MPI_Request rq[4];
    MPI_Status st[4];
    for (long i = 0; i < exchanges; i++) {
        MPI_Irecv(&in[0], 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&in[1], 1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&out, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&out, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, st);
    }
    MPI_Finalize();
    return 0;
}
