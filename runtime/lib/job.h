/* Process-wide profiler state shared by core.c, comms.c, requests.c and
 * logwrite.c.  The per-call path (hot.h) never touches it directly. */
#ifndef SW_JOB_H
#define SW_JOB_H

#include <pthread.h>
#include "state.h"

/* The real MPI functions the profiler itself calls: resolved once at
 * MPI_Init, never through our own wrappers, so they are not counted. */
#define SW_PMPI_LIST(X) \
    X(Comm_rank) X(Comm_size) X(Comm_dup) X(Comm_free) X(Comm_group) X(Comm_remote_group) \
    X(Comm_remote_size) X(Comm_test_inter) X(Group_translate_ranks) X(Group_size) X(Group_free) \
    X(Topo_test) X(Cartdim_get) X(Graph_neighbors_count) X(Dist_graph_neighbors_count) \
    X(Type_size) X(Get_elements_x) X(Get_library_version) X(Query_thread) \
    X(Gather) X(Gatherv) X(Bcast) X(Barrier) X(Allreduce)

#define SW_PMPI_FIELD(name) __typeof__(&PMPI_##name) name;
typedef struct { SW_PMPI_LIST(SW_PMPI_FIELD) } sw_pmpi_table;
extern sw_pmpi_table sw_pmpi;

typedef struct {
    int disabled;        /* SCALEWISE_DISABLE */
    int quiet;           /* SCALEWISE_QUIET */
    unsigned max_peers;  /* SCALEWISE_MAX_PEERS, per thread */
    unsigned max_requests;
    unsigned max_comms;
    unsigned max_threads;
    unsigned max_sites;  /* SCALEWISE_MAX_SITES, per thread */
    unsigned max_pvars;  /* SCALEWISE_MPIT_MAX_PVARS */
    unsigned max_cvars;  /* SCALEWISE_MPIT_MAX_CVARS */
    unsigned bins;       /* SCALEWISE_BINS: time bins, even; 0 off */
    unsigned max_phases; /* SCALEWISE_MAX_PHASES */
} sw_config;

typedef struct {
    int active, enabled;
    int rank, size, provided;
    MPI_Comm comm;       /* private duplicate of MPI_COMM_WORLD for the log gather */
    MPI_Group world_group;
    uint64_t tsc0, tsc1; /* Init return, Finalize entry */
    int64_t mono0, mono1;
    int64_t real0, real1;  /* CLOCK_REALTIME, ns since the epoch */
    double ns_per_tick;
    /* Taken only under MPI_THREAD_MULTIPLE, except the thread list's: */
    pthread_mutex_t lock;    /* the thread list (threads, nthreads), always; the communicator table (comms.c) */
    pthread_mutex_t mt_lock; /* the MPI time union (mt_inside, mt_since, mt_ticks) and the request table (requests.c) */
    unsigned mt_inside;
    uint64_t mt_since, mt_ticks;
    sw_thread *threads;
    unsigned nthreads;
    /* What MPI itself costs this rank (the log's rank lifecycle section):
     * resident memory before and after MPI_Init and at MPI_Finalize, and
     * the time MPI_Finalize waited for the other ranks. */
    uint64_t rss_init_start, rss_init_end, rss_finalize, finalize_ticks;
    volatile int partial;
    int abort_code;
    sw_config cfg;
    char logpath[4096];
} sw_job;

extern sw_job sw_J;

#endif
