"""The timeline section of a job log (format 1.2, docs/log-format.md): per
rank, MPI and compute time in time bins, and per MPI_Pcontrol phase its wall,
MPI time and functions, checked field by field like the rank records."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scalewise.logfile import layout as L
from scalewise.logfile.cursor import Cursor

if TYPE_CHECKING:
    import numpy as np

HEAD = "IIQI"  # rank, flags, bin_ns, nbins
BIN = "QQ"  # mpi_ns, compute_ns
PHASE_HEAD = "BH"  # kind, name length (the name follows)
PHASE_VALUES = "QQI"  # wall_ns, mpi_ns, nfunctions
PHASE_FUNCTION = "HQQQ"  # function id, calls, time_ns, bytes
MAX_PHASES = 1 << 16
# Phase kinds: the first and last have no name of their own.
OUTSIDE, NUMBERED, NAMED, OTHER = range(4)
OUTSIDE_NAME, OTHER_NAME = "(outside phases)", "(other phases)"


def phase_label(kind: int, name: str) -> str:
    """What reports call a phase: its name, "phase N", or one of the two rows of its own."""
    return {OUTSIDE: OUTSIDE_NAME, OTHER: OTHER_NAME, NUMBERED: f"phase {name}"}.get(kind, name)


@dataclass
class TimelineRows:
    """Rows of the three frames the section feeds (model/profile.py)."""

    bins: list[np.ndarray] = field(default_factory=list)  # per rank: rank, bin, start, width, mpi_time, compute_time
    phases: list[tuple] = field(default_factory=list)  # rank, phase, order, wall, mpi_time, compute_time
    phase_functions: list[tuple] = field(default_factory=list)  # rank, phase, function, calls, time, bytes
    capped_ranks: list[int] = field(default_factory=list)


def _check_values(rank: int, *values: int) -> None:
    if any(v >> 63 for v in values):
        raise ValueError(f"rank {rank}: a timeline value of 2^63 or more")


def _phase(c: Cursor, rank: int, names: list, out: TimelineRows, order: int) -> None:
    kind, nlen = c.take(PHASE_HEAD)
    if kind > OTHER or nlen > L.MAX_PHASE_NAME:
        raise ValueError(f"rank {rank}: phase kind {kind} or name of {nlen} bytes out of range")
    name = c.raw[c.pos:c.pos + nlen].decode("utf-8", errors="strict")
    c.pos += nlen
    if any(ch < " " or ch == "\x7f" for ch in name):
        raise ValueError(f"rank {rank}: a phase name holds control characters")
    if kind == NUMBERED and not (name.lstrip("-").isdigit() and name.isascii()):
        raise ValueError(f"rank {rank}: numbered phase '{name}' is not a number")
    label = phase_label(kind, name)
    wall, mpi, nfn = c.take(PHASE_VALUES)
    _check_values(rank, wall, mpi)
    if mpi > wall + L.CLOCK_TOLERANCE_NS:
        raise ValueError(f"rank {rank}: phase '{label}' has more MPI time than wall time")
    if nfn > len(names) or nfn * struct.calcsize("<" + PHASE_FUNCTION) > c.left():
        raise ValueError(f"rank {rank}: phase '{label}' lists {nfn} functions that do not fit")
    out.phases.append((rank, label, order, wall / 1e9, mpi / 1e9, (wall - min(mpi, wall)) / 1e9))
    last = -1
    for _ in range(nfn):
        fn, calls, t, nbytes = c.take(PHASE_FUNCTION)
        if fn >= len(names) or fn <= last:
            raise ValueError(f"rank {rank}: phase '{label}': function id {fn} not increasing or not in the table")
        last = fn
        _check_values(rank, calls, t, nbytes)
        out.phase_functions.append((rank, label, names[fn][0], calls, t / 1e9, nbytes))


def _bins(c: Cursor, rank: int, nbins: int, bin_ns: int) -> np.ndarray:
    """One rank's bins as rows (rank, bin, start, width, mpi_time, compute_time), read at once."""
    size = nbins * struct.calcsize("<" + BIN)
    if size > c.left():
        raise struct.error("bins past the end")
    import numpy as np  # here: the summary's lean path checks the bins without numpy (_check_bins)

    ns = np.frombuffer(c.raw, dtype=np.dtype(c.order + "u8"), count=2 * nbins, offset=c.pos).reshape(-1, 2)
    c.pos += size
    if (ns >> np.uint64(63)).any():
        raise ValueError(f"rank {rank}: a timeline value of 2^63 or more")
    k = np.arange(nbins, dtype=float)
    return np.column_stack([np.full(nbins, rank, dtype=float), k, k * bin_ns / 1e9, np.full(nbins, bin_ns / 1e9),
                            ns / 1e9])


def _check_bins(c: Cursor, rank: int, nbins: int) -> None:
    """One rank's bins checked as _bins checks them, and skipped: no rows, no numpy."""
    size = nbins * struct.calcsize("<" + BIN)
    if size > c.left():
        raise struct.error("bins past the end")
    view = memoryview(c.raw)[c.pos:c.pos + size].cast("B")
    c.pos += size
    if any(v >> 63 for v in struct.unpack(f"{c.order}{2 * nbins}Q", view)):
        raise ValueError(f"rank {rank}: a timeline value of 2^63 or more")


def parse_timeline(order: str, raw: bytes, blocks: set[int], names: list[tuple[str, str]],
                   with_bins: bool = True) -> TimelineRows:
    """The rows of every rank's time bins and phases; raises ValueError.  Without
    ``with_bins`` the bins are checked but not kept (``bins`` stays empty)."""
    c, out, seen = Cursor(order, raw), TimelineRows(), set()
    try:
        while c.left():
            rank, flags, bin_ns, nbins = c.take(HEAD)
            if rank not in blocks or rank in seen:
                raise ValueError(f"rank {rank} listed twice or without a rank block")
            seen.add(rank)
            if flags & ~L.TIMELINE_CAPPED or nbins > L.MAX_TIME_BINS or (nbins and not bin_ns):
                raise ValueError(f"rank {rank}: flags {flags:#x}, {nbins} bins or bin width {bin_ns} out of range")
            _check_values(rank, bin_ns)
            if flags & L.TIMELINE_CAPPED:
                out.capped_ranks.append(rank)
            if with_bins:
                out.bins.append(_bins(c, rank, nbins, bin_ns))
            else:
                _check_bins(c, rank, nbins)
            (nphases,) = c.take("I")
            if nphases > MAX_PHASES:
                raise ValueError(f"rank {rank}: {nphases} phases, more than {MAX_PHASES}")
            for i in range(nphases):
                _phase(c, rank, names, out, i)
    except struct.error:
        raise ValueError("a timeline record ends early") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"a phase name is not valid UTF-8 (byte {exc.start})") from None
    return out


def phase_kind(label: str) -> tuple[int, str]:
    """The kind and stored name of a phase label (the inverse of phase_label)."""
    if label in (OUTSIDE_NAME, OTHER_NAME):
        return (OUTSIDE if label == OUTSIDE_NAME else OTHER), ""
    number = label.removeprefix("phase ")
    if number != label and number.isdigit():
        return NUMBERED, number
    return NAMED, label


def pack_timeline(order: str, rank: int, capped: bool, bins, phases, functions, fn_ids: dict[str, int]) -> bytes:
    """One rank's timeline record (docs/log-format.md), from its rows of the
    bins, phases and phase_functions frames (times in seconds)."""
    def ns(x) -> int:
        return int(round(float(x) * 1e9))

    width = ns(bins["width"].iloc[0]) if len(bins) else 0
    out = [struct.pack(order + HEAD, rank, L.TIMELINE_CAPPED if capped else 0, width, len(bins))]
    out += [struct.pack(order + BIN, ns(m), ns(c)) for m, c in zip(bins["mpi_time"], bins["compute_time"])]
    out.append(struct.pack(order + "I", len(phases)))
    for ph in phases.sort_values("order").itertuples(index=False):
        kind, name = phase_kind(ph.phase)
        mine = sorted((fn_ids[f.function], f) for f in functions[functions["phase"] == ph.phase].itertuples())
        out += [struct.pack(order + PHASE_HEAD, kind, len(name.encode())), name.encode(),
                struct.pack(order + PHASE_VALUES, ns(ph.wall), ns(ph.mpi_time), len(mine))]
        out += [struct.pack(order + PHASE_FUNCTION, i, int(f.calls), ns(f.time), int(f.bytes)) for i, f in mine]
    return b"".join(out)
