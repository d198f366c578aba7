/* The bottom of the runtime: what every module may read and call, and which
 * calls no module back.  The per-thread record and the thread list, the
 * process-wide job state and configuration, the real MPI functions the
 * library itself calls, the partial flag and the clock.  Depends only on
 * table.h (the thread record holds two tables). */
#ifndef SW_BASE_H
#define SW_BASE_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "functions.h"
#include "table.h"

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of objects in libmpi.  Weak
 * references let the library load into processes that have no MPI at all
 * (mpirun, orted, shells); they are only dereferenced after MPI_Init. */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_null
#pragma weak ompi_mpi_op_no_op
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_request_null
#pragma weak ompi_mpi_op_bor
#pragma weak ompi_mpi_info_null
#endif
#include "scalewise/format.h"

#define SW_UNLIKELY(x)   __builtin_expect(!!(x), 0)
#define SW_LIKELY(x)     __builtin_expect(!!(x), 1)
/* Inlined into each wrapper: the per-call path. */
#define SW_HOT           static inline __attribute__((always_inline))
#define SW_DTCACHE       8
#define SW_FORTRAN_SITES 64

/* Cache-line aligned: a call's counters (calls to bytes) share one line. */
typedef struct __attribute__((aligned(64))) {
    uint64_t calls, ticks, tmin, tmax, bytes;
    uint64_t hist[SW_NBINS];
} sw_fnstat;

/* One datatype size cache entry: what one lookup reads lies in one line. */
typedef struct {
    uintptr_t key;
    uint32_t size; /* MPI_Type_size's int */
    uint32_t epoch;
} sw_dtslot;

/* One thread that called MPI.  Its statistics need no lock: only it writes
 * them while the job runs; the log writer reads them after the window. */
typedef struct __attribute__((aligned(64))) sw_thread {
    /* First line: what every recorded call reads and writes (hot.h). */
    int depth;                /* 1 while inside a recorded MPI call: nested calls are not counted */
    unsigned own_left;        /* recorded calls until the next one sampled for own time (owntime.h) */
    uint64_t mpi_ticks;       /* time inside MPI, when calls cannot overlap (not MPI_THREAD_MULTIPLE) */
    sw_fnstat *stats;         /* SW_NFN entries */
    uint64_t call_bytes;      /* bytes credited to the call in progress, for its site */
    sw_table sites;           /* sw_site entries (sites.h) */
    sw_table peers;           /* sw_peer entries (p2p.h) */
    sw_dtslot dt[SW_DTCACHE]; /* small datatype -> size cache, see sw_type_size() */
    /* Fortran call sites (sites.c): for a binding's return address, where on
     * the stack the user's return address lies, from sw_site_user's frame. */
    uintptr_t fortran_ra[SW_FORTRAN_SITES];
    intptr_t fortran_off[SW_FORTRAN_SITES];
    /* The profiler's own time, sampled (owntime.h): the sampled call's
     * position in its block, its entry clock (0: not read), the generator
     * (0 until the thread's first call) and the estimate so far. */
    unsigned own_pos;
    uint64_t own_mark, own_rng, own_ticks;
    struct sw_thread *next;
} sw_thread;
_Static_assert(offsetof(sw_thread, dt) == 64, "the per-call fields fill the thread's first cache line");

extern __thread sw_thread *sw_self __attribute__((tls_model("initial-exec")));
extern volatile int sw_on; /* recording: after MPI_Init, before MPI_Finalize, not paused */
extern int sw_mt;          /* MPI_THREAD_MULTIPLE was provided */
/* SCALEWISE_HOT_LOCAL: record the local calls made millions of times
 * (MPI_Comm_rank, MPI_Wtime, ...: spec key `hot`); off, they are passed on. */
extern int sw_hot_local;

/* One call of dt ticks in a function's statistics. */
SW_HOT void sw_stat_add(sw_fnstat *s, uint64_t dt)
{
    s->calls++;
    s->ticks += dt;
    /* Conditional moves, not branches: the path after a long call stays straight. */
    s->tmin = dt < s->tmin ? dt : s->tmin;
    s->tmax = dt > s->tmax ? dt : s->tmax;
}

/* The shared tables' locks are taken only under MPI_THREAD_MULTIPLE. */
static inline void sw_mt_lock(pthread_mutex_t *m)
{
    if (sw_mt)
        pthread_mutex_lock(m);
}
static inline void sw_mt_unlock(pthread_mutex_t *m)
{
    if (sw_mt)
        pthread_mutex_unlock(m);
}

/* Handles are pointers (Open MPI) or ints (MPICH): compare them as integers. */
#define SW_KEY(h) sw_key(&(h), sizeof(h))
static inline uintptr_t sw_key(const void *h, size_t n)
{
    uintptr_t k = 0;
    memcpy(&k, h, n < sizeof k ? n : sizeof k);
    return k;
}

/* Every real MPI function the library itself calls, resolved once at
 * MPI_Init with dlsym, never through our own wrappers, so they are not
 * counted.  The MPI_T functions are optional: a library without them
 * leaves sw_pmpi.has_mpit 0 and the MPI_T section says so (mpit.c). */
/* clang-format off */
#define SW_PMPI_LIST(X)                                                                                     \
    X(Comm_rank) X(Comm_size) X(Comm_dup) X(Comm_free) X(Comm_group) X(Comm_remote_group)                   \
    X(Comm_remote_size) X(Comm_test_inter) X(Group_translate_ranks) X(Group_size) X(Group_free)             \
    X(Topo_test) X(Cartdim_get) X(Graph_neighbors_count) X(Dist_graph_neighbors_count)                      \
    X(Type_size) X(Get_elements_x) X(Get_library_version) X(Query_thread) X(Op_commutative)                 \
    X(Gather) X(Gatherv) X(Scatterv) X(Bcast) X(Barrier) X(Allreduce) X(Send) X(Recv)                     \
    X(Isend) X(Irecv) X(Waitall) X(Comm_split_type)
#define SW_PMPI_T_LIST(X)                                                                                   \
    X(T_init_thread) X(T_finalize) X(T_pvar_get_num) X(T_pvar_get_info) X(T_pvar_session_create)            \
    X(T_pvar_session_free) X(T_pvar_handle_alloc) X(T_pvar_handle_free) X(T_pvar_start) X(T_pvar_read)      \
    X(T_cvar_get_num) X(T_cvar_get_info) X(T_cvar_handle_alloc) X(T_cvar_handle_free) X(T_cvar_read)        \
    X(T_enum_get_info) X(T_enum_get_item)
/* clang-format on */

#define SW_PMPI_FIELD(name) __typeof__(&PMPI_##name) name;
typedef struct {
    SW_PMPI_LIST(SW_PMPI_FIELD)
    SW_PMPI_T_LIST(SW_PMPI_FIELD)
    int has_mpit; /* every MPI_T function above was found */
} sw_pmpi_table;
#undef SW_PMPI_FIELD
extern sw_pmpi_table sw_pmpi;

/* SCALEWISE_MPIT=all: let MPI_T register every installed component (mpit.c). */
#define SW_MPIT_ALL 2

typedef struct {
    int disabled;       /* SCALEWISE_DISABLE */
    int quiet;          /* SCALEWISE_QUIET */
    int sites;          /* SCALEWISE_SITES: record call sites (on unless 0) */
    int mpit;           /* SCALEWISE_MPIT: read MPI_T variables (on unless 0; SW_MPIT_ALL: "all", mpit.c) */
    unsigned max_peers; /* SCALEWISE_MAX_PEERS, per thread */
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
    MPI_Comm comm; /* private duplicate of MPI_COMM_WORLD for the log gather */
    MPI_Group world_group;
    uint64_t tsc0, tsc1; /* Init return, Finalize entry */
    int64_t mono0, mono1;
    int64_t real0, real1; /* CLOCK_REALTIME, ns since the epoch */
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
    /* The profiler's own time outside the per-call path (docs/runtime.md):
     * MPI_Init's entry, the set-up after PMPI_Init, the modules' start inside
     * the window, MPI_Finalize's entry; and one clock read's cost (ticks). */
    uint64_t own_init_entry, own_init_ticks, own_window_ticks, own_fin_start, own_clock_read;
    /* Open MPI's MTL components left unloaded for MPI_T (mpit.c): the log's meta says so. */
    int mpit_mtl_unloaded;
    volatile int partial;
    int abort_code;
    sw_config cfg;
    char logpath[4096];
} sw_job_state;

extern sw_job_state sw_job;

/* The real function of symbol in the MPI library; aborts with a message
 * naming it when it is missing (a library built for another MPI). */
void *sw_resolve(const char *symbol);
/* Fills sw_pmpi (at MPI_Init, before the library makes any MPI call). */
void sw_pmpi_resolve(void);
/* Reads the SCALEWISE_* variables into sw_job.cfg. */
void sw_load_config(void);
/* A cap was reached or memory refused: the rank's record is incomplete. */
void sw_set_partial(void);
/* The calling thread's record, created on its first MPI call; NULL once
 * SCALEWISE_MAX_THREADS threads have one (the rank is then partial). */
sw_thread *sw_thread_attach(void);
/* A thread refused a record: its calls are not recorded. */
int sw_thread_refused(const sw_thread *thread);

/* The clock: the CPU's time-stamp counter, converted to ns with a ratio
 * measured over the job's own window (sw_clock_calibrate, at its end). */
SW_HOT uint64_t sw_ticks(void) { return __builtin_ia32_rdtsc(); }
/* The cheapest of a few back-to-back clock reads (owntime.h, sw_own_weigh). */
uint64_t sw_clock_read_ticks(void);
int64_t sw_clock_ns(int clock_id);
void sw_clock_calibrate(void);
static inline uint64_t sw_ns(uint64_t ticks) { return (uint64_t)((double)ticks * sw_job.ns_per_tick + 0.5); }

#endif
