"""Fuzzing the log reader with a fixed corpus of structure-aware mutants
(checksums recomputed, so every check behind them is reached): each read,
in a child process limited in address space and watched for time, ends in
one clean LogFormatError line or in a profile the analysis and the summary
handle; never a traceback, a hang or a memory blow-up.  The longer run is
bench/fuzz_reader.py."""

from __future__ import annotations

from pathlib import Path

from support.fuzzing import read_all
from support.mutants import decode, encode, mutants

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-1.0-mpich-ring.swlog"
SEED, COUNT = 20261123, 400
TIME_LIMIT = 20.0  # seconds per read: generous for a loaded machine; a hang never answers
MEMORY = 512 << 20  # bytes of address space a read may add; the bombs in the corpus inflate to 1 GiB


def test_no_mutant_crashes_hangs_or_floods_the_reader(real_log, tmp_path):
    big_endian = decode(GOLDEN.read_bytes())
    big_endian.order = ">"
    seeds = [GOLDEN.read_bytes(), real_log, encode(big_endian)]
    corpus = mutants(seeds, COUNT, SEED)
    counts, failures = read_all(corpus, tmp_path, TIME_LIMIT, MEMORY)
    assert failures == [], failures[:5]
    assert counts["error"] + counts["read"] == COUNT
    # The corpus reaches the checks: most mutants are refused, and some are harmless and read.
    assert counts["error"] > COUNT * 0.6 and counts["read"] > 0, counts
