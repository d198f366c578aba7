/* Call sites: per thread, the time, calls and bytes of each MPI call site,
 * keyed by the return address of the wrapper (depth 1: the instruction after
 * the application's call).  At finalize each address becomes (loaded object,
 * offset), which is the same on every rank whatever the address
 * randomisation (docs/runtime.md, "Call sites").  The per-call part is a
 * hashed slot compare; inserts, growth and the log section are in sites.c. */
#ifndef SW_SITES_H
#define SW_SITES_H

#include "base.h"

typedef struct {
    uintptr_t ra; /* return address of the call; 0 marks an empty slot */
    uint32_t fn, unused;
    uint64_t calls, ticks, bytes;
} sw_site;

extern int sw_sites_on; /* SCALEWISE_SITES, on unless 0 */
/* The span of the MPI libraries' Fortran bindings' code (0 when none is
 * loaded): a call returning there came from Fortran through the binding. */
extern uintptr_t sw_fortran_lo, sw_fortran_span;

void sw_site_slow(sw_thread *thread, int fn, uintptr_t ra, uint64_t dt);
/* The user's call behind a Fortran binding's call, ra inside the binding:
 * must be called from the wrapper itself (it reads the wrapper's caller's
 * caller's frame at an offset learnt once per ra, see sites.c). */
uintptr_t sw_site_user(sw_thread *thread, uintptr_t ra);

SW_HOT unsigned sw_site_hash(uintptr_t ra) { return (unsigned)((ra >> 2) ^ (ra >> 12)); }

SW_HOT void sw_site_count(sw_thread *thread, sw_site *s, uint64_t dt)
{
    s->calls++;
    s->ticks += dt;
    s->bytes += thread->call_bytes;
    thread->call_bytes = 0;
}

/* One finished call of fn made from ra; its bytes were gathered in thread->call_bytes.
 * The probe runs inline past a collision: two sites of one program often
 * share a home slot, and the one placed second would otherwise take the
 * slow path on every call (sites.c).  An empty slot ends it: a new site.
 * The home slot's hit is tested first and alone, so that it stays the
 * straight path (in one loop gcc moved the hit out to the cold section). */
SW_HOT void sw_site_add(sw_thread *thread, int fn, uintptr_t ra, uint64_t dt)
{
    unsigned mask = thread->sites.mask, i = sw_site_hash(ra) & mask;
    sw_site *s = (sw_site *)thread->sites.slots + i;
    if (__builtin_expect(s->ra == ra && s->fn == (uint32_t)fn, 1)) {
        sw_site_count(thread, s, dt);
        return;
    }
    while (s->ra) {
        i = (i + 1) & mask;
        s = (sw_site *)thread->sites.slots + i;
        if (s->ra == ra && s->fn == (uint32_t)fn) {
            sw_site_count(thread, s, dt);
            return;
        }
    }
    sw_site_slow(thread, fn, ra, dt);
}

#endif
