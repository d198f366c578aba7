"""Open MPI's pml monitoring component as the tests read it: every rank's internal (collective) messages
and bytes per peer, one call's share of them, and the same per-pair figures from a modelled schedule."""

from __future__ import annotations

import re
from pathlib import Path

from scalewise.whatif.collectives.algorithms import SEND

# pml_monitoring_enable 2 writes a line per peer: "I<TAB>src<TAB>dst<TAB>N bytes<TAB>M msgs sent"
_INTERNAL = re.compile(r"^I\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs sent", re.MULTILINE)


def read_counts(prefix: Path, ranks: int) -> dict[tuple[int, int], tuple[int, int]]:
    """(src, dst) -> (messages, bytes) from the files ``prefix.<rank>.prof`` of one run."""
    counts = {}
    for r in range(ranks):
        for src, dst, nb, msgs in _INTERNAL.findall(Path(f"{prefix}.{r}.prof").read_text()):
            counts[(int(src), int(dst))] = (int(msgs), int(nb))
    return counts


def one_call(once: dict, thrice: dict) -> dict[tuple[int, int], tuple[float, float]]:
    """One call's messages and bytes per pair: a run of 3 calls less a run of 1, halved (start-up and
    finalize traffic cancel out)."""
    out = {}
    for pair in once.keys() | thrice.keys():
        (m1, b1), (m3, b3) = once.get(pair, (0, 0)), thrice.get(pair, (0, 0))
        if m3 != m1:
            out[pair] = ((m3 - m1) / 2, (b3 - b1) / 2)
    return out


def sends_per_pair(schedule) -> dict[tuple[int, int], tuple[int, int]]:
    """(src, dst) -> (messages, bytes) that a modelled schedule (per rank, phases of (dir, peer, bytes)) sends."""
    out = {}
    for r, phases in enumerate(schedule):
        for d, q, b in (m for ph in phases for m in ph):
            if d == SEND:
                m, t = out.get((r, q), (0, 0))
                out[(r, q)] = (m + 1, t + b)
    return out
