/* The per-call path's one out-of-line part: the MPI time union under
 * MPI_THREAD_MULTIPLE, and its time bins, under the union's lock. */
#include "hot.h"

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
