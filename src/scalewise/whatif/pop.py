"""The serialisation/transfer split of a traced run: its replay on the ideal network (docs/pop.md).

On the ideal network (zero latency, infinite bandwidth) a rank waits only for
compute another rank has not finished: the replay's run time is the run
without transfer, and POP's transfer efficiency is that run time over the
measured one.
"""

from __future__ import annotations

from dataclasses import replace

from scalewise.analysis.run.pop import PopMetrics, pop_metrics, with_ideal_runtime
from scalewise.model.profile import Profile
from scalewise.whatif.api import replay
from scalewise.whatif.trace import Trace

CAPPED = ("the trace is capped (a rank reached SCALEWISE_TRACE_MAX_EVENTS), so its replay covers part of the "
          "run only")


def library_of(profile: Profile) -> str:
    """The collective algorithms to replay with: the library the run used, as its log names it."""
    return "mpich" if "mpich" in str(profile.meta.get("mpi_library") or "").lower() else "openmpi"


def traced_pop(profile: Profile, trace: Trace, library: str | None = None) -> PopMetrics:
    """The run's POP metrics with communication efficiency split by the ideal network's replay of ``trace``."""
    measured = pop_metrics(profile)
    if trace.capped:
        return replace(measured, split_missing=CAPPED)
    [ideal] = replay(trace, "ideal", library=library or library_of(profile))
    return with_ideal_runtime(measured, ideal.wall_time)
