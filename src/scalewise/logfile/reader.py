"""Read a scalewise job log (docs/log-format.md) into a Profile.

Every problem with the file (foreign, truncated, corrupt, newer major
version, or well-formed but impossible contents) raises LogFormatError with
one line naming the file and the problem.  Every field is treated as hostile
even when its checksum matches: sizes are checked before anything is
inflated, and nothing inflates past the size the log states for it or a
fixed cap (layout.py, "Limits"), so time and memory stay bounded by the
file's size.  Unknown sections (a newer minor version) are skipped unread.
"""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from scalewise.logfile import layout as L
from scalewise.logfile.container import ContainerReader as _Reader, open_log, read_container  # noqa: F401 (read_container: this module's API too)
from scalewise.logfile.mpit import parse_mpit
from scalewise.logfile.blockpack import dtypes
from scalewise.logfile.plain import (check_inflated_total, check_totals, log_flags, first_bad_entry, lifecycle_rows, parse_blocks,
                                     profiler_rows, read_head, section_limit, setup_rows, user_log)
from scalewise.logfile.records import max_block_size
from scalewise.logfile.unpacked import unpacked_frames as _unpacked
from scalewise.logfile.sites import parse_sites
from scalewise.logfile.symbols import resolve
from scalewise.logfile.timeline import parse_timeline
from scalewise.model.mpit import MpitInfo, no_pvars
from scalewise.model.profile import (BIN_COLUMNS, FUNCTION_COLUMNS, HIST_COLUMNS, LIFECYCLE_COLUMNS, P2P_COLUMNS,
                                     PHASE_COLUMNS, PHASE_FUNCTION_COLUMNS, PROFILER_COLUMNS, RANK_COLUMNS, SETUP_COLUMNS, SITE_COLUMNS,
                                     Profile)


def _index(r: _Reader, order: str, index: bytes, nranks: int, nblocks: int, nfunctions: int, stored: int) -> list:
    """The rank index entries, each checked before its block is touched."""
    if len(index) != nblocks * L.RANK_INDEX_ENTRY_SIZE:
        raise r.fail("corrupt section 'rank index' (size does not match the number of ranks)")
    table = np.frombuffer(index, dtypes(order)["index"])
    largest = max_block_size(nfunctions, nranks)
    rank = table["rank"].astype(np.int64)
    seen = np.zeros(nranks, bool) if len(table) and int(rank.max()) < nranks else None
    if seen is not None:
        seen[rank] = True
    # All checks at once; only a failing index is walked entry by entry, to name the first bad entry.
    if seen is None or int(seen.sum()) != len(table) or np.any(table["flags"] & ~np.uint32(L.RANK_PARTIAL)) \
            or np.any(table["offset"] > stored) or np.any(table["offset"] + table["size"] > stored) \
            or np.any(table["raw_size"] > largest):
        first_bad_entry(r, list(struct.iter_unpack(order + L.RANK_INDEX_ENTRY, index)), nranks, stored, largest)
    entries = table.tolist()
    check_inflated_total(r, int(table["raw_size"].sum(dtype=np.int64)), stored)
    return entries


def _lifecycle(r: _Reader, order: str, raw: bytes | None, ranks: pd.DataFrame) -> pd.DataFrame:
    """The ranks frame with the rank lifecycle columns (LIFECYCLE_COLUMNS),
    when the log has that section (format 1.1 and later)."""
    if raw is None:
        return ranks
    rows = lifecycle_rows(r, order, raw, list(ranks["rank"]))
    life = pd.DataFrame.from_dict(rows, orient="index", columns=LIFECYCLE_COLUMNS)
    return ranks.join(life, on="rank")


def _setup(r: _Reader, order: str, raw: bytes | None, ranks: pd.DataFrame) -> pd.DataFrame:
    """The ranks frame with the rank setup columns (SETUP_COLUMNS), when the
    log has that section (format 1.3 and later)."""
    if raw is None:
        return ranks
    rows = setup_rows(r, order, raw, list(ranks["rank"]))
    return ranks.join(pd.DataFrame.from_dict(rows, orient="index", columns=SETUP_COLUMNS), on="rank")


def _profiler(r: _Reader, order: str, raw: bytes | None, ranks: pd.DataFrame) -> pd.DataFrame:
    """The ranks frame with the profiler's own time (PROFILER_COLUMNS), when
    the log has that section (format 1.4 and later); the part inside the
    window leaves compute_time, so wall = mpi_time + profiler_time + compute_time."""
    if raw is None:
        return ranks
    rows = profiler_rows(r, order, raw, dict(zip(ranks["rank"], ranks["compute_time"])))
    out = ranks.join(pd.DataFrame.from_dict(rows, orient="index", columns=PROFILER_COLUMNS), on="rank")
    return out.assign(compute_time=out["compute_time"] - out["profiler_time"])


def _sites(r: _Reader, order: str, secs: dict[int, bytes], blocks: set[int], names: list) -> pd.DataFrame:
    """The call-site rows, named where the objects can be read (logfile/symbols.py)."""
    raw = secs.get(L.SEC_CALL_SITES)
    if raw is None:
        return pd.DataFrame(columns=SITE_COLUMNS)
    rows = r.section_text(secs, L.SEC_CALL_SITES, section_limit(raw), lambda b: parse_sites(order, b, blocks, names))
    where = resolve(sorted({(row[2], row[3]) for row in rows}))
    return pd.DataFrame([(*row, *where[(row[2], row[3])]) for row in rows], columns=SITE_COLUMNS)


def _mpit(r: _Reader, order: str, secs: dict[int, bytes], blocks: set[int]) -> tuple[MpitInfo, pd.DataFrame]:
    """MPI_T's status, control variables and per-rank readings (format 1.2)."""
    raw = secs.get(L.SEC_MPIT)
    if raw is None:
        return MpitInfo(), no_pvars()
    return r.section_text(secs, L.SEC_MPIT, section_limit(raw), lambda b: parse_mpit(order, b, blocks))


def _timeline(r: _Reader, order: str, secs: dict[int, bytes], blocks: set[int], names: list) -> tuple[dict, bool]:
    """The bins, phases and phase_functions frames (empty before format 1.2),
    and whether some rank had more phases than its cap."""
    raw = secs.get(L.SEC_TIMELINE)
    if raw is None:
        return {}, False
    t = r.section_text(secs, L.SEC_TIMELINE, section_limit(raw), lambda b: parse_timeline(order, b, blocks, names))
    bins = pd.DataFrame(np.concatenate(t.bins) if t.bins else np.empty((0, len(BIN_COLUMNS))), columns=BIN_COLUMNS)
    return ({"bins": bins.astype({"rank": int, "bin": int}),
             "phases": pd.DataFrame(t.phases, columns=PHASE_COLUMNS),
             "phase_functions": pd.DataFrame(t.phase_functions, columns=PHASE_FUNCTION_COLUMNS)},
            bool(t.capped_ranks))


def _check_totals(r: _Reader, frames: dict[str, pd.DataFrame]) -> None:
    """Sums over all ranks must fit int64 too, or totals in reports wrap."""
    f, p = frames["functions"], frames["p2p"]
    check_totals(r, {what: sum(float(np.sum(c.to_numpy(), dtype=np.float64)) for c in columns)
                     for what, columns in (("calls", [f["calls"]]), ("histogram counts", [frames["hist"]["count"]]),
                                           ("messages", [p["messages"]]), ("bytes", [f["bytes"], p["bytes"]]))})


def read_profile(path) -> Profile:
    """Parse the log at ``path``; raise LogFormatError on any problem."""
    r = open_log(path)
    order, h, secs, meta, names = read_head(r)
    nranks, nblocks = h[5], h[6]
    blocks = secs[L.SEC_RANKS]
    entries = _index(r, order, secs[L.SEC_RANK_INDEX], nranks, nblocks, len(names), len(blocks))
    fast = _unpacked(order, blocks, entries, names, nranks)
    if fast is None:  # the field-by-field parser finds the problem and names it
        frames, hosts = _parsed(r, order, blocks, entries, names, nranks)
    else:
        frames, hosts = fast
    frames["ranks"] = _setup(r, order, secs.get(L.SEC_RANK_SETUP),
                             _lifecycle(r, order, secs.get(L.SEC_RANK_LIFECYCLE), frames["ranks"]))
    frames["ranks"] = _profiler(r, order, secs.get(L.SEC_PROFILER), frames["ranks"])
    _check_totals(r, frames)
    flags = log_flags(h)
    meta["ranks_present"] = nblocks
    meta["hosts"] = sorted(hosts)
    present = {e[0] for e in entries}
    sites = _sites(r, order, secs, present, names)
    timeline, capped = _timeline(r, order, secs, present, names)
    if capped:
        flags.add("phases_capped")
    mpit, pvars = _mpit(r, order, secs, present)
    if meta.get("mpit_mtl_unloaded") is True:  # an optional meta key (docs/log-format.md)
        mpit = replace(mpit, mtl_unloaded=True)
    return Profile(meta=meta, path=str(r.path), flags=frozenset(flags), sites=sites, mpit=mpit, pvars=pvars, **frames,
                   **timeline)


def _parsed(r: _Reader, order: str, blocks: bytes, entries: list, names: list, nranks: int):
    """The rank records parsed one field at a time (records.py): the frames and the host names."""
    rows, hosts = parse_blocks(r, order, blocks, entries, names, nranks)
    frames = {"ranks": pd.DataFrame(rows["ranks"], columns=RANK_COLUMNS),
              "functions": pd.DataFrame(rows["functions"], columns=FUNCTION_COLUMNS),
              "hist": pd.DataFrame(rows["hist"], columns=HIST_COLUMNS),
              "p2p": pd.DataFrame(rows["p2p"], columns=P2P_COLUMNS)}
    return frames, hosts


def load_log(path: Path) -> Profile:
    """:func:`read_profile` for a path a user gave: the usual file-system mistakes as one-line errors."""
    return user_log(path, read_profile)
