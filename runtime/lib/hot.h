/* The per-call path: what every generated wrapper calls around the real
 * MPI function, and nothing else.  Inline and lock-free for single-threaded
 * MPI; under MPI_THREAD_MULTIPLE (sw_mt) the MPI time union takes a lock
 * (hot.c).  Byte credits are in credit.h, sends' matrix rows in p2p.h. */
#ifndef SW_HOT_H
#define SW_HOT_H

#include "base.h"
#include "bins.h"
#include "sites.h"

/* Under MPI_THREAD_MULTIPLE calls overlap: MPI time is the union of the
 * intervals during which at least one thread is inside MPI. */
void sw_mt_enter(void);
void sw_mt_leave(void);
/* The sampled call's end (owntime.h): out of line, once in SW_OWN_PERIOD calls.
 * Not declared cold here: seen by the wrappers, gcc then moved the straight
 * end of every recorded call (the site's count, the return) to the functions'
 * .cold parts, a taken branch to another page after each call; its
 * definition is cold (hot.c). */
__attribute__((noinline)) void sw_own_sample(sw_thread *thread, uint64_t t0, uint64_t t1);

SW_HOT sw_thread *sw_enter(void)
{
    if (SW_UNLIKELY(!sw_on))
        return NULL;
    sw_thread *thread = sw_self;
    if (SW_UNLIKELY(!thread) && !(thread = sw_thread_attach()))
        return NULL;
    if (thread->depth)
        return NULL;
    thread->depth = 1;
    if (SW_UNLIKELY(--thread->own_left == 0))
        thread->own_mark = sw_ticks();
    if (SW_UNLIKELY(sw_mt))
        sw_mt_enter();
    return thread;
}

/* A Fortran binding's entry point (genwrap.py, fortran_entry): the thread, if
 * the call is to be recorded, without entering it, so that the C wrapper the
 * binding may call records it as usual. */
SW_HOT sw_thread *sw_fortran_enter(void)
{
    if (SW_UNLIKELY(!sw_on))
        return NULL;
    sw_thread *thread = sw_self;
    if (SW_UNLIKELY(!thread) && !(thread = sw_thread_attach()))
        return NULL;
    return thread->depth ? NULL : thread;
}

/* The binding returned without entering the C function: the entry point
 * records the call itself (sw_leave follows), unless recording stopped. */
SW_HOT int sw_fortran_record(sw_thread *thread)
{
    if (SW_UNLIKELY(!sw_on) || thread->depth)
        return 0;
    thread->depth = 1;
    if (SW_UNLIKELY(--thread->own_left == 0))
        thread->own_mark = 0; /* its entry passed unseen: only the part after the call is measured */
    if (SW_UNLIKELY(sw_mt))
        sw_mt_enter();
    return 1;
}

SW_HOT void sw_leave(sw_thread *thread, int fn, uint64_t t0, uint64_t t1)
{
    uint64_t dt = t1 - t0;
    sw_stat_add(&thread->stats[fn], dt);
    if (SW_UNLIKELY(sw_mt))
        sw_mt_leave();
    else {
        thread->mpi_ticks += dt;
        if (sw_bins_on) /* one thread in MPI at a time: the process-wide bins need no lock */
            sw_bins_add(t0, t1);
    }
    if (sw_sites_on) { /* inlined into the wrapper: the address is the application's call */
        uintptr_t ra = (uintptr_t)__builtin_return_address(0);
        if (SW_UNLIKELY(ra - sw_fortran_lo < sw_fortran_span)) /* ... or a Fortran binding's */
            ra = sw_site_user(thread, ra);
        sw_site_add(thread, fn, ra, dt);
    }
    thread->depth = 0;
    if (SW_UNLIKELY(thread->own_left == 0))
        sw_own_sample(thread, t0, t1);
}

#endif
