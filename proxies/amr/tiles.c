/* Tile geometry, Morton ordering, cost-balanced partition and tag dilation.
 * All of it is computed redundantly and identically on every rank from the
 * global refinement map, so no communication is needed to agree on it. */
#include "amr.h"

#include <stdlib.h>

int amr_neighbour(const amr_state *s, int t, int side)
{
    int nt = s->nt, tx = t % nt, ty = t / nt;
    switch (side) {
    case SIDE_W: tx = (tx + nt - 1) % nt; break;
    case SIDE_E: tx = (tx + 1) % nt; break;
    case SIDE_S: ty = (ty + nt - 1) % nt; break;
    default: ty = (ty + 1) % nt; break;
    }
    return ty * nt + tx;
}

static unsigned long interleave(unsigned x, unsigned y)
{
    unsigned long key = 0;
    for (int b = 0; b < 16; b++)
        key |= (unsigned long)((x >> b) & 1u) << (2 * b) |
               (unsigned long)((y >> b) & 1u) << (2 * b + 1);
    return key;
}

static const amr_state *sort_state;

static int by_morton(const void *a, const void *b)
{
    int ta = *(const int *)a, tb = *(const int *)b, nt = sort_state->nt;
    unsigned long ka = interleave((unsigned)(ta % nt), (unsigned)(ta / nt));
    unsigned long kb = interleave((unsigned)(tb % nt), (unsigned)(tb / nt));
    return (ka > kb) - (ka < kb);
}

void amr_morton_order(amr_state *s)
{
    for (int t = 0; t < s->ntiles; t++)
        s->morton[t] = t;
    sort_state = s;
    qsort(s->morton, s->ntiles, sizeof(int), by_morton);
}

void amr_balance(const amr_state *s, int *owner)
{
    long total = 0, before = 0;
    for (int t = 0; t < s->ntiles; t++)
        total += s->refined[t] ? 5 : 1;
    for (int k = 0; k < s->ntiles; k++) {
        int t = s->morton[k];
        long w = s->refined[t] ? 5 : 1;
        /* The rank whose share holds this tile's cost midpoint. */
        long r = (2 * before + w) * s->nranks / (2 * total);
        owner[t] = (int)(r < s->nranks ? r : s->nranks - 1);
        before += w;
    }
}

void amr_dilate(const amr_state *s, const unsigned char *tagged, unsigned char *refine)
{
    int nt = s->nt;
    for (int t = 0; t < s->ntiles; t++) {
        int tx = t % nt, ty = t / nt;
        refine[t] = 0;
        for (int dy = -1; dy <= 1 && !refine[t]; dy++)
            for (int dx = -1; dx <= 1; dx++)
                if (tagged[((ty + dy + nt) % nt) * nt + (tx + dx + nt) % nt]) {
                    refine[t] = 1;
                    break;
                }
    }
}
