"""`scalewise calibrate`: measure a network's parameters with a ping-pong
sweep between two ranks and fit them into a file the replay accepts.

In the model (docs/whatif.md) an eager message's half round trip is
``2o + L + s*G`` and a rendezvous one adds the RTS/CTS handshake, ``2*L0``.
A ping-pong cannot tell ``o`` from ``L``; streams of messages both ways
measure ``o`` at a few sizes (measure_overheads: the CPU time of a send grows
with its size) and the fit takes it out of each range's intercept
(docs/decisions.md); ``g`` is 0.  Each pair of
neighbouring measured sizes gets its own range, a line through the two
measured half round trips (median by default), so the model reproduces the
ping-pong at every measured size: real transports are not one line (TCP
segments, shaped links, protocol switches).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from scalewise.errors import ScalewiseError
from scalewise.formatting import human_bytes
from scalewise.launch.mpirun import two_ranks
from scalewise.launch.mpis import family_of
from scalewise.launch.releases import release_line
from scalewise.launch.preload import built_library, idle_sleep_forwards, with_idle_sleep, with_mpich_ucx
from scalewise.whatif.network import Network, Shaping

SIZES = (0, 8, 64, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1 << 20, 4 << 20)
# Eager limits of the transports a 2-rank job uses by default, by release line, on one host and
# between two: Open MPI's tcp (btl_tcp_eager_limit 65536, 4.1 and 5.0: ompi_info); its shared
# memory's limit counts the fragment's header, so what goes eagerly is less: 4.1's vader
# (btl_vader_eager_limit 4096) is 4096 and 5.0's sm up to 4016 bytes, measured (docs/benchmarks.md,
# "Eager limits on one host": the half round trip steps by 1 us from the next byte; 4.1's step is at
# 4041, left at 4096 so far).  Debian's MPICH 4.0 ch4 over UCX switches to rendezvous at UCX's 8 KiB;
# MPICH 5.0 on one host sends up to 8112 bytes in one 8192-byte cell
# (MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE, less its header; measured, a 1.4 us step from 8113),
# between hosts over UCX, its default netmod, like 4.0; Intel MPI reports its shared-memory cell sizes
# as -1 (automatic): 64 KiB is its documented forward cell, an assumption the network file states.
EAGER = {("openmpi-4.1", True): 4096, ("openmpi-4.1", False): 65536, ("openmpi-5.0", True): 4016,
         ("openmpi-5.0", False): 65536, ("mpich-4.0", True): 8192, ("mpich-4.0", False): 8192,
         ("mpich-5.0", True): 8112, ("mpich-5.0", False): 8192, ("intelmpi-2021", True): 65536,
         ("intelmpi-2021", False): 65536}
EAGER_ASSUMED = {"intelmpi-2021": "Intel MPI's eager limit assumed 64 KiB (its documented shared-memory forward cell; "
                                  "--eager-limit sets it)"}


def eager_limit(flavour: str, same_host: bool) -> int:
    """The default transport's eager limit for ``flavour`` (a Debian short name or an identity)."""
    return EAGER[(release_line(flavour, "calibrate --mpi"), same_host)]


# The variables that make two ranks on one host talk over TCP on the loopback instead of shared
# memory: a second transport to calibrate and predict on one machine.
TCP_LOOPBACK = {"openmpi": {"OMPI_MCA_btl": "self,tcp"}, "mpich": {"UCX_TLS": "tcp"}}
# Which half round trip of each size to fit: the fastest (the default: other
# jobs on a shared machine only ever add to a round trip, so the fastest of
# many is what the link and library cost; on a loaded 2-core machine the median
# was 70 times the link's latency) or the median (what a message typically
# costs on a quiet, dedicated machine).  Both are measured and kept.
STATISTICS = ("best", "median")
_LINE = re.compile(r"SCALEWISE_PINGPONG bytes=(\d+) .*? half_rtt_us=([\d.]+) .*?best_half_rtt_us=([\d.]+)"
                   r".*?mean_half_rtt_us=([\d.]+)")
_STREAM = re.compile(r"SCALEWISE_STREAM .*? stream_us=([\d.]+) best_stream_us=([\d.]+) mean_stream_us=([\d.]+)")
_COLUMN = {"median": 0, "best": 1, "mean": 2}  # the proxies print the median, the fastest, then the mean
STREAM = 200  # small messages each way per stream: one latency is a small part of it
# The sizes whose streams give o(size): eager on every transport above (MPICH's limit is 8 KiB).
STREAM_SIZES = (8, 1024, 8192)
# Bytes each way a stream of larger messages carries: within a shaped link's 64 KiB bucket
# (links.bucket_bytes) with room for the headers, so that the stream, rested, is the CPU's time
# and not the limit's.
STREAM_HELD = 48 * 1024


# Turns "the ping-pong's own argv" into the command line and environment that run it on two ranks.
PairCommand = Callable[[list[str]], tuple[list[str], dict[str, str]]]


def launch(flavour: str, hosts: list[str] | None, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """Two ranks here, or one on each of ``hosts``, with the library's launcher."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if family_of(flavour) == "openmpi":
        where = ["-H", ",".join(hosts)] if hosts else []
        forward = idle_sleep_forwards(env) if hosts else []
        return [*two_ranks(flavour), "--bind-to", "none", *forward, *where, *argv], with_idle_sleep(env, "openmpi")
    if flavour == "mpich":  # Debian's MPICH 4.0 over UCX only (preload.with_mpich_ucx)
        env, _ = with_mpich_ucx(env, oversubscribed=False)
        env = with_idle_sleep(env, "mpich")  # the ranks sleep while they wait when the launch asks (preload.IDLE_SLEEP)
    where = ["-hosts", ",".join(hosts)] if hosts else []
    return [*two_ranks(flavour), *where, *argv], env


def rest_for(shaping: Shaping | None) -> float:
    """Seconds of rest before each round trip (or timed call) that refill a shaped link's bucket
    (a round trip takes at most the whole bucket in each direction), with a tenth to spare."""
    return 1.1 * shaping.bucket_bytes / shaping.bytes_per_second if shaping else 0.0


def pause_args(pause: float) -> list[str]:
    """The proxies' ``--pause-us`` for ``pause`` seconds of busy rest (none for 0)."""
    return ["--pause-us", str(math.ceil(pause * 1e6))] if pause > 0 else []


def _last_line(res: subprocess.CompletedProcess) -> str:
    """The last line of stderr that says something: Open MPI frames its messages in rules of dashes."""
    said = [line.strip() for line in res.stderr.splitlines() if line.strip("-= \t")]
    return (said or ["no output"])[-1]


def run_proxy(cmd: list[str], env: dict[str, str], what: str,
              complaint: Callable[[subprocess.CompletedProcess], str] = _last_line) -> str:
    """A calibration proxy's output; a one-line error naming ``what`` when it hangs or fails
    (``complaint`` picks the line to quote)."""
    try:
        res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise ScalewiseError(f"calibrate: {what} did not finish in 600 s ({' '.join(cmd)})") from None
    if res.returncode:
        raise ScalewiseError(f"calibrate: {what} failed (exit {res.returncode}): {complaint(res)}")
    return res.stdout


def _pingpong(flavour: str, hosts: list[str] | None, launcher: PairCommand | None, args: list[str]) -> str:
    """The ping-pong proxy's output, run with ``args`` on two ranks."""
    exe = built_library(flavour, "proxies/pingpong", "ping-pong proxy")
    cmd, env = (launcher or (lambda argv: launch(flavour, hosts, argv)))([str(exe), *args])
    return run_proxy(cmd, env, "the ping-pong")


def measure_both(flavour: str, hosts: list[str] | None = None, sizes=SIZES, reps: int = 50,
                 launcher: PairCommand | None = None, pause: float = 0.0) -> dict[str, dict[int, float]]:
    """Half round trips in seconds per message size, by statistic (``best``, ``median``, ``mean``);
    ``launcher`` (e.g. across emulated nodes) replaces the library's own launch here or on
    ``hosts``; ``pause`` seconds of rest before each round trip (a shaped link's bucket refills)."""
    args = ["--sizes", ",".join(map(str, sizes)), "--reps", str(reps), *pause_args(pause)]
    out = _pingpong(flavour, hosts, launcher, args)
    found = _LINE.findall(out)
    both = {k: {int(m[0]): float(m[1 + col]) * 1e-6 for m in found} for k, col in _COLUMN.items()}
    if len(both["best"]) != len(sizes):
        raise ScalewiseError(f"calibrate: the ping-pong printed {len(both['best'])} of {len(sizes)} sizes")
    return both


def measure(flavour: str, hosts: list[str] | None = None, sizes=SIZES, reps: int = 50,
            launcher: PairCommand | None = None, statistic: str = "best", pause: float = 0.0) -> dict[int, float]:
    """The fastest (or median) half round trip in seconds per message size (measure_both)."""
    return measure_both(flavour, hosts, sizes, reps, launcher, pause)[statistic]


def stream_times(flavour: str, hosts: list[str] | None, launcher: PairCommand | None, reps: int, msgs: int,
                 size: int = 8, pause: float = 0.0, what: str | None = None) -> dict[str, float]:
    """Seconds the slower rank takes for ``msgs`` messages of ``size`` bytes each way, back to back,
    by statistic (``median``, ``best``, ``mean`` of the ``reps`` repetitions); ``what`` names the
    messages in the error when the ping-pong prints none."""
    args = ["--sizes", "0", "--reps", str(reps), "--stream", str(msgs), "--stream-bytes", str(size),
            *pause_args(pause)]
    stream = _STREAM.findall(_pingpong(flavour, hosts, launcher, args))
    if len(stream) != 1:
        raise ScalewiseError(f"calibrate: the ping-pong printed no {what or f'stream of {size}-byte messages'}")
    return {k: float(stream[0][column]) * 1e-6 for k, column in _COLUMN.items()}


def stream_time(flavour: str, hosts: list[str] | None, launcher: PairCommand | None, reps: int, statistic: str,
                msgs: int, size: int = 8, pause: float = 0.0) -> float:
    """stream_times' ``statistic``."""
    return stream_times(flavour, hosts, launcher, reps, msgs, size, pause)[statistic]


def stream_msgs(size: int) -> int:
    """Messages each way in the stream of ``size``-byte messages: STREAM small ones, else what
    STREAM_HELD holds (at least 4)."""
    return STREAM if size <= 8 else max(4, min(STREAM, STREAM_HELD // size))


def measure_overheads(flavour: str, half_rtt: dict[int, float], hosts: list[str] | None = None, reps: int = 50,
                      launcher: PairCommand | None = None, statistic: str = "best",
                      pause: float = 0.0) -> dict[int, float]:
    """``o`` in seconds at each of STREAM_SIZES (that ``half_rtt``, the ping-pong's, has too).

    At 8 bytes, measure_overhead.  A stream of n larger messages takes ``2 n o + L + s G`` in the
    model and the ping-pong's half round trip ``2 o + L + s G``: their difference is
    ``2 (n - 1) o``, the latency and the wire cancel.  Never below the 8-byte ``o``.  ``pause``
    rests a shaped link before each stream (which STREAM_HELD lets its bucket hold)."""
    o8 = measure_overhead(flavour, hosts, reps, launcher, statistic)
    found = {8: o8}
    for size in STREAM_SIZES[1:]:
        if size not in half_rtt:
            continue
        n = stream_msgs(size)
        took = stream_time(flavour, hosts, launcher, reps, statistic, n, size, pause)
        found[size] = max(o8, (took - half_rtt[size]) / (2 * (n - 1)))
    return found


def measure_overhead(flavour: str, hosts: list[str] | None = None, reps: int = 50, launcher: PairCommand | None = None,
                     statistic: str = "best", msgs: int = STREAM) -> float:
    """The CPU time per message ``o``, in seconds, from streams of small messages both ways.

    Two ranks each send the other n eager messages back to back, their
    receives posted; in the model each rank pays ``o`` per message sent and
    ``o`` per message received, and the messages arrive while it is still
    sending, so a stream takes ``2 n o`` (plus one latency, which n makes
    small): ``o = stream / 2n``."""
    return stream_time(flavour, hosts, launcher, reps, statistic, msgs) / (2 * msgs)


def fit(points: dict[int, float], eager_limit: int, name: str, description: str,
        shaping: Shaping | None = None, overhead: float | dict[int, float] = 0.0) -> Network:
    """One range per pair of neighbouring sizes, its line through both measured points.

    A larger message is never taken as cheaper than a smaller one.  Above the
    eager limit the model adds the rendezvous handshake (``2 * L0``, ``L0`` the
    first range's latency) itself, so it is taken out of those points.  On a
    shaped link (measured rested, each round trip after a pause) the model
    adds the bucket's wait for what a message has beyond the bucket, so that
    is taken out too and the ranges describe the link without its limit.
    Where the line through two points would cross zero below them (a steep
    step) the range starts at 0 and passes through its upper point.

    ``overhead`` (``o``, from measure_overhead, or ``o`` by size from
    measure_overheads, read between the sizes on a line and flat beyond them)
    is taken out of each range's intercept, which is ``2o + L`` in the model,
    at the range's upper size, and never more than half of it: the ping-pong
    is still reproduced at every measured size (beyond a shaped link's bucket,
    where ``shaping`` holds a slower payload share than ``points``, as
    calibrate_link's from the median round trips, the share's time)."""
    if len(points) < 2:
        raise ScalewiseError("calibrate: fewer than 2 message sizes measured")
    sizes = sorted(points)
    held = [max(s - shaping.payload_bucket, 0) / shaping.payload_per_second if shaping else 0.0 for s in sizes]
    times = np.maximum.accumulate([max(points[s] - h, 0.0) for s, h in zip(sizes, held)])
    by_size = overhead if isinstance(overhead, dict) else {0: overhead}
    known = sorted(by_size)

    def o_at(size: float) -> float:
        return float(np.interp(size, known, [by_size[k] for k in known]))

    o = min(o_at(sizes[0]), times[0] / 2)
    handshake = 2 * (times[0] - 2 * o)  # 2 L0
    wire = [t - handshake if s > eager_limit else t for s, t in zip(sizes, times)]
    ranges = []
    for k in range(1, len(sizes)):
        (s0, t0), (s1, t1) = (sizes[k - 1], wire[k - 1]), (sizes[k], wire[k])
        slope = max((t1 - t0) / (s1 - s0), 1e-15)  # flat: as fast as measurable
        intercept = max(t1 - slope * s1, 0.0)
        slope = max((t1 - intercept) / s1, 1e-15)
        ok = min(o_at(sizes[k]), intercept / 2)
        ranges.append({"upto": sizes[k] if k < len(sizes) - 1 else math.inf, "latency_us": (intercept - 2 * ok) * 1e6,
                       "overhead_us": ok * 1e6, "gap_us": 0.0, "bandwidth_gbit_s": 8.0 / slope / 1e9})
    return Network(name=name, description=description, eager_limit=eager_limit, ranges=ranges, shaping=shaping)


def share_sizes(points: dict[int, float], shaping: Shaping) -> list[int]:
    """The sizes the payload share is read from: the two largest beyond twice the bucket."""
    return [s for s in sorted(points) if s > 2 * shaping.bucket_bytes][-2:]


def measured_share(points: dict[int, float], shaping: Shaping) -> float | None:
    """The payload rate between the two largest rested round trips over the link's rate, as measured
    (above 1 when noise made the larger one quick); None when fewer than two sizes are beyond the
    bucket or the larger took no longer."""
    big = share_sizes(points, shaping)
    if len(big) < 2 or points[big[1]] <= points[big[0]]:
        return None
    return (big[1] - big[0]) / (points[big[1]] - points[big[0]]) / shaping.bytes_per_second


def payload_share(points: dict[int, float], shaping: Shaping) -> float:
    """The share of a shaped link's rate that carries payload, from the two largest rested round
    trips: beyond the bucket a message leaves at the payload rate (the link's rate less the
    packets' headers), so their difference over the difference in size is that rate.  At most 1
    (a faster slope is noise: the limit is the limit)."""
    share = measured_share(points, shaping)
    return 1.0 if share is None else min(1.0, share)


# Repetitions of the two largest sizes from which the payload share is measured again when a sweep of
# fewer gave a share the packets' headers cannot explain (below LEAST_PAYLOAD_SHARE, or above the
# link's rate).  A rested 4 MiB round trip across a 100 Mbit/s link that hits TCP's retransmission
# timeout takes about 100 ms more (a dropped segment at the link's 2 ms queue, 200 ms to resend), so
# the median of 3 such round trips, when 2 of them hit it, gave a share near 0.7 (docs/decisions.md).
SHARE_REPS = 15
# Measures the given sizes again (rested, SHARE_REPS times each): their half round trips by statistic.
Remeasure = Callable[[tuple[int, ...]], dict[str, dict[int, float]]]


def link_payload_share(points: dict[str, dict[int, float]], shaping: Shaping, again: Remeasure | None = None) -> float:
    """payload_share of the median round trips (``points`` by statistic), not the fastest: an
    application's large transfers take the median's time (dft's 1 MiB exchanges at 1 Gbit/s took
    1.0-1.7 ms more each than the fastest's rate gives; at 100 Mbit/s the two rates agree),
    docs/decisions.md.  ``again``, when given (a sweep of fewer than SHARE_REPS repetitions),
    measures the two sizes again when the share is outside what headers allow; the median of the
    new round trips then gives the share (which, still low, calibration_doubts reports)."""
    share = measured_share(points["median"], shaping)
    if again is not None and share is not None and not LEAST_PAYLOAD_SHARE <= share <= 1.0:
        share = measured_share(again(tuple(share_sizes(points["median"], shaping)))["median"], shaping)
    return round(1.0 if share is None else min(1.0, share), 4)


# A message this large both ways at once, against one way, tells whether the transport moves
# both directions of a shaped link at once (MPICH: 351 ms against 346 ms for 4 MiB at 100 Mbit/s)
# or one after the other (Open MPI's TCP transport: 692 ms).
BOTH_WAYS_BYTES = 4 << 20
# Both ways taking at least this many times one way is a half-duplex transport.
HALF_DUPLEX_RATIO = 1.5


# Launches of the both-ways exchange: a launch of Open MPI's exchanges either all take turns or none
# do, and a launch that other jobs disturbed reads slow, so one launch is not enough.
BOTH_WAYS_LAUNCHES = 3
# Exchanges timed in each launch (5 before 2026-11-27): the median of more moves less, and their mean,
# reported beside it, holds the slow ones (a 1 MiB transfer at 1 Gbit/s took 1.6-4.6 times its
# fastest in a few of 60).
BOTH_WAYS_REPS = 10


def exchange_ratios(flavour: str, one_way: float, hosts: list[str] | None = None,
                    launcher: PairCommand | None = None, pause: float = 0.0,
                    reps: int = BOTH_WAYS_REPS) -> dict[str, float]:
    """How many times the time of one BOTH_WAYS_BYTES message one way (``one_way``, the ping-pong's
    fastest half round trip) a message of that size each way at once takes in one launch, by
    statistic: ``median`` (duplex_terms: Open MPI's took 2.0 times in most exchanges and 1.0 in
    some, in 6 launches of 5 each, so the fastest says the wrong thing) and ``mean`` (its slow ones
    included; reported beside, not a term)."""
    took = stream_times(flavour, hosts, launcher, reps, 1, BOTH_WAYS_BYTES, pause,
                        what=f"exchange of {human_bytes(BOTH_WAYS_BYTES)}")
    return {k: took[k] / one_way for k in ("median", "mean")}


def exchange_launches(flavour: str, one_way: float, hosts: list[str] | None = None,
                      launcher: PairCommand | None = None, pause: float = 0.0,
                      launches: int = BOTH_WAYS_LAUNCHES) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """exchange_ratios in each of ``launches`` launches: their median exchanges' ratios (what
    duplex_terms reads), then their mean exchanges' ratios (reported beside)."""
    each = [exchange_ratios(flavour, one_way, hosts, launcher, pause) for _ in range(launches)]
    return tuple(x["median"] for x in each), tuple(x["mean"] for x in each)


def duplex_terms(ratios: tuple[float, ...]) -> tuple[dict[str, object], str | None]:
    """What the launches' both-ways ratios (their median exchanges) make of a network: ``duplex:
    half`` when every launch took at least HALF_DUPLEX_RATIO times one way, ``both_ways`` (the median
    launch, within 1..2) when none did; and no term but a doubt when some launches took turns and
    others did not (Open MPI's TCP defaults: a launch's exchanges all take turns or none do), since
    either term would be wrong for some runs.  A launch that other jobs slowed moves the median
    little.  Not the mean exchange: it swung from 1.12 to 1.29 between launches on one link and made
    MPICH's dft at 100 Mbit/s 4-14% slow, where it was 4% fast without the term (docs/decisions.md)."""
    half = [r >= HALF_DUPLEX_RATIO for r in ratios]
    if any(half) and not all(half):
        return {}, (f"a {human_bytes(BOTH_WAYS_BYTES)} message both ways at once took "
                    f"{', '.join(f'{r:.2f}' for r in ratios)} times one way in {len(ratios)} launches: "
                    f"neither half nor full duplex holds, none recorded")
    if all(half):
        return {"duplex": "half"}, None
    # both at once, each a little slower than alone (MPICH at 100 Mbit/s: 1.03-1.11)
    return {"both_ways": round(min(max(float(np.median(ratios)), 1.0), 2.0), 4)}, None


@dataclass(frozen=True)
class Calibration:
    """A fitted network and what it was fitted from: half round trips per size by statistic
    (seconds), the overhead ``o`` of small messages (seconds), ``o`` by message size, and the
    reasons, if any, not to trust it."""

    network: Network
    points: dict[str, dict[int, float]]
    overhead: float
    doubts: tuple[str, ...] = ()
    overheads: dict[int, float] | None = None
    both_ways_launches: tuple[float, ...] = ()  # the median exchange's ratio in each launch, on a shaped link
    both_ways_means: tuple[float, ...] = ()  # the mean exchange's ratio in each launch (exchange_ratios)

    @property
    def both_ways(self) -> float | None:
        """The median launch's both-ways ratio; None when it was not measured."""
        return float(np.median(self.both_ways_launches)) if self.both_ways_launches else None


def calibrate_link(flavour: str, eager_limit: int, name: str, description: str, *,
                   hosts: list[str] | None = None, launcher: PairCommand | None = None,
                   shaping: Shaping | None = None, reps: int = 50, statistic: str = "best",
                   measure_duplex: bool = True) -> Calibration:
    """The whole point-to-point calibration: the ping-pong sweep (rested before each round trip on
    a shaped link), the streams that give ``o``, the payload share of a shaped link (from the median
    round trips of its two largest sizes, whatever ``statistic``), the fit,
    whether a shaped link's transport moves both directions at once (exchange_launches), and the
    checks of trust (calibration_doubts)."""
    both = measure_both(flavour, hosts, reps=reps, launcher=launcher, pause=rest_for(shaping))
    o = measure_overheads(flavour, both[statistic], hosts, reps=reps, launcher=launcher, statistic=statistic,
                          pause=rest_for(shaping))
    if shaping:
        rest = rest_for(shaping)

        def again(sizes: tuple[int, ...]) -> dict[str, dict[int, float]]:
            return measure_both(flavour, hosts, sizes, SHARE_REPS, launcher, pause=rest)

        share = link_payload_share(both, shaping, again if reps < SHARE_REPS else None)
        shaping = shaping.model_copy(update={"payload_share": share})
    net = fit(both[statistic], eager_limit, name, description, shaping, o)
    ratios: tuple[float, ...] = ()
    means: tuple[float, ...] = ()
    duplex_doubt = None
    # On a shaped link, unless told not to: several launches, their median, and a doubt instead of a
    # term when they disagree (under load a single disturbed exchange read as half duplex, and an
    # MPICH calibration at load 3-4 then predicted dft 33-74% slow across links).
    if measure_duplex and shaping and BOTH_WAYS_BYTES in both[statistic]:
        ratios, means = exchange_launches(flavour, both["best"][BOTH_WAYS_BYTES], hosts, launcher, rest_for(shaping))
        terms, duplex_doubt = duplex_terms(ratios)
        net = net.model_copy(update=terms)
    doubts = calibration_doubts(both, shaping) + ((duplex_doubt,) if duplex_doubt else ())
    if doubts:
        net = net.model_copy(update={"doubts": list(doubts)})
    return Calibration(net, both, o[8], doubts, o, ratios, means)


def calibrated_network(flavour: str, eager_limit: int, name: str, description: str, *,
                       hosts: list[str] | None = None, launcher: PairCommand | None = None,
                       shaping: Shaping | None = None, reps: int = 50, statistic: str = "best") -> Network:
    """The fitted network of calibrate_link."""
    return calibrate_link(flavour, eager_limit, name, description, hosts=hosts, launcher=launcher,
                          shaping=shaping, reps=reps, statistic=statistic).network


# A calibration is not trusted when most small round trips took this many times the fastest
# (other jobs took the CPU in most of them, so even the fastest may be one such)...
BUSY_SPREAD = 3.0
# ...or when a shaped link's measured payload rate is below this share of its configured rate
# (headers and acknowledgements take 3-11% of it; more is the machine, not the link).
LEAST_PAYLOAD_SHARE = 0.8


def calibration_doubts(points: dict[str, dict[int, float]], shaping: Shaping | None) -> tuple[str, ...]:
    """Why a calibration should not be trusted, each in a few words; none when it holds.

    The checks compare what was measured with what is known: the median and the fastest small
    round trip (a quiet machine gives them within a few tens of percent) and a shaped link's
    payload rate against its configured rate."""
    best, median = points["best"], points["median"]
    doubts = []
    small = [s for s in best if s <= 1024]
    spread = max(median[s] / best[s] for s in small) if small and all(best[s] > 0 for s in small) else 1.0
    if spread > BUSY_SPREAD:
        doubts.append(f"the machine was busy: the median round trip of small messages took up to {spread:.0f} "
                      f"times the fastest")
    if shaping and shaping.payload_share < LEAST_PAYLOAD_SHARE:
        doubts.append(f"large messages moved {shaping.payload_share:.0%} of the link's configured "
                      f"{shaping.rate_gbit_s:g} Gbit/s")
    return tuple(doubts)


def write_network(net: Network, path: Path) -> Path:
    data = net.model_dump(exclude_none=True)  # a file without measured collectives has no such section
    for r in data["ranges"]:
        r["upto"] = float(r["upto"]) if math.isinf(r["upto"]) else int(r["upto"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
