/* setup.c: what a rank ran on and how busy the machine was (the log's rank
 * setup section).  Called at the start and the end of the measured window,
 * never on the per-call path. */
#ifndef SW_SETUP_H
#define SW_SETUP_H

#include <stdint.h>
#include "scalewise/format.h"

/* At MPI_Init's return: CPU time, context switches, load and the node's CPU
 * counters so far. */
void sw_setup_start(void);

/* At MPI_Finalize (collective over the job's communicator unless alone):
 * the differences since sw_setup_start and the node's share of the job.
 * alone: MPI_Abort, no communication; the node values stay unknown. */
void sw_setup_values(int alone, uint32_t *flags, uint64_t out[SW_SETUP_VALUES]);

#endif
