/* comms.c: communicator table (ranks translated to world ranks). */
#ifndef SW_COMMS_H
#define SW_COMMS_H

#include <mpi.h>

int sw_world_rank(MPI_Comm comm, int rank);
int sw_comm_rank(MPI_Comm comm);
int sw_comm_size(MPI_Comm comm); /* remote group size for an intercommunicator */
int sw_outdegree(MPI_Comm comm);
void sw_comm_created(MPI_Comm comm);
void sw_comm_freed(MPI_Comm comm);

#endif
