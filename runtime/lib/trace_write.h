/* trace_write.c: the trace file, written by every rank together at
 * MPI_Finalize (docs/trace-format.md). */
#ifndef SW_TRACE_WRITE_H
#define SW_TRACE_WRITE_H

#include "trace_spool.h"

typedef struct {
    const char *path;
    sw_spool *events, *waits;
    int capped;
    int ncomms;
    const int *comm_sizes;    /* per local communicator 1..ncomms */
    int *const *comm_members; /* their members' world ranks */
} sw_trace_file;

/* Collective over the job: agree on communicator ids, encode, and have rank 0 write the file. */
void sw_trace_write(const sw_trace_file *f);

#endif
