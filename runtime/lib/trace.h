/* trace.c: trace mode (SCALEWISE_TRACE=1).  Besides the profile, each rank
 * records the sequence of its communicating MPI calls in the .swtrace format
 * (docs/trace-format.md).  The generated wrappers call these functions only
 * while sw_tracing is set, after the real call returned (see gen/gentrace.py);
 * t0 and t1 are the call's entry and exit ticks. */
#ifndef SW_TRACE_H
#define SW_TRACE_H

#include "base.h"
#include "requests.h"

/* Event kinds, as in the trace's kind column. */
enum { SW_TK_ISEND = 1, SW_TK_IRECV = 2, SW_TK_WAIT = 3, SW_TK_SEND = 4, SW_TK_RECV = 5, SW_TK_COLL = 6 };

extern int sw_tracing;

/* Sends: req is NULL for a blocking send; for a non-blocking one it gets
 * what the request table keeps for the trace (sw_req_track). */
void sw_trace_send(int fn, uint64_t t0, uint64_t t1, int dest, int tag, MPI_Comm comm, uint64_t bytes,
                   sw_req_trace *req);
/* Blocking receive (st: its status) or Irecv (st NULL: source, tag and size
 * are filled in from the status of the Wait/Test that completes it). */
void sw_trace_recv(int fn, uint64_t t0, uint64_t t1, int source, int tag, MPI_Comm comm, const MPI_Status *st,
                   sw_req_trace *req);
void sw_trace_sendrecv(int fn, uint64_t t0, uint64_t t1, int dest, int sendtag, uint64_t sendbytes, MPI_Comm comm,
                       const MPI_Status *st);
/* op: the reduction (MPI_OP_NULL for none); root: as passed (-1 for none). */
void sw_trace_coll(int fn, uint64_t t0, uint64_t t1, MPI_Comm comm, uint64_t bytes, int root, MPI_Op op);
/* A Wait/Test returned: claimed[] are the request table's entries of the
 * handles as the caller passed them (n of them; those of the completed
 * requests at least, claimed after the call, sw_req_claim_after: the trace
 * runs with one thread only); done[] the indices that completed (NULL: 0..ndone-1), the
 * k-th with status sts[k] (sts_by_index: status of index i is sts[i]). */
void sw_trace_done(int fn, uint64_t t0, uint64_t t1, const sw_pending *claimed, int n, const int *done, int ndone,
                   const MPI_Status *sts, int sts_by_index);

#endif
