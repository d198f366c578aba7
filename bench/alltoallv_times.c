/* alltoallv_times: an LD_PRELOAD'd interposer that times every MPI_Alltoallv of a run, to see the
 * distribution of an application's exchanges (bench/dft_exchanges.py).  At MPI_Finalize each rank
 * writes one line per call to $ALLTOALLV_TIMES.<rank>: the call's start and end, seconds on
 * CLOCK_MONOTONIC, which the emulated nodes of one machine share, so ranks' times compare. */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MOST 65536

static double started[MOST], ended[MOST];
static int calls;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int MPI_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                  void *recvbuf, const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
    double t0 = now();
    int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    if (calls < MOST) {
        started[calls] = t0;
        ended[calls++] = now();
    }
    return rc;
}

int MPI_Finalize(void) {
    const char *stem = getenv("ALLTOALLV_TIMES");
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (stem) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", stem, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            for (int i = 0; i < calls; i++) fprintf(f, "%.9f %.9f\n", started[i], ended[i]);
            fclose(f);
        }
    }
    return PMPI_Finalize();
}
