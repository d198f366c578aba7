/* Call sites, the slow path: first call from an address, collisions, growth,
 * and the merge over threads at finalize.  The per-call path is sites.h. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "sites.h"

int sw_sites_on = 1;

/* Every table starts as this one empty slot: the hot path never tests for NULL. */
static sw_site sw_no_sites[1];

/* Calls from new addresses once a thread holds max_sites sites are kept under
 * this address, one entry per function ("other call sites" in reports). */
#define SW_OTHER_SITES ((uintptr_t)1)

void sw_sites_init(sw_sites *S)
{
    S->slots = sw_no_sites;
    S->mask = 0;
    S->used = 0;
}

static sw_site *probe(sw_sites *S, uintptr_t ra, uint32_t fn)
{
    for (uint32_t i = sw_site_hash(ra) & S->mask;; i = (i + 1) & S->mask) {
        sw_site *s = &S->slots[i];
        if (!s->ra || (s->ra == ra && s->fn == fn))
            return s;
    }
}

/* Twice the room: sized for max_sites real sites plus one overflow entry per
 * function, at most half full, so probing always ends. */
static int grow(sw_sites *S)
{
    uint32_t n = S->slots == sw_no_sites ? 256 : 2 * (S->mask + 1);
    sw_site *slots = calloc(n, sizeof *slots);
    if (!slots)
        return 0;
    sw_sites old = *S;
    S->slots = slots;
    S->mask = n - 1;
    for (uint32_t i = 0; old.slots != sw_no_sites && i <= old.mask; i++)
        if (old.slots[i].ra)
            *probe(S, old.slots[i].ra, old.slots[i].fn) = old.slots[i];
    if (old.slots != sw_no_sites)
        free(old.slots);
    return 1;
}

void sw_site_slow(sw_thread *T, int fn, uintptr_t ra, uint64_t dt)
{
    sw_sites *S = &T->sites;
    uint64_t nbytes = T->call_bytes;
    T->call_bytes = 0;
    if (S->slots == sw_no_sites && !grow(S))
        return;
    sw_site *s = probe(S, ra, (uint32_t)fn);
    if (!s->ra) {
        if (S->used >= sw_J.cfg.max_sites)
            s = probe(S, ra = SW_OTHER_SITES, (uint32_t)fn);
        if (!s->ra && 2 * (S->used + 1) > S->mask + 1) {
            if (!grow(S))
                return;
            s = probe(S, ra, (uint32_t)fn);
        }
        if (!s->ra) {
            s->ra = ra;
            s->fn = (uint32_t)fn;
            S->used += ra != SW_OTHER_SITES;
        }
    }
    s->calls++;
    s->ticks += dt;
    s->bytes += nbytes;
}

static int by_site(const void *a, const void *b)
{
    const sw_site *x = a, *y = b;
    if (x->ra != y->ra)
        return x->ra < y->ra ? -1 : 1;
    return (x->fn > y->fn) - (x->fn < y->fn);
}

size_t sw_sites_merged(sw_site **out)
{
    size_t n = 0, k = 0;
    for (sw_thread *T = sw_J.threads; T; T = T->next)
        n += T->sites.slots == sw_no_sites ? 0 : T->sites.mask + 1;
    sw_site *all = n ? malloc(n * sizeof *all) : NULL;
    *out = all;
    if (!all)
        return 0;
    for (sw_thread *T = sw_J.threads; T; T = T->next)
        for (uint32_t i = 0; T->sites.slots != sw_no_sites && i <= T->sites.mask; i++)
            if (T->sites.slots[i].ra)
                all[k++] = T->sites.slots[i];
    if (k)
        qsort(all, k, sizeof *all, by_site);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && all[m - 1].ra == all[i].ra && all[m - 1].fn == all[i].fn) {
            all[m - 1].calls += all[i].calls;
            all[m - 1].ticks += all[i].ticks;
            all[m - 1].bytes += all[i].bytes;
        } else {
            all[m++] = all[i];
        }
    }
    return m;
}
