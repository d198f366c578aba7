/* Phases marked with MPI_Pcontrol (docs/runtime.md, "Phases"): per phase,
 * its wall time, MPI time and each function's calls, time and bytes.  Nothing
 * on the per-call path: a phase switch takes the difference of the rank's
 * running totals since the last switch, so the cost is per switch only.
 * The phases start and stop with the window (their module, phases.c); the
 * log's timeline section holds them (timeline.c). */
#ifndef SW_PHASES_H
#define SW_PHASES_H

#include <stdint.h>

#include "scalewise/format.h"

/* MPI_Pcontrol levels beyond the standard's 0 (off) and 1 (on). */
#define SW_PCONTROL_END_PHASE   (-1) /* back to "outside phases" */
#define SW_PCONTROL_NAMED_PHASE (-2) /* a const char * name follows (C, C++) */
/* Levels >= 2 start the phase of that number (any language, Fortran too). */

/* Phase kinds, as in the log (docs/log-format.md, "time bins and phases"). */
enum { SW_PHASE_OUTSIDE = 0, SW_PHASE_NUMBERED = 1, SW_PHASE_NAMED = 2, SW_PHASE_OTHER = 3 };

typedef struct {
    uint64_t calls, ticks, bytes;
} sw_phase_fn;

typedef struct {
    uint8_t kind;
    char name[SW_MAX_PHASE_NAME + 1];
    uint64_t wall_ticks, mpi_ticks;
    sw_phase_fn *fn; /* SW_NFN entries */
} sw_phase;

/* MPI_Pcontrol(level, name): switch phase if the level says so. */
void sw_phases_pcontrol(int level, const char *name, uint64_t now);
/* The phases so far (the first is "outside phases"); *capped: phases past
 * SCALEWISE_MAX_PHASES went to "other phases". */
const sw_phase *sw_phases(unsigned *n, int *capped);

#endif
