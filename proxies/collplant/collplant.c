/* collplant: a program whose time is one collective, for checking `scalewise tune`.
 *
 * The timed loop calls MPI_Allreduce (MPI_SUM of --count doubles) and
 * nothing else, so the collective's algorithm decides the run time.  Rank r
 * contributes (r + 1) * (1 + j % 7) to element j, whole numbers whose sums
 * are exact in double precision; after every call one element (a different
 * one each time) and after the loop every element is checked against the
 * closed form P(P+1)/2 * (1 + j % 7), and the run reports PASS only if all
 * agree.
 *
 * On one rank every algorithm is a copy, so every choice is equal: the case a
 * tuner must not claim a gain on.  Figure of merit: the median time of one
 * MPI_Allreduce, and the plant's computing after it, in microseconds (lower is better); a median rather than the
 * loop's total so that a neighbour's burst of load on a shared machine moves
 * it little.
 *
 * The plant (--plant-us U --plant NAME --plant-factor F): a cost the program
 * owns, so that a test of the tuner does not rest on how fast this machine's
 * MPI algorithms happen to be.  After every call each rank computes (spins)
 * for U microseconds, or F * U when the run forces Allreduce algorithm NAME:
 * Open MPI's OMPI_MCA_coll_tuned_allreduce_algorithm (mpirun passes every
 * --mca parameter to the ranks in that form; NAME is the number) or MPICH's
 * MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM (NAME is the algorithm's name).  With U
 * well above the call's own time the algorithms differ by a few percent at
 * most, and NAME by the known factor F (0: it saves the whole U). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Allreduce algorithm the run forces, "" when it forces none. */
static const char *forced_algorithm(void) {
    const char *ompi = getenv("OMPI_MCA_coll_tuned_allreduce_algorithm");
    const char *mpich = getenv("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM");
    return ompi ? ompi : mpich ? mpich : "";
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#include "swproxy.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sw_args_begin("collplant", argc, argv);
    long count = sw_flag_long("--count", 1, 1L << 26, 1L << 17, 1L << 18, 1L << 20);
    long iters = sw_flag_long("--iters", 1, 1000000, 40, 100, 200);
    const char *plant = sw_flag_text("--plant", "", "NAME: the forced Allreduce algorithm that pays --plant-factor");
    double plant_us = sw_flag_double("--plant-us", 0, 1e6, 0, 0, 0);  /* each rank computes this after a call */
    double factor = sw_flag_double("--plant-factor", 0, 1000, 1, 1, 1);  /* times as long under --plant */
    sw_args_end();
    double rest = plant_us * 1e-6 * (plant[0] && strcmp(plant, forced_algorithm()) == 0 ? factor : 1.0);

    double *in = malloc(sizeof(double) * (size_t)count), *out = malloc(sizeof(double) * (size_t)count);
    double *call = malloc(sizeof(double) * (size_t)iters);
    if (!in || !out || !call) MPI_Abort(MPI_COMM_WORLD, 3);
    double ranks_sum = 0.5 * (double)size * (double)(size + 1);
    long wrong = 0;
    for (long j = 0; j < count; j++) in[j] = (double)(rank + 1) * (double)(1 + j % 7);
    /* No timing barriers (unlike the other proxies): their wait for a rank
     * that started late would be a second collective in the profile, and the
     * tuning of this program must see the Allreduce alone.  The figure of
     * merit is the median call, which a late start does not move. */
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        double c0 = MPI_Wtime();
        MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sw_rest_busy(rest);
        call[i] = MPI_Wtime() - c0;
        long j = (i * 7919) % count;
        wrong += out[j] != ranks_sum * (double)(1 + j % 7);
    }
    double wall = MPI_Wtime() - t0;
    for (long j = 0; j < count; j++) wrong += out[j] != ranks_sum * (double)(1 + j % 7);
    long all_wrong = 0;
    MPI_Allreduce(&wrong, &all_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    qsort(call, (size_t)iters, sizeof(double), cmp_double);
    double median = call[iters / 2], slowest = 0;
    MPI_Allreduce(&median, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    char check[64];
    snprintf(check, sizeof check, "wrong_elements=%ld", all_wrong);
    int status = sw_result("collplant", slowest * 1e6, "us", 0, wall, check, all_wrong == 0);
    free(in);
    free(out);
    free(call);
    MPI_Finalize();
    return status;
}
