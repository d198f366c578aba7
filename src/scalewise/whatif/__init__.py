"""Interconnect what-if: replay a recorded run on another network (docs/whatif.md).

    from scalewise import whatif
    trace = whatif.from_calls([...])            # or whatif.read_trace("job.swtrace")
    [pred] = whatif.replay(trace, "edr-ib", library="openmpi")
    pred.wall_time, pred.ranks, pred.functions
"""

from scalewise.logfile.tracefile import read_trace, write_trace
from scalewise.whatif.api import Prediction, replay
from scalewise.whatif.network import Network, Shaping, load_network, network, presets
from scalewise.whatif.trace import Call, Kind, Trace, from_calls, sendrecv

__all__ = ["Call", "Kind", "Network", "Prediction", "Shaping", "Trace", "from_calls", "load_network", "network",
           "presets", "read_trace", "replay", "sendrecv", "write_trace"]
