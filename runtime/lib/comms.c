/* Communicator table: for each communicator, this rank's rank, the group size
 * and the MPI_COMM_WORLD rank of every peer.  Built once when the
 * communicator is created (or first seen), so a send never translates ranks. */
#include <stdlib.h>

#include "base.h"
#include "comms.h"

typedef struct {
    uintptr_t key; /* 0: empty slot */
    int rank, size, inter, outdeg;
    int *world; /* peer -> world rank; NULL when the mapping is the identity */
    int number; /* the trace's number for it (sw_comm_view) */
} sw_comm;

static sw_table comms = {sw_table_none, 0, 0};

static sw_comm *slot_for(uintptr_t key)
{
    return sw_slot(&comms, sizeof(sw_comm), sw_find(&comms, sizeof(sw_comm), sw_handle_hash, key));
}

static int grow(void) { return sw_table_grow(&comms, sizeof(sw_comm), sw_handle_hash, 64, sw_job.cfg.max_comms); }

static void fill(sw_comm *e, MPI_Comm comm)
{
    MPI_Group g;
    e->outdeg = -1;
    sw_pmpi.Comm_test_inter(comm, &e->inter);
    sw_pmpi.Comm_rank(comm, &e->rank);
    if (e->inter) {
        sw_pmpi.Comm_remote_size(comm, &e->size);
        sw_pmpi.Comm_remote_group(comm, &g);
    } else {
        sw_pmpi.Comm_size(comm, &e->size);
        sw_pmpi.Comm_group(comm, &g);
    }
    int *local = malloc(sizeof(int) * (size_t)e->size * 2);
    e->world = NULL;
    if (local) {
        int identity = 1, *world = local + e->size;
        for (int i = 0; i < e->size; i++)
            local[i] = i;
        sw_pmpi.Group_translate_ranks(g, e->size, local, sw_job.world_group, world);
        for (int i = 0; i < e->size; i++)
            identity &= world[i] == i;
        if (!identity && (e->world = malloc(sizeof(int) * (size_t)e->size)))
            memcpy(e->world, world, sizeof(int) * (size_t)e->size);
        if (!identity && !e->world)
            sw_set_partial();
        free(local);
    } else {
        sw_set_partial();
    }
    sw_pmpi.Group_free(&g);
}

/* The entry of comm, created if missing; NULL when the table is full. */
static sw_comm *lookup(MPI_Comm comm, int refresh)
{
    uintptr_t key = SW_KEY(comm);
    if ((comms.used + 1) * 2 > comms.mask + 1 && !grow() && sw_table_empty(&comms))
        return NULL;
    sw_comm *e = slot_for(key);
    if (e->key && !refresh)
        return e;
    if (!e->key) {
        if ((comms.used + 1) * 2 > comms.mask + 1 || comms.used >= sw_job.cfg.max_comms) {
            sw_set_partial();
            return NULL;
        }
        comms.used++;
    } else {
        free(e->world);
    }
    e->key = key;
    e->number = 0;
    fill(e, comm);
    return e;
}

int sw_world_rank(MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = lookup(comm, 0);
    int w = !e || rank < 0 || rank >= e->size ? -1 : e->world ? e->world[rank] : rank;
    sw_mt_unlock(&sw_job.lock);
    return w;
}

int sw_comm_rank(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return sw_job.rank;
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = lookup(comm, 0);
    int r = e ? e->rank : -1;
    sw_mt_unlock(&sw_job.lock);
    return r;
}

int sw_comm_size(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return sw_job.size;
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = lookup(comm, 0);
    int n = e ? e->size : 0;
    sw_mt_unlock(&sw_job.lock);
    return n;
}

int sw_comm_alone(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
        return comm == MPI_COMM_SELF || sw_job.size == 1;
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = lookup(comm, 0);
    int alone = e && !e->inter && e->size == 1;
    sw_mt_unlock(&sw_job.lock);
    return alone;
}

/* Blocks a neighbourhood collective sends: 2 x ndims on a Cartesian
 * topology, the out-degree of a graph.  Asked once per communicator. */
int sw_outdegree(MPI_Comm comm)
{
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = lookup(comm, 0);
    if (e && e->outdeg < 0) {
        int kind = MPI_UNDEFINED, n = 0, in = 0, weighted = 0;
        sw_pmpi.Topo_test(comm, &kind);
        if (kind == MPI_CART && sw_pmpi.Cartdim_get(comm, &n) == MPI_SUCCESS)
            n *= 2;
        else if (kind == MPI_GRAPH)
            sw_pmpi.Graph_neighbors_count(comm, e->rank, &n);
        else if (kind == MPI_DIST_GRAPH)
            sw_pmpi.Dist_graph_neighbors_count(comm, &in, &n, &weighted);
        e->outdeg = n;
    }
    int d = e ? e->outdeg : 0;
    sw_mt_unlock(&sw_job.lock);
    return d;
}

void sw_comm_created(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return;
    sw_mt_lock(&sw_job.lock);
    lookup(comm, 1); /* a handle may be reused after MPI_Comm_free: rebuild */
    sw_mt_unlock(&sw_job.lock);
}

void sw_comm_freed(MPI_Comm comm)
{
    uintptr_t key = SW_KEY(comm);
    sw_mt_lock(&sw_job.lock);
    sw_comm *e = slot_for(key);
    if (e->key == key) {
        free(e->world);
        sw_erase(&comms, sizeof *e, sw_handle_hash, (unsigned)(e - (sw_comm *)comms.slots));
        comms.used--;
    }
    sw_mt_unlock(&sw_job.lock);
}

int sw_comm_view_of(MPI_Comm comm, sw_comm_view *view)
{
    sw_comm *e = lookup(comm, 0);
    if (!e)
        return 0;
    *view = (sw_comm_view){e->size, e->world, &e->number};
    return 1;
}
