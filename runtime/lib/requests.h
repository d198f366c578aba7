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
void sw_req_claim_completed(MPI_Request r, sw_pending *p);
void sw_req_settle_slow(sw_thread *thread, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st);

/* Wait/Test: r's entry, before the MPI call.  Under MPI_THREAD_MULTIPLE it
 * leaves the table there (requests.c says why).  With one thread at a time
 * in MPI nothing can reuse a handle during the call, so the entry is looked
 * up after it, and only for a request the call completed
 * (sw_req_claim_after): a poll that completes nothing never touches the
 * table, which is most of what polling costs.  Inline: no call either. */
SW_HOT void sw_req_claim(MPI_Request r, sw_pending *p)
{
    p->flags = 0;
    if (SW_UNLIKELY(sw_mt))
        sw_req_claim_locked(r, p);
}

/* After the call, one thread: the entry of r, if the call completed it
 * (its handle as the caller passed it).  The entry stays in the table
 * (SW_REQ_IN_TABLE) until sw_req_settle credits it. */
SW_HOT void sw_req_claim_after(MPI_Request r, sw_pending *p, int completed)
{
    if (SW_LIKELY(!sw_mt) && completed)
        sw_req_claim_completed(r, p);
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
 * handles, claims their table entries (before the call under
 * MPI_THREAD_MULTIPLE, sw_keep; else after it, those of the completed
 * requests only, sw_kept_claim_*), and gives the call real statuses so
 * received sizes are known even when the caller passed MPI_STATUSES_IGNORE.
 * The wrapper declares an sw_kept, calls sw_keep, passes k.statuses to the
 * real function in place of the caller's argument, claims after it, settles
 * k.reqs[i] / k.pending[i] if k.claimed, then sw_kept_release.  If memory
 * for the copies cannot be had, k.reqs is NULL: nothing is claimed and
 * nothing is credited. */
#define SW_STACK_REQS 32
typedef struct {
    MPI_Request *reqs;    /* copy of the caller's handles; NULL when nothing was claimed */
    sw_pending *pending;  /* their claimed entries, same order */
    MPI_Status *statuses; /* what the real call writes to: the caller's array, or ours */
    void *heap;           /* beyond SW_STACK_REQS: pending, statuses, handles in one block */
    int claimed;          /* pending[0..n) hold the claims (flags 0: none) */
    MPI_Request stack_reqs[SW_STACK_REQS];
    sw_pending stack_pending[SW_STACK_REQS];
    MPI_Status stack_statuses[SW_STACK_REQS];
} sw_kept;

/* More than SW_STACK_REQS requests: their copies on the heap (requests.c).
 * 0 when memory is refused (k->reqs is then NULL). */
int sw_kept_alloc(sw_kept *k, int n, int own_statuses);

/* Copies the handles, and under MPI_THREAD_MULTIPLE claims their entries;
 * with_statuses: also a status array for the call, the caller's, or ours
 * when it passed MPI_STATUSES_IGNORE (the "any" family returns one status
 * the wrapper handles itself).  Inline into the wrapper: out of line, its
 * call, prologue and epilogue were a third of what a poll of one request
 * added. */
SW_HOT void sw_keep_kind(sw_kept *k, int n, const MPI_Request *reqs, MPI_Status *statuses, int with_statuses)
{
    int own_statuses = with_statuses && statuses == MPI_STATUSES_IGNORE;
    k->claimed = 0;
    k->heap = NULL;
    if (SW_LIKELY(n <= SW_STACK_REQS)) {
        k->reqs = k->stack_reqs;
        k->pending = k->stack_pending;
        k->statuses = own_statuses ? k->stack_statuses : statuses;
    } else if (!sw_kept_alloc(k, n, own_statuses)) {
        k->reqs = NULL;
        k->statuses = statuses;
        return;
    } else if (!own_statuses) {
        k->statuses = statuses;
    }
    /* One handle (most polls) is one move; gcc turns the loop into a call
     * to memcpy, which costs more than the whole copy of a few handles. */
    if (SW_LIKELY(n == 1))
        k->reqs[0] = reqs[0];
    else
        for (int i = 0; i < n; i++)
            k->reqs[i] = reqs[i];
    if (SW_UNLIKELY(sw_mt)) {
        for (int i = 0; i < n; i++)
            sw_req_claim_locked(k->reqs[i], &k->pending[i]);
        k->claimed = 1;
    }
}

SW_HOT void sw_keep_requests(sw_kept *k, int n, const MPI_Request *reqs) { sw_keep_kind(k, n, reqs, NULL, 0); }
SW_HOT void sw_keep(sw_kept *k, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
    sw_keep_kind(k, n, reqs, statuses, 1);
}

/* After the call, one thread: the claims of the completed requests; the
 * others' entries are marked unclaimed.  Out of the polling path: only a
 * call that completed something gets past the first test. */
/* Waitall, Testall: all of them, when the call succeeded (and set its flag). */
SW_HOT void sw_kept_claim_all(sw_kept *k, int n, int completed)
{
    if (SW_LIKELY(!k->claimed) && completed && k->reqs) {
        for (int i = 0; i < n; i++)
            sw_req_claim_completed(k->reqs[i], &k->pending[i]);
        k->claimed = 1;
    }
}

/* Waitany, Testany: the one at index (MPI_UNDEFINED: none). */
SW_HOT void sw_kept_claim_one(sw_kept *k, int n, int completed, int index)
{
    if (SW_LIKELY(!k->claimed) && completed && k->reqs && index >= 0 && index < n) {
        for (int i = 0; i < n; i++)
            k->pending[i].flags = 0;
        sw_req_claim_completed(k->reqs[index], &k->pending[index]);
        k->claimed = 1;
    }
}

/* Waitsome, Testsome: those at indices[0..m) (m MPI_UNDEFINED: none). */
SW_HOT void sw_kept_claim_some(sw_kept *k, int n, int completed, const int *indices, int m)
{
    if (SW_LIKELY(!k->claimed) && completed && k->reqs && m > 0) /* MPI_UNDEFINED < 0 */ {
        for (int i = 0; i < n; i++)
            k->pending[i].flags = 0;
        for (int i = 0; i < m; i++)
            if (indices[i] >= 0 && indices[i] < n)
                sw_req_claim_completed(k->reqs[indices[i]], &k->pending[indices[i]]);
        k->claimed = 1;
    }
}

static inline void sw_kept_release(sw_kept *k)
{
    if (SW_UNLIKELY(k->heap != NULL)) /* the usual few requests took no memory: no call to free */
        free(k->heap);
}

#endif
