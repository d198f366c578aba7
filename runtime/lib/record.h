/* The hot path: what every generated wrapper calls.  Everything here is
 * inline and lock-free for single-threaded MPI; shared tables take a lock
 * only under MPI_THREAD_MULTIPLE (sw_mt). */
#ifndef SW_RECORD_H
#define SW_RECORD_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "functions.h"

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of objects in libmpi.  Weak
 * references let the library load into processes that have no MPI at all
 * (mpirun, orted, shells); they are only dereferenced after MPI_Init. */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_request_null
#endif
#include "scalewise/format.h"

#define SW_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The per-call path: always inlined into each wrapper. */
#define SW_HOT static inline __attribute__((always_inline))
#define SW_DTCACHE 8

typedef struct {
    uint64_t calls, ticks, tmin, tmax, bytes;
    uint64_t hist[SW_NBINS];
} sw_fnstat;

typedef struct {
    uint32_t peer1; /* world rank + 1; 0 marks an empty slot */
    uint32_t unused;
    uint64_t messages, bytes;
} sw_peer;

typedef struct {
    sw_peer *slots;
    uint32_t mask, used;
} sw_peers;

typedef struct sw_thread {
    int depth;          /* 1 while inside a recorded MPI call: nested calls are not counted */
    uint64_t mpi_ticks; /* time inside MPI, when calls cannot overlap (not MPI_THREAD_MULTIPLE) */
    sw_fnstat *stats;   /* SW_NFN entries */
    sw_peers peers;
    uintptr_t dt_key[SW_DTCACHE]; /* small datatype -> size cache, see sw_type_size() */
    uint64_t dt_size[SW_DTCACHE];
    unsigned dt_epoch[SW_DTCACHE];
    struct sw_thread *next;
} sw_thread;

extern __thread sw_thread *sw_self __attribute__((tls_model("initial-exec")));
extern volatile int sw_on;        /* recording: after MPI_Init, before MPI_Finalize, not paused */
extern int sw_mt;                 /* MPI_THREAD_MULTIPLE was provided */
extern volatile unsigned sw_type_epoch; /* bumped by MPI_Type_free: invalidates size caches */

/* core.c */
void *sw_resolve(const char *symbol);
sw_thread *sw_thread_attach(void);
void sw_mt_enter(void);
void sw_mt_leave(void);
void sw_started(int fn, uint64_t t0, uint64_t t1, int provided);
void sw_finishing(int fn);
void sw_aborting(int fn, int errorcode);
void sw_pcontrol(int fn, int level);
void sw_set_partial(void);
uint64_t sw_type_size_slow(sw_thread *T, unsigned slot, uintptr_t key, MPI_Datatype dt);
uint64_t sw_status_bytes_slow(const MPI_Status *st);
void sw_type_freed(void);

/* requests.c */
#define SW_REQ_RECV 0x1u       /* bytes are known only from the completion status */
#define SW_REQ_PERSISTENT 0x2u /* survives completion; MPI_Start re-arms it */
#define SW_REQ_SEND 0x4u       /* persistent send: each start is a message to peer */
#define SW_REQ_ACTIVE 0x8u
void sw_req_track(MPI_Request r, int fn, uint64_t bytes, int peer, unsigned flags);
void sw_req_start(sw_thread *T, int fn, MPI_Request r);
typedef struct {
    uint64_t bytes;
    int32_t peer;
    uint16_t fn, flags; /* flags 0: not a tracked operation */
} sw_pending;           /* a request's entry while its Wait/Test call runs */
void sw_req_claim(MPI_Request r, sw_pending *p);
void sw_req_settle(sw_thread *T, int fn, MPI_Request r, const sw_pending *p, int completed, MPI_Status *st);

/* comms.c */
int sw_world_rank(MPI_Comm comm, int rank);
int sw_comm_rank(MPI_Comm comm);
int sw_comm_size(MPI_Comm comm); /* remote group size for an intercommunicator */
int sw_outdegree(MPI_Comm comm);
void sw_comm_created(MPI_Comm comm);
void sw_comm_freed(MPI_Comm comm);

/* p2p.c */
void sw_p2p_add(sw_thread *T, int world, uint64_t bytes);

/* collbytes.c: message sizes of collectives, rules in docs/runtime.md */
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

/* Handles are pointers (Open MPI) or ints (MPICH): compare them as integers. */
#define SW_KEY(h) sw_key(&(h), sizeof(h))
static inline uintptr_t sw_key(const void *h, size_t n)
{
    uintptr_t k = 0;
    memcpy(&k, h, n < sizeof k ? n : sizeof k);
    return k;
}

SW_HOT uint64_t sw_ticks(void) { return __rdtsc(); }

SW_HOT sw_thread *sw_enter(void)
{
    if (SW_UNLIKELY(!sw_on))
        return NULL;
    sw_thread *T = sw_self;
    if (SW_UNLIKELY(!T) && !(T = sw_thread_attach()))
        return NULL;
    if (T->depth)
        return NULL;
    T->depth = 1;
    if (SW_UNLIKELY(sw_mt))
        sw_mt_enter();
    return T;
}

SW_HOT void sw_leave(sw_thread *T, int fn, uint64_t t0, uint64_t t1)
{
    sw_fnstat *s = &T->stats[fn];
    uint64_t dt = t1 - t0;
    s->calls++;
    s->ticks += dt;
    if (dt < s->tmin)
        s->tmin = dt;
    if (dt > s->tmax)
        s->tmax = dt;
    if (SW_UNLIKELY(sw_mt))
        sw_mt_leave();
    else
        T->mpi_ticks += dt;
    T->depth = 0;
}

SW_HOT unsigned sw_bin(uint64_t n)
{
    if (!n)
        return 0;
    unsigned b = 64u - (unsigned)__builtin_clzll(n);
    return b < SW_NBINS ? b : SW_NBINS - 1;
}

/* One message of n bytes for function fn: its byte total and its histogram. */
SW_HOT void sw_credit(sw_thread *T, int fn, uint64_t n)
{
    T->stats[fn].bytes += n;
    T->stats[fn].hist[sw_bin(n)]++;
}

SW_HOT uint64_t sw_type_size(MPI_Datatype dt)
{
    sw_thread *T = sw_self;
    uintptr_t k = SW_KEY(dt);
    unsigned i = (unsigned)((k >> 3) ^ (k >> 11)) & (SW_DTCACHE - 1);
    if (T->dt_key[i] == k && T->dt_epoch[i] == sw_type_epoch)
        return T->dt_size[i];
    return sw_type_size_slow(T, i, k, dt);
}

SW_HOT uint64_t sw_bytes(int count, MPI_Datatype dt)
{
    return count > 0 ? (uint64_t)count * sw_type_size(dt) : 0;
}

/* Bytes a completed receive or read delivered.  Both MPIs keep that count, in
 * bytes, in public fields of MPI_Status; reading it saves a library call per
 * receive (MPI_Get_elements_x costs 20-50 ns).  The ground-truth tests check
 * it against known sizes under both MPIs. */
SW_HOT uint64_t sw_status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI)
    return (uint64_t)st->_ucount;
#elif defined(MPICH)
    return ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32) | (uint32_t)st->count_lo;
#else
    return sw_status_bytes_slow(st);
#endif
}

static inline void sw_p2p_send(sw_thread *T, int dest, MPI_Comm comm, uint64_t bytes)
{
    if (dest < 0) /* MPI_PROC_NULL: no message */
        return;
    int w = comm == MPI_COMM_WORLD ? dest : sw_world_rank(comm, dest);
    if (w >= 0)
        sw_p2p_add(T, w, bytes);
}

/* Wait/Test families: the call overwrites completed handles with
 * MPI_REQUEST_NULL, so keep a copy, and the requests' table entries
 * (sw_req_claim); give the call real statuses so received sizes are known
 * even when the caller passed MPI_STATUSES_IGNORE.  If memory for the copies
 * cannot be had, sw_rqs is NULL and nothing is claimed or credited. */
#define SW_STACK_REQS 32
static inline MPI_Request *sw_keep_requests(int n, const MPI_Request *reqs, MPI_Request *stack,
                                            sw_pending *pstack, sw_pending **pd)
{
    MPI_Request *copy = stack;
    *pd = pstack;
    if (n > SW_STACK_REQS) {
        /* One block: the claimed entries first (8-byte aligned), then the handles. */
        *pd = malloc((sizeof(sw_pending) + sizeof(MPI_Request)) * (size_t)n);
        copy = *pd ? (MPI_Request *)(*pd + n) : NULL;
    }
    if (copy && n > 0)
        memcpy(copy, reqs, sizeof(MPI_Request) * (size_t)n);
    return copy;
}
#define SW_KEEP_REQUESTS(n, reqs)                                        \
    MPI_Request sw_rq_stack[SW_STACK_REQS];                              \
    sw_pending sw_pd_stack[SW_STACK_REQS], *sw_pd;                       \
    MPI_Request *sw_rqs = sw_keep_requests((n), (reqs), sw_rq_stack, sw_pd_stack, &sw_pd); \
    MPI_Status *sw_sts_heap = NULL
#define SW_KEEP_STATUSES(n, sts)                                         \
    MPI_Status sw_st_stack[SW_STACK_REQS];                               \
    if ((sts) == MPI_STATUSES_IGNORE) {                                  \
        if ((n) <= SW_STACK_REQS)                                        \
            (sts) = sw_st_stack;                                         \
        else if ((sw_sts_heap = malloc(sizeof(MPI_Status) * (size_t)(n)))) \
            (sts) = sw_sts_heap;                                         \
        else {                                                           \
            if (sw_rqs != sw_rq_stack)                                   \
                free(sw_pd);                                             \
            sw_rqs = NULL;                                               \
            sw_pd = NULL;                                                \
        }                                                                \
    }
#define SW_CLAIM_REQUESTS(n)                                             \
    if (sw_rqs)                                                          \
        for (int sw_i = 0; sw_i < (n); sw_i++)                           \
            sw_req_claim(sw_rqs[sw_i], &sw_pd[sw_i])
#define SW_RELEASE_REQUESTS()                                            \
    do {                                                                 \
        if (sw_rqs && sw_rqs != sw_rq_stack)                             \
            free(sw_pd);                                                 \
        free(sw_sts_heap);                                               \
    } while (0)

#endif
