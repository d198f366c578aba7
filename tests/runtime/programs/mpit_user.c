/* An application that uses MPI_T itself, beside the profiler: it starts and
 * ends MPI_T twice, reads the number of variables, and finalizes its MPI_T
 * before MPI_Finalize.  MPI_T counts initialisations, so the profiler's own
 * session must survive this; the program prints "pvars <rank> <n>" so the
 * test can compare with what the profiler read. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, provided, n = -1, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int round = 0; round < 2; round++) {
        if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        MPI_T_pvar_get_num(&n);
        MPI_T_finalize();
    }
    if (rank == 0)
        MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else if (rank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("pvars %d %d\n", rank, n);
    MPI_Finalize();
    return 0;
}
