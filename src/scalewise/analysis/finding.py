"""The finding: one sentence that carries its numbers and the runs they came from.

Both levels use this one type: a one-run finding names its single run, a study
finding every run its numbers rest on.  ``KIND_ORDER`` is the one order of
the kinds, used wherever findings are listed or summed up: what went wrong,
then what helps and by how much, then how the runs scale and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KIND_ORDER = [
    "failed", "note",  # what went wrong, and caveats on every number
    "average", "faster", "interaction",  # what helps, by how much, and where it depends on other settings
    "scaling", "bound", "mpi-share", "dominant", "growth",  # how it scales, and why
    "calls", "overlap", "imbalance", "sizes", "locality", "energy", "volume",
    "noise", "cell",  # what the repetitions cannot tell apart; each claimed cell a merged finding sums up
]


@dataclass(frozen=True)
class Finding:
    kind: str  # one of KIND_ORDER
    text: str
    numbers: dict[str, Any]
    runs: tuple[str, ...]  # the run (one-run findings) or runs (study findings) the numbers come from

    @property
    def run(self) -> str:
        """The runs as one string: the run's name for a one-run finding."""
        return ",".join(self.runs)

    def to_json(self) -> dict[str, Any]:
        """The one JSON shape of a finding, in every ``--json`` document (docs/json-schema.md)."""
        return {"kind": self.kind, "text": self.text, "numbers": self.numbers, "runs": list(self.runs)}


def in_kind_order(findings: list[Finding]) -> list[Finding]:
    """The findings sorted by kind (stable: each rule lists its findings strongest first)."""
    order = {k: i for i, k in enumerate(KIND_ORDER)}
    return sorted(findings, key=lambda f: order.get(f.kind, len(order)))


def key_findings(findings: list[Finding], limit: int = 10) -> list[Finding]:
    """The few findings a summary shows: the first (strongest) finding of each kind
    in KIND_ORDER, then the second of each, ... up to ``limit``."""
    by_kind: dict[str, list[Finding]] = {}
    for f in in_kind_order(findings):
        by_kind.setdefault(f.kind, []).append(f)
    out: list[Finding] = []
    depth = 0
    while len(out) < min(limit, len(findings)):
        for fs in by_kind.values():
            if depth < len(fs) and len(out) < limit:
                out.append(fs[depth])
        depth += 1
    return out
