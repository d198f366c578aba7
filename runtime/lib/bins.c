/* Time bins, the slow path: calls that straddle bin edges, calls past the
 * span (which merge bins pairwise, doubling their width), and the start.
 * The per-call part is bins.h. */
#include <stdlib.h>
#include <string.h>

#include "bins.h"

sw_time_bins sw_bins;
int sw_bins_on = 1;

void sw_bins_start(uint64_t base, unsigned n)
{
    sw_bins.base = base;
    sw_bins.shift = SW_BIN_SHIFT0;
    sw_bins.mpi = n ? calloc(n, sizeof *sw_bins.mpi) : NULL;
    sw_bins.n = sw_bins.mpi ? n : 0;
}

/* Bins 2i and 2i+1 become bin i: the width doubles, the sum is unchanged. */
static void merge(void)
{
    unsigned half = sw_bins.n / 2;
    for (unsigned i = 0; i < half; i++)
        sw_bins.mpi[i] = sw_bins.mpi[2 * i] + sw_bins.mpi[2 * i + 1];
    memset(sw_bins.mpi + half, 0, (sw_bins.n - half) * sizeof *sw_bins.mpi);
    sw_bins.shift++;
}

unsigned sw_bins_cover(uint64_t wall, unsigned shift)
{
    if (!sw_bins.n)
        return sw_bins.shift;
    while (wall && ((wall - 1) >> sw_bins.shift) >= sw_bins.n)
        merge();
    while (sw_bins.shift < shift)
        merge();
    return sw_bins.shift;
}

void sw_bins_slow(uint64_t t0, uint64_t t1)
{
    if (!sw_bins.n)
        return;
    if (t0 < sw_bins.base) /* a call begun before the window: only its part inside counts */
        t0 = sw_bins.base;
    if (t1 <= t0)
        return;
    uint64_t a = t0 - sw_bins.base, b = t1 - sw_bins.base;
    sw_bins_cover(b, 0);
    /* Each bin gets exactly the ticks of [a, b) that fall inside it. */
    while (a < b) {
        uint64_t j = a >> sw_bins.shift, end = (j + 1) << sw_bins.shift;
        if (end > b)
            end = b;
        sw_bins.mpi[j] += end - a;
        a = end;
    }
}
