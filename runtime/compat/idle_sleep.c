/* Sleep instead of yielding: an opt-in shim, preloaded by scalewise into the
 * ranks it launches when SCALEWISE_IDLE_SLEEP_US is set (docs/runtime.md,
 * "Ranks that sleep while they wait").
 *
 * A rank waiting in MPI polls.  Told to yield when idle (Open MPI's
 * mpi_yield_when_idle 1, MPICH's SCALEWISE_YIELD_WHEN_IDLE through
 * compat/mpich_ucx.c), both call sched_yield(), which under CFS seldom gives
 * the core away: the waiting rank keeps a core its peer needs to compute, to
 * copy, or to drive its TCP socket.  With more ranks than cores (4 ranks on
 * this host's 2 cores, at every emulated placement) that makes the ranks
 * behave as ranks sharing cores, not as ranks with a core each.
 *
 * Here sched_yield() sleeps SCALEWISE_IDLE_SLEEP_US microseconds instead,
 * with the thread's timer slack set to 1 us (the default 50 us would make a
 * 10 us sleep a 60 us one): a waiting rank leaves its core for the sleep and
 * is back after it, whether or not another task wanted the core.  Unset, 0
 * or not a number: the real sched_yield(), untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#define SW_EXPORT __attribute__((visibility("default")))
#define SLACK_NS 1000UL

/* Read once when the library loads, before any thread of the rank starts. */
static long sleep_ns;
static int (*real_yield)(void);
/* PR_SET_TIMERSLACK is per thread: each thread sets it at its first sleep. */
static __thread int slack_set;

__attribute__((constructor)) static void idle_sleep_setup(void) {
    real_yield = (int (*)(void))dlsym(RTLD_NEXT, "sched_yield");
    const char *v = getenv("SCALEWISE_IDLE_SLEEP_US");
    double us = v ? strtod(v, NULL) : 0.0;
    sleep_ns = us > 0.0 && us < 1e6 ? (long)(us * 1000.0 + 0.5) : 0;
}

SW_EXPORT int sched_yield(void) {
    if (sleep_ns == 0) return real_yield ? real_yield() : 0;
    if (!slack_set) {
        prctl(PR_SET_TIMERSLACK, SLACK_NS, 0UL, 0UL, 0UL);
        slack_set = 1;
    }
    struct timespec t = {0, sleep_ns};
    nanosleep(&t, NULL);
    return 0;
}
