"""The serialisation/transfer split of a traced run: its replay on the ideal network (docs/pop.md).

On the ideal network (zero latency, infinite bandwidth) a rank waits only for
compute another rank has not finished: the replay's run time is the run
without transfer, and POP's transfer efficiency is that run time over the
measured one.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scalewise.analysis.run.pop_metrics import PopMetrics, pop_metrics, with_ideal_runtime
from scalewise.errors import ScalewiseError
from scalewise.logfile.reader import load_log
from scalewise.logfile.tracefile import find_trace, read_trace
from scalewise.model.profile import Profile
from scalewise.model.trace import Trace
from scalewise.whatif.api import replay
from scalewise.whatif.library import library_of

CAPPED = ("the trace is capped (a rank reached SCALEWISE_TRACE_MAX_EVENTS), so its replay covers part of the "
          "run only")


def traced_pop(profile: Profile, trace: Trace, library: str | None = None) -> PopMetrics:
    """The run's POP metrics with communication efficiency split by the ideal network's replay of ``trace``."""
    measured = pop_metrics(profile)
    if trace.capped:
        return replace(measured, split_missing=CAPPED)
    [ideal] = replay(trace, "ideal", library=library or library_of(profile))
    return with_ideal_runtime(measured, ideal.wall_time)


def traced_pop_of(source: Path, library: str | None = None) -> tuple[Path, Path, PopMetrics]:
    """`scalewise pop`: the trace ``source`` names, the job log beside it, and the run's POP metrics."""
    trace = find_trace(source)
    log = trace.with_suffix(".swlog")
    if not log.is_file():
        raise ScalewiseError(f"{trace}: no job log {log.name} beside it (scalewise run --trace writes both)")
    return trace, log, traced_pop(load_log(log), read_trace(trace), library)
