/* The one hash table of the runtime: open addressing with linear probing,
 * grown by doubling, used by the communicator, request, point-to-point and
 * call-site tables.  Each element starts with its uintptr_t key (0 marks an
 * empty slot); each user gives its hash.  A table starts empty with one
 * shared zeroed slot, so lookups never test for a missing array. */
#ifndef SW_TABLE_H
#define SW_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    void *slots; /* mask + 1 elements; never NULL */
    unsigned mask, used;
} sw_table;

typedef unsigned (*sw_hash)(uintptr_t key);

/* The one slot of every empty table (large enough for any element). */
extern uint64_t sw_table_none[8];
#define SW_TABLE_MAX_ELEMENT sizeof sw_table_none

static inline void sw_table_init(sw_table *t)
{
    t->slots = sw_table_none;
    t->mask = 0;
    t->used = 0;
}

static inline int sw_table_empty(const sw_table *t) { return t->slots == (void *)sw_table_none; }

static inline uintptr_t sw_key_at(const void *slots, size_t elsize, unsigned i)
{
    uintptr_t k;
    memcpy(&k, (const char *)slots + (size_t)i * elsize, sizeof k);
    return k;
}

static inline void *sw_slot(const sw_table *t, size_t elsize, unsigned i)
{
    return (char *)t->slots + (size_t)i * elsize;
}

/* Index of key's slot, or of the empty slot where it would go. */
static inline __attribute__((always_inline)) unsigned sw_find(const sw_table *t, size_t elsize, sw_hash hash,
                                                              uintptr_t key)
{
    unsigned i = hash(key) & t->mask;
    for (;;) {
        uintptr_t k = sw_key_at(t->slots, elsize, i);
        if (k == key || k == 0)
            return i;
        i = (i + 1) & t->mask;
    }
}

/* The first empty slot of key's probe chain, after any entries with the
 * same key, so that lookups (sw_find) find the oldest one first. */
static inline unsigned sw_free_slot(const sw_table *t, size_t elsize, sw_hash hash, uintptr_t key)
{
    unsigned i = hash(key) & t->mask;
    while (sw_key_at(t->slots, elsize, i))
        i = (i + 1) & t->mask;
    return i;
}

/* Empty slot i by backward-shift deletion, which keeps every probe chain
 * intact without tombstones; the caller keeps `used`.  Inline, as sw_find:
 * a request is erased at every Wait/Test that completes it. */
static inline __attribute__((always_inline)) void sw_erase(sw_table *t, size_t elsize, sw_hash hash, unsigned i)
{
    char *b = t->slots;
    unsigned j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        uintptr_t k = sw_key_at(b, elsize, j);
        if (k == 0)
            break;
        unsigned h = hash(k) & t->mask;
        /* The element at j may move to i only if its home is not in (i, j]. */
        int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            memcpy(b + (size_t)i * elsize, b + (size_t)j * elsize, elsize);
            i = j;
        }
    }
    memset(b + (size_t)i * elsize, 0, elsize);
}

/* Doubles the table (an empty one gets `first` slots) and re-inserts every
 * element.  0, and the table unchanged, when memory is refused or when the
 * table already holds cap elements at half load (cap 0: no cap). */
int sw_table_grow(sw_table *t, size_t elsize, sw_hash hash, unsigned first, unsigned cap);

/* Frees the slots; the table is empty again. */
void sw_table_free(sw_table *t);

/* The hash of handles (communicators, requests): pointers in Open MPI, ints in MPICH. */
static inline unsigned sw_handle_hash(uintptr_t key) { return (unsigned)((key >> 4) ^ (key >> 17)); }

#endif
