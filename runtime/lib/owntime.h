/* The profiler's own time per call, estimated by sampling (docs/runtime.md,
 * "The profiler's own time").  Calls are cut into blocks of SW_OWN_PERIOD
 * consecutive recorded calls per thread; in each block one call, at a
 * position drawn uniformly, reads the clock at its entry and at the end of
 * sw_leave, and its own time counts SW_OWN_PERIOD times.  Every call is so
 * sampled with probability exactly 1/SW_OWN_PERIOD (also in the last,
 * incomplete block), which makes the sum unbiased whatever the pattern of
 * calls (a fixed period would see only one call of a loop of 4).  The other
 * calls pay a decrement and a predictable branch.  No MPI here: the unit
 * tests drive these functions directly. */
#ifndef SW_OWNTIME_H
#define SW_OWNTIME_H

#include <stdint.h>

#define SW_OWN_PERIOD 256u

/* A position in a block, uniform over [0, SW_OWN_PERIOD): xorshift64*'s
 * top 8 bits. */
static inline unsigned sw_own_draw(uint64_t *rng)
{
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return (unsigned)((x * 0x2545F4914F6CDD1Dull) >> 56);
}

/* A thread's first sample, decided at its first recorded call (every
 * thread's record starts with a countdown of 1 to reach it): seeds the
 * generator (any seed; 0 is replaced), draws the first block's sampled
 * position *pos and returns 0 when it is that first call, else the
 * countdown from it to the sample. */
static inline unsigned sw_own_begin(uint64_t *rng, unsigned *pos, uint64_t seed)
{
    *rng = seed ? seed : 0x9E3779B97F4A7C15ull;
    *pos = sw_own_draw(rng);
    return *pos;
}

/* After the sample at *pos: the countdown to the next one, at a position
 * drawn in the next block (1 to 2 x SW_OWN_PERIOD - 1 calls away). */
static inline unsigned sw_own_next(uint64_t *rng, unsigned *pos)
{
    unsigned next = sw_own_draw(rng), gap = SW_OWN_PERIOD - *pos + next;
    *pos = next;
    return gap;
}

/* One sampled call's weighted contribution: the ticks it spent in the
 * runtime before the real call (pre, 0 when not measured) and after it
 * (post), each less one clock read (the interval between two reads holds
 * the second read's own latency, which the other calls do not pay). */
static inline uint64_t sw_own_weigh(uint64_t pre, uint64_t post, uint64_t clock_read)
{
    uint64_t a = pre > clock_read ? pre - clock_read : 0, b = post > clock_read ? post - clock_read : 0;
    return (a + b) * SW_OWN_PERIOD;
}

#endif
