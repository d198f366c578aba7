/* One-sided calls with known bytes.  Each rank works on one target, the
 * next rank, and scales its sizes by k = target + 1, so a rank's bytes say
 * which target it had.  REPS times, in one passive epoch:
 *   Get_accumulate, Rget_accumulate with MPI_NO_OP: 100k doubles fetched (the
 *     origin arguments are NULL, 0: MPI_NO_OP ignores them);
 *   the same with MPI_SUM: 10k doubles sent and 10k fetched;
 *   Fetch_and_op (MPI_SUM and MPI_NO_OP) on one long, Compare_and_swap on one int;
 *   Put, Get, Accumulate of 16k doubles.
 * tests/runtime/test_rma_bytes.py holds what each must credit.
 *
 * Usage: rma_bytes REPS */
#include <mpi.h>
#include <stdlib.h>

enum { ACC_AT = 0, PUT_AT = 4096, FAO_AT = 8192, CAS_AT = 8200, WIN_BYTES = 16384 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, nproc;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nproc);
    int reps = argc > 1 ? atoi(argv[1]) : 20, target = (me + 1) % nproc, k = target + 1;
    char *base;
    MPI_Win win;
    MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    double *origin = calloc(512, sizeof(double)), *result = calloc(512, sizeof(double));
    long one = 1, old = 0;
    int cmp = 0, swap = 1, got = 0;
    MPI_Request rq;
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < reps; i++) {
        MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, result, 100 * k, MPI_DOUBLE, target, ACC_AT, 100 * k, MPI_DOUBLE,
                           MPI_NO_OP, win);
        MPI_Get_accumulate(origin, 10 * k, MPI_DOUBLE, result, 10 * k, MPI_DOUBLE, target, ACC_AT, 10 * k, MPI_DOUBLE,
                           MPI_SUM, win);
        MPI_Win_flush(target, win);
        MPI_Rget_accumulate(NULL, 0, MPI_DOUBLE, result, 100 * k, MPI_DOUBLE, target, ACC_AT, 100 * k, MPI_DOUBLE,
                            MPI_NO_OP, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Rget_accumulate(origin, 10 * k, MPI_DOUBLE, result, 10 * k, MPI_DOUBLE, target, ACC_AT, 10 * k,
                            MPI_DOUBLE, MPI_SUM, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        MPI_Fetch_and_op(&one, &old, MPI_LONG, target, FAO_AT, MPI_SUM, win);
        MPI_Fetch_and_op(NULL, &old, MPI_LONG, target, FAO_AT, MPI_NO_OP, win);
        MPI_Compare_and_swap(&swap, &cmp, &got, MPI_INT, target, CAS_AT, win);
        MPI_Win_flush(target, win);
        MPI_Put(origin, 16 * k, MPI_DOUBLE, target, PUT_AT, 16 * k, MPI_DOUBLE, win);
        MPI_Win_flush(target, win);
        MPI_Get(result, 16 * k, MPI_DOUBLE, target, PUT_AT, 16 * k, MPI_DOUBLE, win);
        MPI_Win_flush(target, win);
        MPI_Accumulate(origin, 16 * k, MPI_DOUBLE, target, ACC_AT, 16 * k, MPI_DOUBLE, MPI_SUM, win);
        MPI_Win_flush(target, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(origin), free(result);
    MPI_Finalize();
    return 0;
}
