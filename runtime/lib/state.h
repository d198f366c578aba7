/* Per-thread recording state and the few globals the per-call path reads.
 * Shared by every module; the inline per-call path itself is in hot.h. */
#ifndef SW_STATE_H
#define SW_STATE_H

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "functions.h"

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of objects in libmpi.  Weak
 * references let the library load into processes that have no MPI at all
 * (mpirun, orted, shells); they are only dereferenced after MPI_Init. */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_request_null
#endif
#include "scalewise/format.h"

#define SW_UNLIKELY(x) __builtin_expect(!!(x), 0)
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

typedef struct {
    uintptr_t ra; /* return address of the call; 0 marks an empty slot */
    uint32_t fn, unused;
    uint64_t calls, ticks, bytes;
} sw_site;

typedef struct {
    sw_site *slots; /* never NULL: an empty one-slot table until the first call (sites.c) */
    uint32_t mask, used;
} sw_sites;

typedef struct sw_thread {
    int depth;          /* 1 while inside a recorded MPI call: nested calls are not counted */
    uint64_t mpi_ticks; /* time inside MPI, when calls cannot overlap (not MPI_THREAD_MULTIPLE) */
    sw_fnstat *stats;   /* SW_NFN entries */
    sw_peers peers;
    uintptr_t dt_key[SW_DTCACHE]; /* small datatype -> size cache, see sw_type_size() */
    uint64_t dt_size[SW_DTCACHE];
    unsigned dt_epoch[SW_DTCACHE];
    sw_sites sites;      /* call sites (sites.h) */
    uint64_t call_bytes; /* bytes credited to the call in progress, for its site */
    struct sw_thread *next;
} sw_thread;

extern __thread sw_thread *sw_self __attribute__((tls_model("initial-exec")));
extern volatile int sw_on;        /* recording: after MPI_Init, before MPI_Finalize, not paused */
extern int sw_mt;                 /* MPI_THREAD_MULTIPLE was provided */
extern volatile unsigned sw_type_epoch; /* bumped by MPI_Type_free: invalidates size caches */

/* Handles are pointers (Open MPI) or ints (MPICH): compare them as integers. */
#define SW_KEY(h) sw_key(&(h), sizeof(h))
static inline uintptr_t sw_key(const void *h, size_t n)
{
    uintptr_t k = 0;
    memcpy(&k, h, n < sizeof k ? n : sizeof k);
    return k;
}

#endif
