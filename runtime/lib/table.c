/* The hash table's slow path: growth (see table.h). */
#include <stdlib.h>

#include "table.h"

uint64_t sw_table_none[8];

int sw_table_grow(sw_table *t, size_t elsize, sw_hash hash, unsigned first, unsigned cap)
{
    int empty = sw_table_empty(t);
    if (!empty && cap && (t->mask + 1) / 2 >= cap) /* already holds the cap */
        return 0;
    unsigned n = empty ? first : (t->mask + 1) * 2;
    sw_table grown = {calloc(n, elsize), n - 1, t->used};
    if (!grown.slots)
        return 0;
    for (unsigned i = 0; !empty && i <= t->mask; i++) {
        uintptr_t k = sw_key_at(t->slots, elsize, i);
        if (k)
            memcpy(sw_slot(&grown, elsize, sw_free_slot(&grown, elsize, hash, k)), sw_slot(t, elsize, i), elsize);
    }
    if (!empty)
        free(t->slots);
    *t = grown;
    return 1;
}

void sw_table_free(sw_table *t)
{
    if (!sw_table_empty(t))
        free(t->slots);
    sw_table_init(t);
}
