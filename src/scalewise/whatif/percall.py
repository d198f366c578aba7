"""A collective's per-call cost that its point-to-point decomposition lacks.

`scalewise calibrate` times a few collectives and keeps each beside the replay
of one such call on the fitted ranges (the network file's ``collectives``).
What the library spends beyond that replay at the smallest size it timed
(argument checks, algorithm selection, requests: work per call, not per
byte) is charged to every call of that collective as time inside the call
before it posts its messages, never below 0.  Larger sizes miss by transport
effects (exchanges both ways at once, reductions), which belong to the
point-to-point model, not to a cost per call: their rows stay a report.
Only calls with the measured number of ranks get it, and only when the
network was calibrated with the library the replay runs (docs/whatif.md).
"""

from __future__ import annotations

import numpy as np

from scalewise.whatif.network import Network


def extra_seconds(net: Network, library: str) -> dict[tuple[str, int], float]:
    """(collective, ranks) -> seconds to add to each call, for ``library``'s replay."""
    if not net.collectives or (net.library and net.library != library):
        return {}
    smallest: dict[tuple[str, int], tuple[int, float]] = {}
    for c in net.collectives:
        key = (c.name, c.ranks)
        if key not in smallest or c.bytes < smallest[key][0]:
            smallest[key] = (c.bytes, max(c.measured_us - c.predicted_us, 0.0) * 1e-6)
    return {key: extra for key, (_, extra) in smallest.items()}


def call_costs(net: Network, library: str, functions: list[str], calls: np.ndarray) -> np.ndarray:
    """Seconds to add to each collective call (rows of engine.CALL) on ``net``."""
    cost = np.zeros(len(calls), dtype=np.float64)
    for (name, ranks), extra in extra_seconds(net, library).items():
        if name in functions:
            cost[(calls["func"] == functions.index(name)) & (calls["ranks"] == ranks)] = extra
    return cost
