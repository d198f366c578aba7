/* amr: a periodic coarse grid of nt x nt tiles, each B x B coarse cells; a
 * tile may carry a refined patch of 2B x 2B fine cells (ratio 2). Tiles are
 * the unit of ownership, refinement and load balancing. */
#ifndef AMR_H
#define AMR_H

#include <stddef.h>

enum { SIDE_W, SIDE_E, SIDE_S, SIDE_N };

typedef struct {
    double *c; /* (B+2)^2 coarse cells with a one-cell ghost ring */
    double *f; /* (2B+2)^2 fine cells with ghosts, NULL if not refined */
} amr_tile;

typedef struct {
    int nt, B, ntiles;
    int rank, nranks;
    double dxc, dxf, u, v, dt;
    int *owner;              /* tile -> rank */
    unsigned char *refined;  /* tile -> 0/1, identical on every rank */
    int *morton;             /* tiles in Morton (Z) order */
    amr_tile *tile;          /* indexed by tile id; data only where owned */
    double *work;            /* scratch for one tile update */
    long sends, recvs;       /* point-to-point messages by this rank */
} amr_state;

/* Index of cell (i, j), i and j in [-1, n], in an (n+2)^2 array. */
static inline size_t amr_idx(int n, int i, int j)
{
    return (size_t)(j + 1) * (size_t)(n + 2) + (size_t)(i + 1);
}

int amr_neighbour(const amr_state *s, int t, int side);
void amr_morton_order(amr_state *s);
/* Contiguous pieces of the Morton order with equal cost (1 per coarse
 * tile, 5 per refined tile: B^2 coarse + 4 B^2 fine cells). */
void amr_balance(const amr_state *s, int *owner);
/* Marks tiles to refine: those whose solution stands out from the
 * background, plus a one-tile buffer (8-neighbourhood) around them. */
void amr_dilate(const amr_state *s, const unsigned char *tagged, unsigned char *refine);

#endif
