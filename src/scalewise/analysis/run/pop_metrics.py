"""The POP efficiencies of one run (docs/pop.md): the one definition every report quotes.

Useful time is a rank's compute time: its profiled span (from the return of
MPI_Init to the entry of MPI_Finalize) less the time it spent inside MPI.
The run time is the longest span of any rank, the same window for every rank:
MPI_Init and the wait in MPI_Finalize fall outside it, so a rank that reaches
MPI_Finalize early loses that time against the run time, as waiting does.

    Load balance (LB)              = mean(useful) / max(useful)
    Communication efficiency (CE)  = max(useful) / runtime
    Parallel efficiency (PE)       = LB x CE = mean(useful) / runtime

With the replay of a trace on the ideal network (zero latency, infinite
bandwidth), the communication efficiency splits in two, exactly CE = SerE x TE:

    Transfer efficiency (TE)       = runtime on the ideal network / runtime
    Serialisation efficiency (SerE) = max(useful) / runtime on the ideal network
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from typing import TYPE_CHECKING

from scalewise.analysis.run.setup import run_setup

if TYPE_CHECKING:
    from scalewise.model.profile import Profile

NO_TRACE = "needs a trace of the run: record it with scalewise run --trace, then scalewise pop TRACE"


@dataclass(frozen=True)
class PopMetrics:
    """POP's efficiencies of one run, 0..1 (NaN where a term cannot be computed)."""

    ranks: int
    runtime: float  # seconds: the longest profiled span of any rank
    useful_total: float  # seconds of compute summed over ranks
    useful_mean: float
    useful_max: float
    load_balance: float
    communication_efficiency: float
    parallel_efficiency: float
    ideal_runtime: float = float("nan")  # the replay's runtime on the ideal network, when a trace was replayed
    serialisation_efficiency: float = float("nan")
    transfer_efficiency: float = float("nan")
    split_missing: str = NO_TRACE  # why serialisation and transfer are not known ("" once they are)
    # Why the efficiencies describe the set-up rather than the program: an oversubscribed or
    # contended run (analysis/run/setup.py); None when neither, or the log is older than 1.3.
    caveat: str | None = None

    @property
    def imbalance_share(self) -> float:
        """Share of the run time the ranks lose waiting for the busiest one: (max - mean useful) / runtime."""
        return self.communication_efficiency - self.parallel_efficiency

    @property
    def transfer_share(self) -> float:
        """Share of the run time even the busiest rank spends outside useful work: 1 - CE."""
        return 1.0 - self.communication_efficiency

    def to_json_dict(self) -> dict[str, Any]:
        return asdict(self) | {"imbalance_share": self.imbalance_share, "transfer_share": self.transfer_share}


def pop_metrics(profile: Profile) -> PopMetrics:
    """LB, CE and PE of one run from its profile; the serialisation/transfer split stays unknown."""
    from scalewise.analysis.run.breakdown import time_breakdown  # here: PopMetrics itself needs no numpy

    b = time_breakdown(profile)
    runtime, useful = b.wall.max, b.compute
    known = b.nranks_present > 0 and runtime > 0
    nan = float("nan")
    return PopMetrics(
        ranks=b.nranks_present, runtime=runtime if known else nan, useful_total=b.total_compute,
        useful_mean=useful.mean, useful_max=useful.max,
        load_balance=useful.mean / useful.max if known and useful.max > 0 else nan,
        communication_efficiency=useful.max / runtime if known else nan,
        parallel_efficiency=useful.mean / runtime if known else nan,
        caveat=setup.caveat() if (setup := run_setup(profile)) is not None else None,
    )


def with_ideal_runtime(m: PopMetrics, ideal_runtime: float) -> PopMetrics:
    """``m`` with its communication efficiency split by the runtime the replay found on the ideal network."""
    if not (ideal_runtime > 0 and m.runtime > 0):
        return m
    # No network lets a run finish before its busiest rank has computed; the
    # trace stores compute at its own resolution, so a replay of a run that never
    # waits can land a few nanoseconds under the log's figure.
    ideal_runtime = max(ideal_runtime, m.useful_max)
    return replace(m, ideal_runtime=ideal_runtime, transfer_efficiency=ideal_runtime / m.runtime,
                   serialisation_efficiency=m.useful_max / ideal_runtime, split_missing="")


@dataclass(frozen=True)
class PopRow:
    """One line of a POP table: the metric, its label, how deep POP nests it, its value, why it is missing."""

    key: str
    label: str
    depth: int
    value: float
    missing: str = ""


def pop_rows(m: PopMetrics) -> list[PopRow]:
    """The run's metrics in POP's nesting: parallel > load balance, communication > serialisation, transfer."""
    split = m.split_missing
    return [
        PopRow("parallel_efficiency", "Parallel efficiency", 0, m.parallel_efficiency),
        PopRow("load_balance", "Load balance", 1, m.load_balance),
        PopRow("communication_efficiency", "Communication efficiency", 1, m.communication_efficiency),
        PopRow("serialisation_efficiency", "Serialisation efficiency", 2, m.serialisation_efficiency, split),
        PopRow("transfer_efficiency", "Transfer efficiency", 2, m.transfer_efficiency, split),
    ]
