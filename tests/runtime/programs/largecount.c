/* Ground truth for the MPI-4 large-count functions and for what MPI costs a
 * rank: per repetition one Sendrecv to the right neighbour, one Isend/Irecv
 * pair completed by one Waitall, Bcast, Allreduce, Gatherv to rank 0 and
 * Alltoallv, each of N bytes per peer; the `_c` forms under MPI 4 headers,
 * the int forms otherwise.  Then the program touches TOUCH_MIB MiB of fresh
 * memory, all meet in one Barrier, and the last rank sleeps LATE_MS before MPI_Finalize, so the others
 * wait at least that long in it.
 *
 * usage: largecount REPS N TOUCH_MIB LATE_MS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if MPI_VERSION >= 4
#define C(fn) fn##_c
typedef MPI_Count count_t;
typedef MPI_Aint displ_t;
#else
#define C(fn) fn
typedef int count_t;
typedef int displ_t;
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 5) {
        fprintf(stderr, "usage: largecount REPS N TOUCH_MIB LATE_MS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size, reps = atoi(argv[1]);
    count_t n = (count_t)atol(argv[2]);
    size_t touch = (size_t)atol(argv[3]) << 20;
    long late_ms = atol(argv[4]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *sbuf = calloc((size_t)n * (size_t)size + 1, 1), *rbuf = calloc((size_t)n * (size_t)size + 1, 1);
    count_t *counts = malloc(sizeof *counts * (size_t)size);
    displ_t *displs = malloc(sizeof *displs * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = n;
        displs[i] = (displ_t)i * (displ_t)n;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int r = 0; r < reps; r++) {
        MPI_Request rq[2];
        C(MPI_Sendrecv)(sbuf, n, MPI_BYTE, right, 0, rbuf, n, MPI_BYTE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        C(MPI_Irecv)(rbuf, n, MPI_BYTE, left, 1, MPI_COMM_WORLD, &rq[0]);
        C(MPI_Isend)(sbuf, n, MPI_BYTE, right, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        C(MPI_Bcast)(sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        C(MPI_Allreduce)(sbuf, rbuf, n, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
        C(MPI_Gatherv)(sbuf, n, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        C(MPI_Alltoallv)(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    }
    char *big = malloc(touch + 1);
    memset(big, 1, touch + 1);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has touched its memory: the late rank's sleep is all the others wait */
    if (rank == size - 1) {
        struct timespec ts = {late_ms / 1000, (late_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    printf("touched %d\n", big[touch / 2]);
    MPI_Finalize();
    free(big);
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    return 0;
}
