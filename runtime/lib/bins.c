/* Time bins, the slow path: calls that straddle bin edges, calls past the
 * span (which merge bins pairwise, doubling their width), and the start.
 * The per-call part is bins.h. */
#include <stdlib.h>
#include <string.h>

#include "bins.h"

sw_bins sw_B;
int sw_bins_on = 1;

void sw_bins_start(uint64_t base, unsigned n)
{
    sw_B.base = base;
    sw_B.shift = SW_BIN_SHIFT0;
    sw_B.mpi = n ? calloc(n, sizeof *sw_B.mpi) : NULL;
    sw_B.n = sw_B.mpi ? n : 0;
}

/* Bins 2i and 2i+1 become bin i: the width doubles, the sum is unchanged. */
static void merge(void)
{
    unsigned half = sw_B.n / 2;
    for (unsigned i = 0; i < half; i++)
        sw_B.mpi[i] = sw_B.mpi[2 * i] + sw_B.mpi[2 * i + 1];
    memset(sw_B.mpi + half, 0, (sw_B.n - half) * sizeof *sw_B.mpi);
    sw_B.shift++;
}

unsigned sw_bins_cover(uint64_t wall, unsigned shift)
{
    if (!sw_B.n)
        return sw_B.shift;
    while (wall && ((wall - 1) >> sw_B.shift) >= sw_B.n)
        merge();
    while (sw_B.shift < shift)
        merge();
    return sw_B.shift;
}

void sw_bins_slow(uint64_t t0, uint64_t t1)
{
    if (!sw_B.n)
        return;
    if (t0 < sw_B.base) /* a call begun before the window: only its part inside counts */
        t0 = sw_B.base;
    if (t1 <= t0)
        return;
    uint64_t a = t0 - sw_B.base, b = t1 - sw_B.base;
    sw_bins_cover(b, 0);
    /* Each bin gets exactly the ticks of [a, b) that fall inside it. */
    while (a < b) {
        uint64_t j = a >> sw_B.shift, end = (j + 1) << sw_B.shift;
        if (end > b)
            end = b;
        sw_B.mpi[j] += end - a;
        a = end;
    }
}
