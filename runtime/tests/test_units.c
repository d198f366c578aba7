/* Unit tests of the runtime pieces that need no MPI: histogram bins, the
 * hash table (find, erase, growth), the time bins (split, merge) and the
 * sampling estimator of the profiler's own time.
 * Prints "N passed, M failed". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bins.h"
#include "owntime.h"
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

/* The own-time estimate of n calls costing cost(i) ticks each, driven as
 * hot.h drives it (countdown at entry, sample at the end); *samples counts
 * the sampled calls, *blocks_hit whether each block of SW_OWN_PERIOD had
 * exactly one (NULL: not checked). */
static uint64_t own_estimate(uint64_t seed, unsigned n, uint64_t (*cost)(unsigned), unsigned *samples,
                             int *one_per_block)
{
    uint64_t rng = 0, est = 0;
    unsigned pos = 0, left = 1, last_block = UINT32_MAX;
    *samples = 0;
    for (unsigned i = 0; i < n; i++)
        if (--left == 0) {
            if (!rng && (left = sw_own_begin(&rng, &pos, seed))) /* as hot.c's sw_own_sample */
                continue;
            unsigned block = i / SW_OWN_PERIOD;
            if (one_per_block && (block == last_block || i % SW_OWN_PERIOD != pos ||
                                  (last_block != UINT32_MAX ? block != last_block + 1 : block != 0)))
                *one_per_block = 0;
            last_block = block;
            est += sw_own_weigh(0, cost(i), 0);
            left = sw_own_next(&rng, &pos);
            ++*samples;
        }
    if (one_per_block && n % SW_OWN_PERIOD == 0 && last_block != n / SW_OWN_PERIOD - 1)
        *one_per_block = 0;
    return est;
}

static uint64_t cost_flat(unsigned i) { return 7 + 0 * i; }
/* A loop of 4 calls, one of them 100 times dearer: a fixed sampling period
 * (a multiple of 4) would see only one kind. */
static uint64_t cost_loop4(unsigned i) { return i % 4 == 0 ? 1000 : 10; }

static void test_own_time_sampling(void)
{
    /* Subtracting one clock read from each measured part, never below 0. */
    CHECK(sw_own_weigh(30, 50, 20) == (10 + 30) * SW_OWN_PERIOD);
    CHECK(sw_own_weigh(5, 50, 20) == 30 * SW_OWN_PERIOD && sw_own_weigh(0, 0, 20) == 0);
    /* Exactly one sample per block; whole blocks of equal calls: exact. */
    for (uint64_t seed = 1; seed <= 50; seed++) {
        unsigned samples;
        int one = 1;
        const unsigned n = 1000 * SW_OWN_PERIOD;
        CHECK(own_estimate(seed, n, cost_flat, &samples, &one) == 7ull * n);
        CHECK(samples == 1000 && one);
    }
    /* The loop of 4 over 1000 seeds: the mean estimate is the true sum and
     * the spread is the documented (sigma / mu) x sqrt(SW_OWN_PERIOD / n). */
    const unsigned n = 40 * SW_OWN_PERIOD, seeds = 1000;
    const double mu = (1000 + 3 * 10) / 4.0, var = (1000 - mu) * (1000 - mu) / 4 + 3 * (10 - mu) * (10 - mu) / 4;
    const double truth = mu * n, predicted_rel_var = var / (mu * mu) * SW_OWN_PERIOD / n;
    double sum = 0, sum2 = 0;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        unsigned samples;
        double rel = (double)own_estimate(seed * 7919, n, cost_loop4, &samples, NULL) / truth - 1;
        sum += rel;
        sum2 += rel * rel;
    }
    double mean = sum / seeds, rel_var = sum2 / seeds - mean * mean;
    /* standard error of the mean: sqrt(0.069 / 1000) = 0.8 %; 4 of them */
    CHECK(mean > -0.033 && mean < 0.033);
    CHECK(rel_var > 0.8 * predicted_rel_var && rel_var < 1.25 * predicted_rel_var);
    /* Fewer calls than a block: each is sampled with probability 100 / 256
     * and then counts 256 times, so the estimate is still right on average. */
    unsigned hits = 0;
    double total = 0;
    for (uint64_t seed = 1; seed <= 4000; seed++) {
        unsigned samples;
        total += (double)own_estimate(seed * 104729, 100, cost_flat, &samples, NULL);
        hits += samples;
    }
    const double expect = 4000.0 * 100 / SW_OWN_PERIOD; /* 1562.5, binomial sd 31 */
    CHECK(hits > expect - 155 && hits < expect + 155);
    CHECK(total / 4000 > 700 * 0.9 && total / 4000 < 700 * 1.1);
}

int main(void)
{
    test_own_time_sampling();
    test_bins();
    test_time_bins();
    test_table();
    test_table_growth();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
