/* Point-to-point row of this rank: messages and bytes sent to each world
 * rank.  One hash per thread, so recording needs no lock; rows are merged
 * when the log is written. */
#include <stdlib.h>

#include "p2p.h"
#include "core.h"
#include "job.h"

static int grow(sw_peers *P)
{
    unsigned n = P->slots ? (P->mask + 1) * 2 : 64;
    if (P->slots && (P->mask + 1) / 2 >= sw_J.cfg.max_peers) /* already holds the cap */
        return 0;
    sw_peer *fresh = calloc(n, sizeof *fresh);
    if (!fresh)
        return 0;
    unsigned oldn = P->slots ? P->mask + 1 : 0;
    for (unsigned i = 0; i < oldn; i++) {
        sw_peer *p = &P->slots[i];
        if (!p->peer1)
            continue;
        unsigned j = p->peer1 & (n - 1);
        while (fresh[j].peer1)
            j = (j + 1) & (n - 1);
        fresh[j] = *p;
    }
    free(P->slots);
    P->slots = fresh;
    P->mask = n - 1;
    return 1;
}

void sw_p2p_add(sw_thread *T, int world, uint64_t bytes)
{
    sw_peers *P = &T->peers;
    uint32_t key = (uint32_t)world + 1;
    if (P->slots) {
        /* World ranks are dense integers: the identity spreads them evenly. */
        for (unsigned i = key & P->mask;; i = (i + 1) & P->mask) {
            sw_peer *p = &P->slots[i];
            if (p->peer1 == key) {
                p->messages++;
                p->bytes += bytes;
                return;
            }
            if (!p->peer1)
                break;
        }
    }
    if (P->used >= sw_J.cfg.max_peers ||
        ((!P->slots || (P->used + 1) * 2 > P->mask + 1) && !grow(P) && (!P->slots || (P->used + 1) * 4 > (P->mask + 1) * 3))) {
        sw_set_partial();
        return;
    }
    unsigned i = key & P->mask;
    while (P->slots[i].peer1)
        i = (i + 1) & P->mask;
    P->slots[i] = (sw_peer){key, 0, 1, bytes};
    P->used++;
}
