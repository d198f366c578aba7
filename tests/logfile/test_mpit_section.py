"""The MPI_T section (format 1.2): read into ``Profile.pvars`` and
``Profile.mpit`` exactly, and every hostile variant of it refused with one
clean error (docs/log-format.md, "MPI_T")."""

from __future__ import annotations

import struct
import zlib

import pytest
from test_hostile_logs import GOLDEN, golden, on

import scalewise
from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from support.mutants import encode


def text(s: bytes) -> bytes:
    return struct.pack("<H", len(s)) + s


def head(status=L.MPIT_READ, flags=0, cvars=((b"btl", b"self,vader"),), descs=((b"queue", b"Messages\nwaiting"),)):
    out = struct.pack("<III", status, flags, len(cvars)) + b"".join(text(k) + text(v) for k, v in cvars)
    return out + struct.pack("<I", len(descs)) + b"".join(text(k) + text(v) for k, v in descs)


def pvar(name=b"queue", cls=L.PVAR_SIZE, kind=L.MPIT_U64, bind=L.MPIT_BIND_WORLD, values=(10, 0), reserved=0):
    fmt = "Q" if kind == L.MPIT_U64 else "d"
    return (text(name) + struct.pack("<BBBBI", cls, kind, bind, reserved, len(values))
            + struct.pack(f"<{len(values)}{fmt}", *values))


def rank(r, *pvars, flags=0):
    return struct.pack("<III", r, flags, len(pvars)) + b"".join(pvars)


def write(tmp_path, data: bytes):
    path = tmp_path / "mpit.swlog"
    section = [L.SEC_MPIT, 1, L.SECTION_COMPRESSED, zlib.compress(data)]
    path.write_bytes(encode(golden(), on("sections", lambda s: s.append(section))))
    return path


def test_section_reads_exactly(tmp_path):
    timer = pvar(b"wait_time", L.PVAR_TIMER, L.MPIT_F64, L.MPIT_BIND_NONE, (0.25, 0.5))
    hwm = pvar(b"queue_hwm", L.PVAR_HIGHWATERMARK, values=(3, 7))
    data = head(flags=L.MPIT_CVARS_CAPPED) + rank(0, pvar(), timer) + rank(2, pvar(values=(0, 4)), hwm)
    p = scalewise.load(write(tmp_path, data))
    assert p.mpit.status == "read" and p.mpit.cvars == {"btl": "self,vader"} and p.mpit.cvars_capped
    assert p.mpit.descriptions == {"queue": "Messages waiting"}  # control characters shown as spaces
    v = p.pvars.set_index(["rank", "variable"])
    assert v.loc[(0, "queue"), "values"] == (10, 0) and v.loc[(0, "queue"), "binding"] == "comm_world"
    assert v.loc[(0, "wait_time"), ["pclass", "value"]].tolist() == ["timer", 0.75]
    assert v.loc[(2, "queue_hwm"), "value"] == 7  # a high-water mark's elements: the highest
    assert v.loc[(2, "queue"), "value"] == 4


def test_logs_before_1_2_have_no_readings():
    p = scalewise.load(GOLDEN)
    assert p.mpit.status is None and p.pvars.empty and not p.mpit.cvars


CASES = {
    "unknown status": (head(status=9), "unknown status 9"),
    "unknown flags": (head(flags=0x80), "flags 0x80"),
    "cvars that do not fit": (struct.pack("<III", 0, 0, 2**32 - 1), "do not fit"),
    "cvar name with control characters": (head(cvars=((b"a\x1b[2J", b"1"),)), "control characters"),
    "cvar name not UTF-8": (head(cvars=((b"\xc3\x28", b"1"),)), "not valid UTF-8"),
    "cvar value too long": (head(cvars=((b"a", b"x" * 2000),)), "too long"),
    "rank without a block": (head() + rank(7), "rank 7 listed twice, without a rank block"),
    "rank twice": (head() + rank(0) + rank(0), "rank 0 listed twice"),
    "unknown rank flags": (head() + rank(0, flags=4), "unknown flags"),
    "variable twice": (head() + rank(0, pvar(), pvar()), "listed twice"),
    "class 10": (head() + rank(0, pvar(cls=10)), "out of range"),
    "kind 2": (head() + rank(0, pvar(kind=2)), "out of range"),
    "binding 5": (head() + rank(0, pvar(bind=5)), "out of range"),
    "reserved set": (head() + rank(0, pvar(reserved=1)), "out of range"),
    "no values": (head() + rank(0, pvar(values=())), "out of range"),
    "value 2^63": (head() + rank(0, pvar(values=(2**63,))), "2^63 or more"),
    "value NaN": (head() + rank(0, pvar(kind=L.MPIT_F64, values=(float("nan"),))), "not a finite number"),
    "record ends early": (head() + rank(0, pvar())[:-3], "ends early"),
}


@pytest.mark.parametrize("case", CASES)
def test_hostile_section_gives_one_clean_error(tmp_path, case):
    data, expected = CASES[case]
    path = write(tmp_path, data)
    with pytest.raises(LogFormatError) as info:
        scalewise.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: corrupt section 'MPI_T'") and "\n" not in message
    assert expected in message, message
