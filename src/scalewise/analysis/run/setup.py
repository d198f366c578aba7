"""What one run ran on and how busy its nodes were (format 1.3 logs).

Per node (host): the cores the job had there (the union of its ranks'
affinity masks), the ranks and threads it put there, whether that
oversubscribed the node, and whether other processes took CPU time the job
needed ("contended").  The rules and their thresholds are in docs/report.md,
"Run set-up"; they are stated here next to the code that applies them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from scalewise.formatting import plural

if TYPE_CHECKING:  # annotations only: the summary's lean path builds a RunSetup without pandas (plain.py)
    import pandas as pd

    from scalewise.model.profile import Profile

# Contended: other processes used more CPU than the cores the job left idle,
# by at least this fraction of the job's own cores, or steal time reached
# this share of the node's CPU time.
CONTENDED_EXCESS_OF_JOB_CORES = 0.10
CONTENDED_STEAL_SHARE = 0.05


@dataclass(frozen=True)
class NodeSetup:
    host: str
    ranks: int  # the job's ranks on the node
    threads: int  # compute threads per rank (OMP_NUM_THREADS, else 1)
    cores: int  # the cores the job had on the node (union of its ranks' affinity masks)
    cpus_online: int
    oversubscribed: bool
    cpu_share: float  # median over the node's ranks of (user + sys) / wall
    others_cores: float  # CPU used by processes outside the job, in cores (NaN: unknown)
    steal_share: float  # steal time / the node's CPU time (NaN: unknown)
    load_start: float  # 1-minute load average at MPI_Init's return (largest over the node's ranks)
    load_end: float  # ... at MPI_Finalize
    nivcsw_per_s: float  # involuntary context switches per second per rank (median)
    contended: bool

    @property
    def demand(self) -> int:
        return self.ranks * self.threads


@dataclass(frozen=True)
class RunSetup:
    nodes: list[NodeSetup]

    @property
    def oversubscribed(self) -> list[NodeSetup]:
        return [n for n in self.nodes if n.oversubscribed]

    @property
    def contended(self) -> list[NodeSetup]:
        return [n for n in self.nodes if n.contended]

    def caveat(self) -> str | None:
        """Why bound-ness and efficiencies do not describe the program alone, or None."""
        over, busy = self.oversubscribed, self.contended
        if over:
            n = over[0]
            return (f"the run was oversubscribed ({n.demand} {'ranks' if n.threads == 1 else 'ranks x threads'} "
                    f"on {plural(n.cores, 'core')} of {n.host}"
                    + (f", and {len(over) - 1} other node{'s' if len(over) > 2 else ''}" if len(over) > 1 else "")
                    + "): ranks waited for a core, and that wait counts as MPI or compute time")
        if busy:
            n = busy[0]
            return (f"the machine was busy ({n.host}: other processes used {n.others_cores:.1f} of "
                    f"{plural(n.cpus_online, 'core')}, ranks got {100 * n.cpu_share:.0f}% of their wall as CPU time)"
                    ": times include waiting for a core")
        return None

    def to_json_dict(self) -> dict:
        return {"nodes": [asdict(n) for n in self.nodes], "oversubscribed": bool(self.oversubscribed),
                "contended": bool(self.contended), "caveat": self.caveat()}


def node_verdict(ranks: int, threads: int, cores: int, online: int, others: float,
                 steal_share: float) -> tuple[bool, bool]:
    """(oversubscribed, contended) of one node: more threads than cores; or, with cores to spare, other
    processes using more than the idle cores plus a share of the job's, or the hypervisor stealing time."""
    oversubscribed = ranks * threads > cores
    idle = max(0, online - ranks * threads)
    contended = not oversubscribed and bool(
        (not math.isnan(others) and others > idle + CONTENDED_EXCESS_OF_JOB_CORES * min(ranks * threads, cores))
        or (not math.isnan(steal_share) and steal_share >= CONTENDED_STEAL_SHARE))
    return oversubscribed, contended


def _first(values: pd.Series, default: float = math.nan) -> float:
    v = values.dropna()
    return float(v.iloc[0]) if not v.empty else default


def _node(host: str, r: pd.DataFrame) -> NodeSetup:
    ranks = int(_first(r["ranks_on_node"], len(r)))
    threads = max(1, int(r["omp_threads"].max()))
    online = int(r["cpus_online"].max())
    cores = int(_first(r["node_cpus"], r["cpus_allowed"].max()))
    window = r["setup_window"].astype(float)
    cpu = r["cpu_user"].astype(float) + r["cpu_sys"].astype(float)
    share = float((cpu / window.where(window > 0)).median())
    # Each rank read the node's counters over its own window: their mean stands for the node's.
    # The job's ranks not recorded here (a partial log) count as others.
    busy, total, steal = (r[c].astype(float).mean() for c in ("node_busy", "node_total", "node_steal"))
    wall = float(window.mean())
    others = max(0.0, (float(busy) - float(cpu.sum())) / wall) if wall > 0 and not math.isnan(busy) else math.nan
    steal_share = float(steal / total) if total and not math.isnan(total) else math.nan
    oversubscribed, contended = node_verdict(ranks, threads, cores, online, others, steal_share)
    return NodeSetup(host=host, ranks=ranks, threads=threads, cores=cores, cpus_online=online,
                     oversubscribed=oversubscribed, cpu_share=share, others_cores=others, steal_share=steal_share,
                     load_start=float(r["load1_start"].max()), load_end=float(r["load1_end"].max()),
                     nivcsw_per_s=float((r["nivcsw"].astype(float) / window.where(window > 0)).median()),
                     contended=contended)


def run_setup(profile: Profile) -> RunSetup | None:
    """The run's set-up per node, or None for a log older than format 1.3."""
    r = profile.ranks
    if "cpus_online" not in r or r.empty:
        return None
    return RunSetup([_node(str(host), g) for host, g in r.groupby("host", sort=True)])
