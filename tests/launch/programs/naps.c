/* Sleeps the milliseconds given, and prints CLOCK_MONOTONIC (ns) at the
 * entry of main and just before it returns: the program's own lifetime on
 * the clock Python's time.perf_counter reads. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long long start = now();
    long ms = argc > 1 ? atol(argv[1]) : 0;
    struct timespec nap = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&nap, NULL);
    printf("%lld %lld\n", start, now());
    return 0;
}
