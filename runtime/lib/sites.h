/* Call sites: per thread, the time, calls and bytes of each MPI call site,
 * keyed by the return address of the wrapper (depth 1: the instruction after
 * the application's call).  At finalize each address becomes (loaded object,
 * offset), which is the same on every rank whatever the address
 * randomisation (docs/runtime.md, "Call sites").  The per-call part is one
 * hashed slot compare; inserts and growth are in sites.c. */
#ifndef SW_SITES_H
#define SW_SITES_H

#include "state.h"

extern int sw_sites_on; /* SCALEWISE_SITES, on unless 0 */

void sw_site_slow(sw_thread *T, int fn, uintptr_t ra, uint64_t dt);

static inline __attribute__((always_inline)) unsigned sw_site_hash(uintptr_t ra)
{
    return (unsigned)((ra >> 2) ^ (ra >> 12));
}

/* One finished call of fn made from ra; its bytes were gathered in T->call_bytes. */
static inline __attribute__((always_inline)) void sw_site_add(sw_thread *T, int fn, uintptr_t ra, uint64_t dt)
{
    sw_site *s = &T->sites.slots[sw_site_hash(ra) & T->sites.mask];
    if (__builtin_expect(s->ra == ra && s->fn == (uint32_t)fn, 1)) {
        s->calls++;
        s->ticks += dt;
        s->bytes += T->call_bytes;
        T->call_bytes = 0;
        return;
    }
    sw_site_slow(T, fn, ra, dt);
}

void sw_sites_init(sw_sites *S);
/* This rank's sites merged over threads, sorted by address then function;
 * *out is malloc'ed (NULL when there are none). */
size_t sw_sites_merged(sw_site **out);

#endif
