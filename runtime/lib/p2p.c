/* Point-to-point row of this rank: messages and bytes sent to each world
 * rank.  One table per thread, so recording needs no lock; rows are merged
 * when the log is written (record.c). */
#include "p2p.h"

/* World ranks are dense integers: the identity spreads them evenly. */
static unsigned peer_hash(uintptr_t key) { return (unsigned)key; }

static int grow(sw_table *row) { return sw_table_grow(row, sizeof(sw_peer), peer_hash, 64, sw_job.cfg.max_peers); }

void sw_p2p_add(sw_thread *thread, int world, uint64_t bytes)
{
    sw_table *row = &thread->peers;
    uintptr_t key = (uint32_t)world + 1;
    sw_peer *p = sw_slot(row, sizeof *p, sw_find(row, sizeof *p, peer_hash, key));
    if (p->peer1 == key) {
        p->messages++;
        p->bytes += bytes;
        return;
    }
    if (row->used >= sw_job.cfg.max_peers ||
        ((sw_table_empty(row) || (row->used + 1) * 2 > row->mask + 1) && !grow(row) &&
         (sw_table_empty(row) || (row->used + 1) * 4 > (row->mask + 1) * 3))) {
        sw_set_partial();
        return;
    }
    p = sw_slot(row, sizeof *p, sw_free_slot(row, sizeof *p, peer_hash, key));
    *p = (sw_peer){key, 1, bytes};
    row->used++;
}
