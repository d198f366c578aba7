"""The numpy parser of rank records gives the same frames as the field-by-field one, and leaves every
problem for that one to name."""

from __future__ import annotations

import struct
import zlib

import pandas as pd
import pytest

from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from scalewise.logfile import reader
from scalewise.logfile.reader import read_container, read_profile
from scalewise.logfile.records import parse_functions
from scalewise.logfile.unpacked import SLICE_RANKS, unpacked_frames
from scalewise.logfile.writer import write_profile
from support.profiles import build_profile, stencil_profile


def both_ways(path):
    """(numpy frames, field-by-field frames, their host sets) of the log at ``path``."""
    order, h, secs = read_container(path)
    r = reader._Reader(path, path.read_bytes())
    names = parse_functions(r.inflate(secs[L.SEC_FUNCTIONS], L.MAX_FUNCTIONS_BYTES, "functions"))
    blocks = secs[L.SEC_RANKS]
    entries = reader._index(r, order, secs[L.SEC_RANK_INDEX], h[5], h[6], len(names), len(blocks))
    fast = unpacked_frames(order, blocks, entries, names, h[5])
    return fast, reader._parsed(r, order, blocks, entries, names, h[5])


@pytest.mark.parametrize("nranks", [64, SLICE_RANKS + 1024])  # one slice, and two
def test_numpy_and_field_by_field_parsers_agree(tmp_path, nranks):
    path = write_profile(stencil_profile(nranks), tmp_path / "s.swlog")
    fast, slow = both_ways(path)
    assert fast is not None
    for key in ("ranks", "functions", "hist", "p2p"):
        pd.testing.assert_frame_equal(fast[0][key], slow[0][key], obj=key)
    assert fast[1] == slow[1]


def test_uneven_ranks_without_functions_or_peers_agree(tmp_path):
    """Ranks with different functions, bins and peers, a rank with none, a partial rank and a long host."""
    ranks = pd.DataFrame({"rank": [0, 1, 2, 3], "wall": [2.0, 3.0, 1.0, 4.0], "mpi_time": [1.0, 0.5, 0.0, 2.0],
                          "host": ["a", "b" * 200, "a", "c"], "partial": [False, True, False, False]})
    functions = [(0, "MPI_Send", "p2p", 3, 0.5, 300), (0, "MPI_Recv", "p2p", 2, 0.5, 0),
                 (1, "MPI_Recv", "p2p", 7, 0.5, 0), (3, "MPI_Init", "init", 1, 9.0, 0),
                 (3, "MPI_Send", "p2p", 1, 2.0, 10)]
    hist = [(0, "MPI_Send", 7, 3), (3, "MPI_Send", 4, 1), (1, "MPI_Recv", 0, 2), (1, "MPI_Recv", 9, 5)]
    p2p = [(0, 1, 3, 300), (0, 3, 1, 1), (3, 0, 1, 10)]
    path = write_profile(build_profile(ranks, functions, hist, p2p, meta={"nranks": 5}), tmp_path / "u.swlog")
    fast, slow = both_ways(path)
    assert fast is not None
    for key in ("ranks", "functions", "hist", "p2p"):
        pd.testing.assert_frame_equal(fast[0][key], slow[0][key], obj=key)
    assert read_profile(path).meta["hosts"] == sorted({"a", "b" * 200, "c"})


def test_a_bad_record_is_named_by_the_field_by_field_parser(tmp_path):
    """A rank record whose function ids are out of order passes the checksums; the numpy parser declines it
    and the reader's error names the rank and the problem."""
    path = write_profile(stencil_profile(64), tmp_path / "s.swlog")
    order, h, secs = read_container(path)
    r = reader._Reader(path, path.read_bytes())
    entries = list(struct.iter_unpack(order + L.RANK_INDEX_ENTRY, secs[L.SEC_RANK_INDEX]))
    names = parse_functions(r.inflate(secs[L.SEC_FUNCTIONS], L.MAX_FUNCTIONS_BYTES, "functions"))
    blocks = bytearray(secs[L.SEC_RANKS])
    rank, _flags, off, size, raw = entries[17]
    blob = bytearray(zlib.decompress(bytes(blocks[off:off + size])))
    first_fn = L.RANK_FIXED_SIZE + 2 + struct.unpack_from("<H", blob, L.RANK_FIXED_SIZE)[0] + 4
    struct.pack_into("<H", blob, first_fn, len(names) + 3)  # a function id past the table
    z = zlib.compress(bytes(blob), 6)
    assert unpacked_frames(order, bytes(blocks[:off]) + z, entries[:17] + [(rank, _flags, off, len(z), raw)],
                           names, h[5]) is None
    with pytest.raises(LogFormatError, match=r"corrupt rank 17 record \(function id 15 out of order"):
        reader._parsed(r, order, bytes(blocks[:off]) + z, entries[:17] + [(rank, _flags, off, len(z), raw)],
                       names, h[5])


def test_reading_a_damaged_log_still_fails_with_one_line(tmp_path):
    path = write_profile(stencil_profile(64), tmp_path / "s.swlog")
    data = bytearray(path.read_bytes())
    data[-40] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError) as err:
        read_profile(path)
    assert "\n" not in str(err.value)
