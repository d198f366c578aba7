/* scalewise job log: on-disk constants.  docs/log-format.md is the normative
 * description of every byte; this header and src/scalewise/logfile/layout.py
 * mirror it, and a test keeps the three in step. */
#ifndef SCALEWISE_FORMAT_H
#define SCALEWISE_FORMAT_H

#define SW_FORMAT_MAJOR 1
#define SW_FORMAT_MINOR 4

/* First 8 bytes of every log.  The high byte and the CR LF catch files that
 * went through a text-mode transfer, as in PNG. */
#define SW_MAGIC "\x89SWLOG\r\n"
#define SW_MAGIC_LEN 8
/* Written in the writer's byte order; the reader derives the order from it. */
#define SW_BYTE_ORDER_MARK 0x0A0B0C0Du

#define SW_HEADER_SIZE 48
#define SW_SECTION_ENTRY_SIZE 32
#define SW_RANK_INDEX_ENTRY_SIZE 24
#define SW_LIFE_VALUES 4 /* rank lifecycle entry: u32 rank, u32 reserved, then these u64 */
#define SW_RANK_LIFECYCLE_ENTRY_SIZE 40
#define SW_SETUP_VALUES 15 /* rank setup entry: u32 rank, u32 flags, then these u64 */
#define SW_RANK_SETUP_ENTRY_SIZE 128
#define SW_PROFILER_VALUES 3 /* profiler entry: u32 rank, u32 reserved, then these u64 */
#define SW_PROFILER_ENTRY_SIZE 32

/* Header flags */
#define SW_LOG_PARTIAL 0x1u /* some rank hit a memory cap, or not every rank is present */
#define SW_LOG_ABORTED 0x2u /* written by MPI_Abort: only the aborting rank is present */

/* Section ids */
#define SW_SEC_META 1      /* zlib: UTF-8 JSON object, job metadata */
#define SW_SEC_FUNCTIONS 2 /* zlib: function table, "name\0class\0" per function id */
#define SW_SEC_RANK_INDEX 3 /* raw: one 24-byte entry per rank block */
#define SW_SEC_RANKS 4     /* raw: concatenated rank blocks, each zlib-compressed */
#define SW_SEC_RANK_LIFECYCLE 5 /* raw, since 1.1: per rank block, what MPI itself cost the rank */
#define SW_SEC_CALL_SITES 6 /* zlib, since 1.1, optional: per rank block, its call sites */
#define SW_SEC_TIMELINE 7   /* zlib, since 1.2: per rank block, MPI time in time bins and per phase */
#define SW_MAX_PATH 4096    /* object paths in call-site records */
#define SW_SEC_MPIT 8       /* zlib, since 1.2: MPI_T status, cvars in force (rank 0), pvars per rank block */
#define SW_SEC_RANK_SETUP 9 /* raw, since 1.3: per rank block, cores, ranks per node, CPU time, load */
#define SW_SEC_PROFILER 10  /* raw, since 1.4: per rank block, the profiler's own time */

/* Rank setup entry flags */
#define SW_SETUP_NODE 0x1u      /* ranks_on_node and node_cpus were measured (not under MPI_Abort) */
#define SW_SETUP_PROC_STAT 0x2u /* the node_* CPU counters were read from /proc/stat */

/* MPI_T section: status (why there are no values), flags, limits */
#define SW_MPIT_READ 0        /* MPI_T initialised: the variables below were read */
#define SW_MPIT_OFF 1         /* SCALEWISE_MPIT=0 */
#define SW_MPIT_UNAVAILABLE 2 /* the library has no MPI_T, or MPI_T_init_thread failed */
#define SW_MPIT_PVARS_CAPPED 0x1u /* more pvars than SCALEWISE_MPIT_MAX_PVARS, or one with too many values */
#define SW_MPIT_CVARS_CAPPED 0x2u /* more cvars than SCALEWISE_MPIT_MAX_CVARS */
#define SW_MPIT_U64 0  /* pvar value kind: unsigned 64-bit integer */
#define SW_MPIT_F64 1  /* pvar value kind: IEEE 754 double */
#define SW_MPIT_BIND_NONE 0  /* pvar bound to no object */
#define SW_MPIT_BIND_WORLD 1 /* pvar bound to a communicator, read on MPI_COMM_WORLD */
#define SW_MPIT_MAX_NAME 255
#define SW_MPIT_MAX_DESC 1023
#define SW_MPIT_MAX_VALUE 1023 /* a cvar's value as text */
#define SW_MPIT_MAX_VALUES 4096 /* elements of one pvar (per-peer variables have one per rank) */
/* pvar classes, in the MPI standard's order (not the library's numbers) */
#define SW_PVAR_STATE 0
#define SW_PVAR_LEVEL 1
#define SW_PVAR_SIZE 2
#define SW_PVAR_PERCENTAGE 3
#define SW_PVAR_HIGHWATERMARK 4
#define SW_PVAR_LOWWATERMARK 5
#define SW_PVAR_COUNTER 6
#define SW_PVAR_AGGREGATE 7
#define SW_PVAR_TIMER 8
#define SW_PVAR_GENERIC 9
#define SW_MAX_PHASE_NAME 128 /* bytes of a phase name (UTF-8) */
#define SW_MAX_TIME_BINS 65536 /* time bins per rank (SCALEWISE_BINS) */
#define SW_TIMELINE_CAPPED 0x1u /* timeline flag: phases past SCALEWISE_MAX_PHASES are in "other phases" */

#define SW_SEC_COMPRESSED 0x1u /* section flag: stored bytes are one zlib stream */

/* Rank record flags */
#define SW_RANK_PARTIAL 0x1u /* a cap (peers, requests, threads) was hit on this rank */

#define SW_NBINS 48 /* bin 0: 0 bytes; bin k: [2^(k-1), 2^k); the last bin also holds larger sizes */

#endif
