/* lifecycle.c: the job's start at MPI_Init, its end at MPI_Finalize or
 * MPI_Abort, and MPI_Pcontrol: what the generated wrappers of those
 * functions call. */
#ifndef SW_LIFECYCLE_H
#define SW_LIFECYCLE_H

#include <stdint.h>

/* Before the real MPI_Init/MPI_Init_thread. */
void sw_init_begin(void);
/* After it succeeded, with its entry and exit ticks. */
void sw_started(int fn, uint64_t t0, uint64_t t1, int provided);
void sw_finishing(int fn);
void sw_aborting(int fn, int errorcode);
/* Levels 0 and 1 switch recording off and on; 1 is returned for the
 * other levels, which the wrapper passes on to the phases (phases.h). */
int sw_pcontrol(int fn, int level);

#endif
