"""The trace file: exact round trip, size per event, and one-line errors for damage."""

import mmap
import struct
import zlib

import numpy as np
import pytest

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.whatif.trace import COLUMNS
from scalewise.logfile import tracefile
from scalewise.logfile.tracefile import _RANK, read_trace, write_trace
from support.traces import halo_allreduce, random_trace


def assert_same(a, b):
    assert a.functions == b.functions and a.nranks == b.nranks and a.capped == b.capped
    assert {k: v.tolist() for k, v in a.comms.items()} == {k: v.tolist() for k, v in b.comms.items()}
    for ra, rb in zip(a.ranks, b.ranks):
        for name in COLUMNS:
            if name == "compute":  # the file keeps whole nanoseconds
                np.testing.assert_allclose(ra.columns[name], rb.columns[name], rtol=0, atol=0.5e-9)
            else:
                np.testing.assert_array_equal(ra.columns[name], rb.columns[name], err_msg=name)
        np.testing.assert_array_equal(ra.wait_reqs, rb.wait_reqs)


@pytest.mark.parametrize("seed", range(4))
def test_round_trip_is_exact(tmp_path, seed):
    trace = random_trace(seed, 5)
    write_trace(trace, tmp_path / "t.swtrace")
    assert_same(trace, read_trace(tmp_path / "t.swtrace"))


def test_round_trip_keeps_communicators_roots_flags_and_the_cap(tmp_path):
    C = whatif.Call
    trace = whatif.from_calls(
        [[C("MPI_Reduce", bytes=80, root=1, comm=7, commutative=False, compute=2.5e-6)],
         [C("MPI_Reduce", bytes=80, root=1, comm=7, commutative=False), C("MPI_Comm_rank")],
         [C("MPI_Irecv", 0, 1 << 40, tag=-3, req=123456789), C("MPI_Wait", reqs=(123456789,))]],
        comms={7: [1, 0]})
    trace.capped = True
    write_trace(trace, tmp_path / "t.swtrace")
    back = read_trace(tmp_path / "t.swtrace")
    assert_same(trace, back)
    assert back.comms[7].tolist() == [1, 0] and back.capped


def test_replay_of_the_file_equals_replay_of_the_trace(tmp_path):
    trace = halo_allreduce(16, 5, jitter=0.05)
    write_trace(trace, tmp_path / "h.swtrace")
    [a], [b] = whatif.replay(trace, "qdr-ib"), whatif.replay(read_trace(tmp_path / "h.swtrace"), "qdr-ib")
    assert a.ranks.equals(b.ranks) and a.functions.equals(b.functions)


def test_a_mapped_file_replays_and_writes_back_as_the_file_read(tmp_path, monkeypatch):
    # large files are mapped rather than read (tracefile.MAP_FROM): here every file is
    trace = halo_allreduce(16, 5, jitter=0.05)
    write_trace(trace, tmp_path / "h.swtrace")
    read = read_trace(tmp_path / "h.swtrace")
    monkeypatch.setattr(tracefile, "MAP_FROM", 0)
    mapped = read_trace(tmp_path / "h.swtrace")
    assert isinstance(mapped.image, mmap.mmap) and isinstance(read.image, bytes)
    [a], [b] = whatif.replay(read, "qdr-ib"), whatif.replay(mapped, "qdr-ib")
    assert a.ranks.equals(b.ranks) and a.functions.equals(b.functions)
    write_trace(mapped, tmp_path / "copy.swtrace")
    assert (tmp_path / "copy.swtrace").read_bytes() == read.image
    assert [r.columns["compute"].tolist() for r in mapped.ranks] == [r.columns["compute"].tolist() for r in read.ranks]
    (tmp_path / "empty.swtrace").write_bytes(b"")
    with pytest.raises(ScalewiseError, match="not a scalewise trace"):
        read_trace(tmp_path / "empty.swtrace")


def test_a_measured_looking_stencil_trace_takes_at_most_8_bytes_per_event(tmp_path):
    trace = halo_allreduce(64, 50, jitter=0.05)
    size = write_trace(trace, tmp_path / "h.swtrace")
    assert size / trace.nevents <= 8.0


def test_damage_is_reported_in_one_line(tmp_path):
    good = tmp_path / "t.swtrace"
    write_trace(halo_allreduce(4, 3), good)
    data = good.read_bytes()
    cases = {
        "foreign.swtrace": (b"NOTATRACE" + data[9:], "not a scalewise trace"),
        "future.swtrace": (data[:8] + struct.pack("<H", 9) + data[10:], "version 9 is not supported"),
        "short.swtrace": (data[:-10], "truncated"),
        "rankless.swtrace": (data[:len(data) // 2], "truncated"),
    }
    for name, (body, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(body)
        with pytest.raises(ScalewiseError, match=message) as err:
            read_trace(path)
        assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_damaged_rank_block_is_reported_by_the_replay_in_one_line(tmp_path):
    path = tmp_path / "t.swtrace"
    write_trace(halo_allreduce(4, 3), path)
    trace = read_trace(path)
    start, length = int(trace.directory.payload[2]), int(trace.directory.payload_len[2])
    data = bytearray(path.read_bytes())
    data[start + length // 2:start + length // 2 + 8] = bytes(8)
    path.write_bytes(bytes(data))
    with pytest.raises(ScalewiseError, match="rank 2: compressed events are damaged") as err:
        whatif.replay(read_trace(path), "ideal")
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def _with_rank_payload(path, rank, change):
    """Rewrite ``path`` with rank ``rank``'s decompressed columns passed through ``change`` (recompressed, its
    block's length fixed)."""
    trace = read_trace(path)
    start, length = int(trace.directory.payload[rank]), int(trace.directory.payload_len[rank])
    data = path.read_bytes()
    body = zlib.compress(change(zlib.decompress(data[start:start + length])))
    head = start - _RANK.size
    fields = list(_RANK.unpack_from(data, head))
    fields[-1] = len(body)
    path.write_bytes(data[:head] + _RANK.pack(*fields) + body + data[start + length:])


@pytest.mark.parametrize("change, message", [
    (lambda raw: raw[:len(raw) // 2], r"rank 1: column '\w+': \d+ values expected, the data ends after \d+"),
    (lambda raw: raw + b"\x00\x00\x00", "rank 1: 3 bytes after the last column"),
    # the first func value made 11 bytes long: every column still ends where its count says
    (lambda raw: raw[:30] + b"\x80" * 10 + raw[30:], "rank 1: column 'func': value 0 is longer than 10 bytes"),
    (lambda raw: raw * 40, "rank 1: compressed events are damaged"),  # more than any columns can take
])
def test_damaged_columns_are_reported_by_the_replay_in_one_line(tmp_path, change, message):
    path = tmp_path / "t.swtrace"
    write_trace(halo_allreduce(4, 3), path)
    _with_rank_payload(path, 1, change)
    with pytest.raises(ScalewiseError, match=message) as err:
        whatif.replay(read_trace(path), "ideal")
    assert str(path) in str(err.value) and "\n" not in str(err.value)
