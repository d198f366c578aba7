/* eager_step: where a 2-rank ping-pong on one host steps up, under whatever settings the
 * environment gives (the eager-threshold sets `tune` offers are checked with it,
 * docs/benchmarks.md "Eager limits on one host").  Per size: the fastest of 15 blocks
 * of 50 round trips, as a half round trip.
 *   mpicc -O2 bench/eager_step.c -o eager_step && mpiexec -n 2 ./eager_step */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    static const int sizes[] = {4096, 6144, 8000, 8192, 8300, 12288, 16384, 24576, 32768, 49152, 65536, 98304, 131072};
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(1, 1 << 20);
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        double best = 1e9;
        for (int block = 0; block < 15; block++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < 50; i++) {
                if (rank == 0) {
                    MPI_Send(buf, sizes[k], MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, sizes[k], MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, sizes[k], MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sizes[k], MPI_CHAR, 0, 0, MPI_COMM_WORLD);
                }
            }
            t = (MPI_Wtime() - t) / 100;
            if (t < best) best = t;
        }
        if (rank == 0) printf("%6d %8.2f us\n", sizes[k], best * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
