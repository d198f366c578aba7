"""Truncated, corrupted, foreign and newer-major files: scalewise.load raises
LogFormatError with one line naming the file and the problem, and
`scalewise summary` exits non-zero with that one line."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import scalewise
from scalewise.cli.main import cli
from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from scalewise.logfile.reader import read_container
from scalewise.logfile.writer import encode_container

SCALEWISE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "scalewise"


def sections(data: bytes) -> dict[str, tuple[int, int]]:
    """Section name -> (offset, size), read from the section table."""
    nsec = struct.unpack_from("<" + L.HEADER, data)[7]
    out = {}
    for i in range(nsec):
        ident, _, _, off, size, _, _ = struct.unpack_from("<" + L.SECTION_ENTRY, data, L.HEADER_SIZE + i * L.SECTION_ENTRY_SIZE)
        out[L.SECTION_NAMES[ident]] = (off, size)
    return out


def flip(data: bytes, offset: int) -> bytes:
    return data[:offset] + bytes([data[offset] ^ 0xFF]) + data[offset + 1:]


def load_error(path: Path) -> str:
    with pytest.raises(LogFormatError) as info:
        scalewise.load(path)
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_the_undamaged_log_loads(real_log, tmp_path):
    path = tmp_path / "job.swlog"
    path.write_bytes(real_log)
    profile = scalewise.load(path)
    assert sorted(profile.ranks["rank"]) == [0, 1]
    assert set(sections(real_log)) == {"meta", "functions", "rank index", "ranks", "rank lifecycle", "call sites",
                                       "timeline", "MPI_T", "rank setup", "profiler"}


@pytest.mark.parametrize("keep", ["20 bytes", "header", "half", "all but 1"])
def test_truncated(real_log, tmp_path, keep):
    n = {"20 bytes": 20, "header": L.HEADER_SIZE, "half": len(real_log) // 2, "all but 1": len(real_log) - 1}[keep]
    path = tmp_path / "cut.swlog"
    path.write_bytes(real_log[:n])
    assert "truncated" in load_error(path)


@pytest.mark.parametrize("section", ["meta", "functions", "rank index", "ranks", "rank setup"])
def test_flipped_byte_in_each_section(real_log, tmp_path, section):
    off, size = sections(real_log)[section]
    path = tmp_path / "flipped.swlog"
    path.write_bytes(flip(real_log, off + size // 2))
    message = load_error(path)
    assert f"corrupt section '{section}'" in message and "checksum" in message


@pytest.mark.parametrize("where, problem", [
    (8, "byte-order mark"),                         # the byte-order mark
    (20, "checksum mismatch"),                      # nranks, covered by the header crc
    (L.HEADER_SIZE + 8, "checksum mismatch"),       # an offset in the section table
    (1, "not a scalewise log"),                     # the magic number
])
def test_flipped_byte_in_the_header(real_log, tmp_path, where, problem):
    path = tmp_path / "flipped.swlog"
    path.write_bytes(flip(real_log, where))
    message = load_error(path)
    assert problem in message


def test_trailing_bytes(real_log, tmp_path):
    path = tmp_path / "long.swlog"
    path.write_bytes(real_log + b"\0" * 3)
    assert "3 unexpected bytes" in load_error(path)


PNG = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0) + b"\0" * 4


@pytest.mark.parametrize("content", [PNG, b"rank,calls\n0,12\n", b""], ids=["png", "text", "empty"])
def test_foreign_file(tmp_path, content):
    path = tmp_path / "foreign.swlog"
    path.write_bytes(content)
    assert "not a scalewise log" in load_error(path)


def newer_major(data: bytes) -> bytes:
    """The log with major version + 1 and a header crc that matches, as a
    newer writer would produce it."""
    order, h, secs = read_container("job.swlog", data)

    def newer(stage: str, values: list) -> None:
        if stage == "header":
            values[2] = L.FORMAT_MAJOR + 1  # magic, byte-order mark, then the major version

    sections = [[ident, L.SECTION_VERSION, L.SECTION_FLAGS[ident], raw] for ident, raw in secs.items()]
    return encode_container(sections, h[4], h[5], h[6], order, h[3], newer)


def test_newer_major_version(real_log, tmp_path):
    path = tmp_path / "future.swlog"
    path.write_bytes(newer_major(real_log))
    message = load_error(path)
    assert f"format {L.FORMAT_MAJOR + 1}." in message and "newer" in message


def test_missing_file(tmp_path):
    assert "cannot read" in load_error(tmp_path / "absent.swlog")


DAMAGES = {
    "truncated": lambda d: d[: len(d) // 2],
    "flipped": lambda d: flip(d, sections(d)["ranks"][0] + 1),
    "foreign": lambda d: PNG,
    "newer": newer_major,
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_summary_reports_one_line(real_log, tmp_path, damage):
    path = tmp_path / f"{damage}.swlog"
    path.write_bytes(DAMAGES[damage](real_log))
    result = CliRunner().invoke(cli, ["summary", str(path)])
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], result.stderr
    assert result.stdout == ""


def test_installed_command_exits_non_zero(real_log, tmp_path):
    path = tmp_path / "cut.swlog"
    path.write_bytes(real_log[:100])
    res = subprocess.run([str(SCALEWISE), "summary", str(path)], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and "truncated" in res.stderr and str(path) in res.stderr
