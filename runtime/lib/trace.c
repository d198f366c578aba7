/* Trace mode: the sequence of each rank's communicating MPI calls, written at
 * MPI_Finalize as one .swtrace file (docs/trace-format.md).
 *
 * Memory is bounded: events go to a fixed buffer that is spooled to an
 * unlinked temporary file when full (trace_spool.c); at the end the columns
 * are encoded one after the other from the spool and deflated.  An Irecv's
 * source, tag and size are known only when a Wait/Test completes it: its
 * record is patched in place, in the buffer or in the spool file.  Past
 * SCALEWISE_TRACE_MAX_EVENTS a rank stops recording and flags its block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "credit.h"
#include "module.h"
#include "requests.h"
#include "trace.h"
#include "trace_spool.h"
#include "trace_write.h"

int sw_tracing;

static struct {
    sw_spool events, waits;
    uint64_t last_end; /* ticks at the end of the previous recorded call */
    int64_t next_req;  /* request ids: 0, 1, 2, ... in creation order */
    uint64_t max_events;
    uint64_t untracked; /* sw_req_untracked when the trace started */
    int capped;
    char path[4096];
} trace;

/* ---- communicators: local number -> members' world ranks ---- */

/* Communicator n (1..ncomms) of this rank's trace, kept after it is freed:
 * its members' world ranks, for the ids the ranks agree on at the end. */
typedef struct {
    int size;
    int *world;
} sw_trace_comm;
static sw_trace_comm *comms;
static int ncomms, comms_cap;

/* Local number of comm (0: MPI_COMM_WORLD), numbered at its first event;
 * *view: its entry in the communicator table (size 0 for MPI_COMM_WORLD). */
static int comm_number(MPI_Comm comm, sw_comm_view *view)
{
    *view = (sw_comm_view){0, NULL, NULL};
    if (comm == MPI_COMM_WORLD)
        return 0;
    if (!sw_comm_view_of(comm, view) || view->size <= 0)
        return -1;
    if (*view->number)
        return *view->number;
    if (ncomms == comms_cap) {
        int n = comms_cap ? comms_cap * 2 : 16;
        sw_trace_comm *grown = realloc(comms, sizeof *comms * (size_t)n);
        if (!grown || n > (int)sw_job.cfg.max_comms)
            return -1;
        comms = grown;
        comms_cap = n;
    }
    int *world = malloc(sizeof(int) * (size_t)view->size);
    if (!world)
        return -1;
    for (int r = 0; r < view->size; r++)
        world[r] = view->world ? view->world[r] : r;
    comms[ncomms].size = view->size;
    comms[ncomms].world = world;
    return *view->number = ++ncomms;
}

/* The communicator of local number n as the trace kept it (0: MPI_COMM_WORLD),
 * valid even after it was freed. */
static sw_comm_view numbered_view(int n)
{
    return n > 0 && n <= ncomms ? (sw_comm_view){comms[n - 1].size, comms[n - 1].world, NULL}
                                : (sw_comm_view){0, NULL, NULL};
}

/* The world rank of rank in the communicator seen as view; -1 for none. */
static int world_in(const sw_comm_view *view, int rank)
{
    if (rank < 0 || (view->size && rank >= view->size)) /* size 0: MPI_COMM_WORLD */
        return -1;
    return view->world ? view->world[rank] : rank;
}

/* ---- recording ---- */

/* A new event record, its compute time set; NULL once the cap is reached.
 * *view: comm's entry in the communicator table, for world_in. */
static sw_tev *event(int fn, int kind, MPI_Comm comm, uint64_t t0, uint64_t t1, sw_comm_view *view)
{
    int number = comm_number(comm, view);
    if (trace.capped || number < 0 || trace.events.count >= trace.max_events) {
        trace.capped = 1;
        return NULL;
    }
    sw_tev *e = sw_spool_next(&trace.events);
    if (!e) {
        trace.capped = 1;
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->func = (uint16_t)fn;
    e->kind = (uint8_t)kind;
    e->comm = number;
    e->peer = e->root = -1;
    e->req = -1;
    e->compute = t0 - trace.last_end;
    trace.last_end = t1;
    return e;
}

void sw_trace_send(int fn, uint64_t t0, uint64_t t1, int dest, int tag, MPI_Comm comm, uint64_t bytes,
                   sw_req_trace *req)
{
    sw_comm_view view;
    if (dest == MPI_PROC_NULL) /* no message: left out, its time stays compute */
        return;
    sw_tev *e = event(fn, req ? SW_TK_ISEND : SW_TK_SEND, comm, t0, t1, &view);
    if (!e)
        return;
    e->peer = world_in(&view, dest);
    e->tag = tag;
    e->bytes = bytes;
    if (req) {
        e->req = trace.next_req++;
        *req = (sw_req_trace){e->req, 0};
    }
}

static void received(sw_tev *e, const sw_comm_view *view, const MPI_Status *st)
{
    e->peer = world_in(view, st->MPI_SOURCE);
    e->tag = st->MPI_TAG;
    e->bytes = sw_status_bytes(st);
}

void sw_trace_recv(int fn, uint64_t t0, uint64_t t1, int source, int tag, MPI_Comm comm, const MPI_Status *st,
                   sw_req_trace *req)
{
    sw_comm_view view;
    if (source == MPI_PROC_NULL)
        return;
    sw_tev *e = event(fn, req ? SW_TK_IRECV : SW_TK_RECV, comm, t0, t1, &view);
    if (!e)
        return;
    if (st) {
        received(e, &view, st);
        return;
    }
    e->peer = world_in(&view, source);
    e->tag = tag;
    e->req = trace.next_req++;
    *req = (sw_req_trace){e->req, trace.events.count - 1};
}

void sw_trace_sendrecv(int fn, uint64_t t0, uint64_t t1, int dest, int sendtag, uint64_t sendbytes, MPI_Comm comm,
                       const MPI_Status *st)
{
    int64_t ids[2];
    int n = 0;
    sw_tev *e;
    sw_comm_view view;
    if (dest != MPI_PROC_NULL && (e = event(fn, SW_TK_ISEND, comm, t0, t0, &view))) {
        e->peer = world_in(&view, dest);
        e->tag = sendtag;
        e->bytes = sendbytes;
        e->req = ids[n++] = trace.next_req++;
    }
    if (st->MPI_SOURCE != MPI_PROC_NULL && (e = event(fn, SW_TK_IRECV, comm, t0, t0, &view))) {
        received(e, &view, st);
        e->req = ids[n++] = trace.next_req++;
    }
    if (n && (e = event(fn, SW_TK_WAIT, comm, t0, t1, &view))) {
        e->comm = 0;
        e->nreq = (uint32_t)n;
        for (int i = 0; i < n; i++)
            sw_spool_put_id(&trace.waits, ids[i]);
    }
    trace.last_end = t1;
}

void sw_trace_coll(int fn, uint64_t t0, uint64_t t1, MPI_Comm comm, uint64_t bytes, int root, MPI_Op op)
{
    sw_comm_view view;
    sw_tev *e = event(fn, SW_TK_COLL, comm, t0, t1, &view);
    if (!e)
        return;
    e->bytes = bytes;
    e->root = root >= 0 ? root : -1;
    int commutative = 1;
    if (op != MPI_OP_NULL)
        sw_pmpi.Op_commutative(op, &commutative);
    e->flags = commutative ? 0 : 1;
}

void sw_trace_done(int fn, uint64_t t0, uint64_t t1, const sw_pending *claimed, int n, const int *done, int ndone,
                   const MPI_Status *sts, int sts_by_index)
{
    if (!claimed)
        return;
    int64_t stack[32], *ids = ndone <= 32 ? stack : malloc(sizeof(int64_t) * (size_t)ndone);
    int found = 0;
    sw_comm_view view;
    if (!ids) {
        trace.capped = 1;
        return;
    }
    for (int k = 0; k < ndone; k++) {
        int i = done ? done[k] : k;
        if (i < 0 || i >= n || !claimed[i].flags || claimed[i].trace.id < 0)
            continue;
        const sw_req_trace *q = &claimed[i].trace;
        if (claimed[i].flags & SW_REQ_RECV) {
            sw_tev e;
            if (sw_spool_get(&trace.events, q->event, &e)) {
                sw_comm_view recv_view = numbered_view(e.comm);
                received(&e, &recv_view, &sts[sts_by_index ? i : k]);
                sw_spool_set(&trace.events, q->event, &e);
            }
        }
        ids[found++] = q->id;
    }
    sw_tev *e = found ? event(fn, SW_TK_WAIT, MPI_COMM_WORLD, t0, t1, &view) : NULL;
    if (e) {
        e->nreq = (uint32_t)found;
        for (int k = 0; k < found; k++)
            sw_spool_put_id(&trace.waits, ids[k]);
    }
    if (ids != stack)
        free(ids);
}

/* ---- life cycle ---- */

static void trace_path(void)
{
    const char *file = getenv("SCALEWISE_TRACEFILE");
    if (file && *file) {
        snprintf(trace.path, sizeof trace.path, "%s", file);
        return;
    }
    size_t n = strlen(sw_job.logpath);
    const char *ext = ".swlog";
    if (n > 6 && !strcmp(sw_job.logpath + n - 6, ext))
        n -= 6;
    snprintf(trace.path, sizeof trace.path, "%.*s.swtrace", (int)n, sw_job.logpath);
}

static void start_trace(void)
{
    const char *on = getenv("SCALEWISE_TRACE");
    if (!on || !*on || !strcmp(on, "0"))
        return;
    if (sw_mt) {
        if (sw_job.rank == 0)
            fprintf(stderr, "scalewise: no trace under MPI_THREAD_MULTIPLE (calls of several threads interleave)\n");
        return;
    }
    const char *cap = getenv("SCALEWISE_TRACE_MAX_EVENTS");
    trace.max_events = cap && *cap ? strtoull(cap, NULL, 10) : 0;
    if (!trace.max_events)
        trace.max_events = (uint64_t)16 << 20;
    if (sw_spool_open(&trace.events, sizeof(sw_tev)) || sw_spool_open(&trace.waits, sizeof(int64_t))) {
        fprintf(stderr, "scalewise: rank %d: no trace (cannot create its spool file)\n", sw_job.rank);
        return;
    }
    trace_path();
    trace.last_end = sw_job.tsc0;
    trace.untracked = sw_req_untracked;
    sw_tracing = 1;
}

static void finish_trace(void)
{
    if (!sw_tracing)
        return;
    /* The computation after the last recorded call, up to MPI_Finalize: an
     * event that communicates nothing, so the replay ends where the run did. */
    sw_comm_view view;
    event(SW_FN_MPI_Finalize, 0, MPI_COMM_WORLD, sw_job.tsc1, sw_job.tsc1, &view);
    sw_tracing = 0;
    /* A request the full request table could not hold is missing from its Wait. */
    trace.capped |= sw_req_untracked != trace.untracked;
    sw_trace_file f = {
        .path = trace.path, .events = &trace.events, .waits = &trace.waits, .capped = trace.capped, .ncomms = ncomms};
    int *sizes = malloc(sizeof(int) * (size_t)(ncomms + 1)), **members = malloc(sizeof(int *) * (size_t)(ncomms + 1));
    for (int i = 0; sizes && members && i < ncomms; i++) {
        sizes[i] = comms[i].size;
        members[i] = comms[i].world;
    }
    f.comm_sizes = sizes;
    f.comm_members = members;
    sw_trace_write(&f);
    free(sizes);
    free(members);
    sw_spool_close(&trace.events);
    sw_spool_close(&trace.waits);
}

SW_MODULE(trace_module) = {
    .name = "trace",
    .start = start_trace,
    .finish = finish_trace,
};
