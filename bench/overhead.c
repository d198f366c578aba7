/* Tight MPI loops for measuring the profiler's cost per call: a blocking
 * collective, a non-blocking exchange, polling, one-sided and local calls.
 * usage: overhead ITERS REPS
 * Prints, on rank 0, one line per kernel with the time per iteration of
 * every repetition, and the process's memory high-water mark.  With
 * OVERHEAD_CLOCK=cpu the times are the thread's CPU time, not wall time:
 * on a loaded machine, time spent waiting for a core is left out. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Wall time, or the calling thread's CPU time (OVERHEAD_CLOCK=cpu). */
static double now(void)
{
    static int cpu = -1;
    if (cpu < 0) {
        const char *c = getenv("OVERHEAD_CLOCK");
        cpu = c && !strcmp(c, "cpu");
    }
    if (!cpu)
        return MPI_Wtime();
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const char *name, int calls, const double *t, int reps, int iters)
{
    printf("kernel=%s calls_per_iter=%d ns_per_iter=", name, calls);
    for (int i = 0; i < reps; i++)
        printf("%s%.2f", i ? "," : "", t[i] / iters * 1e9);
    printf("\n");
}

static long vm_hwm_kib(void)
{
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* One kernel: REPS timed loops of ITERS iterations of BODY (CALLS MPI calls each). */
#define KERNEL(name, calls, body)                                          \
    do {                                                                   \
        for (int r_ = 0; r_ < reps; r_++) {                                \
            MPI_Barrier(MPI_COMM_WORLD);                                   \
            double t0_ = now();                                           \
            for (int i_ = 0; i_ < iters; i_++) {                           \
                body;                                                      \
            }                                                              \
            t[r_] = now() - t0_;                                          \
        }                                                                  \
        if (rank == 0)                                                     \
            report(name, calls, t, reps, iters);                           \
    } while (0)

/* Polling a receive that never completes, and probing for a message that
 * never comes: the cost of every unsuccessful poll. */
static void polling(int rank, int peer, int iters, int reps, double *t)
{
    char buf[1];
    int flag, index, outcount, indices[1];
    MPI_Request rq;
    MPI_Message msg;
    MPI_Irecv(buf, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &rq);
    KERNEL("test", 1, MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    KERNEL("testany", 1, MPI_Testany(1, &rq, &index, &flag, MPI_STATUS_IGNORE));
    KERNEL("testall", 1, MPI_Testall(1, &rq, &flag, MPI_STATUSES_IGNORE));
    KERNEL("testsome", 1, MPI_Testsome(1, &rq, &outcount, indices, MPI_STATUSES_IGNORE));
    KERNEL("iprobe", 1, MPI_Iprobe(peer, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    KERNEL("improbe", 1, MPI_Improbe(peer, 99, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE));
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

/* One-sided calls on this rank's own window, in one passive epoch. */
static void one_sided(int rank, int iters, int reps, double *t)
{
    double *base, x = 1.0, y;
    MPI_Win win;
    MPI_Win_allocate(64, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(0, win);
    KERNEL("put8", 1, MPI_Put(&x, 1, MPI_DOUBLE, rank, 0, 1, MPI_DOUBLE, win));
    MPI_Win_flush(rank, win);
    KERNEL("get8", 1, MPI_Get(&y, 1, MPI_DOUBLE, rank, 1, 1, MPI_DOUBLE, win));
    MPI_Win_flush(rank, win);
    KERNEL("accumulate8", 1, MPI_Accumulate(&x, 1, MPI_DOUBLE, rank, 2, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_Win_flush(rank, win);
    KERNEL("get_accumulate8", 1,
           MPI_Get_accumulate(&x, 1, MPI_DOUBLE, &y, 1, MPI_DOUBLE, rank, 3, 1, MPI_DOUBLE, MPI_SUM, win));
    MPI_Win_flush(rank, win);
    KERNEL("fetch_and_op8", 1, MPI_Fetch_and_op(&x, &y, MPI_DOUBLE, rank, 4, MPI_SUM, win));
    KERNEL("flush", 1, MPI_Win_flush(rank, win));
    KERNEL("flush_all", 1, MPI_Win_flush_all(win));
    MPI_Win_unlock_all(win);
    KERNEL("lock_unlock", 2, MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); MPI_Win_unlock(rank, win));
    MPI_Win_free(&win);
}

/* Local calls: recorded ones (class local) and a hot one passed on. */
static void local(int rank, int iters, int reps, double *t)
{
    int n, ints, addrs, types, comb, pos, in[2] = {1, 2}, coords[1];
    char packed[16];
    MPI_Comm cart;
    int dims[1] = {0}, periods[1] = {1};
    MPI_Comm_size(MPI_COMM_WORLD, &dims[0]);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    KERNEL("comm_test_inter", 1, MPI_Comm_test_inter(MPI_COMM_WORLD, &n));
    KERNEL("cart_coords", 1, MPI_Cart_coords(cart, rank, 1, coords));
    KERNEL("type_get_envelope", 1, MPI_Type_get_envelope(MPI_INT, &ints, &addrs, &types, &comb));
    KERNEL("pack8", 1, pos = 0; MPI_Pack(in, 2, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    KERNEL("comm_rank_hot", 1, MPI_Comm_rank(cart, &n));
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100000, reps = argc > 2 ? atoi(argv[2]) : 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *t = calloc((size_t)reps, sizeof *t), x = 1.0, y;
    int peer = size == 1 ? rank : rank ^ 1;
    if (peer >= size)
        peer = rank;
    char buf[1];
    MPI_Request rq[2];

    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int i = 0; i < iters; i++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[r] = now() - t0;
    }
    if (rank == 0)
        report("allreduce8", 1, t, reps, iters);

    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        for (int i = 0; i < iters; i++) {
            MPI_Irecv(buf, 0, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(buf, 0, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[1]);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        }
        t[r] = now() - t0;
    }
    if (rank == 0)
        report("irecv_isend_waitall0", 3, t, reps, iters);

    polling(rank, peer, iters, reps, t);
    one_sided(rank, iters, reps, t);
    local(rank, iters, reps, t);
    if (rank == 0)
        printf("vm_hwm_kib=%ld\n", vm_hwm_kib());
    free(t);
    MPI_Finalize();
    return 0;
}
