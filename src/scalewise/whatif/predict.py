"""`scalewise whatif`: a recorded run replayed on each network and set beside the measured run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scalewise.errors import ScalewiseError
from scalewise.logfile.reader import read_profile
from scalewise.logfile.tracefile import find_trace, read_trace
from scalewise.model import Profile
from scalewise.whatif.api import replay
from scalewise.whatif.hostcost import host_costs
from scalewise.whatif.compare import WhatIf, against_measured, compare, measured_compute_scale
from scalewise.whatif.network import Network, network
from scalewise.whatif.collectives import assumption, rules_of
from scalewise.whatif.traced_pop import library_of


@dataclass(frozen=True)
class Predicted:
    """The trace replayed, the log it is set beside (None without one) and the comparison."""

    trace: Path
    log: Path | None
    profile: Profile | None
    whatif: WhatIf
    doubted: list[Network]  # networks whose calibration doubts itself

    def to_json_dict(self) -> dict:
        """What ``scalewise whatif --json`` prints (docs/json-schema.md)."""
        w = self.whatif
        return {"library": w.library, "trace": str(self.trace), "measured": str(self.log) if self.log else None,
                "capped": w.capped, "summary": w.summary.reset_index().to_dict("records"),
                "vs_measured": against_measured(w).reset_index(names="source").to_dict("records"),
                "doubts": {n.name: n.doubts for n in self.doubted}, "rules": rules_of(w.library),
                "assumption": assumption(w.library)}


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
    profile = read_profile(log) if log else None
    library = library or (library_of(profile) if profile is not None else "openmpi")
    own = trace.with_suffix(".swlog")  # the traced run's own log: its host cost per message (hostcost.py)
    host = host_costs(profile if log == own else read_profile(own), tr.nranks) if own.is_file() else None
    where = {"ranks_per_node": ranks_per_node, "placement": placement, "local": local, "host": host}
    predictions = replay(tr, nets, library=library, **where)
    same_compute = None
    if profile is not None and log != own:
        # Another run: its compute differs from the trace's by the machine's noise as well as by the
        # network, so the replay is run again with each rank's measured compute (what is left of the
        # change is the network model's).
        scale = measured_compute_scale(profile, predictions[0])
        same_compute = replay(tr, nets, library=library, compute_scale=scale, **where)
    w = compare(predictions, profile, tr.capped, same_compute)
    return Predicted(trace, log, profile, w, [n for n in nets if n.doubts])
