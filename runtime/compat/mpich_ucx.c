/* Work-arounds for MPICH 4.0 over UCX (Debian's ch4:ucx build), preloaded by
 * scalewise into MPICH runs it launches; docs/runtime.md, "MPICH over UCX".
 *
 * 1. Yield when idle.  MPICH's ch4 progress loop polls without ever giving up
 *    the core (MPIR_CVAR_POLLS_BEFORE_YIELD is a ch3 setting), so on an
 *    oversubscribed node a waiting rank burns its whole time slice while the
 *    rank it waits for cannot run: 4 ranks on 2 cores ran 100-300x slower
 *    than Open MPI, which yields when oversubscribed (mpi_yield_when_idle).
 *    Every MPICH progress poll calls ucp_worker_progress(); after
 *    SCALEWISE_YIELD_WHEN_IDLE polls in a row that found nothing to do, this
 *    calls sched_yield().  Unset or 0: never yields.
 *
 * 2. Finalize over TCP.  MPI_Finalize closes every UCX endpoint with a flush
 *    (ucp_disconnect_nb) and polls until all closes complete, then waits in a
 *    PMI barrier without polling.  Over UCX's TCP transport with 3 or more
 *    ranks on a node, the close to a peer that already reached that barrier
 *    can never complete, and the job hangs in MPI_Finalize (seen in 3 of 10
 *    to 10 of 10 runs of a 6-line program, without scalewise).  MPI requires
 *    every communication to be complete when MPI_Finalize starts, so these
 *    closes carry no data: once SCALEWISE_UCX_CLOSE_GRACE seconds have passed
 *    since the first close, an unfinished close is reported complete and
 *    MPICH goes on to destroy the worker.  Unset or 0: never.
 *
 * The UCX handles are opaque here: the prototypes below match libucp's ABI
 * without needing UCX's headers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#define SW_EXPORT __attribute__((visibility("default")))

static void *next_symbol(const char *name) { return dlsym(RTLD_NEXT, name); }

static double env_number(const char *name) {
    const char *v = getenv(name);
    return v ? strtod(v, NULL) : 0.0;
}

static double monotonic_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* -1 until read from the environment on first use. */
static long yield_after = -1;
static __thread long idle_polls;

SW_EXPORT unsigned ucp_worker_progress(void *worker) {
    static unsigned (*real)(void *);
    if (!real) real = (unsigned (*)(void *))next_symbol("ucp_worker_progress");
    if (yield_after < 0) yield_after = (long)env_number("SCALEWISE_YIELD_WHEN_IDLE");
    unsigned events = real(worker);
    if (events || yield_after == 0) {
        idle_polls = 0;
    } else if (++idle_polls >= yield_after) {
        idle_polls = 0;
        sched_yield();
    }
    return events;
}

/* When MPI_Finalize started closing endpoints; 0 before. */
static double first_close;

SW_EXPORT void *ucp_disconnect_nb(void *ep) {
    static void *(*real)(void *);
    if (!real) real = (void *(*)(void *))next_symbol("ucp_disconnect_nb");
    if (first_close == 0.0) first_close = monotonic_seconds();
    return real(ep);
}

SW_EXPORT int ucp_request_is_completed(void *request) {
    static int (*real)(void *);
    static double grace = -1.0;
    if (!real) real = (int (*)(void *))next_symbol("ucp_request_is_completed");
    if (grace < 0.0) grace = env_number("SCALEWISE_UCX_CLOSE_GRACE");
    int done = real(request);
    if (!done && grace > 0.0 && first_close > 0.0 && monotonic_seconds() - first_close > grace) return 1;
    return done;
}
