/* collbytes.c: message sizes of collectives, rules in docs/runtime.md. */
#ifndef SW_COLLBYTES_H
#define SW_COLLBYTES_H

#include <mpi.h>
#include <stdint.h>

/* A count array of either form: int[] (MPI_Gatherv) or MPI_Count[] (the
 * MPI-4 large-count MPI_Gatherv_c).  The spec's byte rules name the helpers
 * below once; SW_COUNTS picks the element type from the argument, so the
 * generated _c wrapper reuses the rule unchanged. */
typedef struct {
    const void *p;
    int wide; /* elements are MPI_Count */
} sw_counts;
#define SW_COUNTS(a) ((sw_counts){(a), _Generic((a), const MPI_Count * : 1, MPI_Count * : 1, default : 0)})
static inline MPI_Count sw_count_at(sw_counts c, int i)
{
    return c.wide ? ((const MPI_Count *)c.p)[i] : ((const int *)c.p)[i];
}

uint64_t sw_gather_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype,
                         int root, MPI_Comm comm);
uint64_t sw_gatherv_counts(const void *sbuf, MPI_Count scount, MPI_Datatype stype, sw_counts rcounts,
                           MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_scatter_bytes(MPI_Count scount, MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                          int root, MPI_Comm comm);
uint64_t sw_scatterv_counts(sw_counts scounts, MPI_Datatype stype, const void *rbuf, MPI_Count rcount,
                            MPI_Datatype rtype, int root, MPI_Comm comm);
uint64_t sw_inplace_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype);
uint64_t sw_allgatherv_counts(const void *sbuf, MPI_Count scount, MPI_Datatype stype, sw_counts rcounts,
                              MPI_Datatype rtype, MPI_Comm comm);
uint64_t sw_alltoall_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype,
                           MPI_Comm comm);
uint64_t sw_alltoallv_counts(const void *sbuf, sw_counts scounts, MPI_Datatype stype, sw_counts rcounts,
                             MPI_Datatype rtype, MPI_Comm comm);
uint64_t sw_alltoallw_counts(const void *sbuf, sw_counts scounts, const MPI_Datatype stypes[], sw_counts rcounts,
                             const MPI_Datatype rtypes[], MPI_Comm comm);
uint64_t sw_sum_counts(sw_counts counts, MPI_Datatype dt, int n);
uint64_t sw_sumw_counts(sw_counts counts, const MPI_Datatype types[], int n);

/* The names the spec's byte rules use. */
#define sw_gatherv_bytes(sb, sc, st, rc, rt, root, comm)  sw_gatherv_counts(sb, sc, st, SW_COUNTS(rc), rt, root, comm)
#define sw_scatterv_bytes(sc, st, rb, rc, rt, root, comm) sw_scatterv_counts(SW_COUNTS(sc), st, rb, rc, rt, root, comm)
#define sw_allgatherv_bytes(sb, sc, st, rc, rt, comm)     sw_allgatherv_counts(sb, sc, st, SW_COUNTS(rc), rt, comm)
#define sw_alltoallv_bytes(sb, sc, st, rc, rt, comm)      sw_alltoallv_counts(sb, SW_COUNTS(sc), st, SW_COUNTS(rc), rt, comm)
#define sw_alltoallw_bytes(sb, sc, sts, rc, rts, comm) \
    sw_alltoallw_counts(sb, SW_COUNTS(sc), sts, SW_COUNTS(rc), rts, comm)
#define sw_reduce_scatter_bytes(rc, dt, comm) sw_sum_counts(SW_COUNTS(rc), dt, sw_comm_size(comm))
#define sw_sum_bytes(c, dt, n)                sw_sum_counts(SW_COUNTS(c), dt, n)
#define sw_sumw_bytes(c, types, n)            sw_sumw_counts(SW_COUNTS(c), types, n)
#endif
