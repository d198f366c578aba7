/* Request table: what each outstanding non-blocking operation will be worth
 * when the Wait/Test call that completes it returns.  Sends know their size
 * when posted; receives learn it from the completion status.
 *
 * Some handles stand for several live operations at once: Open MPI returns
 * its shared &ompi_request_empty for every send it completed inline and for
 * operations on MPI_PROC_NULL, MPICH a builtin handle per kind for the
 * latter.  Entries of such a shared handle are kept side by side and a
 * completion takes the oldest; any other handle has one entry, and a new
 * request replaces a stale entry of a reused handle. */
#include <stdlib.h>

#include "credit.h"
#include "module.h"
#include "p2p.h"
#include "requests.h"

sw_table sw_requests = {sw_table_none, 0, 0};
uint64_t sw_req_untracked;
uintptr_t sw_req_learned[SW_REQ_MAX_LEARNED];

/* Two receives and two sends on MPI_PROC_NULL, all outstanding at once: a
 * handle returned twice stands for several operations. */
static void learn_shared_handles(void)
{
    __typeof__(&PMPI_Irecv) irecv = (__typeof__(&PMPI_Irecv))sw_resolve("PMPI_Irecv");
    __typeof__(&PMPI_Isend) isend = (__typeof__(&PMPI_Isend))sw_resolve("PMPI_Isend");
    __typeof__(&PMPI_Waitall) waitall = (__typeof__(&PMPI_Waitall))sw_resolve("PMPI_Waitall");
    MPI_Request r[4];
    MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: MPICH 4.0's is a pointer gcc sees as overflowing */
    char byte = 0;
    irecv(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, sw_job.comm, &r[0]);
    irecv(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, sw_job.comm, &r[1]);
    isend(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, sw_job.comm, &r[2]);
    isend(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, sw_job.comm, &r[3]);
    unsigned n = 0;
    for (int i = 0; i < 4; i += 2)
        if (SW_KEY(r[i]) == SW_KEY(r[i + 1]) && !sw_request_shared(SW_KEY(r[i])) && n < SW_REQ_MAX_LEARNED)
            sw_req_learned[n++] = SW_KEY(r[i]);
    waitall(4, r, st);
}

SW_MODULE(requests_module) = {.name = "requests", .init = learn_shared_handles};

static sw_req *entry(unsigned i) { return sw_slot(&sw_requests, sizeof(sw_req), i); }

/* Where a new entry for key goes: beside the others of a shared handle, else
 * over a stale entry of the same handle if there is one. */
static sw_req *new_entry(uintptr_t key)
{
    return entry(sw_request_shared(key) ? sw_free_slot(&sw_requests, sizeof(sw_req), sw_handle_hash, key)
                                        : sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key));
}

static int grow(void)
{
    return sw_table_grow(&sw_requests, sizeof(sw_req), sw_handle_hash, 256, sw_job.cfg.max_requests);
}

static int room(void) { return (sw_requests.used + 1) * 2 <= sw_requests.mask + 1; }

void sw_req_track(MPI_Request r, int fn, uint64_t bytes, int peer, unsigned flags, const sw_req_trace *trace)
{
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    sw_mt_lock(&sw_job.mt_lock);
    if (!room())
        grow();
    if (room() && sw_requests.used < sw_job.cfg.max_requests) {
        sw_req *e = new_entry(key);
        sw_requests.used += e->key == 0;
        *e = (sw_req){key,
                      {bytes, peer, (uint16_t)fn, (uint16_t)(flags | (flags & SW_REQ_PERSISTENT ? 0 : SW_REQ_ACTIVE)),
                       trace ? *trace : SW_REQ_UNTRACED}};
    } else {
        sw_set_partial();
        sw_req_untracked++;
    }
    sw_mt_unlock(&sw_job.mt_lock);
}

/* MPI_Start/Startall: re-arm a persistent request.  Its traffic is credited
 * to the start call: a send's bytes now, a receive's at completion. */
void sw_req_start(sw_thread *thread, int fn, MPI_Request r)
{
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    uint64_t send_bytes = 0;
    int peer = -1, is_send = 0;
    sw_mt_lock(&sw_job.mt_lock);
    sw_req *e = entry(sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key));
    if (e->key == key) {
        e->op.flags |= SW_REQ_ACTIVE;
        e->op.fn = (uint16_t)fn;
        is_send = (e->op.flags & SW_REQ_SEND) != 0;
        send_bytes = e->op.bytes;
        peer = e->op.peer;
    }
    sw_mt_unlock(&sw_job.mt_lock);
    if (is_send) {
        sw_credit(thread, fn, send_bytes);
        if (peer >= 0)
            sw_p2p_add(thread, peer, send_bytes);
    }
}

/* Request_free, and Wait/Test under MPI_THREAD_MULTIPLE: take r's entry out
 * of the table *before* the MPI call.  Once that call completes a request,
 * MPI may hand the same handle to another thread's new request before this
 * wrapper looks it up again; an entry still in the table would then be
 * credited to, or erased by, the wrong operation.  While the entry is out,
 * no other thread can use r (MPI forbids two concurrent completions of one
 * request).  With one thread in MPI no new request can take the handle
 * during the call (a nested call is not recorded): Wait/Test look it up
 * after the call, and only if the call completed it. */
static void claim(MPI_Request r, sw_pending *p);

/* sw_req_claim under MPI_THREAD_MULTIPLE: before the call, out of the table. */
void sw_req_claim_locked(MPI_Request r, sw_pending *p) { claim(r, p); }

/* sw_req_claim_after, one thread: r's call completed it.  A shared handle's
 * entries are taken in turn (the oldest leaves the table); any other entry
 * stays where it is, marked SW_REQ_IN_TABLE, for sw_req_settle to erase or
 * (persistent) keep. */
void sw_req_claim_completed(MPI_Request r, sw_pending *p)
{
    p->flags = 0;
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    if (sw_request_shared(key)) {
        claim(r, p);
        return;
    }
    const sw_req *e = entry(sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key));
    if (e->key == key) {
        *p = e->op;
        p->flags |= SW_REQ_IN_TABLE;
    }
}

/* MPI_Request_free: the entry leaves the table whatever the threading. */
void sw_req_take(MPI_Request r, sw_pending *p) { claim(r, p); }

static void claim(MPI_Request r, sw_pending *p)
{
    p->flags = 0;
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    sw_mt_lock(&sw_job.mt_lock);
    unsigned i = sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key);
    sw_req *e = entry(i);
    if (e->key == key) {
        *p = e->op;
        sw_erase(&sw_requests, sizeof(sw_req), sw_handle_hash, i);
        sw_requests.used--;
    }
    sw_mt_unlock(&sw_job.mt_lock);
}

/* A completed operation whose entry stayed in the table (SW_REQ_IN_TABLE):
 * erase it, or keep a persistent one with its new flags. */
static void settle_in_table(uintptr_t key, uint16_t flags, int keep)
{
    unsigned i = sw_find(&sw_requests, sizeof(sw_req), sw_handle_hash, key);
    sw_req *e = entry(i);
    if (e->key != key)
        return;
    if (keep) {
        e->op.flags = flags;
    } else {
        sw_erase(&sw_requests, sizeof(sw_req), sw_handle_hash, i);
        sw_requests.used--;
    }
}

/* After the call: a completed operation is credited to the function that
 * started it (receives, whose size the status gives) and to the completing
 * call fn; an entry that must live on (not completed, or persistent) goes
 * back into the table. */
void sw_req_settle_slow(sw_thread *thread, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st)
{
    if (!p->flags)
        return;
    uint16_t flags = p->flags;
    if (completed && (flags & SW_REQ_ACTIVE)) {
        uint64_t bytes = p->bytes;
        if (flags & SW_REQ_RECV) {
            bytes = sw_status_bytes(st);
            sw_credit_function(thread, p->fn, bytes); /* the earlier Irecv: not this call's site */
        }
        sw_credit(thread, fn, bytes);
        flags &= (uint16_t)~SW_REQ_ACTIVE;
    }
    if (flags & SW_REQ_IN_TABLE) {
        if (completed)
            settle_in_table(SW_KEY(r), (uint16_t)(flags & ~SW_REQ_IN_TABLE), (flags & SW_REQ_PERSISTENT) != 0);
        return;
    }
    if (completed && !(flags & SW_REQ_PERSISTENT))
        return;
    uintptr_t key = SW_KEY(r);
    sw_mt_lock(&sw_job.mt_lock);
    if (!room())
        grow();
    if (room()) {
        sw_req *e = new_entry(key);
        sw_requests.used += e->key == 0;
        *e = (sw_req){key, *p};
        e->op.flags = flags;
    } else {
        sw_set_partial();
    }
    sw_mt_unlock(&sw_job.mt_lock);
}

/* sw_keep beyond SW_STACK_REQS requests: one block for the claimed entries
 * (8-byte aligned), our statuses if the call needs them, then the handles. */
int sw_kept_alloc(sw_kept *k, int n, int own_statuses)
{
    size_t statuses = own_statuses ? sizeof(MPI_Status) * (size_t)n : 0;
    char *block = malloc((sizeof(sw_pending) + sizeof(MPI_Request)) * (size_t)n + statuses);
    if (!(k->heap = block))
        return 0;
    k->pending = (sw_pending *)block;
    k->statuses = own_statuses ? (MPI_Status *)(block + sizeof(sw_pending) * (size_t)n) : NULL;
    k->reqs = (MPI_Request *)(block + sizeof(sw_pending) * (size_t)n + statuses);
    return 1;
}
