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

#include "requests.h"
#include "core.h"
#include "hot.h"
#include "job.h"
#include "p2p.h"
#include "table.h"

typedef struct {
    uintptr_t key; /* the MPI_Request handle; 0: empty */
    uint64_t bytes;
    int32_t peer;  /* world rank of a persistent send's destination */
    uint16_t fn;   /* function credited with a receive's bytes at completion */
    uint16_t flags;
} sw_req;

static sw_req *table;
static unsigned mask, used;

#define LOCK() do { if (sw_mt) pthread_mutex_lock(&sw_J.mt_lock); } while (0)
#define UNLOCK() do { if (sw_mt) pthread_mutex_unlock(&sw_J.mt_lock); } while (0)

static unsigned free_slot(uintptr_t key) { return sw_free_slot(table, sizeof *table, mask, key); }

/* Where a new entry for key goes: beside the others of a shared handle, else
 * over a stale entry of the same handle if there is one. */
static unsigned new_slot(uintptr_t key)
{
    return sw_request_shared(key) ? free_slot(key) : sw_probe(table, sizeof *table, mask, key);
}

static int grow(void)
{
    unsigned n = table ? (mask + 1) * 2 : 256;
    if (table && (mask + 1) / 2 >= sw_J.cfg.max_requests) /* already holds the cap */
        return 0;
    sw_req *old = table, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return 0;
    unsigned oldn = table ? mask + 1 : 0;
    table = fresh;
    mask = n - 1;
    for (unsigned i = 0; i < oldn; i++)
        if (old[i].key)
            table[free_slot(old[i].key)] = old[i];
    free(old);
    return 1;
}

void sw_req_track(MPI_Request r, int fn, uint64_t bytes, int peer, unsigned flags)
{
    if (r == MPI_REQUEST_NULL)
        return;
    uintptr_t key = SW_KEY(r);
    LOCK();
    if (!table || (used + 1) * 2 > mask + 1)
        grow();
    if (table && (used + 1) * 2 <= mask + 1 && used < sw_J.cfg.max_requests) {
        sw_req *e = &table[new_slot(key)];
        used += e->key == 0;
        *e = (sw_req){key, bytes, peer, (uint16_t)fn,
                      (uint16_t)(flags | (flags & SW_REQ_PERSISTENT ? 0 : SW_REQ_ACTIVE))};
    } else {
        sw_set_partial();
    }
    UNLOCK();
}

/* MPI_Start/Startall: re-arm a persistent request.  Its traffic is credited
 * to the start call: a send's bytes now, a receive's at completion. */
void sw_req_start(sw_thread *T, int fn, MPI_Request r)
{
    if (r == MPI_REQUEST_NULL || !table)
        return;
    uintptr_t key = SW_KEY(r);
    uint64_t send_bytes = 0;
    int peer = -1, is_send = 0;
    LOCK();
    sw_req *e = &table[sw_probe(table, sizeof *table, mask, key)];
    if (e->key == key) {
        e->flags |= SW_REQ_ACTIVE;
        e->fn = (uint16_t)fn;
        is_send = (e->flags & SW_REQ_SEND) != 0;
        send_bytes = e->bytes;
        peer = e->peer;
    }
    UNLOCK();
    if (is_send) {
        sw_credit(T, fn, send_bytes);
        if (peer >= 0)
            sw_p2p_add(T, peer, send_bytes);
    }
}

/* Wait/Test/Request_free: take r's entry out of the table *before* the MPI
 * call.  Once that call completes a request, MPI may hand the same handle to
 * another thread's new request before this wrapper looks it up again; an
 * entry still in the table would then be credited to, or erased by, the
 * wrong operation.  While the entry is out, no other thread can use r (MPI
 * forbids two concurrent completions of one request). */
void sw_req_claim(MPI_Request r, sw_pending *p)
{
    p->flags = 0;
    if (r == MPI_REQUEST_NULL || !table)
        return;
    uintptr_t key = SW_KEY(r);
    LOCK();
    unsigned i = sw_probe(table, sizeof *table, mask, key);
    sw_req *e = &table[i];
    if (e->key == key) {
        *p = (sw_pending){e->bytes, e->peer, e->fn, e->flags};
        sw_erase(table, sizeof *table, mask, i);
        used--;
    }
    UNLOCK();
}

/* After the call: a completed operation is credited to the function that
 * started it (receives, whose size the status gives) and to the completing
 * call fn; an entry that must live on (not completed, or persistent) goes
 * back into the table. */
void sw_req_settle(sw_thread *T, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st)
{
    if (!p->flags)
        return;
    uint16_t flags = p->flags;
    if (completed && (flags & SW_REQ_ACTIVE)) {
        uint64_t bytes = p->bytes;
        if (flags & SW_REQ_RECV) {
            bytes = sw_status_bytes(st);
            sw_credit_function(T, p->fn, bytes); /* the earlier Irecv: not this call's site */
        }
        sw_credit(T, fn, bytes);
        flags &= (uint16_t)~SW_REQ_ACTIVE;
    }
    if (completed && !(flags & SW_REQ_PERSISTENT))
        return;
    uintptr_t key = SW_KEY(r);
    LOCK();
    if ((used + 1) * 2 > mask + 1)
        grow();
    if ((used + 1) * 2 <= mask + 1) {
        sw_req *e = &table[new_slot(key)];
        used += e->key == 0;
        *e = (sw_req){key, p->bytes, p->peer, p->fn, flags};
    } else {
        sw_set_partial();
    }
    UNLOCK();
}
