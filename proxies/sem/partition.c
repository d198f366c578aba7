/* Hilbert-curve partition of the element grid (as HOMME partitions the
 * cubed sphere along a space-filling curve) and the shared-face lists. */
#include "sem.h"

#include <stdlib.h>

/* Classic iterative Hilbert index -> (x, y) on an n x n grid, n = 2^k. */
static void hilbert_d2xy(int n, int d, int *x, int *y)
{
    *x = *y = 0;
    for (int s = 1, t = d; s < n; s *= 2, t /= 4) {
        int rx = 1 & (t / 2);
        int ry = 1 & (t ^ rx);
        if (ry == 0) {
            if (rx == 1) {
                *x = s - 1 - *x;
                *y = s - 1 - *y;
            }
            int tmp = *x;
            *x = *y;
            *y = tmp;
        }
        *x += s * rx;
        *y += s * ry;
    }
}

int sem_neighbour(int ne, int gid, int side)
{
    int ex = gid % ne, ey = gid / ne;
    switch (side) {
    case SIDE_W: ex = (ex + ne - 1) % ne; break;
    case SIDE_E: ex = (ex + 1) % ne; break;
    case SIDE_S: ey = (ey + ne - 1) % ne; break;
    default: ey = (ey + 1) % ne; break;
    }
    return ey * ne + ex;
}

/* Each face is named after the element to its east (x-faces, even ids) or
 * north (y-faces, odd ids), so both sides derive the same id. */
static long face_id(int ne, int gid, int side)
{
    switch (side) {
    case SIDE_W: return 2L * gid;
    case SIDE_E: return 2L * sem_neighbour(ne, gid, SIDE_E);
    case SIDE_S: return 2L * gid + 1;
    default: return 2L * sem_neighbour(ne, gid, SIDE_N) + 1;
    }
}

static int by_face(const void *a, const void *b)
{
    long fa = ((const sem_face *)a)->face, fb = ((const sem_face *)b)->face;
    return (fa > fb) - (fa < fb);
}

void sem_layout_build(sem_layout *L, int ne, int rank, int nranks)
{
    int n = ne * ne;
    L->ne = ne;
    L->owner = malloc(sizeof(int) * n);
    L->local = malloc(sizeof(int) * n);
    L->gid = malloc(sizeof(int) * n);
    L->nelem = 0;
    for (int r = 0, d = 0; r < nranks; r++) {
        int end = (int)((long)(r + 1) * n / nranks);
        for (; d < end; d++) {
            int x, y;
            hilbert_d2xy(ne, d, &x, &y);
            int g = y * ne + x;
            L->owner[g] = r;
            L->local[g] = -1;
            if (r == rank) {
                L->local[g] = L->nelem;
                L->gid[L->nelem++] = g;
            }
        }
    }

    /* Count faces per peer rank, then fill and sort each peer's list. */
    int *count = calloc(nranks, sizeof(int));
    for (int e = 0; e < L->nelem; e++)
        for (int s = 0; s < 4; s++) {
            int o = L->owner[sem_neighbour(ne, L->gid[e], s)];
            if (o != rank)
                count[o]++;
        }
    L->npeers = 0;
    for (int r = 0; r < nranks; r++)
        L->npeers += count[r] > 0;
    L->peers = calloc(L->npeers ? L->npeers : 1, sizeof(sem_peer));
    int *slot = malloc(sizeof(int) * nranks);
    for (int r = 0, p = 0; r < nranks; r++) {
        slot[r] = -1;
        if (count[r] == 0)
            continue;
        slot[r] = p;
        L->peers[p].rank = r;
        L->peers[p].faces = malloc(sizeof(sem_face) * count[r]);
        p++;
    }
    for (int e = 0; e < L->nelem; e++)
        for (int s = 0; s < 4; s++) {
            int o = L->owner[sem_neighbour(ne, L->gid[e], s)];
            if (o == rank)
                continue;
            sem_peer *pr = &L->peers[slot[o]];
            pr->faces[pr->nfaces++] = (sem_face){e, s, face_id(ne, L->gid[e], s)};
        }
    for (int p = 0; p < L->npeers; p++)
        qsort(L->peers[p].faces, L->peers[p].nfaces, sizeof(sem_face), by_face);
    free(slot);
    free(count);
}

void sem_layout_free(sem_layout *L)
{
    for (int p = 0; p < L->npeers; p++)
        free(L->peers[p].faces);
    free(L->peers);
    free(L->gid);
    free(L->local);
    free(L->owner);
}
