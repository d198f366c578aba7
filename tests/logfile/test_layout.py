"""The on-disk constants of the log live twice, in C
(runtime/include/scalewise/format.h) and in Python
(src/scalewise/logfile/layout.py): they must agree, one for one."""

from __future__ import annotations

import ast
import re
import struct
from pathlib import Path

from scalewise.logfile import layout

FORMAT_H = Path(__file__).resolve().parents[2] / "runtime" / "include" / "scalewise" / "format.h"
# C name (without SW_) -> Python name, where they differ.
RENAMED = {"SEC_COMPRESSED": "SECTION_COMPRESSED"}


def c_constants() -> dict[str, object]:
    out = {}
    for name, value in re.findall(r"^#define\s+SW_(\w+)\s+(\S+)", FORMAT_H.read_text(), re.M):
        if value.startswith('"'):
            # A C string literal of hex escapes: the same bytes in a Python bytes literal.
            out[name] = ast.literal_eval("b" + value)
        else:
            out[name] = int(value.rstrip("uUlL"), 0)
    return out


def test_every_c_constant_has_the_same_value_in_python():
    constants = c_constants()
    # The regex must at least find these, or the comparison below proves nothing.
    assert {"MAGIC", "BYTE_ORDER_MARK", "FORMAT_MAJOR", "FORMAT_MINOR", "HEADER_SIZE", "SECTION_ENTRY_SIZE",
            "RANK_INDEX_ENTRY_SIZE", "LOG_PARTIAL", "LOG_ABORTED", "SEC_META", "SEC_FUNCTIONS", "SEC_RANK_INDEX",
            "SEC_RANKS", "SEC_COMPRESSED", "RANK_PARTIAL", "NBINS"} <= set(constants)
    magic_len = constants.pop("MAGIC_LEN")
    assert magic_len == len(layout.MAGIC)
    for name, value in constants.items():
        py = RENAMED.get(name, name)
        assert hasattr(layout, py), f"format.h SW_{name} has no counterpart in layout.py"
        assert getattr(layout, py) == value, f"SW_{name}: C {value!r}, Python {getattr(layout, py)!r}"


def test_struct_formats_have_the_declared_sizes():
    assert struct.calcsize("<" + layout.HEADER) == layout.HEADER_SIZE
    assert struct.calcsize("<" + layout.SECTION_ENTRY) == layout.SECTION_ENTRY_SIZE
    assert struct.calcsize("<" + layout.RANK_INDEX_ENTRY) == layout.RANK_INDEX_ENTRY_SIZE
    assert struct.calcsize("<" + layout.RANK_LIFECYCLE_ENTRY) == layout.RANK_LIFECYCLE_ENTRY_SIZE
    assert layout.RANK_LIFECYCLE_ENTRY.count("Q") == layout.LIFE_VALUES
    assert struct.calcsize("<" + layout.RANK_SETUP_ENTRY) == layout.RANK_SETUP_ENTRY_SIZE
    assert layout.RANK_SETUP_ENTRY.count("Q") == layout.SETUP_VALUES
    assert struct.calcsize("<" + layout.PROFILER_ENTRY) == layout.PROFILER_ENTRY_SIZE
    assert layout.PROFILER_ENTRY.count("Q") == layout.PROFILER_VALUES


def test_section_ids_are_distinct_and_named():
    ids = [layout.SEC_META, layout.SEC_FUNCTIONS, layout.SEC_RANK_INDEX, layout.SEC_RANKS, layout.SEC_RANK_LIFECYCLE,
           layout.SEC_CALL_SITES, layout.SEC_TIMELINE, layout.SEC_MPIT, layout.SEC_RANK_SETUP, layout.SEC_PROFILER]
    assert len(set(ids)) == 10
    assert set(layout.SECTION_NAMES) == set(ids)


def test_real_log_starts_with_the_shared_constants(real_log):
    assert real_log[:8] == layout.MAGIC
    head = struct.unpack_from("<" + layout.HEADER, real_log)
    assert (head[1], head[2], head[3]) == (layout.BYTE_ORDER_MARK, layout.FORMAT_MAJOR, layout.FORMAT_MINOR)
    assert head[8] == len(real_log)
