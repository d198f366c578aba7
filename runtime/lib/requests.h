/* requests.c: what each outstanding non-blocking operation will be worth
 * when a Wait or Test completes it, and what the trace knows of it; and the
 * bookkeeping the Wait/Test wrappers do around the real call (sw_keep).
 * One table serves the profile and the trace: a Wait looks each request up
 * once. */
#ifndef SW_REQUESTS_H
#define SW_REQUESTS_H

#include <stdlib.h>

#include "base.h"

#ifdef OPEN_MPI
/* Open MPI's request for operations complete at once; only its address is used. */
extern char ompi_request_empty;
#pragma weak ompi_request_empty
#endif

/* Some handles stand for several live operations at once (requests.c says
 * which): their entries are kept side by side and a completion takes the oldest. */
/* The shared handles the library itself returned for operations on
 * MPI_PROC_NULL at MPI_Init (requests.c): how Intel MPI's and any standard
 * ABI library's are known, whose handles follow no rule a header tells. */
#define SW_REQ_MAX_LEARNED 4
extern uintptr_t sw_req_learned[SW_REQ_MAX_LEARNED];

static inline int sw_request_shared(uintptr_t key)
{
    for (unsigned i = 0; i < SW_REQ_MAX_LEARNED && sw_req_learned[i]; i++)
        if (key == sw_req_learned[i])
            return 1;
#if defined(OPEN_MPI)
    return key == (uintptr_t)&ompi_request_empty;
#elif defined(MPI_ABI_VERSION) || defined(I_MPI_VERSION)
    return 0;
#else
    /* MPICH handle kind, bits 31-30: 01 is a builtin (preallocated) request. */
    return (key >> 30 & 3) == 1;
#endif
}

#define SW_REQ_RECV       0x1u /* bytes are known only from the completion status */
#define SW_REQ_PERSISTENT 0x2u /* survives completion; MPI_Start re-arms it */
#define SW_REQ_SEND       0x4u /* persistent send: each start is a message to peer */
#define SW_REQ_ACTIVE     0x8u
#define SW_REQ_IN_TABLE   0x10u /* claimed without leaving the table (one thread only) */

/* What the trace (trace.c) keeps of the operation a request stands for. */
typedef struct {
    int64_t id;     /* the trace's request id; -1: not in the trace */
    uint64_t event; /* an Irecv's event, filled in at completion */
} sw_req_trace;
#define SW_REQ_UNTRACED ((sw_req_trace){-1, 0})

/* Requests that could not be tracked (the table was full or memory refused). */
extern uint64_t sw_req_untracked;

/* trace: NULL when the trace does not record the operation. */
void sw_req_track(MPI_Request r, int fn, uint64_t bytes, int peer, unsigned flags, const sw_req_trace *trace);
void sw_req_start(sw_thread *thread, int fn, MPI_Request r);
typedef struct {
    uint64_t bytes;
    int32_t peer;
    uint16_t fn, flags; /* flags 0: not a tracked operation */
    sw_req_trace trace;
} sw_pending; /* a request's entry while its Wait/Test call runs */

void sw_req_take(MPI_Request r, sw_pending *p); /* always out of the table (MPI_Request_free) */

/* The table itself (requests.c), read inline by the per-call path below. */
typedef struct {
    uintptr_t key; /* the MPI_Request handle; 0: empty */
    sw_pending op; /* peer: world rank of a persistent send's destination; fn:
                      function credited with a receive's bytes at completion */
} sw_req;
extern sw_table sw_requests;

/* The out-of-line parts of sw_req_claim and sw_req_settle (requests.c). */
void sw_req_claim_locked(MPI_Request r, sw_pending *p);
void sw_req_settle_slow(sw_thread *thread, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st);

/* Wait/Test: r's entry, claimed before the MPI call (requests.c says why
 * under MPI_THREAD_MULTIPLE it leaves the table).  With one thread at a time
 * in MPI the entry of a handle that is not shared stays where it is, marked
 * SW_REQ_IN_TABLE: nothing can reuse the handle meanwhile, and a poll that
 * completes nothing then leaves it as it is (sw_req_settle) instead of an
 * erase and an insert.  That case is inline, since every poll of a request
 * that has not completed takes it: a lookup, no call. */
SW_HOT void sw_req_claim(MPI_Request r, sw_pending *p)
{
    p->flags = 0;
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    if (SW_UNLIKELY(sw_mt) || SW_UNLIKELY(sw_request_shared(key))) {
        sw_req_claim_locked(r, p);
        return;
    }
    const sw_req *e = sw_slot(&sw_requests, sizeof(sw_req), sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key));
    if (e->key == key) {
        *p = e->op;
        p->flags |= SW_REQ_IN_TABLE;
    }
}

/* After the call: credit a completed operation, put back or drop its entry
 * (requests.c).  A request not tracked, and a poll that completed nothing
 * whose entry stayed in the table, need nothing: inline, no call. */
SW_HOT void sw_req_settle(sw_thread *thread, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st)
{
    if (!p->flags || (!completed && (p->flags & SW_REQ_IN_TABLE)))
        return;
    sw_req_settle_slow(thread, fn, r, p, completed, st);
}

/* Wait/Test families complete several requests at once.  The call overwrites
 * completed handles with MPI_REQUEST_NULL, so the wrapper keeps a copy of the
 * handles and claims their table entries before the call (sw_req_claim), and
 * gives the call real statuses so received sizes are known even when the
 * caller passed MPI_STATUSES_IGNORE.  The wrapper declares an sw_kept, calls
 * sw_keep, passes k.statuses to the real function in place of the caller's
 * argument, settles k.reqs[i] / k.pending[i] after it, then sw_kept_release.
 * If memory for the copies cannot be had, k.reqs is NULL: nothing was
 * claimed and nothing is credited. */
#define SW_STACK_REQS 32
typedef struct {
    MPI_Request *reqs;    /* copy of the caller's handles; NULL when nothing was claimed */
    sw_pending *pending;  /* their claimed entries, same order */
    MPI_Status *statuses; /* what the real call writes to: the caller's array, or ours */
    void *heap;           /* reqs and pending beyond SW_STACK_REQS, one block */
    MPI_Status *heap_statuses;
    MPI_Request stack_reqs[SW_STACK_REQS];
    sw_pending stack_pending[SW_STACK_REQS];
    MPI_Status stack_statuses[SW_STACK_REQS];
} sw_kept;

/* Copies the handles and claims their entries (the "any" family, which
 * returns one status the wrapper handles itself, needs only this).  Inline
 * into the wrapper, as sw_keep: out of line, its call, prologue and
 * epilogue were a third of what a poll of one request added. */
SW_HOT void sw_keep_requests(sw_kept *k, int n, const MPI_Request *reqs)
{
    k->reqs = NULL;
    k->pending = k->stack_pending;
    k->statuses = NULL;
    k->heap = NULL;
    k->heap_statuses = NULL;
    MPI_Request *copy = k->stack_reqs;
    if (n > SW_STACK_REQS) {
        /* The claimed entries first (8-byte aligned), then the handles. */
        if (!(k->heap = malloc((sizeof(sw_pending) + sizeof(MPI_Request)) * (size_t)n)))
            return;
        k->pending = k->heap;
        copy = (MPI_Request *)(k->pending + n);
    }
    k->reqs = copy;
    /* Copied one by one beside the claims: a memcpy of a few handles (often
     * one) costs more than the loop (a library call or a rep movs). */
    for (int i = 0; i < n; i++) {
        copy[i] = reqs[i];
        sw_req_claim(copy[i], &k->pending[i]);
    }
}

/* sw_keep_requests, and a status array for the call: the caller's, or ours
 * when it passed MPI_STATUSES_IGNORE. */
SW_HOT void sw_keep(sw_kept *k, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
    MPI_Status *heap_statuses = NULL;
    if (statuses == MPI_STATUSES_IGNORE) {
        if (n <= SW_STACK_REQS) {
            statuses = k->stack_statuses;
        } else if (!(statuses = heap_statuses = malloc(sizeof(MPI_Status) * (size_t)n))) {
            k->reqs = NULL;
            k->heap = NULL;
            k->heap_statuses = NULL;
            k->statuses = MPI_STATUSES_IGNORE;
            return;
        }
    }
    sw_keep_requests(k, n, reqs);
    k->statuses = statuses;
    k->heap_statuses = heap_statuses;
}

static inline void sw_kept_release(sw_kept *k)
{
    if (SW_UNLIKELY(k->heap != NULL)) /* the usual few requests took no memory: no call to free */
        free(k->heap);
    if (SW_UNLIKELY(k->heap_statuses != NULL))
        free(k->heap_statuses);
}

#endif
