"""The collectives part of `scalewise calibrate`: time a few collectives with
the collbench proxy on the ranks the ping-pong ran on, replay one call of each
on the network just fitted, and keep both in the network file.

The replay costs a collective as the point-to-point messages of the algorithm
the library picks (collectives/); a measured collective beside its prediction
shows how far that decomposition is from the library's real run on this
network.  What the library spends beyond the replay of its decomposition is
charged to each such call of a replay with the same library (percall.py).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, replace

from scalewise.errors import ScalewiseError
from scalewise.launch.mpirun import ranks_line, root_env
from scalewise.launch.mpis import family_of
from scalewise.launch.preload import built_library, with_idle_sleep, with_mpich_ucx
from scalewise.whatif.api import replay
from scalewise.whatif.calibrate.pingpong import Calibration, PairCommand, calibrate_link, launch, pause_args, rest_for, run_proxy
from scalewise.whatif.collectives import schedule
from scalewise.whatif.network import MeasuredCollective, Network, Shaping
from scalewise.whatif.trace import Call, from_calls

# collbench's names for the collectives it times, and the MPI functions they are.
COLLECTIVES = {"allreduce": "MPI_Allreduce", "bcast": "MPI_Bcast", "alltoall": "MPI_Alltoall",
               "barrier": "MPI_Barrier"}
SIZES = (8, 65536, 1 << 20)
# A prediction further than this from its measurement is named after the table.
BOUND = 0.25
_LINE = re.compile(r"SCALEWISE_COLL name=(\w+) bytes=(\d+) ranks=(\d+) reps=\d+ median_us=([\d.]+) best_us=([\d.]+)")


@dataclass(frozen=True)
class Timing:
    """One line of collbench: the slowest rank's time of one call, median and fastest repetition."""

    name: str
    bytes: int
    ranks: int
    median: float  # seconds
    best: float


def parse_collectives(text: str) -> tuple[str, ...]:
    """``--collectives``: collbench's short names, comma-separated, or ``none``."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if names == ("none",):
        return ()
    unknown = [n for n in names if n not in COLLECTIVES]
    if unknown or not names:
        raise ScalewiseError(f"--collectives: unknown '{','.join(unknown)}' (expected some of "
                             f"{', '.join(COLLECTIVES)}, or none)")
    return names


def parse_sizes(text: str) -> tuple[int, ...]:
    """``--coll-sizes``: byte counts, comma-separated, each a whole number of doubles (collbench's
    buffers are doubles, the element the replay assumes)."""
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise ScalewiseError(f"--coll-sizes: expected byte counts separated by commas, got '{text}'") from None
    bad = [str(s) for s in sizes if s < 8 or s % 8]
    if bad:
        raise ScalewiseError(f"--coll-sizes: {', '.join(bad)}: not a multiple of 8 bytes from 8 up")
    return sizes


def launch_ranks(flavour: str, ranks: int, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """``ranks`` ranks on this host (more than its cores: oversubscribed, yielding when idle)."""
    crowded = ranks > (os.cpu_count() or 1)
    if family_of(flavour) == "openmpi":
        return [*ranks_line(flavour, ranks), "--bind-to", "none", *(["--oversubscribe"] if crowded else []),
                *argv], with_idle_sleep(root_env(dict(os.environ)), "openmpi")
    env = dict(os.environ)
    if flavour == "mpich":  # Debian's MPICH 4.0 over UCX only (preload.with_mpich_ucx)
        env, _ = with_mpich_ucx(env, oversubscribed=crowded)
        env = with_idle_sleep(env, "mpich")  # when the launch asks for it (preload.IDLE_SLEEP)
    return [*ranks_line(flavour, ranks), *argv], env


def _failure(res: subprocess.CompletedProcess) -> str:
    """collbench's own complaint if it made one, else the launcher's last line."""
    lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip().strip("-")]
    own = [ln for ln in lines if ln.startswith("collbench:")]
    return (own or lines or ["no output"])[-1]


def measure_collectives(flavour: str, names: tuple[str, ...] = tuple(COLLECTIVES), sizes: tuple[int, ...] = SIZES,
                        reps: int = 20, hosts: list[str] | None = None, ranks: int = 2,
                        launcher: PairCommand | None = None, pause: float = 0.0) -> list[Timing]:
    """Collbench's timings of ``names`` (its short names) at ``sizes`` (Barrier once, at 0 B), on the
    ping-pong's ranks: ``launcher`` (e.g. across emulated nodes), else one rank on each of ``hosts``,
    else ``ranks`` ranks here; ``pause`` seconds of rest before each call (a shaped link's bucket
    refills, as the replay of one call assumes)."""
    exe = built_library(flavour, "proxies/collbench", "collective benchmark proxy")
    argv = [str(exe), "--colls", ",".join(names), "--sizes", ",".join(map(str, sizes)), "--reps", str(reps),
            *pause_args(pause)]
    if launcher:
        cmd, env = launcher(argv)
    elif hosts or ranks == 2:
        cmd, env = launch(flavour, hosts, argv)
    else:
        cmd, env = launch_ranks(flavour, ranks, argv)
    out = run_proxy(cmd, env, "the collective benchmark", _failure)
    timings = [Timing(m[0], int(m[1]), int(m[2]), float(m[3]) * 1e-6, float(m[4]) * 1e-6) for m in _LINE.findall(out)]
    expected = sum(1 if n == "barrier" else len(sizes) for n in names)
    if len(timings) != expected:
        raise ScalewiseError(f"calibrate: the collective benchmark printed {len(timings)} of {expected} "
                             f"results ({' '.join(cmd)})")
    return timings


def predict(net: Network, library: str, name: str, nbytes: int, ranks: int) -> float:
    """Seconds the replay gives one call of ``name`` entered by ``ranks`` ranks at once (root 0)."""
    call = Call(name, bytes=nbytes, root=0)
    [p] = replay(from_calls([[call]] * ranks), net, library)
    return p.wall_time


def with_collectives(net: Network, library: str, timings: list[Timing], statistic: str) -> Network:
    """``net`` with its ``collectives`` section: each timing's ``statistic`` beside its replay on ``net``."""
    entries = [MeasuredCollective(name=t.name, bytes=t.bytes, ranks=t.ranks,
                                  algorithm=schedule(library, t.name, t.ranks, t.bytes)[0],
                                  measured_us=round(getattr(t, statistic) * 1e6, 3),  # as collbench printed it
                                  predicted_us=predict(net, library, t.name, t.bytes, t.ranks) * 1e6)
               for t in timings]
    return net.model_copy(update={"collectives": entries})


def off_bound(net: Network, bound: float = BOUND) -> list[MeasuredCollective]:
    """The collectives whose prediction is further than ``bound`` from their measurement."""
    return [c for c in net.collectives or [] if abs(c.error) > bound]


def calibrate_with_collectives(flavour: str, eager_limit: int, name: str, description: str, *,
                               hosts: list[str] | None = None, launcher: PairCommand | None = None,
                               shaping: Shaping | None = None, reps: int = 50, statistic: str = "best",
                               names: tuple[str, ...] = tuple(COLLECTIVES), sizes: tuple[int, ...] = SIZES,
                               ranks: int = 2, measure_duplex: bool = True) -> Calibration:
    """`scalewise calibrate` whole: the point-to-point calibration (calibrate_link), then ``names``
    timed at ``sizes`` on the same ranks and kept beside their replay in the network."""
    cal = calibrate_link(flavour, eager_limit, name, description, hosts=hosts, launcher=launcher,
                         shaping=shaping, reps=reps, statistic=statistic, measure_duplex=measure_duplex)
    net = cal.network.model_copy(update={"library": flavour})
    if names:
        timings = measure_collectives(flavour, names, sizes, reps, hosts, ranks, launcher, rest_for(net.shaping))
        net = with_collectives(net, flavour, timings, statistic)
    return replace(cal, network=net)
