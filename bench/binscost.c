/* Cost of the time-bin add alone (runtime/lib/bins.h), without MPI: the same
 * loop of simulated calls (a start and an end tick 300-1,000 ticks apart,
 * then a gap) with and without sw_bins_add, min of 7 repetitions; the
 * difference per call is what bins add to each MPI call.  Calls run over
 * 64 bins of 2^20 ticks and beyond, so edges and merges happen at their
 * natural rate.  Build and run: docs/benchmarks.md, "Time bins". */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "bins.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { N = 20000000 };

/* One simulated call: its length and the gap after it vary, as in real runs. */
static double run(int with_bins, volatile uint64_t *sink)
{
    uint64_t t = 1000, x = 88172645463325252ull, acc = 0;
    sw_bins_start(1000, 64);
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: lengths the compiler cannot predict */
        uint64_t start = t, end = t + 300 + (x & 511);
        if (with_bins)
            sw_bins_add(start, end);
        acc += end - start;
        t = end + 200 + ((x >> 9) & 1023);
    }
    double dt = now_ns() - t0;
    *sink += acc + sw_bins.mpi[0];
    return dt / N;
}

int main(void)
{
    volatile uint64_t sink = 0;
    double best_off = 1e9, best_on = 1e9;
    for (int rep = 0; rep < 7; rep++) {
        double off = run(0, &sink), on = run(1, &sink);
        best_off = off < best_off ? off : best_off;
        best_on = on < best_on ? on : best_on;
    }
    printf("loop_ns=%.2f with_bins_ns=%.2f bins_per_call_ns=%.2f merges=%u\n", best_off, best_on, best_on - best_off,
           sw_bins.shift - SW_BIN_SHIFT0);
    return 0;
}
