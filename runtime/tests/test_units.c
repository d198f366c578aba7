/* Unit tests of the runtime pieces that need no MPI: histogram bins, the
 * hash table (find, erase, growth) and the time bins (split, merge).
 * Prints "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bins.h"
#include "scalewise/format.h"
#include "table.h"

static int passed, failed;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond)                                                                    \
            passed++;                                                                \
        else {                                                                       \
            failed++;                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

/* Same rule as sw_bin() in lib/credit.h (which needs mpi.h to include). */
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

static unsigned item_hash(uintptr_t key) { return sw_handle_hash(key); }

/* Keys that collide on their home slot, plus others. */
static uintptr_t test_key(int i, unsigned slots)
{
    return i < 20 ? (uintptr_t)(i + 1) * (slots << 4) : (uintptr_t)(0x1000 + i * 16);
}

static void test_table(void)
{
    enum { N = 64 };
    item slots[N];
    memset(slots, 0, sizeof slots);
    sw_table t = {slots, N - 1, 0};
    /* Insert 40 keys, then erase every third. */
    for (int i = 0; i < 40; i++) {
        unsigned s = sw_find(&t, sizeof(item), item_hash, test_key(i, N));
        CHECK(slots[s].key == 0);
        slots[s] = (item){test_key(i, N), i};
    }
    for (int i = 0; i < 40; i += 3) {
        unsigned s = sw_find(&t, sizeof(item), item_hash, test_key(i, N));
        CHECK(slots[s].key == test_key(i, N));
        sw_erase(&t, sizeof(item), item_hash, s);
    }
    for (int i = 0; i < 40; i++) {
        unsigned s = sw_find(&t, sizeof(item), item_hash, test_key(i, N));
        if (i % 3 == 0)
            CHECK(slots[s].key == 0);
        else
            CHECK(slots[s].key == test_key(i, N) && slots[s].value == i);
    }
}

/* Growth keeps every element findable, stops at the cap, and an empty table
 * finds nothing without an array of its own. */
static void test_table_growth(void)
{
    sw_table t;
    sw_table_init(&t);
    CHECK(sw_table_empty(&t) && t.mask == 0);
    CHECK(((item *)t.slots)[sw_find(&t, sizeof(item), item_hash, 0x1234)].key == 0);
    for (int i = 0; i < 40; i++) {
        if ((t.used + 1) * 2 > t.mask + 1)
            CHECK(sw_table_grow(&t, sizeof(item), item_hash, 8, 0));
        item *e = sw_slot(&t, sizeof(item), sw_find(&t, sizeof(item), item_hash, test_key(i, 8)));
        *e = (item){test_key(i, 8), i};
        t.used++;
    }
    CHECK(!sw_table_empty(&t) && t.mask + 1 == 128 && t.used == 40);
    for (int i = 0; i < 40; i++) {
        item *e = sw_slot(&t, sizeof(item), sw_find(&t, sizeof(item), item_hash, test_key(i, 8)));
        CHECK(e->key == test_key(i, 8) && e->value == i);
    }
    CHECK(!sw_table_grow(&t, sizeof(item), item_hash, 8, 64)); /* 128 slots hold the cap of 64 at half load */
    CHECK(t.mask + 1 == 128);
    CHECK(sw_table_grow(&t, sizeof(item), item_hash, 8, 65) && t.mask + 1 == 256);
    sw_table_free(&t);
    CHECK(sw_table_empty(&t));
}

static uint64_t time_bins_total(void)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < sw_bins.n; i++)
        t += sw_bins.mpi[i];
    return t;
}

/* Time bins: a call across edges is split exactly; a call past the span
 * merges bins pairwise (width doubles) and nothing is lost. */
static void test_time_bins(void)
{
    const uint64_t base = 1000, w = 1ull << SW_BIN_SHIFT0;
    sw_bins_start(base, 4);
    CHECK(sw_bins.n == 4 && sw_bins.shift == SW_BIN_SHIFT0);
    sw_bins_add(base + 5, base + 25);              /* inside bin 0 */
    sw_bins_add(base + w - 10, base + 2 * w + 30); /* 10 in bin 0, all of bin 1, 30 in bin 2 */
    CHECK(sw_bins.mpi[0] == 30 && sw_bins.mpi[1] == w && sw_bins.mpi[2] == 30 && sw_bins.mpi[3] == 0);
    sw_bins_add(base - 50, base + 7); /* begun before the window: only its part inside */
    CHECK(sw_bins.mpi[0] == 37);
    sw_bins_add(base + 5 * w - 3, base + 5 * w + 4); /* past 4 bins: one merge, then bins of 2w */
    CHECK(sw_bins.shift == SW_BIN_SHIFT0 + 1);
    CHECK(sw_bins.mpi[0] == 37 + w && sw_bins.mpi[1] == 30 && sw_bins.mpi[2] == 7 && sw_bins.mpi[3] == 0);
    sw_bins_add(base + 100 * w, base + 100 * w + 1);
    CHECK(sw_bins.shift == SW_BIN_SHIFT0 + 5 && time_bins_total() == 37 + w + 30 + 7 + 1);
    CHECK(sw_bins.mpi[0] == 37 + w + 30 + 7 && sw_bins.mpi[3] == 1);
    /* Widening to a common width (the widest rank's) keeps the total. */
    CHECK(sw_bins_cover(101 * w, SW_BIN_SHIFT0 + 7) == SW_BIN_SHIFT0 + 7);
    CHECK(sw_bins.mpi[0] == time_bins_total() && time_bins_total() == 37 + w + 30 + 7 + 1);
    free(sw_bins.mpi);
}

int main(void)
{
    test_bins();
    test_time_bins();
    test_table();
    test_table_growth();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
