/* p2p.c: the point-to-point row of each thread, in world ranks. */
#ifndef SW_P2P_H
#define SW_P2P_H

#include "base.h"
#include "comms.h"

typedef struct {
    uintptr_t peer1; /* world rank + 1: the table key; 0 marks an empty slot */
    uint64_t messages, bytes;
} sw_peer;

void sw_p2p_add(sw_thread *thread, int world, uint64_t bytes);

/* A send of bytes to dest of comm, on the sender's row. */
static inline void sw_p2p_send(sw_thread *thread, int dest, MPI_Comm comm, uint64_t bytes)
{
    if (dest < 0) /* MPI_PROC_NULL: no message */
        return;
    int w = comm == MPI_COMM_WORLD ? dest : sw_world_rank(comm, dest);
    if (w >= 0)
        sw_p2p_add(thread, w, bytes);
}

#endif
