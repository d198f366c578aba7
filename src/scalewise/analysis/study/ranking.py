"""The opening of a study report: at most ten findings, ranked like a study's summary slide.

The rule (docs/study-report.md, "The opening"):

1. what went wrong comes first: one sentence on the runs that did not succeed;
2. then effects the noise rule backs, merged per setting and pair of values
   ("faster", or "interaction" when the winner depends on the other settings),
   broadest first (most cells claimed), then largest;
3. then how the runs scale (efficiency per series, lowest first), what bounds
   them, and how their profile changes (growth, MPI share, data volume);
4. energy last, and only when the user gave the node power.

At most ``PER_KIND`` findings of one kind go in before every kind has had its
turn, so one busy kind cannot crowd out the others; the slots left are filled
in the same order.  Caveats (the ``note`` kind: oversubscribed runs, too few
repetitions) are not ranked: the page states them once above the list.  Each
claimed cell and each "within the noise" sentence stays in the full list below.
"""

from __future__ import annotations

from scalewise.analysis.finding import Finding

OPENING_SIZE = 10
PER_KIND = 3
TIERS = [["failed"], ["faster", "interaction"], ["scaling"], ["bound", "imbalance"], ["growth", "mpi-share", "volume"],
         ["energy"]]


def _strength(f: Finding) -> tuple:
    """Sort key within a tier, strongest first."""
    if f.kind in ("faster", "interaction"):
        return (-f.numbers.get("claimed", 0), -f.numbers.get("max_gain_pct", 0.0))
    if f.kind == "scaling":
        return (f.numbers.get("efficiency", 1.0),)
    return ()


def opening(findings: list[Finding], limit: int = OPENING_SIZE) -> list[Finding]:
    """The findings a report opens with, in the order above."""
    ranked = [f for tier in TIERS for f in sorted((f for f in findings if f.kind in tier), key=_strength)]
    first, rest, taken = [], [], {}
    for f in ranked:
        taken[f.kind] = taken.get(f.kind, 0) + 1
        (first if taken[f.kind] <= PER_KIND else rest).append(f)
    chosen = (first + rest)[:limit]
    return sorted(chosen, key=ranked.index)


def caveats(findings: list[Finding]) -> list[Finding]:
    """What every number of the report is subject to, said once."""
    return [f for f in findings if f.kind == "note"]
