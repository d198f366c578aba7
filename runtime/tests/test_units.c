/* Unit tests of the runtime pieces that need no MPI: histogram bins, the
 * open-addressing table (probe, erase) and the time bins (split, merge).  Prints "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalewise/format.h"
#include "bins.h"
#include "table.h"

static int passed, failed;
#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond)                                                          \
            passed++;                                                      \
        else {                                                             \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                  \
    } while (0)

/* Same rule as sw_bin() in lib/hot.h (which needs mpi.h to include). */
static unsigned bin(uint64_t n)
{
    if (!n)
        return 0;
    unsigned b = 64u - (unsigned)__builtin_clzll(n);
    return b < SW_NBINS ? b : SW_NBINS - 1;
}

static void test_bins(void)
{
    CHECK(bin(0) == 0);
    CHECK(bin(1) == 1);
    CHECK(bin(2) == 2 && bin(3) == 2);
    CHECK(bin(7) == 3 && bin(8) == 4);
    CHECK(bin(65535) == 16 && bin(65536) == 17);
    CHECK(bin(UINT64_MAX) == SW_NBINS - 1);
    for (unsigned k = 1; k < SW_NBINS - 1; k++) { /* [2^(k-1), 2^k) is bin k */
        uint64_t lo = 1ull << (k - 1), hi = (1ull << k) - 1;
        CHECK(bin(lo) == k && bin(hi) == k);
    }
}

typedef struct {
    uintptr_t key;
    int value;
} item;

static void test_table(void)
{
    enum { N = 64 };
    item t[N];
    memset(t, 0, sizeof t);
    unsigned mask = N - 1;
    /* Keys that collide on their home slot, plus others, then erase some. */
    uintptr_t keys[40];
    for (int i = 0; i < 40; i++)
        keys[i] = (uintptr_t)(i < 20 ? (i + 1) * (N << 4) : 0x1000 + i * 16);
    for (int i = 0; i < 40; i++) {
        unsigned s = sw_probe(t, sizeof *t, mask, keys[i]);
        CHECK(t[s].key == 0);
        t[s] = (item){keys[i], i};
    }
    for (int i = 0; i < 40; i += 3) {
        unsigned s = sw_probe(t, sizeof *t, mask, keys[i]);
        CHECK(t[s].key == keys[i]);
        sw_erase(t, sizeof *t, mask, s);
    }
    for (int i = 0; i < 40; i++) {
        unsigned s = sw_probe(t, sizeof *t, mask, keys[i]);
        if (i % 3 == 0)
            CHECK(t[s].key == 0);
        else
            CHECK(t[s].key == keys[i] && t[s].value == i);
    }
}

static uint64_t time_bins_total(void)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < sw_B.n; i++)
        t += sw_B.mpi[i];
    return t;
}

/* Time bins: a call across edges is split exactly; a call past the span
 * merges bins pairwise (width doubles) and nothing is lost. */
static void test_time_bins(void)
{
    const uint64_t base = 1000, w = 1ull << SW_BIN_SHIFT0;
    sw_bins_start(base, 4);
    CHECK(sw_B.n == 4 && sw_B.shift == SW_BIN_SHIFT0);
    sw_bins_add(base + 5, base + 25); /* inside bin 0 */
    sw_bins_add(base + w - 10, base + 2 * w + 30); /* 10 in bin 0, all of bin 1, 30 in bin 2 */
    CHECK(sw_B.mpi[0] == 30 && sw_B.mpi[1] == w && sw_B.mpi[2] == 30 && sw_B.mpi[3] == 0);
    sw_bins_add(base - 50, base + 7); /* begun before the window: only its part inside */
    CHECK(sw_B.mpi[0] == 37);
    sw_bins_add(base + 5 * w - 3, base + 5 * w + 4); /* past 4 bins: one merge, then bins of 2w */
    CHECK(sw_B.shift == SW_BIN_SHIFT0 + 1);
    CHECK(sw_B.mpi[0] == 37 + w && sw_B.mpi[1] == 30 && sw_B.mpi[2] == 7 && sw_B.mpi[3] == 0);
    sw_bins_add(base + 100 * w, base + 100 * w + 1);
    CHECK(sw_B.shift == SW_BIN_SHIFT0 + 5 && time_bins_total() == 37 + w + 30 + 7 + 1);
    CHECK(sw_B.mpi[0] == 37 + w + 30 + 7 && sw_B.mpi[3] == 1);
    /* Widening to a common width (the widest rank's) keeps the total. */
    CHECK(sw_bins_cover(101 * w, SW_BIN_SHIFT0 + 7) == SW_BIN_SHIFT0 + 7);
    CHECK(sw_B.mpi[0] == time_bins_total() && time_bins_total() == 37 + w + 30 + 7 + 1);
    free(sw_B.mpi);
}

int main(void)
{
    test_bins();
    test_time_bins();
    test_table();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
