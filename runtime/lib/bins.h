/* MPI time in time bins: a fixed number of bins of 2^shift ticks each from
 * the return of MPI_Init.  When the run outgrows the span, adjacent bins are
 * merged pairwise and the width doubles, so memory stays bounded whatever the
 * run's length.  The per-call part is one shift, two compares and an add;
 * calls that straddle a bin edge, and merges, are in bins.c
 * (docs/runtime.md, "Time bins"). */
#ifndef SW_BINS_H
#define SW_BINS_H

#include <stdint.h>

typedef struct {
    uint64_t base;  /* tick of the start of bin 0: the return of MPI_Init */
    unsigned shift; /* each bin is 2^shift ticks wide */
    unsigned n;     /* bins, even; 0 when bins are off */
    uint64_t *mpi;  /* n entries: MPI ticks inside each bin */
} sw_time_bins;

extern sw_time_bins sw_bins;
extern int sw_bins_on; /* SCALEWISE_BINS, on unless 0 */

/* Bins start 2^20 ticks wide (0.3-0.5 ms at 2-3 GHz). */
#define SW_BIN_SHIFT0 20

void sw_bins_slow(uint64_t t0, uint64_t t1);

/* MPI time from tick t0 to t1 (t0 <= t1).  Calls may not overlap here: the
 * caller holds the MPI time union's lock under MPI_THREAD_MULTIPLE. */
static inline __attribute__((always_inline)) void sw_bins_add(uint64_t t0, uint64_t t1)
{
    uint64_t j = (t1 - sw_bins.base) >> sw_bins.shift;
    if (__builtin_expect(j < sw_bins.n && j == (t0 - sw_bins.base) >> sw_bins.shift, 1))
        sw_bins.mpi[j] += t1 - t0;
    else
        sw_bins_slow(t0, t1);
}

/* Start the bins at tick base with n bins (n even; 0: off). */
void sw_bins_start(uint64_t base, unsigned n);
/* Merge until the window [base, base + wall) fits, then until the width is
 * at least 2^shift ticks; returns the shift reached. */
unsigned sw_bins_cover(uint64_t wall, unsigned shift);

#endif
