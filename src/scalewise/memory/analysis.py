"""MPI connection memory: what a rank pays per connected peer, and what that means at scale.

In: the connection-memory probe's readings, one row per rank and run
(``memory/measure.py``).  Per library and connection set-up, a least-squares
fit of the memory MPI added to a rank (VmRSS at the last reading minus before
MPI_Init) against the peers the rank is connected to, with the standard error
of each coefficient and the number of points:

* eager set-up connects every rank to all others in MPI_Init, so a rank's
  peers are ``size - 1`` and one slope carries everything that grows with the
  job;
* on-demand set-up connects only the peers a rank talked to, so the fit has two
  slopes: per connected peer, and per rank in the job (tables every rank keeps
  about all others, connected or not).

Both fits also take a one-off step for ranks that sent anything (buffers the
first message allocates), so that it is not mistaken for a per-peer cost.

The same fit of the rank's open sockets gives sockets per connection; times
the kernel's slab bytes per TCP socket, that is the kernel memory a
connection holds, which VmRSS does not show.  The projection multiplies these
out for a target machine, each number with its interval of ±``NOISE_SIGMAS``
standard errors from the fit's covariance, and names the target values the
user did not give as assumptions.  A slope within its noise band is said to
be not measurable, and a negative one is never used as a cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis.finding import Finding
from scalewise.errors import ScalewiseError
from scalewise.formatting import human_bytes, plural

# A slope counts as measured when it exceeds twice its standard error.
NOISE_SIGMAS = 2.0
# Peers an application rank talks to under on-demand set-up when projecting: a 3-D halo exchange.
DEFAULT_APP_PEERS = 6


@dataclass(frozen=True)
class MachineTarget:
    """The machine a measurement is projected to."""

    node_memory: float  # bytes
    ranks_per_node: int
    nodes: tuple[int, ...]
    app_peers: int = DEFAULT_APP_PEERS
    assumed: tuple[str, ...] = ()  # the values above the user did not give, as "256 GiB per node"

    @property
    def assumption_text(self) -> str:
        """`` (assumed, not given: 256 GiB per node, 128 ranks per node)`` or nothing."""
        return f" (assumed, not given: {', '.join(self.assumed)})" if self.assumed else ""


@dataclass(frozen=True)
class SetupFit:
    """Fixed cost plus bytes per connected peer for one library and connection set-up."""

    mpi: str
    setup: str
    eager: bool
    fixed: float  # bytes per rank with no peer connected
    per_peer: float  # bytes per connected peer
    per_peer_se: float
    per_rank: float  # bytes per other rank in the job, connected or not (on-demand fits only; 0 for eager)
    per_rank_se: float
    points: int  # ranks x runs the fit rests on
    runs: int
    residual_sd: float  # bytes, scatter of one rank's reading around the fit
    sockets_per_peer: float
    kernel_per_peer: float | None  # bytes the kernel holds per connection (slab objects of its sockets)
    cov: np.ndarray | None = None  # covariance of the coefficients: fixed, per peer, [per rank], [first message]
    talked_step: float = 0.0  # bytes a rank adds once when it sends anything (0 when the fit has no such column)

    @property
    def noise(self) -> float:
        """Half-width of the per-peer slope's noise band (bytes)."""
        return NOISE_SIGMAS * self.per_peer_se

    @property
    def measurable(self) -> bool:
        return self.per_peer > self.noise

    @property
    def negative(self) -> bool:
        """A slope below zero by more than its noise: memory fell as peers were added, which no connection costs."""
        return self.per_peer < -self.noise

    def per_rank_bytes(self, conns: int, others: int) -> tuple[float, float]:
        """(bytes, standard error) of one rank with ``conns`` connections among ``others`` other ranks, in user
        space plus the kernel's sockets; slopes below zero count as zero (a cost cannot be negative)."""
        vec = [1.0, float(conns)] + ([float(others)] if not self.eager else [])
        coef = [self.fixed, max(self.per_peer, 0.0)] + ([max(self.per_rank, 0.0)] if not self.eager else [])
        if self.cov is not None and len(self.cov) > len(vec):  # the fit has a first-message step: ranks talk
            vec.append(1.0)
            coef.append(self.talked_step)
        value = float(np.dot(vec, coef)) + (self.kernel_per_peer or 0.0) * conns
        v = np.asarray(vec)
        se = float(np.sqrt(max(v @ self.cov @ v, 0.0))) if self.cov is not None else 0.0
        return value, se

    @property
    def label(self) -> str:
        return f"{self.mpi} {self.setup}"


@dataclass(frozen=True)
class MemoryAnalysis:
    readings: pd.DataFrame  # the probe's rows, with ``mpi_bytes`` and ``connected`` added
    fits: list[SetupFit]
    projection: pd.DataFrame  # mpi, setup, eager, nodes, ranks, rank_bytes, node_bytes, fits
    target: MachineTarget
    findings: list[Finding]

    def to_json_dict(self) -> dict:
        """What ``scalewise memory --json`` prints (docs/json-schema.md)."""
        return {"hosts": sorted(self.readings["host"].unique()), "assumed": list(self.target.assumed),
                "fits": fits_table(self.fits).to_dict("records"), "projection": self.projection.to_dict("records"),
                "findings": [f.to_json() for f in self.findings]}


def connected_peers(readings: pd.DataFrame) -> pd.Series:
    """Peers each rank holds a connection to at its last reading."""
    return readings["size"].sub(1).where(readings["eager"], readings["peers"])


def _least_squares(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Coefficients, their standard errors, the residual standard deviation, and the coefficients' covariance."""
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    dof = max(len(y) - x.shape[1], 1)
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.pinv(x.T @ x)
    return coef, np.sqrt(np.clip(np.diag(cov), 0, None)), float(np.sqrt(s2)), cov


def _design(group: pd.DataFrame, eager: bool) -> np.ndarray:
    """Columns: fixed cost, connected peers, [other ranks in the job (on-demand only)], and whether the rank
    sent anything at all: the first message allocates buffers once (MPICH over UCX: about 330 KiB,
    whatever the peer count), a cost that is neither fixed nor per peer."""
    cols = [np.ones(len(group)), group["connected"].to_numpy(float)]
    if not eager:
        cols.append(group["size"].sub(1).to_numpy(float))
    talked = group["peers"].gt(0).to_numpy(float)
    if 0 < talked.sum() < len(talked):
        cols.append(talked)
    return np.column_stack(cols)


def fit_setup(group: pd.DataFrame, kernel_per_socket: int | None) -> SetupFit:
    eager = bool(group["eager"].iloc[0])
    x = _design(group, eager)
    coef, se, sd, cov = _least_squares(x, group["mpi_bytes"].to_numpy(float))
    sockets, *_ = _least_squares(x, group["sockets_touched"].to_numpy(float))
    talked = float(coef[-1]) if x.shape[1] > (2 if eager else 3) else 0.0
    per_rank, per_rank_se = (coef[2], se[2]) if not eager else (0.0, 0.0)
    kernel = None if kernel_per_socket is None else max(sockets[1], 0.0) * kernel_per_socket
    runs = group[["size", "mode", "rep"]].drop_duplicates().shape[0]
    return SetupFit(mpi=group["mpi"].iloc[0], setup=group["setup"].iloc[0], eager=eager, fixed=float(coef[0]),
                    per_peer=float(coef[1]), per_peer_se=float(se[1]), per_rank=float(per_rank),
                    per_rank_se=float(per_rank_se), points=len(group), runs=runs, residual_sd=sd,
                    sockets_per_peer=float(sockets[1]), kernel_per_peer=kernel, cov=cov, talked_step=talked)


def project(fits: list[SetupFit], target: MachineTarget) -> pd.DataFrame:
    """Per-rank and per-node memory of each set-up at each node count (user space plus the kernel's sockets),
    with the interval of ±NOISE_SIGMAS standard errors and whether the node's memory holds it at each end."""
    rows = []
    for fit in fits:
        for nodes in target.nodes:
            ranks = nodes * target.ranks_per_node
            others = ranks - 1
            conns = others if fit.eager else min(target.app_peers, others)
            rank_bytes, se = fit.per_rank_bytes(conns, others)
            lo, hi = max(rank_bytes - NOISE_SIGMAS * se, 0.0), rank_bytes + NOISE_SIGMAS * se
            r = target.ranks_per_node
            rows.append({"mpi": fit.mpi, "setup": fit.setup, "eager": fit.eager, "nodes": nodes, "ranks": ranks,
                         "connections": conns, "rank_bytes": rank_bytes, "rank_bytes_low": lo,
                         "rank_bytes_high": hi, "node_bytes": rank_bytes * r, "node_bytes_low": lo * r,
                         "node_bytes_high": hi * r, "fits": rank_bytes * r <= target.node_memory,
                         "fits_low": lo * r <= target.node_memory, "fits_high": hi * r <= target.node_memory})
    return pd.DataFrame(rows)


def _last(mine: pd.DataFrame, column: str) -> int | None:
    fitting = mine[mine[column]]
    return int(fitting["nodes"].max()) if len(fitting) else None


def _break_even(mine: pd.DataFrame, target: MachineTarget) -> tuple[str, dict]:
    """Where eager set-up stops fitting, with the last node count that fits at both ends of the interval."""
    top, first = int(mine["nodes"].max()), int(mine["nodes"].min())
    last, early, late = _last(mine, "fits"), _last(mine, "fits_high"), _last(mine, "fits_low")
    numbers = {"last_nodes_that_fit": last, "last_nodes_that_fit_high_cost": early,
               "last_nodes_that_fit_low_cost": late}

    def count(n: int | None) -> str:
        return "none" if n is None else f"all {top}" if n == top else str(n)

    span = f"the last count that fits is {count(early)} to {count(late)} within the interval"
    if last == top:
        if early == top:
            return "fits node memory up to the largest node count, at both ends of the interval", numbers
        return f"fits node memory up to the largest node count ({span})", numbers
    where = f"beyond {last} nodes" if last else f"already at {first} nodes"
    return f"exceeds node memory ({human_bytes(target.node_memory)}) {where} ({span})", numbers


def _fit_finding(fit: SetupFit, proj: pd.DataFrame, target: MachineTarget) -> Finding:
    numbers = {"mpi": fit.mpi, "setup": fit.setup, "bytes_per_peer": fit.per_peer, "noise_bytes": fit.noise,
               "kernel_bytes_per_peer": fit.kernel_per_peer, "points": fit.points, "runs": fit.runs,
               "assumed": list(target.assumed)}
    basis = f"{plural(fit.points, 'point')} from {plural(fit.runs, 'run')}"
    kernel = (f"; the kernel holds {human_bytes(fit.kernel_per_peer)} more per connection in socket objects"
              if fit.kernel_per_peer else "")
    if fit.negative:
        return Finding("note", f"{fit.label}: memory fell as peers were added ({basis}: a slope of "
                               f"-{human_bytes(-fit.per_peer)} ± {human_bytes(fit.noise)} per peer), which no "
                               f"connection costs: the readings are too noisy or something else changed between "
                               f"the runs; no projection is made from it.", numbers, ())
    if not fit.measurable:
        return Finding("note", f"{fit.label}: no per-connection cost measurable above the noise of "
                               f"±{human_bytes(fit.noise)} per peer in user space ({basis}){kernel}.", numbers, ())
    mine = proj[(proj["mpi"] == fit.mpi) & (proj["setup"] == fit.setup)]
    top = mine.iloc[-1]
    numbers.update(rank_bytes_at_max=float(top["rank_bytes"]), rank_bytes_at_max_low=float(top["rank_bytes_low"]),
                   rank_bytes_at_max_high=float(top["rank_bytes_high"]), nodes_at_max=int(top["nodes"]))
    head = (f"{fit.label} set-up costs {human_bytes(fit.per_peer)} ± {human_bytes(fit.noise)} per connected peer "
            f"in user space ({basis}; ± {NOISE_SIGMAS:g} standard errors){kernel}")
    need = (f"{human_bytes(top['rank_bytes'])} ({human_bytes(top['rank_bytes_low'])} to "
            f"{human_bytes(top['rank_bytes_high'])})")
    if not fit.eager:
        return Finding("growth", f"{head}; at {top['nodes']} nodes a rank talking to {target.app_peers} peers "
                                 f"needs {need}{target.assumption_text}.", numbers, ())
    beyond, more = _break_even(mine, target)
    numbers.update(more)
    return Finding("growth", f"{head}: eager set-up needs {need} per rank at {top['nodes']} nodes x "
                             f"{target.ranks_per_node} ranks, and {beyond}{target.assumption_text}.", numbers, ())


def analyse_memory(readings: pd.DataFrame, target: MachineTarget, kernel_per_socket: int | None) -> MemoryAnalysis:
    readings = readings.assign(mpi_bytes=readings["rss_touched"] - readings["rss_start"])
    readings = readings.assign(connected=connected_peers(readings))
    fits = [fit_setup(g, kernel_per_socket) for _, g in readings.groupby(["mpi", "setup"], sort=False)]
    proj = project([f for f in fits if not f.negative], target)  # a negative slope is no cost to project
    return MemoryAnalysis(readings, fits, proj, target, [_fit_finding(f, proj, target) for f in fits])


def fits_table(fits: list[SetupFit]) -> pd.DataFrame:
    """The fits as a table (bytes), for the terminal, the page and --json."""
    return pd.DataFrame([{"mpi": f.mpi, "setup": f.setup, "eager": f.eager, "fixed": f.fixed,
                          "per_peer": f.per_peer, "per_peer_noise": f.noise, "measurable": f.measurable,
                          "per_peer_se": f.per_peer_se, "per_rank_se": f.per_rank_se,
                          "per_rank_in_job": f.per_rank, "sockets_per_peer": f.sockets_per_peer,
                          "kernel_per_peer": f.kernel_per_peer, "residual_sd": f.residual_sd,
                          "points": f.points, "runs": f.runs} for f in fits])


_SIZE_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 10**3, "kib": 2**10, "m": 2**20, "mb": 10**6, "mib": 2**20,
               "g": 2**30, "gb": 10**9, "gib": 2**30, "t": 2**40, "tb": 10**12, "tib": 2**40}


def parse_size(text: str, what: str) -> float:
    """``256GiB``, ``512 MB``, ``1T``: bytes; a one-line error for anything else."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_UNITS:
        raise ScalewiseError(f"{what}: cannot read '{text}' as a size (e.g. 256GiB, 512MB)")
    return float(match.group(1)) * _SIZE_UNITS[unit]


def parse_nodes(text: str) -> tuple[int, ...]:
    """``1..1024`` (powers of two from the first to the last) or ``1,8,64``."""
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split("..", 1))
            if lo < 1 or hi < lo:
                raise ValueError
            out, n = [], lo
            while n < hi:
                out.append(n)
                n *= 2
            return tuple(out + [hi])
        out = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
        if not out or out[0] < 1:
            raise ValueError
        return out
    except ValueError:
        raise ScalewiseError(f"--nodes: cannot read '{text}' (expected e.g. 1..1024 or 1,8,64)") from None
