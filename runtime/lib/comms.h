/* comms.c: the communicator table (ranks translated to world ranks). */
#ifndef SW_COMMS_H
#define SW_COMMS_H

#include <mpi.h>

int sw_world_rank(MPI_Comm comm, int rank);
int sw_comm_rank(MPI_Comm comm);
int sw_comm_size(MPI_Comm comm); /* remote group size for an intercommunicator */
int sw_outdegree(MPI_Comm comm);
/* An intracommunicator of one rank: its collectives move nothing. */
int sw_comm_alone(MPI_Comm comm);
void sw_comm_created(MPI_Comm comm);
void sw_comm_freed(MPI_Comm comm);

/* A communicator's entry as the trace reads it (no MPI_THREAD_MULTIPLE):
 * its size, its members' world ranks (NULL: the identity), and a number
 * the trace gives it, 0 until then, dropped with the entry when the
 * communicator is freed.  Valid until the next table change. */
typedef struct {
    int size;
    const int *world;
    int *number;
} sw_comm_view;
/* 0 when the table is full. */
int sw_comm_view_of(MPI_Comm comm, sw_comm_view *view);

#endif
