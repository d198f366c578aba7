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
    finalize traffic cancel out, and so does a first call's own set-up, such as han's sub-communicators)."""
    return per_call(once, thrice, 2)


def per_call(base: dict, run: dict, calls: int) -> dict[tuple[int, int], tuple[float, float]]:
    """Each pair's messages and bytes of a run of ``calls`` calls less those of ``base`` (a run of the same
    job with fewer calls), divided by the calls between them: one call's, when every call sends the same.
    A call whose traffic differs from the next (a first call's set-up) leaves a fraction or a pair the
    model does not have, so a comparison with the model fails rather than hides it."""
    out = {}
    for pair in base.keys() | run.keys():
        (m0, b0), (m1, b1) = base.get(pair, (0, 0)), run.get(pair, (0, 0))
        if m1 != m0:
            out[pair] = ((m1 - m0) / calls, (b1 - b0) / calls)
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
