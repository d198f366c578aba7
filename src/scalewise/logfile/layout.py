"""Byte layout of the scalewise job log, format 1.x (docs/log-format.md).

Mirrors runtime/include/scalewise/format.h; tests/logfile/test_layout.py
keeps the two in step.
"""

from __future__ import annotations

MAGIC = b"\x89SWLOG\r\n"
BYTE_ORDER_MARK = 0x0A0B0C0D
FORMAT_MAJOR = 1
FORMAT_MINOR = 4

HEADER_SIZE = 48
# magic, bom, major, minor, flags, nranks, nblocks, nsections, file_size, header_crc, reserved
HEADER = "8sIHHIIIIQII"
SECTION_ENTRY_SIZE = 32
SECTION_ENTRY = "IHHQQII"  # id, version, flags, offset, size, crc32, reserved
RANK_INDEX_ENTRY_SIZE = 24
RANK_INDEX_ENTRY = "IIQII"  # rank, flags, offset, size, raw_size
# Since 1.1: what MPI itself cost each rank (one entry per rank block).
RANK_LIFECYCLE_ENTRY_SIZE = 40
RANK_LIFECYCLE_ENTRY = "IIQQQQ"  # rank, reserved, rss_init_start, rss_init_end, rss_finalize, finalize_ns
LIFE_VALUES = 4
# Since 1.3: each rank's set-up and how busy its node was (one entry per rank block).
SETUP_VALUES = 15
RANK_SETUP_ENTRY_SIZE = 128
RANK_SETUP_ENTRY = "II" + "Q" * SETUP_VALUES  # rank, flags, then the values (docs/log-format.md)
SETUP_NODE = 0x1  # ranks_on_node and node_cpus were measured
SETUP_PROC_STAT = 0x2  # the node_* CPU counters were read from /proc/stat
# Since 1.4: the profiler's own time (one entry per rank block).
PROFILER_VALUES = 3
PROFILER_ENTRY_SIZE = 32
PROFILER_ENTRY = "II" + "Q" * PROFILER_VALUES  # rank, reserved, window_ns, init_ns, finalize_ns

LOG_PARTIAL = 0x1
LOG_ABORTED = 0x2
SECTION_COMPRESSED = 0x1
RANK_PARTIAL = 0x1

SEC_META = 1
SEC_FUNCTIONS = 2
SEC_RANK_INDEX = 3
SEC_RANKS = 4
SEC_RANK_LIFECYCLE = 5
SEC_CALL_SITES = 6

# Since 1.2, the MPI_T section: status, flags, value kinds, bindings, limits.
MPIT_READ, MPIT_OFF, MPIT_UNAVAILABLE = 0, 1, 2
MPIT_PVARS_CAPPED = 0x1
MPIT_CVARS_CAPPED = 0x2
MPIT_U64, MPIT_F64 = 0, 1
MPIT_BIND_NONE, MPIT_BIND_WORLD = 0, 1
MPIT_MAX_NAME = 255
MPIT_MAX_DESC = 1023
MPIT_MAX_VALUE = 1023
MPIT_MAX_VALUES = 4096
# pvar classes, in the MPI standard's order (model/mpit.py PVAR_CLASSES names them)
(PVAR_STATE, PVAR_LEVEL, PVAR_SIZE, PVAR_PERCENTAGE, PVAR_HIGHWATERMARK, PVAR_LOWWATERMARK, PVAR_COUNTER,
 PVAR_AGGREGATE, PVAR_TIMER, PVAR_GENERIC) = range(10)
SEC_TIMELINE = 7  # since 1.2: time bins and phases
SEC_MPIT = 8  # since 1.2: MPI_T variables
SEC_RANK_SETUP = 9  # since 1.3: cores, ranks per node, CPU time and load
SEC_PROFILER = 10  # since 1.4: the profiler's own time
SECTION_NAMES = {SEC_META: "meta", SEC_FUNCTIONS: "functions", SEC_RANK_INDEX: "rank index", SEC_RANKS: "ranks",
                 SEC_RANK_LIFECYCLE: "rank lifecycle", SEC_CALL_SITES: "call sites",
                 SEC_TIMELINE: "timeline", SEC_MPIT: "MPI_T", SEC_RANK_SETUP: "rank setup",
                 SEC_PROFILER: "profiler"}
MAX_PATH = 4096  # object paths of call sites
MAX_PHASE_NAME = 128  # bytes of a phase name
MAX_TIME_BINS = 65536  # time bins per rank
TIMELINE_CAPPED = 0x1  # phases past SCALEWISE_MAX_PHASES are in "other phases"
REQUIRED_SECTIONS = (SEC_META, SEC_FUNCTIONS, SEC_RANK_INDEX, SEC_RANKS)

NBINS = 48

# Rank record (inside each compressed rank block)
RANK_FIXED = "IIIIQQQQ"  # rank, flags, pid, nthreads, wall_ns, mpi_ns, init_epoch_ns, maxrss_bytes
FUNCTION_FIXED = "HHQQQQQ"  # fn, nbins, calls, time_ns, tmin_ns, tmax_ns, bytes
BIN_ENTRY = "BQ"  # bin, count
PEER_ENTRY = "IQQ"  # world rank, messages, bytes

# Limits a reader enforces on every log (docs/log-format.md, "Limits"): each
# is far above what the runtime writes and keeps a hostile log's cost bounded.
INT64_MAX = 2**63 - 1  # every u64 count, size and time must fit a signed 64-bit integer
MAX_RANKS = 2**31 - 1  # MPI ranks are C ints
MAX_SECTIONS = 64
MAX_META_BYTES = 1 << 20  # the meta JSON, decompressed
MAX_FUNCTIONS_BYTES = 1 << 20  # the function table, decompressed
MAX_FUNCTIONS = 1 << 16  # function ids are u16
MAX_NAME = 128  # function and class names
MAX_HOST = 255  # the runtime keeps 255 bytes of gethostname
MAX_BLOCK_BYTES = 1 << 28  # one rank block, decompressed
# All rank blocks together inflate to at most this many times the stored
# ranks section, or RANK_DATA_FLOOR bytes if more (real logs: 3-10 times).
RANK_DATA_RATIO = 256
RANK_DATA_FLOOR = 1 << 26
CLOCK_TOLERANCE_NS = 1_000_000  # MPI time may exceed wall time by this much (clock granularity)
# Stored form of each known section: its flags must be exactly these.
SECTION_FLAGS = {SEC_META: SECTION_COMPRESSED, SEC_FUNCTIONS: SECTION_COMPRESSED, SEC_RANK_INDEX: 0, SEC_RANKS: 0,
                 SEC_RANK_LIFECYCLE: 0, SEC_CALL_SITES: SECTION_COMPRESSED,
                 SEC_TIMELINE: SECTION_COMPRESSED, SEC_MPIT: SECTION_COMPRESSED, SEC_RANK_SETUP: 0,
                 SEC_PROFILER: 0}
SECTION_VERSION = 1
RANK_FIXED_SIZE = 48
FUNCTION_FIXED_SIZE = 44
BIN_ENTRY_SIZE = 9
PEER_ENTRY_SIZE = 20
