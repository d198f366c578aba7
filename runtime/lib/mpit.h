/* mpit.c: MPI_T performance variables read at MPI_Finalize and control
 * variables in force, for the log's MPI_T section (docs/mpit.md).
 *
 * Phases: sw_mpit_read() may be called at any point after sw_mpit_start()
 * and before sw_mpit_finish(); reading at phase boundaries would call it
 * there and keep each reading (not done: the values are read once). */
#ifndef SW_MPIT_H
#define SW_MPIT_H

#include "buf.h"
#include "scalewise/format.h"

extern int sw_mpit_on; /* SCALEWISE_MPIT, on unless 0 */

/* After PMPI_Init: MPI_T_init_thread, handles for the pvars we read, started. */
void sw_mpit_start(void);
/* Read every pvar now (MPI_Finalize entry, before the log's own traffic). */
void sw_mpit_read(void);
/* Rank 0: status, flags, cvars in force, pvar descriptions. */
void sw_mpit_pack_head(sw_buf *b);
/* Every rank: its pvar values. */
void sw_mpit_pack_rank(sw_buf *b);
/* Handles, session and MPI_T released (before PMPI_Finalize). */
void sw_mpit_finish(void);

#endif
