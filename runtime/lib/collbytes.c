/* Message size of a collective call at this rank, by role.  The rule, stated
 * once in docs/runtime.md: the data this rank contributes (its send buffer);
 * a rank that only receives (non-root of Bcast/Scatter) counts what it
 * receives; with MPI_IN_PLACE the rank's own block stays where it is and is
 * not counted (what it sends to the others is).  A collective on a one-rank
 * communicator moves nothing: the wrappers credit it 0 (sw_comm_alone). */
#include "collbytes.h"
#include "comms.h"
#include "credit.h"

/* Root of a rooted collective: the root rank of an intracommunicator, or
 * MPI_ROOT in the root group of an intercommunicator. */
static int is_root(int root, MPI_Comm comm) { return root == MPI_ROOT || (root >= 0 && root == sw_comm_rank(comm)); }

uint64_t sw_sum_counts(sw_counts counts, MPI_Datatype dt, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += sw_bytes(sw_count_at(counts, i), dt);
    return total;
}

uint64_t sw_sumw_counts(sw_counts counts, const MPI_Datatype types[], int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += sw_bytes(sw_count_at(counts, i), types[i]);
    return total;
}

uint64_t sw_inplace_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype)
{
    return sbuf == MPI_IN_PLACE ? sw_bytes(rcount, rtype) : sw_bytes(scount, stype);
}

uint64_t sw_gather_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype,
                         int root, MPI_Comm comm)
{
    if (root == MPI_PROC_NULL || root == MPI_ROOT) /* intercommunicator root group: sends nothing */
        return 0;
    (void)rcount, (void)rtype;
    return sbuf == MPI_IN_PLACE && is_root(root, comm) ? 0 : sw_bytes(scount, stype);
}

uint64_t sw_gatherv_counts(const void *sbuf, MPI_Count scount, MPI_Datatype stype, sw_counts rcounts,
                           MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (root == MPI_PROC_NULL || root == MPI_ROOT)
        return 0;
    (void)rcounts, (void)rtype;
    if (sbuf == MPI_IN_PLACE && is_root(root, comm))
        return 0;
    return sw_bytes(scount, stype);
}

uint64_t sw_scatter_bytes(MPI_Count scount, MPI_Datatype stype, const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                          int root, MPI_Comm comm)
{
    if (root == MPI_PROC_NULL)
        return 0;
    if (is_root(root, comm)) /* in place: its own block stays */
        return sw_bytes(scount, stype) * (uint64_t)(sw_comm_size(comm) - (rbuf == MPI_IN_PLACE));
    return sw_bytes(rcount, rtype);
}

uint64_t sw_scatterv_counts(sw_counts scounts, MPI_Datatype stype, const void *rbuf, MPI_Count rcount,
                            MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (root == MPI_PROC_NULL)
        return 0;
    if (is_root(root, comm)) {
        uint64_t all = sw_sum_counts(scounts, stype, sw_comm_size(comm));
        if (rbuf == MPI_IN_PLACE) /* its own block stays */
            all -= sw_bytes(sw_count_at(scounts, sw_comm_rank(comm)), stype);
        return all;
    }
    return sw_bytes(rcount, rtype);
}

uint64_t sw_allgatherv_counts(const void *sbuf, MPI_Count scount, MPI_Datatype stype, sw_counts rcounts,
                              MPI_Datatype rtype, MPI_Comm comm)
{
    return sbuf == MPI_IN_PLACE ? sw_bytes(sw_count_at(rcounts, sw_comm_rank(comm)), rtype) : sw_bytes(scount, stype);
}

uint64_t sw_alltoall_bytes(const void *sbuf, MPI_Count scount, MPI_Datatype stype, MPI_Count rcount, MPI_Datatype rtype,
                           MPI_Comm comm)
{
    if (sbuf == MPI_IN_PLACE) /* its own block stays */
        return sw_bytes(rcount, rtype) * (uint64_t)(sw_comm_size(comm) - 1);
    return sw_bytes(scount, stype) * (uint64_t)sw_comm_size(comm);
}

uint64_t sw_alltoallv_counts(const void *sbuf, sw_counts scounts, MPI_Datatype stype, sw_counts rcounts,
                             MPI_Datatype rtype, MPI_Comm comm)
{
    int n = sw_comm_size(comm);
    if (sbuf != MPI_IN_PLACE)
        return sw_sum_counts(scounts, stype, n);
    return sw_sum_counts(rcounts, rtype, n) - sw_bytes(sw_count_at(rcounts, sw_comm_rank(comm)), rtype);
}

uint64_t sw_alltoallw_counts(const void *sbuf, sw_counts scounts, const MPI_Datatype stypes[], sw_counts rcounts,
                             const MPI_Datatype rtypes[], MPI_Comm comm)
{
    int n = sw_comm_size(comm);
    if (sbuf != MPI_IN_PLACE)
        return sw_sumw_counts(scounts, stypes, n);
    int me = sw_comm_rank(comm);
    return sw_sumw_counts(rcounts, rtypes, n) - sw_bytes(sw_count_at(rcounts, me), rtypes[me]);
}
