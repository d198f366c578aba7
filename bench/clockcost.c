/* Cost of one time-stamp-counter read and one clock_gettime, the floor under
 * the profiler's per-call cost (it reads the clock twice per call). */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    enum { N = 20000000 };
    volatile uint64_t sink = 0;
    double best_tsc = 1e9, best_cg = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            sink += __rdtsc();
        double t1 = now_ns();
        struct timespec ts;
        for (int i = 0; i < N; i++) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            sink += (uint64_t)ts.tv_nsec;
        }
        double t2 = now_ns();
        best_tsc = (t1 - t0) / N < best_tsc ? (t1 - t0) / N : best_tsc;
        best_cg = (t2 - t1) / N < best_cg ? (t2 - t1) / N : best_cg;
    }
    printf("rdtsc_ns=%.2f clock_gettime_ns=%.2f\n", best_tsc, best_cg);
    return 0;
}
