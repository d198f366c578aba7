"""Logs whose checksums are valid but whose contents are hostile: each
gives one LogFormatError naming the problem, never a traceback, a huge
allocation or an impossible number in a report."""

from __future__ import annotations

import copy
import json
import struct
import zlib
from pathlib import Path

import pytest

import scalewise
from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from support.mutants import Log, _pack_record, decode, encode

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-1.0-mpich-ring.swlog"


def golden() -> Log:
    return decode(GOLDEN.read_bytes())


def field(log: Log, rank: int, group: str, k: int) -> list:
    """The k-th field of a group ("fixed", "function 0", "peer 1", ...) of a rank record."""
    return [f for f in log.records[rank] if f[2] == group][k]


def on(stage: str, change):
    return lambda name, values: change(values) if name == stage else None


def meta_with(**values) -> bytes:
    meta = json.loads(golden().meta)
    meta.update(values)
    return json.dumps(meta).encode()


def set_meta(raw: bytes):
    def change(log):
        log.meta = raw
    return change


def set_field(rank: int, group: str, k: int, value: int):
    def change(log):
        field(log, rank, group, k)[1] = value
    return change


def set_functions(raw: bytes):
    def change(log):
        log.functions = raw
    return change


def stored(target: str, data: bytes):
    def change(log):
        log.stored[target] = data
    return change


def repeat_rank(log):
    """Rank 0's record twice, in a log of 4 ranks (so only the duplicate is wrong)."""
    log.records.append(copy.deepcopy(log.records[0]))
    log.nranks += 1
    log.meta = meta_with(nranks=log.nranks)


def set_lifecycle(*entries):
    """A rank lifecycle section (format 1.1) with these (rank, reserved, 4 values) entries."""
    def change(log):
        log.lifecycle = list(entries)
    return change


LIFE = (1 << 20, 2 << 20, 3 << 20, 1000)  # resident memory at init start, init end, finalize; finalize ns


def setup_section(*entries):
    """A rank setup section (format 1.3) with these (rank, flags, 15 values) entries."""
    data = b"".join(struct.pack("<" + L.RANK_SETUP_ENTRY, *e) for e in entries)
    return on("sections", lambda s: s.append([L.SEC_RANK_SETUP, 1, 0, data]))


# cpus online, allowed, node cpus, ranks on node, threads, window ns, user ns, sys ns, nivcsw, nvcsw,
# load start and end (thousandths), node busy, total, steal ns
SETUP = (2, 1, 2, 3, 0, 500_000_000, 400_000_000, 50_000_000, 12, 3, 2_500, 3_250,
         900_000_000, 1_000_000_000, 20_000_000)
BOTH = L.SETUP_NODE | L.SETUP_PROC_STAT


def profiler_section(*entries):
    """A profiler section (format 1.4) with these (rank, reserved, window, init, finalize ns) entries."""
    data = b"".join(struct.pack("<" + L.PROFILER_ENTRY, *e) for e in entries)
    return on("sections", lambda s: s.append([L.SEC_PROFILER, 1, 0, data]))


OWN = (1000, 2_000_000, 300_000)  # ns: inside the window, at MPI_Init, at MPI_Finalize


def sites_section(*records: bytes):
    """A call-site section (format 1.1) holding these rank records."""
    data = zlib.compress(b"".join(records))
    return on("sections", lambda s: s.append([L.SEC_CALL_SITES, 1, L.SECTION_COMPRESSED, data]))


def site_record(rank: int, *sites: tuple) -> bytes:
    """u32 rank, u32 nsites, then per site (fn, path, offset, calls, time_ns, bytes)."""
    out = struct.pack("<II", rank, len(sites))
    for fn, path, *values in sites:
        out += struct.pack("<HH", fn, len(path)) + path + struct.pack("<QQQQ", *values)
    return out


SITE = (5, b"/app/a.out", 0x1234, 10, 1000, 80)
# Call-site section records (format 1.1): (record bytes, what the error says).
SITE_CASES = {
    "function id outside the table": (site_record(0, (999, *SITE[1:])), "function id 999"),
    "rank without a block": (site_record(7, SITE), "rank 7 listed twice or without a rank block"),
    "rank twice": (site_record(0, SITE) + site_record(0, SITE), "rank 0 listed twice"),
    "record ends early": (site_record(0, SITE)[:-3], "ends early"),
    "control characters in a path": (site_record(0, (5, b"/app/\x1b[2J", *SITE[2:])), "control characters"),
    "calls 2^63": (site_record(0, (*SITE[:3], 2**63, *SITE[4:])), "2^63 or more"),
    "more sites than fit": (struct.pack("<II", 0, 2**32 - 1), "do not fit"),
}


def timeline_record(rank: int, bins=((10, 20),), phases=((0, b"", 30, 10, ((5, 1, 10, 8),)),),
                    flags: int = 0, bin_ns: int = 1000) -> bytes:
    """u32 rank, u32 flags, u64 bin_ns, u32 nbins, bins, u32 nphases, then per phase
    (kind, name, wall_ns, mpi_ns, functions (id, calls, time_ns, bytes))."""
    out = struct.pack("<IIQI", rank, flags, bin_ns, len(bins)) + b"".join(struct.pack("<QQ", *b) for b in bins)
    out += struct.pack("<I", len(phases))
    for kind, name, wall, mpi, fns in phases:
        out += struct.pack("<BH", kind, len(name)) + name + struct.pack("<QQI", wall, mpi, len(fns))
        out += b"".join(struct.pack("<HQQQ", *f) for f in fns)
    return out


def timeline_section(*records: bytes):
    """A timeline section (format 1.2) holding these rank records."""
    data = zlib.compress(b"".join(records))
    return on("sections", lambda s: s.append([L.SEC_TIMELINE, 1, L.SECTION_COMPRESSED, data]))


def one_phase(kind=2, name=b"solve", wall=30, mpi=10, fns=((5, 1, 10, 8),)):
    return (kind, name, wall, mpi, fns)


TIMELINE_CASES = {
    "rank without a block": (timeline_record(7), "rank 7 listed twice or without a rank block"),
    "rank twice": (timeline_record(0) + timeline_record(0), "rank 0 listed twice"),
    "unknown flags": (timeline_record(0, flags=0x10), "flags 0x10"),
    "bins without a width": (timeline_record(0, bin_ns=0), "bin width 0"),
    "more bins than allowed": (struct.pack("<IIQI", 0, 0, 1, L.MAX_TIME_BINS + 1), "65537 bins"),
    "bin value 2^63": (timeline_record(0, bins=((2**63, 0),)), "2^63 or more"),
    "record ends early": (timeline_record(0)[:20], "ends early"),
    "phase kind 9": (timeline_record(0, phases=(one_phase(kind=9),)), "phase kind 9"),
    "phase name not UTF-8": (timeline_record(0, phases=(one_phase(name=b"\xc3\x28"),)), "not valid UTF-8"),
    "control characters in a phase name": (timeline_record(0, phases=(one_phase(name=b"a\x1b[2J"),)),
                                           "control characters"),
    "numbered phase not a number": (timeline_record(0, phases=(one_phase(kind=1, name=b"two"),)), "not a number"),
    "phase MPI time past its wall": (timeline_record(0, phases=(one_phase(wall=0, mpi=10**7),)), "more MPI time"),
    "phase function outside the table": (timeline_record(0, phases=(one_phase(fns=((999, 1, 1, 1),)),)),
                                         "function id 999"),
    "phase functions not increasing": (timeline_record(0, phases=(one_phase(fns=((5, 1, 1, 1), (5, 1, 1, 1))),)),
                                       "not increasing"),
    "more phase functions than fit": (timeline_record(0, phases=(one_phase(fns=()),))[:-4] + b"\xff\xff\x00\x00",
                                      "do not fit"),
}


# Fixed fields of a rank record: rank, flags, pid, nthreads, wall_ns, mpi_ns, init_epoch_ns, maxrss.
# Function record: id, nbins, calls, time_ns, tmin_ns, tmax_ns, bytes.  Peer: rank, messages, bytes.
CASES = {
    "function table not UTF-8": (set_functions(b"MPI_\xc3\x28Send\0p2p\0"), None, "not valid UTF-8"),
    "10 KB function name": (set_functions(b"MPI_" + b"x" * 10000 + b"\0p2p\0"), None, "invalid name"),
    "control characters in a name": (set_functions(b"MPI_\x1b[2J\0p2p\0"), None, "control characters"),
    "compressed flag cleared": (None, on("sections", lambda s: s[0].__setitem__(2, 0)), "flags 0x0, expected 0x1"),
    "meta not an object": (set_meta(b"[1, 2]"), None, "should be an object"),
    "meta nested 1,000 deep": (set_meta(b"[" * 1000 + b"]" * 1000), None, "recursion limit"),
    "meta values nested 1,000 deep": (set_meta(b'{"a":' * 1000 + b"1" + b"}" * 1000), None, "recursion limit"),
    "end_time 1e308": (set_meta(meta_with(end_time=1e308)), None, "end_time"),
    "nranks a string": (set_meta(meta_with(nranks="3")), None, "nranks"),
    "command of numbers": (set_meta(meta_with(command=[1, 2])), None, "command.0"),
    "meta value null": (set_meta(meta_with(aborted_by_rank=None)), None, "aborted_by_rank is null"),
    "meta nranks differs": (set_meta(meta_with(nranks=7)), None, "header says 3"),
    "meta bomb": (stored("meta", zlib.compress(b"{" + b" " * (L.MAX_META_BYTES + 10) + b"}")), None,
                  "inflates to more than"),
    "rank block larger than stated": (stored("rank 1", zlib.compress(bytes(1 << 20))), None,
                                      "inflates to more than"),
    "index states a huge block": (None, on("index", lambda idx: idx[0].__setitem__(4, 2**32 - 1)),
                                  "more than a record can hold"),
    "peer 2^31": (set_field(0, "peer 0", 0, 2**31), None, "not below nranks"),
    "peer equal to nranks": (set_field(0, "peer 1", 0, 3), None, "not below nranks"),
    "MPI time above wall": (set_field(0, "fixed", 5, 10**12), None, "more than the wall time"),
    "function time above wall": (set_field(0, "function 5", 3, 10**12), None, "more than the wall time"),
    "calls 2^63": (set_field(0, "function 5", 2, 2**63), None, "2^63 or more"),
    "peer bytes 2^64-1": (set_field(0, "peer 0", 2, 2**64 - 1), None, "2^63 or more"),
    "histogram bin 200": (set_field(0, "function 5 bin 0", 0, 200), None, "histogram bin 200"),
    "duplicate rank ids": (repeat_rank, None, "listed twice"),
    "nranks 0": (None, on("header", lambda h: h.__setitem__(5, 0)), "nranks 0 out of range"),
    "fewer blocks, not partial": (None, on("header", lambda h: h.__setitem__(5, 4)), "not marked partial"),
    "unknown header flags": (None, on("header", lambda h: h.__setitem__(4, 0x80)), "unknown flags"),
    "section layout version 2": (None, on("sections", lambda s: s[3].__setitem__(1, 2)), "layout version 2"),
    "lifecycle entry missing": (set_lifecycle((0, 0, *LIFE), (1, 0, *LIFE)), None,
                                "does not match the number of rank blocks"),
    "lifecycle rank twice": (set_lifecycle((0, 0, *LIFE), (1, 0, *LIFE), (1, 0, *LIFE)), None, "rank 1 listed twice"),
    "lifecycle rank without a block": (set_lifecycle((0, 0, *LIFE), (1, 0, *LIFE), (7, 0, *LIFE)), None,
                                       "rank 7 listed twice or without a rank block"),
    "lifecycle reserved set": (set_lifecycle((0, 0, *LIFE), (1, 5, *LIFE), (2, 0, *LIFE)), None, "reserved"),
    "lifecycle memory 2^64-1": (set_lifecycle((0, 0, *LIFE), (1, 0, 2**64 - 1, 0, 0, 0), (2, 0, *LIFE)), None,
                                "2^63 or more"),
    "bytes after a zlib stream": (stored("functions", zlib.compress(b"MPI_Send\0p2p\0") + b"junk"), None,
                                  "4 bytes after the compressed data"),
    "setup entry missing": (None, setup_section((0, BOTH, *SETUP), (1, BOTH, *SETUP)),
                            "corrupt section 'rank setup' (size does not match the number of rank blocks)"),
    "setup rank twice": (None, setup_section((0, BOTH, *SETUP), (1, BOTH, *SETUP), (1, BOTH, *SETUP)),
                         "rank 1 listed twice"),
    "setup unknown flags": (None, setup_section((0, BOTH, *SETUP), (1, 0x10, *SETUP), (2, BOTH, *SETUP)),
                            "rank 1: unknown flags 0x10"),
    "setup CPU time 2^64-1": (None, setup_section((0, BOTH, *SETUP), (1, BOTH, *SETUP[:6], 2**64 - 1, *SETUP[7:]),
                                                  (2, BOTH, *SETUP)), "2^63 or more"),
    "profiler entry missing": (None, profiler_section((0, 0, *OWN), (1, 0, *OWN)),
                               "corrupt section 'profiler' (size does not match the number of rank blocks)"),
    "profiler rank twice": (None, profiler_section((0, 0, *OWN), (1, 0, *OWN), (1, 0, *OWN)), "rank 1 listed twice"),
    "profiler reserved set": (None, profiler_section((0, 0, *OWN), (1, 3, *OWN), (2, 0, *OWN)), "reserved"),
    "profiler time 2^64-1": (None, profiler_section((0, 0, *OWN), (1, 0, 0, 2**64 - 1, 0), (2, 0, *OWN)),
                             "2^63 or more"),
    "profiler time beyond wall less MPI": (None, profiler_section((0, 0, *OWN), (1, 0, 2**62, 0, 0), (2, 0, *OWN)),
                                           "more than the wall time less MPI time"),
    **{f"call sites: {name}": (None, sites_section(record), expected)
       for name, (record, expected) in SITE_CASES.items()},
    **{f"timeline: {name}": (None, timeline_section(record), expected)
       for name, (record, expected) in TIMELINE_CASES.items()},
}


@pytest.mark.parametrize("case", CASES)
def test_hostile_log_gives_one_clean_error(tmp_path, case):
    change, hook, expected = CASES[case]
    log = golden()
    if change:
        change(log)
    path = tmp_path / "hostile.swlog"
    path.write_bytes(encode(log, hook))
    with pytest.raises(LogFormatError) as info:
        scalewise.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert expected in message, message


def test_unknown_section_is_skipped_without_inflating(tmp_path):
    bomb = zlib.compressobj(9)
    data = b"".join(bomb.compress(bytes(1 << 20)) for _ in range(64)) + bomb.flush()  # 64 MiB of zeros
    path = tmp_path / "newer-minor.swlog"
    path.write_bytes(encode(golden(), on("sections", lambda s: s.append([99, 1, L.SECTION_COMPRESSED, data]))))
    assert scalewise.load(path).nranks == 3


def test_mutant_encoder_round_trips_and_writes_both_byte_orders(tmp_path):
    data = GOLDEN.read_bytes()
    assert encode(golden()) == data
    log = golden()
    log.order = ">"
    path = tmp_path / "big-endian.swlog"
    path.write_bytes(encode(log))
    assert struct.unpack_from(">I", path.read_bytes(), 8)[0] == L.BYTE_ORDER_MARK
    big, little = scalewise.load(path), scalewise.load(GOLDEN)
    assert big.functions.equals(little.functions) and big.p2p.equals(little.p2p) and big.hist.equals(little.hist)
    assert _pack_record(">", log.records[0])[:4] == b"\0\0\0\0"


def test_rank_lifecycle_section_reads_into_the_rank_table(tmp_path):
    log = golden()
    set_lifecycle(*((r, 0, *LIFE) for r in (2, 0, 1)))(log)
    path = tmp_path / "lifecycle.swlog"
    path.write_bytes(encode(log))
    r = scalewise.load(path).ranks.set_index("rank")
    assert list(r.loc[1, ["rss_init_start", "rss_init_end", "rss_finalize"]]) == list(LIFE[:3])
    assert r.loc[2, "finalize_time"] == pytest.approx(1e-6)


def test_rank_setup_section_reads_into_the_rank_table(tmp_path):
    unknown = (*SETUP[:10], 2**64 - 1, 2**64 - 1, *SETUP[12:])  # no load average read
    path = tmp_path / "setup.swlog"
    path.write_bytes(encode(golden(), setup_section((2, BOTH, *SETUP), (0, 0, *unknown), (1, BOTH, *SETUP))))
    r = scalewise.load(path).ranks.set_index("rank")
    assert list(r.loc[2, ["cpus_online", "cpus_allowed", "node_cpus", "ranks_on_node", "omp_threads"]]) == [2, 1, 2, 3, 0]
    assert list(r.loc[2, ["setup_window", "cpu_user", "cpu_sys"]]) == pytest.approx([0.5, 0.4, 0.05])
    assert list(r.loc[2, ["nivcsw", "nvcsw", "load1_start", "load1_end"]]) == pytest.approx([12, 3, 2.5, 3.25])
    assert list(r.loc[2, ["node_busy", "node_total", "node_steal"]]) == pytest.approx([0.9, 1.0, 0.02])
    # Rank 0 measured neither its node's share nor /proc/stat, nor the load: those are unknown, not 0.
    assert r.loc[0, ["node_cpus", "ranks_on_node", "node_busy", "node_total", "node_steal", "load1_start",
                     "load1_end"]].isna().all()
    assert r.loc[0, "cpu_user"] == pytest.approx(0.4)


def test_profiler_section_reads_into_the_rank_table(tmp_path):
    path = tmp_path / "profiler.swlog"
    before = scalewise.load(GOLDEN).ranks.set_index("rank")
    path.write_bytes(encode(golden(), profiler_section((2, 0, *OWN), (0, 0, 0, 0, 0), (1, 0, *OWN))))
    r = scalewise.load(path).ranks.set_index("rank")
    assert list(r.loc[1, ["profiler_time", "profiler_init", "profiler_finalize"]]) == pytest.approx([1e-6, 2e-3, 3e-4])
    # the time inside the window leaves compute, and nothing else moves
    assert r.loc[1, "compute_time"] == pytest.approx(before.loc[1, "compute_time"] - 1e-6, abs=1e-12)
    assert r.loc[0, "compute_time"] == before.loc[0, "compute_time"]
    assert (r["wall"] - r["mpi_time"] - r["profiler_time"] - r["compute_time"]).abs().max() < 1e-12


def test_call_sites_of_a_missing_object_are_named_by_object_and_offset(tmp_path):
    path = tmp_path / "sites.swlog"
    path.write_bytes(encode(golden(), sites_section(site_record(0, SITE), site_record(2, SITE))))
    s = scalewise.load(path).sites
    assert list(s["rank"]) == [0, 2] and set(s["location"]) == {"a.out+0x1234"} and set(s["func"]) == {""}
    assert list(s["time"]) == [1e-6, 1e-6] and list(s["bytes"]) == [80, 80]


def test_timeline_section_reads_into_bins_and_phases(tmp_path):
    bins = ((10, 20), (0, 1000))
    phases = ((0, b"", 30, 10, ((5, 1, 10, 8),)), one_phase(kind=1, name=b"7", fns=()),
              one_phase(kind=2, name="r\u00e9solution".encode()), one_phase(kind=3, name=b"", fns=()))
    path = tmp_path / "timeline.swlog"
    path.write_bytes(encode(golden(), timeline_section(timeline_record(1, bins, phases, flags=L.TIMELINE_CAPPED))))
    p = scalewise.load(path)
    assert "phases_capped" in p.flags
    assert p.bins[["rank", "bin", "start", "width", "mpi_time", "compute_time"]].values.tolist() == [
        [1, 0, 0.0, 1e-6, 1e-8, 2e-8], [1, 1, 1e-6, 1e-6, 0.0, 1e-6]]
    assert list(p.phases["phase"]) == ["(outside phases)", "phase 7", "r\u00e9solution", "(other phases)"]
    assert p.phases.set_index("phase").loc["phase 7", "compute_time"] == pytest.approx(2e-8)
    rank, phase, function, calls, t, nbytes = p.phase_functions.values.tolist()[0]
    assert (rank, phase, calls, t, nbytes) == (1, "(outside phases)", 1, 1e-8, 8) and function.startswith("MPI_")


def test_the_python_writer_keeps_the_rank_setup(tmp_path):
    from scalewise.logfile.writer import write_profile
    from scalewise.model.profile import SETUP_COLUMNS
    unknown = (*SETUP[:10], 2**64 - 1, 2**64 - 1, *SETUP[12:])
    path = tmp_path / "setup.swlog"
    path.write_bytes(encode(golden(), setup_section((2, BOTH, *SETUP), (0, 0, *unknown), (1, BOTH, *SETUP))))
    first = scalewise.load(path)
    again = scalewise.load(write_profile(first, tmp_path / "again.swlog"))
    cols = ["rank", *SETUP_COLUMNS]
    assert again.ranks[cols].equals(first.ranks[cols])
