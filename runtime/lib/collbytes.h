/* collbytes.c: message sizes of collectives, rules in docs/runtime.md. */
#ifndef SW_COLLBYTES_H
#define SW_COLLBYTES_H

#include <mpi.h>
#include <stdint.h>

uint64_t sw_gather_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_gatherv_bytes(const void *sbuf, int scount, MPI_Datatype stype, const int rcounts[], MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_scatter_bytes(int scount, MPI_Datatype stype, const void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_scatterv_bytes(const int scounts[], MPI_Datatype stype, const void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_inplace_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype);
uint64_t sw_allgatherv_bytes(const void *sbuf, int scount, MPI_Datatype stype, const int rcounts[], MPI_Datatype rtype, MPI_Comm comm);
uint64_t sw_alltoall_bytes(const void *sbuf, int scount, MPI_Datatype stype, int rcount, MPI_Datatype rtype, MPI_Comm comm);
uint64_t sw_alltoallv_bytes(const void *sbuf, const int scounts[], MPI_Datatype stype, const int rcounts[], MPI_Datatype rtype, MPI_Comm comm);
uint64_t sw_alltoallw_bytes(const void *sbuf, const int scounts[], const MPI_Datatype stypes[], const int rcounts[], const MPI_Datatype rtypes[], MPI_Comm comm);
uint64_t sw_reduce_scatter_bytes(const int rcounts[], MPI_Datatype dt, MPI_Comm comm);
uint64_t sw_sum_bytes(const int counts[], MPI_Datatype dt, int n);
uint64_t sw_sumw_bytes(const int counts[], const MPI_Datatype types[], int n);
#endif
