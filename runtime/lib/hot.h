/* The per-call path: what every generated wrapper calls around the real
 * MPI function.  Everything here is inline and lock-free for single-threaded
 * MPI; shared tables take a lock only under MPI_THREAD_MULTIPLE (sw_mt). */
#ifndef SW_HOT_H
#define SW_HOT_H

#include <x86intrin.h>

#include "bins.h"
#include "comms.h"
#include "core.h"
#include "p2p.h"
#include "sites.h"
#include "state.h"

/* Always inlined into each wrapper. */
#define SW_HOT static inline __attribute__((always_inline))

SW_HOT uint64_t sw_ticks(void) { return __rdtsc(); }

SW_HOT sw_thread *sw_enter(void)
{
    if (SW_UNLIKELY(!sw_on))
        return NULL;
    sw_thread *T = sw_self;
    if (SW_UNLIKELY(!T) && !(T = sw_thread_attach()))
        return NULL;
    if (T->depth)
        return NULL;
    T->depth = 1;
    if (SW_UNLIKELY(sw_mt))
        sw_mt_enter();
    return T;
}

SW_HOT void sw_leave(sw_thread *T, int fn, uint64_t t0, uint64_t t1)
{
    sw_fnstat *s = &T->stats[fn];
    uint64_t dt = t1 - t0;
    s->calls++;
    s->ticks += dt;
    if (dt < s->tmin)
        s->tmin = dt;
    if (dt > s->tmax)
        s->tmax = dt;
    if (SW_UNLIKELY(sw_mt))
        sw_mt_leave();
    else {
        T->mpi_ticks += dt;
        if (sw_bins_on) /* one thread in MPI at a time: the process-wide bins need no lock */
            sw_bins_add(t0, t1);
    }
    if (sw_sites_on) /* inlined into the wrapper: the address is the application's call */
        sw_site_add(T, fn, (uintptr_t)__builtin_return_address(0), dt);
    T->depth = 0;
}

SW_HOT unsigned sw_bin(uint64_t n)
{
    if (!n)
        return 0;
    unsigned b = 64u - (unsigned)__builtin_clzll(n);
    return b < SW_NBINS ? b : SW_NBINS - 1;
}

/* One message of n bytes for function fn: its byte total and its histogram. */
SW_HOT void sw_credit_function(sw_thread *T, int fn, uint64_t n)
{
    T->stats[fn].bytes += n;
    T->stats[fn].hist[sw_bin(n)]++;
}

/* The same, for the function of the call in progress: also its site's bytes. */
SW_HOT void sw_credit(sw_thread *T, int fn, uint64_t n)
{
    sw_credit_function(T, fn, n);
    T->call_bytes += n;
}

SW_HOT uint64_t sw_type_size(MPI_Datatype dt)
{
    sw_thread *T = sw_self;
    uintptr_t k = SW_KEY(dt);
    unsigned i = (unsigned)((k >> 3) ^ (k >> 11)) & (SW_DTCACHE - 1);
    if (T->dt_key[i] == k && T->dt_epoch[i] == sw_type_epoch)
        return T->dt_size[i];
    return sw_type_size_slow(T, i, k, dt);
}

SW_HOT uint64_t sw_bytes(MPI_Count count, MPI_Datatype dt)
{
    return count > 0 ? (uint64_t)count * sw_type_size(dt) : 0;
}

/* Bytes a completed receive or read delivered.  Both MPIs keep that count, in
 * bytes, in public fields of MPI_Status; reading it saves a library call per
 * receive (MPI_Get_elements_x costs 20-50 ns).  The ground-truth tests check
 * it against known sizes under both MPIs. */
SW_HOT uint64_t sw_status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI)
    return (uint64_t)st->_ucount;
#elif defined(MPICH)
    return ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32) | (uint32_t)st->count_lo;
#else
    return sw_status_bytes_slow(st);
#endif
}

static inline void sw_p2p_send(sw_thread *T, int dest, MPI_Comm comm, uint64_t bytes)
{
    if (dest < 0) /* MPI_PROC_NULL: no message */
        return;
    int w = comm == MPI_COMM_WORLD ? dest : sw_world_rank(comm, dest);
    if (w >= 0)
        sw_p2p_add(T, w, bytes);
}

#endif
