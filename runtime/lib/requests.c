/* Request table: what each outstanding non-blocking operation will be worth
 * when the Wait/Test call that completes it returns.  Sends know their size
 * when posted; receives learn it from the completion status. */
#include <stdlib.h>

#include "job.h"
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

static int grow(void)
{
    unsigned n = table ? (mask + 1) * 2 : 256;
    if (n / 2 > sw_J.cfg.max_requests)
        return 0;
    sw_req *old = table, *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return 0;
    unsigned oldn = table ? mask + 1 : 0;
    table = fresh;
    mask = n - 1;
    for (unsigned i = 0; i < oldn; i++)
        if (old[i].key)
            table[sw_probe(table, sizeof *table, mask, old[i].key)] = old[i];
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
    if (table && (used + 1) * 2 <= mask + 1) {
        sw_req *e = &table[sw_probe(table, sizeof *table, mask, key)];
        used += e->key == 0; /* a stale entry for a reused handle is overwritten */
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

void sw_req_done(sw_thread *T, int fn, MPI_Request r, MPI_Status *st)
{
    if (r == MPI_REQUEST_NULL || !table)
        return;
    uintptr_t key = SW_KEY(r);
    int found = 0, origin = 0;
    unsigned flags = 0;
    uint64_t bytes = 0;
    LOCK();
    unsigned i = sw_probe(table, sizeof *table, mask, key);
    sw_req *e = &table[i];
    if (e->key == key && (e->flags & SW_REQ_ACTIVE)) {
        found = 1;
        flags = e->flags;
        bytes = e->bytes;
        origin = e->fn;
        if (flags & SW_REQ_PERSISTENT) {
            e->flags &= (uint16_t)~SW_REQ_ACTIVE;
        } else {
            sw_erase(table, sizeof *table, mask, i);
            used--;
        }
    }
    UNLOCK();
    if (!found)
        return;
    if (flags & SW_REQ_RECV) {
        bytes = sw_status_bytes(st);
        sw_credit(T, origin, bytes);
    }
    sw_credit(T, fn, bytes);
}

void sw_req_forget(MPI_Request r)
{
    if (r == MPI_REQUEST_NULL || !table)
        return;
    uintptr_t key = SW_KEY(r);
    LOCK();
    unsigned i = sw_probe(table, sizeof *table, mask, key);
    if (table[i].key == key) {
        sw_erase(table, sizeof *table, mask, i);
        used--;
    }
    UNLOCK();
}
