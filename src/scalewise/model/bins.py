"""The log2 message-size histogram's bins (the runtime's rule), without pandas:
the log's readers and the summary use them too."""

from __future__ import annotations


def bin_bounds(b: int) -> tuple[int, int]:
    """Half-open byte range [lo, hi) of log2 histogram bin ``b``."""
    if b == 0:
        return 0, 1
    return 1 << (b - 1), 1 << b


def size_bin(nbytes: int) -> int:
    """Histogram bin of a message of ``nbytes`` (the runtime's rule)."""
    return int(nbytes).bit_length()
