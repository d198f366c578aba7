/* The cheapest possible interposer, for bench/overhead_paired.py --preload:
 * each MPI_x of overhead_paired.c's kernels returns PMPI_x(...) and does
 * nothing else, so the "added" cost it shows is interposition alone (the
 * call through the program's PLT to a preloaded object and its call on to
 * the library), none of the profiler's work.  Built with -DPASS_PMPI it
 * also exports PMPI_x (as the profiler does), so the library's own calls
 * to its PMPI_x entry points land here too.  Built with -DPASS_FRAME=N the
 * forwarding is a call, not a jump, from a frame holding N more bytes (the
 * library's stack then sits lower, as under a wrapper with locals); with
 * -DPASS_CLOCK it also reads the time-stamp counter before and after, as
 * the profiler does.
 * Build: mpicc -O2 -shared -fPIC -o libpassthrough.so bench/passthrough.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>

/* PASS(ret-free name, params, args): MPI_name forwards to the next PMPI_name,
 * found once. */
#ifdef PASS_PMPI
#define ALIAS(name) __attribute__((alias("MPI_" #name))) int PMPI_##name
#else
#define ALIAS(name) int pass_unused_##name
#endif
#ifdef PASS_CLOCK
#include <x86intrin.h>
static unsigned long long pass_ticks;
#define TICK() (pass_ticks += __rdtsc())
#else
#define TICK() ((void)0)
#endif
#ifdef PASS_FRAME
#define FORWARD(call)                                                        \
    volatile char pad_[PASS_FRAME + 1];                                      \
    pad_[0] = 0;                                                             \
    TICK();                                                                  \
    int rc_ = call;                                                          \
    TICK();                                                                  \
    __asm__ volatile("" ::"r"(pad_) : "memory");                             \
    return rc_
#else
#define FORWARD(call) return call
#endif
#define PASS(name, params, args)                                             \
    int MPI_##name params                                                    \
    {                                                                        \
        static int(*real) params;                                            \
        if (__builtin_expect(!real, 0))                                      \
            *(void **)&real = dlsym(RTLD_NEXT, "PMPI_" #name);              \
        FORWARD(real args);                                                  \
    }                                                                        \
    ALIAS(name) params;

PASS(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))
PASS(Test, (MPI_Request *q, int *f, MPI_Status *st), (q, f, st))
PASS(Testany, (int n, MPI_Request q[], int *i, int *f, MPI_Status *st), (n, q, i, f, st))
PASS(Put, (const void *o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Win w),
     (o, oc, ot, r, d, tc, tt, w))
PASS(Accumulate,
     (const void *o, int oc, MPI_Datatype ot, int r, MPI_Aint d, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w),
     (o, oc, ot, r, d, tc, tt, op, w))
PASS(Get_accumulate,
     (const void *o, int oc, MPI_Datatype ot, void *res, int rc, MPI_Datatype rt, int r, MPI_Aint d, int tc,
      MPI_Datatype tt, MPI_Op op, MPI_Win w),
     (o, oc, ot, res, rc, rt, r, d, tc, tt, op, w))
PASS(Fetch_and_op, (const void *o, void *res, MPI_Datatype t, int r, MPI_Aint d, MPI_Op op, MPI_Win w),
     (o, res, t, r, d, op, w))
PASS(Win_flush_all, (MPI_Win w), (w))
PASS(Win_lock, (int l, int r, int a, MPI_Win w), (l, r, a, w))
PASS(Win_unlock, (int r, MPI_Win w), (r, w))
PASS(Cart_coords, (MPI_Comm c, int r, int n, int co[]), (c, r, n, co))
