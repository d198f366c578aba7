/* Ground truth for call sites: two distinct lines call MPI_Allreduce, one
 * line calls MPI_Barrier, each a known number of times with known sizes.
 * Built as a position-independent program with debug information, so under
 * address randomisation every rank loads it at a different address.  Prints
 * each rank's address of main, to show that they differ.
 *
 * usage: sites A B   (A Allreduce of 8 bytes at SITE_A, B of 64 at SITE_B) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void site_a(double *x, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* SITE_A */
}

static void site_b(double *x, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* SITE_B */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int a = argc > 2 ? atoi(argv[1]) : 3, b = argc > 2 ? atoi(argv[2]) : 5, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double x[8] = {0};
    for (int i = 0; i < a; i++)
        site_a(x, 1);
    for (int i = 0; i < b; i++)
        site_b(x, 8);
    MPI_Barrier(MPI_COMM_WORLD); /* SITE_C */
    printf("main %d %p\n", rank, (void *)main);
    MPI_Finalize();
    return 0;
}
