"""The call-site section of a job log (format 1.1, docs/log-format.md): per
rank, each MPI call site as (function, loaded object, offset) with its calls,
time and bytes, checked field by field like the rank records."""

from __future__ import annotations

import struct

from scalewise.logfile import layout as L

SITE_HEAD = "II"  # rank, nsites
SITE_FIXED = "HH"  # function id, object path length (the path follows)
SITE_VALUES = "QQQQ"  # offset, calls, time_ns, bytes


def parse_sites(order: str, raw: bytes, blocks: set[int], names: list[tuple[str, str]]) -> list[tuple]:
    """Rows (rank, function, object, offset, calls, time, bytes); raises ValueError."""
    head, fixed, values = (struct.Struct(order + f) for f in (SITE_HEAD, SITE_FIXED, SITE_VALUES))
    rows, seen, pos = [], set(), 0
    try:
        while pos < len(raw):
            rank, nsites = head.unpack_from(raw, pos)
            pos += head.size
            if rank not in blocks or rank in seen:
                raise ValueError(f"rank {rank} listed twice or without a rank block")
            seen.add(rank)
            if nsites * (fixed.size + values.size) > len(raw) - pos:
                raise ValueError(f"rank {rank}: {nsites} sites do not fit the section")
            for _ in range(nsites):
                fn, plen = fixed.unpack_from(raw, pos)
                pos += fixed.size
                if fn >= len(names) or plen > L.MAX_PATH:
                    raise ValueError(f"rank {rank}: function id {fn} or object path of {plen} bytes out of range")
                path = raw[pos:pos + plen].decode("utf-8", errors="strict")
                if not path.isprintable():
                    raise ValueError(f"rank {rank}: object path holds control characters")
                pos += plen
                offset, calls, t, nbytes = values.unpack_from(raw, pos)
                pos += values.size
                if (offset | calls | t | nbytes) >> 63:
                    raise ValueError(f"rank {rank}: a site value of 2^63 or more")
                rows.append((rank, names[fn][0], path, offset, calls, t / 1e9, nbytes))
    except struct.error:
        raise ValueError("a site record ends early") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"an object path is not valid UTF-8 (byte {exc.start})") from None
    return rows
