"""Byte layout of the scalewise job log, format 1.x (docs/log-format.md).

Mirrors runtime/include/scalewise/format.h; tests/logfile/test_layout.py
keeps the two in step.
"""

from __future__ import annotations

MAGIC = b"\x89SWLOG\r\n"
BYTE_ORDER_MARK = 0x0A0B0C0D
FORMAT_MAJOR = 1
FORMAT_MINOR = 0

HEADER_SIZE = 48
# magic, bom, major, minor, flags, nranks, nblocks, nsections, file_size, header_crc, reserved
HEADER = "8sIHHIIIIQII"
SECTION_ENTRY_SIZE = 32
SECTION_ENTRY = "IHHQQII"  # id, version, flags, offset, size, crc32, reserved
RANK_INDEX_ENTRY_SIZE = 24
RANK_INDEX_ENTRY = "IIQII"  # rank, flags, offset, size, raw_size

LOG_PARTIAL = 0x1
LOG_ABORTED = 0x2
SECTION_COMPRESSED = 0x1
RANK_PARTIAL = 0x1

SEC_META = 1
SEC_FUNCTIONS = 2
SEC_RANK_INDEX = 3
SEC_RANKS = 4
SECTION_NAMES = {SEC_META: "meta", SEC_FUNCTIONS: "functions", SEC_RANK_INDEX: "rank index", SEC_RANKS: "ranks"}

NBINS = 48

# Rank record (inside each compressed rank block)
RANK_FIXED = "IIIIQQQQ"  # rank, flags, pid, nthreads, wall_ns, mpi_ns, init_epoch_ns, maxrss_bytes
FUNCTION_FIXED = "HHQQQQQ"  # fn, nbins, calls, time_ns, tmin_ns, tmax_ns, bytes
BIN_ENTRY = "BQ"  # bin, count
PEER_ENTRY = "IQQ"  # world rank, messages, bytes
