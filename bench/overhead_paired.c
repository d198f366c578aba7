/* The profiler's added cost per call, bare and wrapped calls interleaved in
 * one process: "bare" calls the MPI library's own PMPI_x (looked up in the
 * library itself, so past any preloaded wrapper), "wrapped" calls MPI_x
 * (the profiler's wrapper when it is preloaded).  Both run on the same
 * window, communicator and request, the same library state, block after
 * block (the order swapped every repetition), so what moves a 500 ns call
 * from one run or one minute to the next moves both alike.  Run without the
 * profiler, both sides are the library's call: the pairs then show the
 * method's own spread (an A/A test).
 * usage: overhead_paired ITERS REPS
 * Prints, on rank 0, per kernel: calls per iteration and, per repetition,
 * the bare and wrapped time per iteration (ns; thread CPU time with
 * OVERHEAD_CLOCK=cpu). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    static int cpu = -1;
    if (cpu < 0) {
        const char *c = getenv("OVERHEAD_CLOCK");
        cpu = c && !strcmp(c, "cpu");
    }
    struct timespec ts;
    clock_gettime(cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The MPI library's own definition of `name`: the first loaded object named
 * libmpi* that defines it (a handle's lookup covers that object and its
 * dependencies, never a preloaded library). */
static const char *mpi_object;
static int find_mpi(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (!strncmp(base, "libmpi", 6) && !strstr(base, "libmpi_") && !mpi_object)
        mpi_object = info->dlpi_name;
    return 0;
}

static void *library(const char *name)
{
    static void *handle;
    if (!handle) {
        dl_iterate_phdr(find_mpi, NULL);
        handle = mpi_object ? dlopen(mpi_object, RTLD_LAZY | RTLD_NOLOAD) : NULL;
        if (!handle) {
            fprintf(stderr, "overhead_paired: no loaded libmpi* object\n");
            exit(1);
        }
    }
    void *f = dlsym(handle, name);
    if (!f) {
        fprintf(stderr, "overhead_paired: %s: %s not found\n", mpi_object, name);
        exit(1);
    }
    return f;
}

#define REAL(fn) ((__typeof__(&fn))library("P" #fn))

static void report(const char *name, int calls, const double *bare, const double *wrapped, int reps, int iters)
{
    printf("kernel=%s calls_per_iter=%d bare=", name, calls);
    for (int i = 0; i < reps; i++)
        printf("%s%.2f", i ? "," : "", bare[i] / iters * 1e9);
    printf(" wrapped=");
    for (int i = 0; i < reps; i++)
        printf("%s%.2f", i ? "," : "", wrapped[i] / iters * 1e9);
    printf("\n");
}

/* One kernel: per repetition, ITERS iterations of BARE then of WRAPPED (in
 * the other order every second repetition), each timed. */
#define PAIRED(name, calls, bare_body, wrapped_body)                       \
    do {                                                                   \
        for (int r_ = 0; r_ < reps; r_++) {                                \
            for (int side_ = 0; side_ < 2; side_++) {                      \
                int wrapped_ = side_ ^ (r_ & 1);                           \
                MPI_Barrier(MPI_COMM_WORLD);                               \
                double t0_ = now();                                        \
                if (wrapped_)                                              \
                    for (int i_ = 0; i_ < iters; i_++) {                   \
                        wrapped_body;                                      \
                    }                                                      \
                else                                                       \
                    for (int i_ = 0; i_ < iters; i_++) {                   \
                        bare_body;                                         \
                    }                                                      \
                (wrapped_ ? tw : tb)[r_] = now() - t0_;                    \
            }                                                              \
        }                                                                  \
        if (rank == 0)                                                     \
            report(name, calls, tb, tw, reps, iters);                      \
    } while (0)

/* Both sides of one call: the library's PMPI_x through a pointer, and MPI_x;
 * SAME expands BOTH before PAIRED splits its arguments. */
#define BOTH(fn, ...) (p_##fn(__VA_ARGS__)), (fn(__VA_ARGS__))
#define SAME(...) PAIRED(__VA_ARGS__)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20000, reps = argc > 2 ? atoi(argv[2]) : 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *tb = calloc((size_t)reps, sizeof *tb), *tw = calloc((size_t)reps, sizeof *tw), x = 1.0, y;
    __typeof__(&MPI_Allreduce) p_MPI_Allreduce = REAL(MPI_Allreduce);
    __typeof__(&MPI_Test) p_MPI_Test = REAL(MPI_Test);
    __typeof__(&MPI_Testany) p_MPI_Testany = REAL(MPI_Testany);
    __typeof__(&MPI_Put) p_MPI_Put = REAL(MPI_Put);
    __typeof__(&MPI_Accumulate) p_MPI_Accumulate = REAL(MPI_Accumulate);
    __typeof__(&MPI_Get_accumulate) p_MPI_Get_accumulate = REAL(MPI_Get_accumulate);
    __typeof__(&MPI_Fetch_and_op) p_MPI_Fetch_and_op = REAL(MPI_Fetch_and_op);
    __typeof__(&MPI_Win_flush_all) p_MPI_Win_flush_all = REAL(MPI_Win_flush_all);
    __typeof__(&MPI_Win_lock) p_MPI_Win_lock = REAL(MPI_Win_lock);
    __typeof__(&MPI_Win_unlock) p_MPI_Win_unlock = REAL(MPI_Win_unlock);
    __typeof__(&MPI_Cart_coords) p_MPI_Cart_coords = REAL(MPI_Cart_coords);

    SAME("allreduce8", 1, BOTH(MPI_Allreduce, &x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));

    char buf[1];
    int flag, index;
    MPI_Request rq;
    MPI_Irecv(buf, 1, MPI_BYTE, rank, 99, MPI_COMM_WORLD, &rq);
    SAME("test", 1, BOTH(MPI_Test, &rq, &flag, MPI_STATUS_IGNORE));
    SAME("testany", 1, BOTH(MPI_Testany, 1, &rq, &index, &flag, MPI_STATUS_IGNORE));
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);

    double *base;
    MPI_Win win;
    MPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    SAME("put8", 1, BOTH(MPI_Put, &x, 1, MPI_DOUBLE, rank, 0, 1, MPI_DOUBLE, win));
    MPI_Win_flush(rank, win);
    SAME("accumulate8", 1, BOTH(MPI_Accumulate, &x, 1, MPI_DOUBLE, rank, 2, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_Win_flush(rank, win);
    SAME("get_accumulate8", 1,
           BOTH(MPI_Get_accumulate, &x, 1, MPI_DOUBLE, &y, 1, MPI_DOUBLE, rank, 3, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_Win_flush(rank, win);
    SAME("fetch_and_op8", 1, BOTH(MPI_Fetch_and_op, &x, &y, MPI_DOUBLE, rank, 4, MPI_SUM, win));
    MPI_Win_flush(rank, win);
    SAME("flush_all", 1, BOTH(MPI_Win_flush_all, win));
    MPI_Win_unlock_all(win);
    PAIRED("lock_unlock", 2, (p_MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), p_MPI_Win_unlock(rank, win)),
           (MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_Win_unlock(rank, win)));
    MPI_Win_free(&win);

    int dims[1] = {size}, periods[1] = {1}, coords[1];
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    SAME("cart_coords", 1, BOTH(MPI_Cart_coords, cart, rank, 1, coords));
    MPI_Comm_free(&cart);

    if (rank == 0)
        printf("mpi_object=%s\n", mpi_object);
    free(tb);
    free(tw);
    MPI_Finalize();
    return 0;
}
