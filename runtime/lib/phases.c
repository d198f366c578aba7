/* Phases: the rank's running totals (per function, and MPI time) are read at
 * each switch; the difference since the previous switch goes to the phase
 * that ends.  Memory: one row of SW_NFN entries per phase, at most
 * SCALEWISE_MAX_PHASES phases plus "outside phases" and "other phases". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "module.h"
#include "phases.h"

static sw_phase *phases; /* max_phases + 2 slots */
static unsigned nphases, current, capacity;
static int capped;
static sw_phase_fn *mark;   /* running totals at the current phase's start */
static sw_phase_fn *now_fn; /* scratch: running totals now */
static uint64_t mark_tick, mark_mpi;

/* The rank's running totals: each function's calls, ticks and bytes over
 * threads, and the MPI time (as the rank record counts it). */
static uint64_t running_totals(sw_phase_fn *out)
{
    uint64_t mpi = sw_job.mt_ticks;
    memset(out, 0, SW_NFN * sizeof *out);
    for (sw_thread *t = sw_job.threads; t; t = t->next) {
        mpi += t->mpi_ticks;
        for (int f = 0; f < SW_NFN; f++) {
            out[f].calls += t->stats[f].calls;
            out[f].ticks += t->stats[f].ticks;
            out[f].bytes += t->stats[f].bytes;
        }
    }
    return mpi;
}

/* Credit what happened since the last switch to the current phase. */
static void close_current(uint64_t now)
{
    sw_phase *p = &phases[current];
    uint64_t mpi = running_totals(now_fn);
    p->wall_ticks += now - mark_tick;
    p->mpi_ticks += mpi - mark_mpi;
    for (int f = 0; f < SW_NFN; f++) {
        p->fn[f].calls += now_fn[f].calls - mark[f].calls;
        p->fn[f].ticks += now_fn[f].ticks - mark[f].ticks;
        p->fn[f].bytes += now_fn[f].bytes - mark[f].bytes;
    }
    sw_phase_fn *t = mark;
    mark = now_fn;
    now_fn = t;
    mark_tick = now;
    mark_mpi = mpi;
}

static int add_phase(uint8_t kind, const char *name)
{
    sw_phase *p = &phases[nphases];
    p->fn = calloc(SW_NFN, sizeof *p->fn);
    if (!p->fn)
        return -1;
    p->kind = kind;
    snprintf(p->name, sizeof p->name, "%s", name);
    return (int)nphases++;
}

/* At the return of MPI_Init, after MPI_Init itself was recorded. */
static void start_phases(void)
{
    uint64_t now = sw_job.tsc0;
    capacity = sw_job.cfg.max_phases + 2;
    phases = calloc(capacity, sizeof *phases);
    mark = calloc(SW_NFN, sizeof *mark);
    now_fn = calloc(SW_NFN, sizeof *now_fn);
    if (!phases || !mark || !now_fn || add_phase(SW_PHASE_OUTSIDE, "") < 0) {
        free(phases);
        phases = NULL;
        return;
    }
    mark_mpi = running_totals(mark);
    mark_tick = now;
}

/* A name as the log allows it: valid UTF-8, no control characters, at most
 * SW_MAX_PHASE_NAME bytes, cut at a character's boundary.  Bytes that break
 * these rules become '?'. */
static void clean_name(char *out, const char *in)
{
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)in;
    while (*s && o < SW_MAX_PHASE_NAME) {
        unsigned c = *s, len = c < 0x80                 ? 1
                               : c >= 0xC2 && c <= 0xDF ? 2
                               : c >= 0xE0 && c <= 0xEF ? 3
                               : c >= 0xF0 && c <= 0xF4 ? 4
                                                        : 0;
        unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        int ok = len == 1 ? c >= 0x20 && c != 0x7F : len > 1 && s[1] >= lo && s[1] <= hi;
        for (unsigned k = 2; ok && k < len; k++)
            ok = s[k] >= 0x80 && s[k] <= 0xBF;
        if (!ok || o + len > SW_MAX_PHASE_NAME) {
            if (!ok)
                out[o++] = '?';
            s += ok ? len : 1;
            if (ok)
                break;
            continue;
        }
        memcpy(out + o, s, len);
        o += len;
        s += len;
    }
    out[o] = 0;
}

static int find_or_add(uint8_t kind, const char *name)
{
    for (unsigned i = 0; i < nphases; i++)
        if (phases[i].kind == kind && strcmp(phases[i].name, name) == 0)
            return (int)i;
    if (kind != SW_PHASE_OTHER && nphases >= capacity - 1) {
        capped = 1;
        return find_or_add(SW_PHASE_OTHER, "");
    }
    return nphases < capacity ? add_phase(kind, name) : -1;
}

void sw_phases_pcontrol(int level, const char *name, uint64_t now)
{
    char clean[SW_MAX_PHASE_NAME + 1];
    uint8_t kind;
    if (!phases || (level >= 0 && level < 2) || level < SW_PCONTROL_NAMED_PHASE)
        return;
    if (level == SW_PCONTROL_NAMED_PHASE) {
        if (!name)
            return;
        clean_name(clean, name);
        kind = SW_PHASE_NAMED;
    } else if (level == SW_PCONTROL_END_PHASE) {
        clean[0] = 0;
        kind = SW_PHASE_OUTSIDE;
    } else {
        snprintf(clean, sizeof clean, "%d", level);
        kind = SW_PHASE_NUMBERED;
    }
    int next = find_or_add(kind, clean);
    if (next < 0)
        return;
    close_current(now);
    current = (unsigned)next;
}

/* At the entry of MPI_Finalize or MPI_Abort: close the phase in progress. */
static void stop_phases(void)
{
    if (phases)
        close_current(sw_job.tsc1);
}

const sw_phase *sw_phases(unsigned *n, int *capped_out)
{
    *n = phases ? nphases : 0;
    *capped_out = capped;
    return phases;
}

SW_MODULE(phases_module) = {
    .name = "phases",
    .start = start_phases,
    .stop = stop_phases,
};
