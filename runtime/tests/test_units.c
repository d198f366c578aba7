/* Unit tests of the runtime pieces that need no MPI: histogram bins and the
 * open-addressing table (probe, erase).  Prints "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalewise/format.h"
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

int main(void)
{
    test_bins();
    test_table();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
