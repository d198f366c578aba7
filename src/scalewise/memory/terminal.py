"""The fits of `scalewise memory` as a plain-text table for the terminal."""

from __future__ import annotations

from scalewise.memory.analysis import MemoryAnalysis
from scalewise.memory.html import fits_rows

COLUMNS = ["mpi", "setup", "fixed", "per_peer", "per_peer_noise", "per_rank_in_job", "kernel_per_peer", "points"]


def fits_lines(a: MemoryAnalysis) -> list[str]:
    """A header and one line per library and set-up, columns padded to their widest cell."""
    rows = fits_rows(a)
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS}
    return ["  ".join(c.ljust(widths[c]) for c in COLUMNS)] + \
        ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS) for r in rows]
