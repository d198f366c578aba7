/* The log's timeline section (docs/log-format.md, "timeline"): this rank's
 * MPI time in time bins (bins.h) and per phase (phases.h).  Also the time
 * bins' module: their switch and their start with the window. */
#include <string.h>

#include "base.h"
#include "bins.h"
#include "module.h"
#include "phases.h"

static void init_bins(void) { sw_bins_on = sw_job.cfg.bins != 0; }

static void start_bins(void) { sw_bins_start(sw_job.tsc0, sw_job.cfg.bins); }

/* n ticks cut into pieces whose running totals are rounded to ns: the pieces'
 * ns add up to exactly ns(total), the value the rank record holds. */
typedef struct {
    uint64_t ns_so_far;
} sw_ns_run;
static uint64_t ns_piece(sw_ns_run *r, uint64_t ticks_so_far)
{
    uint64_t now = sw_ns(ticks_so_far), piece = now > r->ns_so_far ? now - r->ns_so_far : 0;
    r->ns_so_far = now > r->ns_so_far ? now : r->ns_so_far;
    return piece;
}

/* This rank's time bins and phases; the bins first made as wide on every
 * rank as on the widest (one Allreduce), so bin k is the same span of time
 * on all. */
static void pack_timeline(sw_buf *b, unsigned log_flags)
{
    int shift = (int)sw_bins_cover(sw_job.tsc1 - sw_job.tsc0, 0), widest = shift;
    if (!(log_flags & SW_LOG_ABORTED))
        sw_pmpi.Allreduce(&shift, &widest, 1, MPI_INT, MPI_MAX, sw_job.comm);
    sw_bins_cover(sw_job.tsc1 - sw_job.tsc0, (unsigned)widest);
    unsigned np;
    int capped;
    const sw_phase *ph = sw_phases(&np, &capped);
    uint64_t wall = sw_job.tsc1 - sw_job.tsc0, m = 0;
    uint32_t nb = sw_bins.n && wall ? (uint32_t)(((wall - 1) >> sw_bins.shift) + 1) : 0;
    put32(b, (uint32_t)sw_job.rank);
    put32(b, capped ? SW_TIMELINE_CAPPED : 0);
    put64(b, sw_bins.n ? sw_ns(1ull << sw_bins.shift) : 0);
    put32(b, nb);
    sw_ns_run mpi_run = {0}, compute_run = {0};
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t edge = (uint64_t)(i + 1) << sw_bins.shift;
        edge = edge < wall ? edge : wall;
        m += sw_bins.mpi[i];
        m = m < edge ? m : edge;
        put64(b, ns_piece(&mpi_run, m));
        put64(b, ns_piece(&compute_run, edge - m));
    }
    put32(b, np);
    for (unsigned i = 0; i < np; i++) {
        const sw_phase *p = &ph[i];
        uint64_t pw = sw_ns(p->wall_ticks), pm = sw_ns(p->mpi_ticks);
        put8(b, p->kind);
        put16(b, (uint16_t)strlen(p->name));
        puts_(b, p->name);
        put64(b, pw);
        put64(b, pm < pw ? pm : pw);
        uint32_t nfn = 0;
        for (int f = 0; f < SW_NFN; f++)
            nfn += p->fn[f].calls || p->fn[f].bytes;
        put32(b, nfn);
        for (int f = 0; f < SW_NFN; f++)
            if (p->fn[f].calls || p->fn[f].bytes) {
                put16(b, (uint16_t)f);
                put64(b, p->fn[f].calls);
                put64(b, sw_ns(p->fn[f].ticks));
                put64(b, p->fn[f].bytes);
            }
    }
}

SW_MODULE(timeline_module) = {
    .name = "timeline",
    .init = init_bins,
    .start = start_bins,
    .section = SW_SEC_TIMELINE,
    .pack_rank = pack_timeline,
};
