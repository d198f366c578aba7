/* What a call moved: datatype sizes (a small per-thread cache), the bytes a
 * completed receive delivered, and the credit of a message to a function's
 * byte total and size histogram.  Inline: wrappers, the request table and
 * the collective rules call these on the per-call path. */
#ifndef SW_CREDIT_H
#define SW_CREDIT_H

#include "base.h"

extern volatile unsigned sw_type_epoch; /* bumped by MPI_Type_free: invalidates size caches */

uint64_t sw_type_size_slow(sw_thread *thread, unsigned slot, uintptr_t key, MPI_Datatype dt);
uint64_t sw_status_bytes_slow(const MPI_Status *st);
/* MPI_Type_free returned: a handle may now name another type. */
void sw_type_freed(void);

/* The log2 size histogram's bin of an n-byte message. */
SW_HOT unsigned sw_bin(uint64_t n)
{
    /* Arithmetic, no branch (gcc made `n ? b : 0` one, taken for every
     * message): n | 1 is never 0 and puts n = 0 in bin 1, minus 1 for it. */
    unsigned b = 64u - (unsigned)__builtin_clzll(n | 1) - (n == 0);
    return b < SW_NBINS ? b : SW_NBINS - 1;
}

/* One message of n bytes for function fn: its byte total and its histogram. */
SW_HOT void sw_credit_function(sw_thread *thread, int fn, uint64_t n)
{
    thread->stats[fn].bytes += n;
    thread->stats[fn].hist[sw_bin(n)]++;
}

/* The same, for the function of the call in progress: also its site's bytes. */
SW_HOT void sw_credit(sw_thread *thread, int fn, uint64_t n)
{
    sw_credit_function(thread, fn, n);
    thread->call_bytes += n;
}

SW_HOT uint64_t sw_type_size(MPI_Datatype dt)
{
    sw_thread *thread = sw_self;
    uintptr_t k = SW_KEY(dt);
    unsigned i = (unsigned)((k >> 3) ^ (k >> 11)) & (SW_DTCACHE - 1);
    const sw_dtslot *e = &thread->dt[i];
    if (SW_LIKELY(e->key == k && e->epoch == sw_type_epoch))
        return e->size;
    return sw_type_size_slow(thread, i, k, dt);
}

SW_HOT uint64_t sw_bytes(MPI_Count count, MPI_Datatype dt)
{
    return SW_LIKELY(count > 0) ? (uint64_t)count * sw_type_size(dt) : 0;
}

/* What an MPI_Get_accumulate moves: with MPI_NO_OP it only fetches (the
 * result buffer; the origin arguments are ignored), with any other op the
 * origin goes to the target and the target's old data comes back.  The
 * usual call, one type for both sides, takes one size lookup and no taken
 * branch (the path after a long call); other calls take the general form. */
SW_HOT uint64_t sw_get_accumulate_bytes(MPI_Count origin_count, MPI_Datatype origin_type, MPI_Count result_count,
                                        MPI_Datatype result_type, MPI_Op op)
{
    if (SW_LIKELY(result_count > 0 && origin_count > 0 && SW_KEY(origin_type) == SW_KEY(result_type))) {
        uint64_t origin = op == MPI_NO_OP ? 0 : (uint64_t)origin_count;
        return ((uint64_t)result_count + origin) * sw_type_size(result_type);
    }
    /* A type is only asked its size when its count is positive (else it may be null). */
    uint64_t fetched = result_count > 0 ? (uint64_t)result_count * sw_type_size(result_type) : 0;
    if (op == MPI_NO_OP || origin_count <= 0)
        return fetched;
    return fetched + (uint64_t)origin_count * sw_type_size(origin_type);
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

#endif
