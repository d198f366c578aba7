"""A job log read into plain Python rows, without numpy or pandas: what the
summary of ``scalewise run`` and ``scalewise summary`` needs
(report/run/lean.py), at a fraction of the import cost of the frames.

Every check of the full reader (reader.py) applies: the container's, the
meta's, each rank record's field by field (records.py, the reader's own
parser for records its fast path cannot vouch for), and each optional
section's; the row checks of the optional per-rank sections live here once
and the full reader calls them.  What the summary does not show is checked
and dropped: the time bins (their values are checked, not kept) and the call
sites (parsed, not resolved to source lines).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any

from scalewise.errors import ScalewiseError
from scalewise.logfile import layout as L
from scalewise.logfile.container import ContainerReader, open_log
from scalewise.logfile.meta import parse_meta
from scalewise.logfile.mpit import parse_mpit_rows
from scalewise.logfile.records import max_block_size, parse_functions, parse_rank
from scalewise.logfile.sites import parse_sites
from scalewise.logfile.timeline import parse_timeline
from scalewise.model.columns import LIFECYCLE_COLUMNS, PROFILER_COLUMNS, RANK_COLUMNS, SETUP_COLUMNS
from scalewise.model.mpit import MpitInfo


@dataclass
class PlainLog:
    """One job as rows: ``ranks`` one dict per rank present (RANK_COLUMNS, and
    LIFECYCLE_, SETUP_ and PROFILER_COLUMNS when the log has those sections,
    compute_time net of the profiler's time as in a Profile); the other lists
    hold tuples in the column order of the Profile frame of the same name."""

    path: str
    meta: dict[str, Any]
    flags: frozenset[str]
    ranks: list[dict[str, Any]]
    functions: list[tuple]
    hist: list[tuple]
    p2p: list[tuple]
    phases: list[tuple] = field(default_factory=list)
    phase_functions: list[tuple] = field(default_factory=list)
    mpit: MpitInfo = field(default_factory=MpitInfo)
    pvars: list[tuple] = field(default_factory=list)
    columns: tuple[str, ...] = tuple(RANK_COLUMNS)  # the columns every rank dict holds

    @property
    def nranks(self) -> int:
        return int(self.meta.get("nranks", len(self.ranks)))

    @property
    def partial(self) -> bool:
        return "partial" in self.flags or any(r["partial"] for r in self.ranks)

    @property
    def aborted(self) -> bool:
        return "aborted" in self.flags


def first_bad_entry(r: ContainerReader, entries: list, nranks: int, stored: int, largest: int) -> None:
    """Raise for the first rank index entry that fails a check (none: return)."""
    seen: set[int] = set()
    for rank, flags, off, size, raw_size in entries:
        if rank >= nranks or rank in seen:
            raise r.fail(f"corrupt section 'rank index' (rank {rank} " +
                         ("listed twice)" if rank in seen else f"not below nranks {nranks})"))
        seen.add(rank)
        if flags & ~L.RANK_PARTIAL:
            raise r.fail(f"corrupt rank {rank} block (unknown flags {flags:#x})")
        if off + size > stored:
            raise r.fail(f"corrupt rank {rank} block (outside the ranks section)")
        if raw_size > largest:
            raise r.fail(f"corrupt rank {rank} block (states {raw_size:,} bytes, more than a record "
                         f"can hold: {largest:,})")


def check_inflated_total(r: ContainerReader, total: int, stored: int) -> None:
    cap = max(L.RANK_DATA_FLOOR, L.RANK_DATA_RATIO * stored)
    if total > cap:
        raise r.fail(f"corrupt section 'rank index' (blocks inflate to {total:,} bytes, more than {cap:,})")


def _index(r: ContainerReader, order: str, index: bytes, nranks: int, nblocks: int, nfunctions: int,
           stored: int) -> list:
    if len(index) != nblocks * L.RANK_INDEX_ENTRY_SIZE:
        raise r.fail("corrupt section 'rank index' (size does not match the number of ranks)")
    entries = list(struct.iter_unpack(order + L.RANK_INDEX_ENTRY, index))
    first_bad_entry(r, entries, nranks, stored, max_block_size(nfunctions, nranks))
    check_inflated_total(r, sum(e[4] for e in entries), stored)
    return entries


def parse_blocks(r: ContainerReader, order: str, blocks, entries: list, names: list, nranks: int):
    """The rank records parsed one field at a time (records.py): rows per frame, and the host names."""
    rows: dict[str, list] = {"ranks": [], "functions": [], "hist": [], "p2p": []}
    hosts = set()
    for rank, flags, off, size, raw_size in entries:
        blob = r.inflate(blocks[off:off + size], raw_size, f"rank {rank} block")
        if len(blob) != raw_size:
            raise r.fail(f"corrupt rank {rank} block (size mismatch)")
        try:
            hosts.add(parse_rank(order, blob, rank, flags, names, nranks, rows))
        except struct.error:
            raise r.fail(f"corrupt rank {rank} record (ends early)") from None
        except ValueError as exc:
            raise r.fail(f"corrupt rank {rank} record ({exc})") from None
    return rows, hosts


def lifecycle_rows(r: ContainerReader, order: str, raw: bytes, present: list[int]) -> dict[int, tuple]:
    """The rank lifecycle section (format 1.1): LIFECYCLE_COLUMNS per rank."""
    what = "corrupt section 'rank lifecycle'"
    if len(raw) != len(present) * L.RANK_LIFECYCLE_ENTRY_SIZE:
        raise r.fail(f"{what} (size does not match the number of rank blocks)")
    rows, known = {}, set(present)
    for rank, reserved, *values in struct.iter_unpack(order + L.RANK_LIFECYCLE_ENTRY, raw):
        if rank in rows or rank not in known:
            raise r.fail(f"{what} (rank {rank} listed twice or without a rank block)")
        if reserved or any(v >> 63 for v in values):
            raise r.fail(f"{what} (rank {rank}: reserved field set, or a value of 2^63 or more)")
        rows[rank] = (*values[:3], values[3] / 1e9)
    return rows


_NS_SETUP = {"setup_window", "cpu_user", "cpu_sys", "node_busy", "node_total", "node_steal"}
_NODE_SETUP = {"node_cpus", "ranks_on_node"}
_STAT_SETUP = {"node_busy", "node_total", "node_steal"}
_LOAD_SETUP = {"load1_start", "load1_end"}
_UNKNOWN = 2**64 - 1  # a load average the rank could not read


def _setup_row(flags: int, values: list[int]) -> list[float]:
    """One rank's setup values in SETUP_COLUMNS' units; NaN where not measured."""
    out = []
    for name, v in zip(SETUP_COLUMNS, values):
        if (name in _NODE_SETUP and not flags & L.SETUP_NODE) or (name in _STAT_SETUP and not flags & L.SETUP_PROC_STAT) \
                or (name in _LOAD_SETUP and v == _UNKNOWN):
            out.append(float("nan"))
        else:
            out.append(v / 1e9 if name in _NS_SETUP else v / 1e3 if name in _LOAD_SETUP else float(v))
    return out


def setup_rows(r: ContainerReader, order: str, raw: bytes, present: list[int]) -> dict[int, list[float]]:
    """The rank setup section (format 1.3): SETUP_COLUMNS per rank."""
    what = "corrupt section 'rank setup'"
    if len(raw) != len(present) * L.RANK_SETUP_ENTRY_SIZE:
        raise r.fail(f"{what} (size does not match the number of rank blocks)")
    rows, known = {}, set(present)
    for rank, flags, *values in struct.iter_unpack(order + L.RANK_SETUP_ENTRY, raw):
        if rank in rows or rank not in known:
            raise r.fail(f"{what} (rank {rank} listed twice or without a rank block)")
        if flags & ~(L.SETUP_NODE | L.SETUP_PROC_STAT):
            raise r.fail(f"{what} (rank {rank}: unknown flags {flags:#x})")
        if any(v >> 63 for name, v in zip(SETUP_COLUMNS, values) if name not in _LOAD_SETUP):
            raise r.fail(f"{what} (rank {rank}: a value of 2^63 or more)")
        rows[rank] = _setup_row(flags, values)
    return rows


def profiler_rows(r: ContainerReader, order: str, raw: bytes, free: dict[int, float]) -> dict[int, list[float]]:
    """The profiler section (format 1.4): PROFILER_COLUMNS per rank; ``free`` is each rank's
    compute_time before the profiler's time leaves it."""
    what = "corrupt section 'profiler'"
    if len(raw) != len(free) * L.PROFILER_ENTRY_SIZE:
        raise r.fail(f"{what} (size does not match the number of rank blocks)")
    rows = {}
    for rank, reserved, *values in struct.iter_unpack(order + L.PROFILER_ENTRY, raw):
        if rank in rows or rank not in free:
            raise r.fail(f"{what} (rank {rank} listed twice or without a rank block)")
        if reserved or any(v >> 63 for v in values):
            raise r.fail(f"{what} (rank {rank}: reserved field set, or a value of 2^63 or more)")
        if values[0] > free[rank] * 1e9 + L.CLOCK_TOLERANCE_NS:
            raise r.fail(f"{what} (rank {rank}: {values[0] / 1e9:.6g} s of profiler time, more than the wall "
                         f"time less MPI time)")
        rows[rank] = [v / 1e9 for v in values]
    return rows


def section_limit(raw: bytes) -> int:
    """Optional per-rank sections inflate to at most this (docs/log-format.md)."""
    return max(L.RANK_DATA_FLOOR, L.RANK_DATA_RATIO * len(raw))


def log_flags(header) -> set[str]:
    """The header's partial/aborted flags by name."""
    return {name for bit, name in ((L.LOG_PARTIAL, "partial"), (L.LOG_ABORTED, "aborted")) if header[4] & bit}


def check_totals(r: ContainerReader, sums: dict[str, float]) -> None:
    """Sums over all ranks must fit int64 too, or totals in reports wrap."""
    for what in ("calls", "histogram counts", "messages", "bytes"):
        if sums[what] >= 2.0**63:
            raise r.fail(f"corrupt: {what} over all ranks add up to 2^63 or more")


def read_head(r: ContainerReader):
    """The container checked, the meta and the function table parsed: (order, header, sections, meta, names)."""
    order, h = r.header()
    secs = r.sections(order, h)
    nranks = h[5]
    meta = r.section_text(secs, L.SEC_META, L.MAX_META_BYTES, parse_meta)
    if meta.setdefault("nranks", nranks) != nranks:
        raise r.fail(f"corrupt section 'meta' (nranks {meta['nranks']}, but the header says {nranks})")
    if meta.get("aborted_by_rank", 0) >= nranks:
        raise r.fail(f"corrupt section 'meta' (aborted_by_rank {meta['aborted_by_rank']} not below nranks {nranks})")
    names = r.section_text(secs, L.SEC_FUNCTIONS, L.MAX_FUNCTIONS_BYTES, parse_functions)
    return order, h, secs, meta, names


def read_plain(path) -> PlainLog:
    """Parse the log at ``path`` as reader.read_profile does; raise LogFormatError on any problem."""
    r = open_log(path)
    order, h, secs, meta, names = read_head(r)
    nranks, nblocks = h[5], h[6]
    blocks = secs[L.SEC_RANKS]
    entries = _index(r, order, secs[L.SEC_RANK_INDEX], nranks, nblocks, len(names), len(blocks))
    rows, hosts = parse_blocks(r, order, blocks, entries, names, nranks)
    ranks = [dict(zip(RANK_COLUMNS, row)) for row in rows["ranks"]]
    present = [row["rank"] for row in ranks]
    columns = list(RANK_COLUMNS)
    if (raw := secs.get(L.SEC_RANK_LIFECYCLE)) is not None:
        _join(ranks, lifecycle_rows(r, order, raw, present), LIFECYCLE_COLUMNS, columns)
    if (raw := secs.get(L.SEC_RANK_SETUP)) is not None:
        _join(ranks, setup_rows(r, order, raw, present), SETUP_COLUMNS, columns)
    if (raw := secs.get(L.SEC_PROFILER)) is not None:
        own = profiler_rows(r, order, raw, {row["rank"]: row["compute_time"] for row in ranks})
        _join(ranks, own, PROFILER_COLUMNS, columns)
        for row in ranks:
            row["compute_time"] = row["compute_time"] - row["profiler_time"]
    f, p = rows["functions"], rows["p2p"]
    check_totals(r, {"calls": float(sum(x[3] for x in f)), "histogram counts": float(sum(x[5] for x in rows["hist"])),
                     "messages": float(sum(x[2] for x in p)),
                     "bytes": float(sum(x[7] for x in f)) + float(sum(x[3] for x in p))})
    flags = log_flags(h)
    meta["ranks_present"] = nblocks
    meta["hosts"] = sorted(hosts)
    known = {e[0] for e in entries}
    if (raw := secs.get(L.SEC_CALL_SITES)) is not None:  # checked; the summary shows no call site
        r.section_text(secs, L.SEC_CALL_SITES, section_limit(raw), lambda b: parse_sites(order, b, known, names))
    phases, phase_functions = [], []
    if (raw := secs.get(L.SEC_TIMELINE)) is not None:
        t = r.section_text(secs, L.SEC_TIMELINE, section_limit(raw),
                           lambda b: parse_timeline(order, b, known, names, with_bins=False))
        phases, phase_functions = t.phases, t.phase_functions
        if t.capped_ranks:
            flags.add("phases_capped")
    mpit, pvars = MpitInfo(), []
    if (raw := secs.get(L.SEC_MPIT)) is not None:
        mpit, pvars = r.section_text(secs, L.SEC_MPIT, section_limit(raw), lambda b: parse_mpit_rows(order, b, known))
    if meta.get("mpit_mtl_unloaded") is True:
        mpit = replace(mpit, mtl_unloaded=True)
    return PlainLog(path=str(r.path), meta=meta, flags=frozenset(flags), ranks=ranks, functions=f, hist=rows["hist"],
                    p2p=p, phases=phases, phase_functions=phase_functions, mpit=mpit, pvars=pvars,
                    columns=tuple(columns))


def _join(ranks: list[dict], rows: dict[int, Any], names: list[str], columns: list[str]) -> None:
    for row in ranks:
        row.update(zip(names, rows[row["rank"]]))
    columns.extend(names)


def user_log(path, read):
    """``read(path)`` for a path a user gave: the usual file-system mistakes as one-line errors."""
    if not path.exists():
        raise ScalewiseError(f"{path}: no such file")
    if path.is_dir():
        raise ScalewiseError(f"{path}: is a directory, expected a scalewise log")
    try:
        return read(path)
    except OSError as exc:
        raise ScalewiseError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def load_plain(path) -> PlainLog:
    """:func:`read_plain` for a path a user gave (as reader.load_log)."""
    return user_log(path, read_plain)
