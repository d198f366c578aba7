"""`scalewise whatif`: a recorded run replayed on each network and set beside the measured run."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from scalewise.errors import ScalewiseError
from scalewise.logfile.tracefile import find_trace, read_trace
from scalewise.whatif.api import Prediction, replay
from scalewise.whatif.collectives import assumption, rules_of
from scalewise.whatif.hostcost import host_costs
from scalewise.whatif.library import library_of
from scalewise.whatif.network import Network, network
from scalewise.whatif.results import (MEASURED, changes, distinct_sources, measured_compute_scale, measured_row,
                                      source_row)

if TYPE_CHECKING:
    from scalewise.logfile.plain import PlainLog
    from scalewise.whatif.compare import WhatIf


@dataclass(frozen=True)
class Predicted:
    """The trace replayed, the log it is set beside (None without one, else its plain rows in ``measured``)
    and the comparison: ``summary``, a row per source (results.source_row), and ``same_compute``, a row per
    network replayed with the measured run's compute (None unless the measured run is another run)."""

    trace: Path
    log: Path | None
    measured: PlainLog | None
    library: str
    capped: bool
    predictions: list[Prediction]
    same_predictions: list[Prediction] | None
    doubted: list[Network]  # networks whose calibration doubts itself

    @cached_property
    def summary(self) -> dict[str, dict[str, float]]:
        rows = {MEASURED: measured_row(self.measured)} if self.measured is not None else {}
        rows.update({p.network: source_row(p.wall_time, p.compute_total, p.mpi_total) for p in self.predictions})
        return rows

    @cached_property
    def same_compute(self) -> dict[str, dict[str, float]] | None:
        if not self.same_predictions:
            return None
        return {p.network: source_row(p.wall_time, p.compute_total, p.mpi_total) for p in self.same_predictions}

    @cached_property
    def changes(self) -> dict[str, dict[str, float]]:
        """Per network, the changes against the measured run (results.changes; empty without one)."""
        return changes(self.summary, self.same_compute)

    def to_json_dict(self) -> dict:
        """What ``scalewise whatif --json`` prints (docs/json-schema.md)."""
        return {"library": self.library, "trace": str(self.trace), "measured": str(self.log) if self.log else None,
                "capped": self.capped, "summary": [{"source": k, **v} for k, v in self.summary.items()],
                "vs_measured": [{"source": k, **v} for k, v in self.changes.items()],
                "doubts": {n.name: n.doubts for n in self.doubted}, "rules": rules_of(self.library),
                "assumption": assumption(self.library)}

    def frames(self) -> WhatIf:
        """The comparison as pandas frames (compare.py), for the page: the measured run's log is read
        again, into a Profile."""
        from scalewise.logfile.reader import read_profile
        from scalewise.whatif.compare import compare

        profile = read_profile(self.log) if self.log is not None else None
        return compare(self.predictions, profile, self.capped, self.same_predictions)


def measured_log(trace: Path, given: Path | None) -> Path | None:
    """The job log to compare with: the one named, else the .swlog written beside the trace."""
    if given is not None:
        return given
    beside = trace.with_suffix(".swlog")
    return beside if beside.is_file() else None


def distinct_names(nets: list[Network], given: list[str]) -> None:
    """Two networks of one name would be one row: say which files share it."""
    seen: dict[str, str] = {}
    for net, source in zip(nets, given):
        if net.name in seen:
            raise ScalewiseError(f"--network: {seen[net.name]} and {source} are both named '{net.name}'; "
                                 "rename one (its 'name:' line, or calibrate --name)")
        seen[net.name] = source


def _read_log(path: Path) -> PlainLog:
    from scalewise.logfile.plain import read_plain  # the log reader's imports, only for a trace with a log

    return read_plain(path)


def predict(source: Path, names: list[str], library: str | None = None, measured: Path | None = None,
            ranks_per_node: int | None = None, placement: str = "slot", local: str | None = None) -> Predicted:
    """Replay the trace ``source`` names (a .swtrace, its .swlog or their run directory) on the networks
    ``names`` (presets or parameter files) with ``library``'s collectives (default: the run's own).

    With ``ranks_per_node``, ranks share nodes (``placement``: by slot or by node) and the messages
    inside a node are costed with ``local``, a network file for shared memory (calibrate on one node)."""
    if not names:
        raise ScalewiseError("--network: no network named")
    if ranks_per_node is not None and ranks_per_node < 1:
        raise ScalewiseError(f"--ranks-per-node {ranks_per_node}: give 1 or more")
    if ranks_per_node is not None and local is None:
        raise ScalewiseError("--ranks-per-node: give --local NET.yaml, the shared-memory network that costs "
                             "messages inside a node (scalewise calibrate on one node writes one)")
    if local is not None and ranks_per_node is None:
        raise ScalewiseError("--local: give --ranks-per-node too (without it every rank is on a node of its own)")
    nets = [network(n) for n in names]
    distinct_names(nets, names)
    trace = find_trace(source)
    tr = read_trace(trace)
    log = measured_log(trace, measured)
    profile = _read_log(log) if log else None
    library = library or (library_of(profile) if profile is not None else "openmpi")
    own = trace.with_suffix(".swlog")  # the traced run's own log: its host cost per message (hostcost.py)
    host = host_costs(profile if log == own else _read_log(own), tr.nranks) if own.is_file() else None
    where = {"ranks_per_node": ranks_per_node, "placement": placement, "local": local, "host": host}
    predictions = replay(tr, nets, library=library, **where)
    same_compute = None
    if profile is not None and log != own:
        # Another run: its compute differs from the trace's by the machine's noise as well as by the
        # network, so the replay is run again with each rank's measured compute (what is left of the
        # change is the network model's).
        scale = measured_compute_scale(profile, predictions[0].compute)
        same_compute = replay(tr, nets, library=library, compute_scale=scale, **where)
    distinct_sources([p.network for p in predictions])
    return Predicted(trace, log, profile, library, tr.capped, predictions, same_compute,
                     [n for n in nets if n.doubts])
