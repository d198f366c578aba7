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
#include "core.h"
#include "hot.h"
#include "job.h"
#include "requests.h"
#include "table.h"
#include "trace.h"
#include "trace_spool.h"

int sw_tracing;

static struct {
    sw_spool events, waits;
    uint64_t last_end;  /* ticks at the end of the previous recorded call */
    int64_t next_req;   /* request ids: 0, 1, 2, ... in creation order */
    uint64_t max_events;
    int capped;
    char path[4096];
} S;

/* ---- requests: handle -> (id, event) of the operation that created it ---- */

typedef struct {
    uintptr_t key;   /* the MPI_Request handle; 0: empty */
    int64_t id;      /* -1: an operation the trace leaves out (MPI_PROC_NULL) */
    uint64_t event;  /* the Irecv to fill in at completion */
    int recv;
    MPI_Comm comm;
} sw_treq;

static sw_treq *reqs;
static unsigned req_mask, req_used;

static unsigned free_slot(uintptr_t key) { return sw_free_slot(reqs, sizeof *reqs, req_mask, key); }

static int req_grow(void)
{
    unsigned n = reqs ? (req_mask + 1) * 2 : 256, oldn = reqs ? req_mask + 1 : 0;
    sw_treq *old = reqs, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return 0;
    reqs = fresh;
    req_mask = n - 1;
    for (unsigned i = 0; i < oldn; i++)
        if (old[i].key)
            reqs[free_slot(old[i].key)] = old[i];
    free(old);
    return 1;
}

static void req_add(MPI_Request r, int64_t id, uint64_t event, int recv, MPI_Comm comm)
{
    uintptr_t key = SW_KEY(r);
    if (!key || (req_used + 1 > (req_mask + 1) / 2 && !req_grow()) || !reqs) {
        S.capped = 1;
        return;
    }
    unsigned i = sw_request_shared(key) ? free_slot(key) : sw_probe(reqs, sizeof *reqs, req_mask, key);
    if (!reqs[i].key)
        req_used++;
    reqs[i] = (sw_treq){key, id, event, recv, comm};
}

/* The entry of handle r, taken out of the table; 0 when r is not known. */
static int req_take(MPI_Request r, sw_treq *out)
{
    uintptr_t key = SW_KEY(r);
    if (!reqs || !key)
        return 0;
    unsigned i = sw_probe(reqs, sizeof *reqs, req_mask, key);
    if (!reqs[i].key)
        return 0;
    *out = reqs[i];
    sw_erase(reqs, sizeof *reqs, req_mask, i);
    req_used--;
    return 1;
}

/* ---- communicators: local number -> members' world ranks ---- */

typedef struct {
    MPI_Comm comm;
    int live, size;
    int *world;
} sw_tcomm;

static sw_tcomm *comms;
static int ncomms, comms_cap;

/* Local number of comm (0: MPI_COMM_WORLD); the file's ids are agreed at the end. */
static int comm_number(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 0;
    for (int i = ncomms - 1; i >= 0; i--)
        if (comms[i].live && comms[i].comm == comm)
            return i + 1;
    if (ncomms == comms_cap) {
        int n = comms_cap ? comms_cap * 2 : 16;
        sw_tcomm *grown = realloc(comms, sizeof *comms * (size_t)n);
        if (!grown || n > (int)sw_J.cfg.max_comms)
            return -1;
        comms = grown;
        comms_cap = n;
    }
    sw_tcomm *c = &comms[ncomms];
    c->comm = comm;
    c->live = 1;
    c->size = sw_comm_size(comm);
    c->world = malloc(sizeof(int) * (size_t)(c->size > 0 ? c->size : 1));
    if (c->size <= 0 || !c->world) {
        free(c->world);
        return -1;
    }
    for (int r = 0; r < c->size; r++)
        c->world[r] = sw_world_rank(comm, r);
    return ++ncomms;
}

void sw_trace_comm_freed(MPI_Comm comm)
{
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm == comm)
            comms[i].live = 0;
}

/* ---- recording ---- */

static int world_of(MPI_Comm comm, int rank)
{
    if (rank < 0)
        return -1;
    return comm == MPI_COMM_WORLD ? rank : sw_world_rank(comm, rank);
}

/* A new event record, its compute time set; NULL once the cap is reached. */
static sw_tev *event(int fn, int kind, MPI_Comm comm, uint64_t t0, uint64_t t1)
{
    int number = comm_number(comm);
    if (S.capped || number < 0 || S.events.count >= S.max_events) {
        S.capped = 1;
        return NULL;
    }
    sw_tev *e = sw_spool_next(&S.events);
    if (!e) {
        S.capped = 1;
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->func = (uint16_t)fn;
    e->kind = (uint8_t)kind;
    e->comm = number;
    e->peer = e->root = -1;
    e->req = -1;
    e->compute = t0 - S.last_end;
    S.last_end = t1;
    return e;
}

void sw_trace_send(int fn, uint64_t t0, uint64_t t1, int dest, int tag, MPI_Comm comm, uint64_t bytes,
                   const MPI_Request *req)
{
    if (dest == MPI_PROC_NULL) { /* no message: left out, its time stays compute */
        if (req)
            req_add(*req, -1, 0, 0, comm);
        return;
    }
    sw_tev *e = event(fn, req ? SW_TK_ISEND : SW_TK_SEND, comm, t0, t1);
    if (!e)
        return;
    e->peer = world_of(comm, dest);
    e->tag = tag;
    e->bytes = bytes;
    if (req) {
        e->req = S.next_req++;
        req_add(*req, e->req, 0, 0, comm);
    }
}

static void received(sw_tev *e, MPI_Comm comm, const MPI_Status *st)
{
    e->peer = world_of(comm, st->MPI_SOURCE);
    e->tag = st->MPI_TAG;
    e->bytes = sw_status_bytes(st);
}

void sw_trace_recv(int fn, uint64_t t0, uint64_t t1, int source, int tag, MPI_Comm comm,
                   const MPI_Status *st, const MPI_Request *req)
{
    if (source == MPI_PROC_NULL) {
        if (req)
            req_add(*req, -1, 0, 0, comm);
        return;
    }
    sw_tev *e = event(fn, req ? SW_TK_IRECV : SW_TK_RECV, comm, t0, t1);
    if (!e)
        return;
    if (st) {
        received(e, comm, st);
        return;
    }
    e->peer = world_of(comm, source);
    e->tag = tag;
    e->req = S.next_req++;
    req_add(*req, e->req, S.events.count - 1, 1, comm);
}

void sw_trace_sendrecv(int fn, uint64_t t0, uint64_t t1, int dest, int sendtag, uint64_t sendbytes,
                       MPI_Comm comm, const MPI_Status *st)
{
    int64_t ids[2];
    int n = 0;
    sw_tev *e;
    if (dest != MPI_PROC_NULL && (e = event(fn, SW_TK_ISEND, comm, t0, t0))) {
        e->peer = world_of(comm, dest);
        e->tag = sendtag;
        e->bytes = sendbytes;
        e->req = ids[n++] = S.next_req++;
    }
    if (st->MPI_SOURCE != MPI_PROC_NULL && (e = event(fn, SW_TK_IRECV, comm, t0, t0))) {
        received(e, comm, st);
        e->req = ids[n++] = S.next_req++;
    }
    if (n && (e = event(fn, SW_TK_WAIT, comm, t0, t1))) {
        e->comm = 0;
        e->nreq = (uint32_t)n;
        for (int i = 0; i < n; i++)
            sw_spool_put_id(&S.waits, ids[i]);
    }
    S.last_end = t1;
}

void sw_trace_coll(int fn, uint64_t t0, uint64_t t1, MPI_Comm comm, uint64_t bytes, int root, MPI_Op op)
{
    sw_tev *e = event(fn, SW_TK_COLL, comm, t0, t1);
    if (!e)
        return;
    e->bytes = bytes;
    e->root = root >= 0 ? root : -1;
    int commutative = 1;
    static int (*op_commutative)(MPI_Op, int *);
    if (!op_commutative)
        op_commutative = (int (*)(MPI_Op, int *))sw_resolve("PMPI_Op_commutative");
    if (op != MPI_OP_NULL)
        op_commutative(op, &commutative);
    e->flags = commutative ? 0 : 1;
}

void sw_trace_done(int fn, uint64_t t0, uint64_t t1, const MPI_Request *before, int n, const int *done,
                   int ndone, const MPI_Status *sts, int sts_by_index)
{
    if (!before)
        return;
    int64_t stack[32], *ids = ndone <= 32 ? stack : malloc(sizeof(int64_t) * (size_t)ndone);
    int found = 0;
    if (!ids) {
        S.capped = 1;
        return;
    }
    for (int k = 0; k < ndone; k++) {
        int i = done ? done[k] : k;
        sw_treq q;
        if (i < 0 || i >= n || !req_take(before[i], &q) || q.id < 0)
            continue;
        if (q.recv) {
            sw_tev e;
            if (sw_spool_get(&S.events, q.event, &e)) {
                received(&e, q.comm, &sts[sts_by_index ? i : k]);
                sw_spool_set(&S.events, q.event, &e);
            }
        }
        ids[found++] = q.id;
    }
    sw_tev *e = found ? event(fn, SW_TK_WAIT, MPI_COMM_WORLD, t0, t1) : NULL;
    if (e) {
        e->nreq = (uint32_t)found;
        for (int k = 0; k < found; k++)
            sw_spool_put_id(&S.waits, ids[k]);
    }
    if (ids != stack)
        free(ids);
}

/* ---- life cycle ---- */

static void trace_path(void)
{
    const char *file = getenv("SCALEWISE_TRACEFILE");
    if (file && *file) {
        snprintf(S.path, sizeof S.path, "%s", file);
        return;
    }
    size_t n = strlen(sw_J.logpath);
    const char *ext = ".swlog";
    if (n > 6 && !strcmp(sw_J.logpath + n - 6, ext))
        n -= 6;
    snprintf(S.path, sizeof S.path, "%.*s.swtrace", (int)n, sw_J.logpath);
}

void sw_trace_start(void)
{
    const char *on = getenv("SCALEWISE_TRACE");
    if (!on || !*on || !strcmp(on, "0"))
        return;
    if (sw_mt) {
        if (sw_J.rank == 0)
            fprintf(stderr, "scalewise: no trace under MPI_THREAD_MULTIPLE (calls of several threads interleave)\n");
        return;
    }
    const char *cap = getenv("SCALEWISE_TRACE_MAX_EVENTS");
    S.max_events = cap && *cap ? strtoull(cap, NULL, 10) : 0;
    if (!S.max_events)
        S.max_events = (uint64_t)16 << 20;
    if (sw_spool_open(&S.events, sizeof(sw_tev)) || sw_spool_open(&S.waits, sizeof(int64_t))) {
        fprintf(stderr, "scalewise: rank %d: no trace (cannot create its spool file)\n", sw_J.rank);
        return;
    }
    trace_path();
    S.last_end = sw_J.tsc0;
    sw_tracing = 1;
}

void sw_trace_finish(void)
{
    if (!sw_tracing)
        return;
    /* The computation after the last recorded call, up to MPI_Finalize: an
     * event that communicates nothing, so the replay ends where the run did. */
    event(SW_FN_MPI_Finalize, 0, MPI_COMM_WORLD, sw_J.tsc1, sw_J.tsc1);
    sw_tracing = 0;
    sw_trace_file f = {.path = S.path, .events = &S.events, .waits = &S.waits, .capped = S.capped,
                       .ncomms = ncomms};
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
    sw_spool_close(&S.events);
    sw_spool_close(&S.waits);
}
