"""Launch and teardown against the application's own time, over a set of runs.

A launcher's wall is the application plus the MPI runtime starting and
stopping (0.2-0.7 s for mpirun or Hydra on one node).  In a short run that
is most of the "wall" a study or ``tune`` compares, so they say so: when the
median share of launch and teardown is above ``LAUNCH_OVERHEAD_WARN`` a wall
figure of merit mostly times the launcher (docs/studies.md).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

LAUNCH_OVERHEAD_WARN = 1 / 3


@dataclass(frozen=True)
class LaunchOverhead:
    """How much of the launcher's wall was launch and teardown, over a set of runs."""

    share: float  # median over the runs of (launcher wall - application wall) / launcher wall
    launcher_wall: float  # median
    app_wall: float  # median
    runs: int
    warn: bool  # share above LAUNCH_OVERHEAD_WARN

    @property
    def text(self) -> str:
        return (f"launch and teardown take {100 * self.share:.0f}% of the measured wall (median of {self.runs} runs: "
                f"launcher {self.launcher_wall:.3f} s, application {self.app_wall:.3f} s); a wall figure of merit "
                "mostly times the launcher: use fom: {source: profile_wall} (with profile: true) or the "
                "application's own result line")

    def to_json_dict(self) -> dict:
        return {"share": self.share, "launcher_wall": self.launcher_wall, "app_wall": self.app_wall,
                "runs": self.runs, "warn": self.warn, "text": self.text if self.warn else None}


def launch_overhead(walls: list[tuple[float | None, float | None]]) -> LaunchOverhead | None:
    """Launch and teardown over runs given as (launcher wall, application's own wall) pairs, e.g. a
    run's ``wall`` and its profile's slowest rank wall (``RunEvaluation.app_wall``); None without a pair
    that has both.  ``warn`` when the median share is above a third (LAUNCH_OVERHEAD_WARN)."""
    pairs = [(w, a) for w, a in walls if w is not None and a is not None and w > 0]
    if not pairs:
        return None
    share = statistics.median(max(0.0, (w - a) / w) for w, a in pairs)
    return LaunchOverhead(share=share, launcher_wall=statistics.median(w for w, _ in pairs),
                          app_wall=statistics.median(a for _, a in pairs), runs=len(pairs),
                          warn=share > LAUNCH_OVERHEAD_WARN)
