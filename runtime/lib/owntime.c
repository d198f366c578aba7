/* The profiler's own time, per rank (docs/runtime.md, "The profiler's own
 * time"): the log's profiler section.  The per-call part is sampled on the
 * hot path (owntime.h, hot.h); MPI_Init's and MPI_Finalize's parts are timed
 * exactly by the life cycle (lifecycle.c) and here. */
#include "base.h"
#include "buf.h"
#include "module.h"

/* This rank's entry: rank, reserved, then in ns the own time inside the
 * window, at MPI_Init and at MPI_Finalize.  Packed after every other
 * section's record (modules are walked in section order), so MPI_Finalize's
 * part holds all the log's packing and gathering but this entry's gather,
 * the closing barrier and rank 0's writing of the file. */
static void pack_own(sw_buf *b, unsigned log_flags)
{
    (void)log_flags;
    uint64_t now = sw_ticks(), spent = now - sw_job.own_fin_start;
    uint64_t own = sw_job.own_window_ticks, mpi = sw_job.mt_ticks;
    for (sw_thread *thread = sw_job.threads; thread; thread = thread->next) {
        own += thread->own_ticks;
        mpi += thread->mpi_ticks;
    }
    /* As the rank record rounds them; under MPI_THREAD_MULTIPLE the threads'
     * own times may overlap, so the sum is kept within wall - mpi and
     * compute = wall - mpi - profiler is never negative. */
    uint64_t wall = sw_ns(sw_job.tsc1 - sw_job.tsc0), mpi_ns = sw_ns(mpi);
    uint64_t free_ns = mpi_ns < wall ? wall - mpi_ns : 0, own_ns = sw_ns(own);
    put32(b, (uint32_t)sw_job.rank);
    put32(b, 0);
    put64(b, own_ns < free_ns ? own_ns : free_ns);
    put64(b, sw_ns(sw_job.own_init_ticks));
    /* the wait for the last rank at MPI_Finalize's entry is not the profiler's */
    put64(b, sw_ns(spent > sw_job.finalize_ticks ? spent - sw_job.finalize_ticks : 0));
}

SW_MODULE(owntime_module) = {
    .name = "owntime",
    .section = SW_SEC_PROFILER,
    .raw = 1,
    .pack_rank = pack_own,
};
