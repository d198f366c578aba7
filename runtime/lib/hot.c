/* The per-call path's out-of-line parts: the MPI time union under
 * MPI_THREAD_MULTIPLE, and its time bins, under the union's lock; the end
 * of a call sampled for the profiler's own time. */
#include "hot.h"
#include "owntime.h"

void sw_mt_enter(void)
{
    pthread_mutex_lock(&sw_job.mt_lock);
    if (sw_job.mt_inside++ == 0)
        sw_job.mt_since = sw_ticks();
    pthread_mutex_unlock(&sw_job.mt_lock);
}

void sw_mt_leave(void)
{
    pthread_mutex_lock(&sw_job.mt_lock);
    if (--sw_job.mt_inside == 0) {
        uint64_t now = sw_ticks();
        sw_job.mt_ticks += now - sw_job.mt_since;
        if (sw_bins_on) /* the union of the threads' calls, under the lock */
            sw_bins_add(sw_job.mt_since, now);
    }
    pthread_mutex_unlock(&sw_job.mt_lock);
}

__attribute__((cold)) void sw_own_sample(sw_thread *thread, uint64_t t0, uint64_t t1)
{
    uint64_t now = sw_ticks(), mark = thread->own_mark;
    if (SW_UNLIKELY(!thread->own_rng)) { /* the thread's first call: where is the first block's sample? */
        uint64_t seed = now ^ (uint64_t)(uintptr_t)thread ^ ((uint64_t)sw_job.rank << 32);
        if ((thread->own_left = sw_own_begin(&thread->own_rng, &thread->own_pos, seed)))
            return;
    }
    uint64_t pre = mark && t0 > mark ? t0 - mark : 0;
    thread->own_ticks += sw_own_weigh(pre, now - t1, sw_job.own_clock_read);
    thread->own_left = sw_own_next(&thread->own_rng, &thread->own_pos);
}
