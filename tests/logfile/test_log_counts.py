"""`log_counts`, what `scalewise run --quiet` reads instead of the whole log:
the world size and the partial mark a full read gives, from the container
alone, and the container's own one-line error for a damaged one."""

from __future__ import annotations

from pathlib import Path

import pytest

from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from scalewise.logfile.container import log_counts
from scalewise.logfile.reader import read_container, read_profile
from support.mutants import decode, encode, mutants

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-1.0-mpich-ring.swlog"
SEED, COUNT = 20261127, 120


def _outcome(read, path: Path):
    try:
        return read(path)
    except LogFormatError as exc:
        return f"error: {exc}"


def test_log_counts_agree_with_a_full_read(real_log, tmp_path):
    big_endian = decode(GOLDEN.read_bytes())
    big_endian.order = ">"
    marked, rank_only = decode(real_log), decode(GOLDEN.read_bytes())
    marked.flags |= L.LOG_PARTIAL  # the header's mark
    rank_only.records[0][1][1] |= L.RANK_PARTIAL  # one rank's mark alone
    seeds = [GOLDEN.read_bytes(), real_log, encode(big_endian), encode(marked), encode(rank_only)]
    seen = {"read": 0, "partial": 0, "refused by the container": 0}
    for i, data in enumerate([*seeds, *(data for _, data in mutants(seeds, COUNT, SEED))]):
        path = tmp_path / f"m{i}.swlog"
        path.write_bytes(data)
        counts = _outcome(log_counts, path)
        container = _outcome(read_container, path)
        if isinstance(container, str):  # the container is damaged: the same one line
            assert counts == container, i
            seen["refused by the container"] += 1
            continue
        profile = _outcome(read_profile, path)
        if not isinstance(profile, str):
            assert counts == (profile.nranks, profile.partial), i
            seen["read"] += 1
            seen["partial"] += profile.partial
    assert all(seen.values()), seen


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(LogFormatError, match=f"^{tmp_path / 'none.swlog'}: cannot read"):
        log_counts(tmp_path / "none.swlog")
