/* Open addressing with linear probing, shared by the communicator and request
 * tables.  Each element starts with its uintptr_t key (0 = empty slot). */
#ifndef SW_TABLE_H
#define SW_TABLE_H

#include <stdint.h>
#include <string.h>

static inline unsigned sw_home(uintptr_t key, unsigned mask)
{
    return (unsigned)((key >> 4) ^ (key >> 17)) & mask;
}

static inline uintptr_t sw_key_at(const void *base, size_t elsize, unsigned i)
{
    uintptr_t k;
    memcpy(&k, (const char *)base + (size_t)i * elsize, sizeof k);
    return k;
}

/* Index of key's slot, or of the empty slot where it would go. */
static inline unsigned sw_probe(const void *base, size_t elsize, unsigned mask, uintptr_t key)
{
    unsigned i = sw_home(key, mask);
    for (;;) {
        uintptr_t k = sw_key_at(base, elsize, i);
        if (k == key || k == 0)
            return i;
        i = (i + 1) & mask;
    }
}

/* The first empty slot of key's probe chain, after any entries with the
 * same key, so that lookups (sw_probe) find the oldest one first. */
static inline unsigned sw_free_slot(const void *base, size_t elsize, unsigned mask, uintptr_t key)
{
    unsigned i = sw_home(key, mask);
    while (sw_key_at(base, elsize, i))
        i = (i + 1) & mask;
    return i;
}

/* Empty slot i by backward-shift deletion, which keeps every probe chain
 * intact without tombstones. */
static inline void sw_erase(void *base, size_t elsize, unsigned mask, unsigned i)
{
    char *b = base;
    unsigned j = i;
    for (;;) {
        j = (j + 1) & mask;
        uintptr_t k = sw_key_at(base, elsize, j);
        if (k == 0)
            break;
        unsigned h = sw_home(k, mask);
        /* The element at j may move to i only if its home is not in (i, j]. */
        int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            memcpy(b + (size_t)i * elsize, b + (size_t)j * elsize, elsize);
            i = j;
        }
    }
    memset(b + (size_t)i * elsize, 0, elsize);
}

#endif
