/* sem: element decomposition of a periodic 2-D domain along a Hilbert curve
 * and the per-peer lists of shared element faces used by the halo exchange. */
#ifndef SEM_H
#define SEM_H

enum { SIDE_W, SIDE_E, SIDE_S, SIDE_N };

typedef struct {
    int elem;   /* local element index */
    int side;   /* which of its sides lies on the shared face */
    long face;  /* global face id: the order both ranks pack in */
} sem_face;

typedef struct {
    int rank;        /* peer rank */
    int nfaces;      /* shared faces; message = nfaces * n doubles each way */
    sem_face *faces; /* sorted by global face id */
} sem_peer;

typedef struct {
    int ne;            /* elements per side, a power of two */
    int nelem;         /* local element count */
    int *gid;          /* local -> global element id (ey*ne+ex), curve order */
    int *owner;        /* global element -> rank */
    int *local;        /* global element -> local index or -1 */
    int npeers;
    sem_peer *peers;   /* sorted by rank */
} sem_layout;

/* Global element id of the neighbour across `side` (periodic). */
int sem_neighbour(int ne, int gid, int side);
/* Splits the Hilbert curve through the ne*ne elements into `nranks`
 * contiguous pieces (rank r gets curve positions [r*N/P, (r+1)*N/P)). */
void sem_layout_build(sem_layout *L, int ne, int rank, int nranks);
void sem_layout_free(sem_layout *L);

#endif
