"""What the terminal summary quotes of one run, from the log's plain rows
(logfile/plain.py), without numpy or pandas.

The same numbers as the analysis over frames (findings.py, breakdown.py,
volume.py, sizes.py, matrix.py, timeline.py, mpit.py, setup.py, pop_metrics.py),
added in the order those libraries add them (plainsum.py), so that the
summary prints the same bytes either way (tests/report/test_lean_summary.py
holds the two side by side over real logs).  Only what the summary shows is
computed: no matrix, no time bins, no call sites, no class table.

``log`` is a PlainLog (or anything with its attributes); this layer does not
import the log's readers.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from scalewise.analysis.run.plainsum import (NAN, group_means, group_sums, median, nanmax, nanmean, np_mean, np_std,
                                             np_sum, percentile)
from scalewise.analysis.run.pop_metrics import PopMetrics
from scalewise.analysis.run.sentences import (ABORTED_NOTE, DOMINANT_PCT_MPI, NO_CALLS_NOTE, NONBLOCKING_SENDS,
                                              SINGLE_RANK_NOTE, bound_text, calls_text, dominant_text,
                                              imbalance_text, locality_text, overlap_text, partial_note, setup_note,
                                              sizes_text, volume_text)
from scalewise.analysis.run.setup import NodeSetup, RunSetup, node_verdict
from scalewise.model.bins import bin_bounds

CREDITED_CLASSES = ("wait", "test")  # as sizes.CREDITED_CLASSES
OUTSIDE, OTHER = "(outside phases)", "(other phases)"


@dataclass(frozen=True)
class Spread:
    """breakdown.Spread's fields the summary reads, and the median."""

    total: float
    mean: float
    min: float
    max: float
    max_over_mean: float
    cv: float
    min_rank: int
    max_rank: int
    median: float


def spread(values: list[float], ranks: list[int]) -> Spread:
    if not values:
        return Spread(0.0, NAN, NAN, NAN, NAN, NAN, -1, -1, NAN)
    mean, std = np_mean(values), np_std(values)
    lo, hi = min(values), max(values)
    return Spread(total=np_sum(values), mean=mean, min=lo, max=hi,
                  max_over_mean=hi / mean if mean > 0 else NAN, cv=std / mean if mean > 0 else NAN,
                  min_rank=int(ranks[values.index(lo)]), max_rank=int(ranks[values.index(hi)]),
                  median=percentile(values, 50))


@dataclass(frozen=True)
class Breakdown:
    """breakdown.TimeBreakdown's fields the summary reads."""

    nranks_present: int
    total_wall: float
    total_mpi: float
    total_compute: float
    mpi_share: float
    wall: Spread
    mpi: Spread
    compute: Spread
    mpi_pct: Spread
    profiler: Spread | None
    total_profiler: float
    profiler_init: Spread | None
    profiler_finalize: Spread | None


def breakdown(log) -> Breakdown:
    rows = sorted(log.ranks, key=lambda r: r["rank"])
    ranks = [int(r["rank"]) for r in rows]
    measured = "profiler_time" in log.columns
    wall = [float(r["wall"]) for r in rows]
    mpi = [float(r["mpi_time"]) for r in rows]
    own = [(0.0 if r["profiler_time"] != r["profiler_time"] else float(r["profiler_time"])) if measured else 0.0
           for r in rows]
    compute = [float(r["compute_time"]) for r in rows]
    mpi_pct = [100.0 * m / w if w > 0 else NAN for m, w in zip(mpi, wall)]
    total_wall, total_mpi = np_sum(wall), np_sum(mpi)
    outside = {c: spread([float(r[c]) for r in rows], ranks) if measured else None
               for c in ("profiler_init", "profiler_finalize")}
    return Breakdown(
        nranks_present=len(rows), total_wall=total_wall, total_mpi=total_mpi, total_compute=np_sum(compute),
        mpi_share=total_mpi / total_wall if total_wall > 0 else NAN,
        wall=spread(wall, ranks), mpi=spread(mpi, ranks), compute=spread(compute, ranks),
        mpi_pct=spread([0.0 if p != p else p for p in mpi_pct], ranks),
        profiler=spread(own, ranks) if measured else None, total_profiler=np_sum(own), **outside)


@dataclass(frozen=True)
class FunctionTotals:
    function: str
    fclass: str
    calls: int
    time: float
    bytes: int
    pct_wall: float
    pct_mpi: float
    pct_calls: float


def function_table(log) -> list[FunctionTotals]:
    """breakdown.function_table's rows the summary reads, in its order."""
    f = log.functions
    if not [r for r in f if r[2] != "init"]:
        return []
    names = [r[1] for r in f]
    times = group_sums(names, [r[4] for r in f], sort=False)
    fclass: dict[str, str] = {}
    calls: dict[str, int] = {}
    nbytes: dict[str, int] = {}
    for _, name, cls, c, _, _, _, b in f:
        fclass.setdefault(name, cls)
        calls[name] = calls.get(name, 0) + c
        nbytes[name] = nbytes.get(name, 0) + b
    # function_totals orders by time (descending, ties as they came), then drops MPI_Init and MPI_Finalize
    order = sorted(times, key=lambda n: -times[n])
    order = [n for n in order if fclass[n] != "init"]
    total_wall = np_sum([r["wall"] for r in log.ranks])
    total_time = np_sum([times[n] for n in order])
    total_calls = float(sum(calls[n] for n in order))
    rows = [FunctionTotals(n, fclass[n], calls[n], times[n], nbytes[n],
                           100.0 * times[n] / total_wall if total_wall > 0 else NAN,
                           100.0 * times[n] / total_time if total_time > 0 else NAN,
                           100.0 * calls[n] / total_calls if total_calls > 0 else NAN) for n in order]
    return sorted(rows, key=lambda r: (-r.time, -r.calls))


@dataclass(frozen=True)
class SizeCount:
    function: str
    credited: bool
    bin: int
    lo: int
    hi: int
    count: int
    size_min: float
    size_max: float


def size_counts(log) -> list[SizeCount]:
    """sizes.size_distribution's counts: per (function, bin) over ranks, with the mean sizes (_mean_sizes)."""
    counts: dict[tuple[str, int], int] = {}
    for _, name, b, _, _, c in log.hist:
        counts[(name, b)] = counts.get((name, b), 0) + c
    classes: dict[str, str] = {}
    for r in log.functions:
        classes.setdefault(r[1], r[2])
    sizes = _mean_sizes(log)
    out = []
    for (name, b), c in sorted(counts.items()):
        if c > 0:
            lo, hi = bin_bounds(b)
            smallest, largest = sizes.get((name, b), (NAN, NAN))
            out.append(SizeCount(name, classes.get(name, "other") in CREDITED_CLASSES, b, lo, hi, c, smallest, largest))
    return out


def _mean_sizes(log) -> dict[tuple[str, int], tuple[float, float]]:
    per: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for rank, name, b, _, _, c in log.hist:
        if c > 0:
            per.setdefault((rank, name), []).append((b, c))
    nbytes = {(r[0], r[1]): r[7] for r in log.functions}
    out: dict[tuple[str, int], tuple[float, float]] = {}
    for (rank, name), bins in per.items():
        if len({b for b, _ in bins}) != 1 or (rank, name) not in nbytes:
            continue
        b = bins[0][0]
        lo, hi = bin_bounds(b)
        mean = nbytes[(rank, name)] / sum(c for _, c in bins)
        if lo <= mean < hi:
            old = out.get((name, b))
            out[(name, b)] = (mean, mean) if old is None else (min(old[0], mean), max(old[1], mean))
    return out


def size_range(counts: list[SizeCount], function: str, coverage: float = 0.9) -> tuple[float, float] | None:
    """sizes.size_range over size_counts' rows."""
    part = sorted((c for c in counts if c.function == function), key=lambda c: (-c.count, c.bin))
    if not part:
        return None
    total, running, share = sum(c.count for c in part), 0, []
    for c in part:
        running += c.count
        share.append(running / total)
    keep = part[:bisect_left(share, coverage - 1e-12) + 1]
    low = min(keep, key=lambda c: c.bin)
    high = max(keep, key=lambda c: c.bin)
    smallest = low.size_min if low.size_min == low.size_min else low.lo
    largest = high.size_max if high.size_max == high.size_max else high.lo
    return _whole(smallest), _whole(largest)


def _whole(size: float) -> float:
    return int(size) if float(size).is_integer() else float(size)


@dataclass(frozen=True)
class Neighbourhood:
    empty: bool
    peers_median: float
    peers_max: float
    within: list[tuple[int, float]]  # (k, bytes_share)
    top_offsets: list[int]  # the busiest offsets, most bytes first
    nranks: int  # the world size the offsets wrap around


def world_size(log) -> int:
    n = log.nranks
    if log.ranks:
        n = max(n, max(r["rank"] for r in log.ranks) + 1)
    if log.p2p:
        n = max(n, max(max(p[0], p[1]) for p in log.p2p) + 1)
    return max(n, 1)


def neighbourhood(log, top: int = 8) -> Neighbourhood:
    """matrix.neighbourhood's numbers the findings quote."""
    n = world_size(log)
    ranks = sorted(r["rank"] for r in log.ranks)
    partners: dict[int, set[int]] = {}
    for src, dst, _, _ in log.p2p:
        if src != dst:
            partners.setdefault(src, set()).add(dst)
            partners.setdefault(dst, set()).add(src)
    peers = [float(len(partners.get(r, ()))) for r in ranks]
    total_b = float(sum(p[3] for p in log.p2p))
    total_m = float(sum(p[2] for p in log.p2p))
    offset = [((dst - src + n // 2) % n - n // 2) for src, dst, _, _ in log.p2p]
    ks = [1]
    while ks[-1] < n // 2:
        ks.append(ks[-1] * 2)
    within = [(k, float(sum(p[3] for p, o in zip(log.p2p, offset) if abs(o) <= k)) / total_b if total_b > 0 else NAN)
              for k in ks]
    by_offset: dict[int, list[int]] = {}
    for p, o in zip(log.p2p, offset):
        if o != 0:
            got = by_offset.setdefault(o, [0, 0])
            got[0] += p[3]
            got[1] += p[2]
    busiest = sorted(by_offset, key=lambda o: (-by_offset[o][0], -by_offset[o][1], o))[:top]
    return Neighbourhood(empty=int(total_m) == 0 and int(total_b) == 0,
                         peers_median=percentile(peers, 50) if peers else NAN,
                         peers_max=max(peers) if peers else NAN, within=within, top_offsets=busiest, nranks=n)


@dataclass(frozen=True)
class Volume:
    total: int
    p2p_total: int
    collective_total: int
    per_rank_total: Spread


def volume(log) -> Volume:
    """volume.data_volume's totals: bytes each rank present sent (point-to-point at the sender,
    collectives and one-sided as the calls count them)."""
    ranks = sorted(int(r["rank"]) for r in log.ranks)
    sent = dict.fromkeys(ranks, 0)
    for src, _, _, b in log.p2p:
        if src in sent:
            sent[src] += b
    kinds = {k: dict.fromkeys(ranks, 0) for k in ("collective", "rma")}
    for rank, _, fclass, _, _, _, _, b in log.functions:
        if fclass in kinds and rank in kinds[fclass]:
            kinds[fclass][rank] += b
    totals = [sent[r] + kinds["collective"][r] + kinds["rma"][r] for r in ranks]
    return Volume(total=sum(totals), p2p_total=sum(sent.values()), collective_total=sum(kinds["collective"].values()),
                  per_rank_total=spread([float(t) for t in totals], ranks))


def run_setup(log) -> RunSetup | None:
    """setup.run_setup over the rank rows."""
    if "cpus_online" not in log.columns or not log.ranks:
        return None
    hosts: dict[str, list[dict]] = {}
    for r in log.ranks:
        hosts.setdefault(str(r["host"]), []).append(r)
    return RunSetup([_node(host, hosts[host]) for host in sorted(hosts)])


def _first(values: list[float], default: float = NAN) -> float:
    v = [x for x in values if x == x]
    return float(v[0]) if v else default


def _node(host: str, r: list[dict]) -> NodeSetup:
    col = lambda c: [float(x[c]) for x in r]  # noqa: E731
    ranks = int(_first(col("ranks_on_node"), len(r)))
    threads = max(1, int(nanmax(col("omp_threads"))))
    online = int(nanmax(col("cpus_online")))
    cores = int(_first(col("node_cpus"), nanmax(col("cpus_allowed"))))
    window = col("setup_window")
    cpu = [u + s for u, s in zip(col("cpu_user"), col("cpu_sys"))]
    per_window = lambda v: [x / w if w > 0 else NAN for x, w in zip(v, window)]  # noqa: E731
    share = median(per_window(cpu))
    busy, total, steal = (nanmean(col(c)) for c in ("node_busy", "node_total", "node_steal"))
    wall = nanmean(window)
    others = max(0.0, (busy - np_sum(cpu)) / wall) if wall > 0 and not math.isnan(busy) else NAN
    steal_share = steal / total if total and not math.isnan(total) else NAN
    oversubscribed, contended = node_verdict(ranks, threads, cores, online, others, steal_share)
    return NodeSetup(host=host, ranks=ranks, threads=threads, cores=cores, cpus_online=online,
                     oversubscribed=oversubscribed, cpu_share=share, others_cores=others, steal_share=steal_share,
                     load_start=nanmax(col("load1_start")), load_end=nanmax(col("load1_end")),
                     nivcsw_per_s=median(per_window(col("nivcsw"))), contended=contended)


def pop(b: Breakdown, setup: RunSetup | None) -> PopMetrics:
    """pop_metrics.pop_metrics from the breakdown."""
    runtime, useful = b.wall.max, b.compute
    known = b.nranks_present > 0 and runtime > 0
    return PopMetrics(
        ranks=b.nranks_present, runtime=runtime if known else NAN, useful_total=b.total_compute,
        useful_mean=useful.mean, useful_max=useful.max,
        load_balance=useful.mean / useful.max if known and useful.max > 0 else NAN,
        communication_efficiency=useful.max / runtime if known else NAN,
        parallel_efficiency=useful.mean / runtime if known else NAN,
        caveat=setup.caveat() if setup is not None else None)


@dataclass(frozen=True)
class Pvar:
    variable: str
    min: float
    median: float
    max: float
    description: str


def pvar_table(log) -> list[Pvar]:
    """mpit.pvar_table's rows the summary reads: variables by name, those zero on every rank last."""
    values: dict[str, list[float]] = {}
    for row in log.pvars:
        values.setdefault(row[1], []).append(float(row[4]))
    rows = [Pvar(name, min(v), median(v), max(v), log.mpit.descriptions.get(name, "") or "")
            for name, v in sorted(values.items())]
    return sorted(rows, key=lambda p: p.max == 0 and p.min == 0)


@dataclass(frozen=True)
class Phase:
    phase: str
    wall_max: float
    mpi_mean: float
    compute_mean: float
    mpi_pct: float
    calls: int
    top_function: str


def phase_table(log) -> list[Phase]:
    """timeline.phase_table's rows the summary reads, phases in the order ranks first entered them."""
    p, pf = log.phases, log.phase_functions
    if not p:
        return []
    names = [r[1] for r in p]
    wall_sum, mpi_sum = group_sums(names, [r[3] for r in p]), group_sums(names, [r[4] for r in p])
    mpi_mean, compute_mean = group_means(names, [r[4] for r in p]), group_means(names, [r[5] for r in p])
    wall_max: dict[str, float] = {}
    first: dict[str, int] = {}
    for _, name, order, wall, _, _ in p:
        wall_max[name] = max(wall_max.get(name, wall), wall)
        first[name] = min(first.get(name, order), order)
    calls: dict[str, int] = {}
    for _, name, _, c, _, _ in pf:
        calls[name] = calls.get(name, 0) + c
    times = group_sums([(r[1], r[2]) for r in pf], [r[4] for r in pf]) if pf else {}
    top: dict[str, str] = {}
    for (name, function), t in sorted(((k, t) for k, t in times.items() if t > 0), key=lambda kt: -kt[1]):
        top.setdefault(name, function)
    ordered = sorted(dict.fromkeys(names), key=lambda n: first[n])
    rows = [Phase(n, wall_max[n], mpi_mean[n], compute_mean[n],
                  100 * (mpi_sum[n] / wall_sum[n] if wall_sum[n] > 0 else NAN), calls.get(n, 0), top.get(n, ""))
            for n in ordered]
    return [r for r in rows if r.wall_max > 0 or r.calls > 0]


@dataclass(frozen=True)
class PlainAnalysis:
    """What the summary quotes; the words of its notes and findings."""

    breakdown: Breakdown
    functions: list[FunctionTotals]
    volume: Volume
    total_calls: int
    pop: PopMetrics
    setup: RunSetup | None
    pvars: list[Pvar]
    phases: list[Phase]
    notes: list[str]
    findings: list[str]


def analyse_plain(log) -> PlainAnalysis:
    """findings.analyse's numbers and words for the summary, from plain rows."""
    b = breakdown(log)
    functions = function_table(log)
    setup = run_setup(log)
    caveat = setup.caveat() if setup is not None else None
    v = volume(log)
    nb = neighbourhood(log)
    counts = size_counts(log)
    notes = _notes(log, b, functions, caveat)
    rules = [_bound(b, caveat), *_dominant(functions, counts, nb), _calls(functions), _overlap(functions),
             _imbalance(b, caveat), _sizes(counts), _locality(nb), _volume(v)]
    return PlainAnalysis(breakdown=b, functions=functions, volume=v, total_calls=sum(f.calls for f in functions),
                         pop=pop(b, setup), setup=setup, pvars=pvar_table(log), phases=phase_table(log), notes=notes,
                         findings=[f for f in rules if f is not None])


def _notes(log, b: Breakdown, functions: list, caveat: str | None) -> list[str]:
    notes = []
    if log.partial:
        notes.append(partial_note(b.nranks_present, log.nranks, sum(1 for r in log.ranks if r["partial"])))
    if log.aborted:
        notes.append(ABORTED_NOTE)
    if not functions:
        notes.append(NO_CALLS_NOTE)
    if caveat:
        notes.append(setup_note(caveat))
    if log.nranks == 1:
        notes.append(SINGLE_RANK_NOTE)
    return notes


def _bound(b: Breakdown, caveat: str | None) -> str | None:
    return None if math.isnan(b.mpi_share) else bound_text(b.mpi_share, caveat)


def _dominant(functions: list[FunctionTotals], counts: list[SizeCount], nb: Neighbourhood) -> list[str]:
    out = []
    for i, row in enumerate(functions):
        if i >= 3 or (i > 0 and not row.pct_mpi >= DOMINANT_PCT_MPI):
            break
        peers = nb.peers_median if not nb.empty and nb.peers_median > 0 else None
        out.append(dominant_text(row.function, row.fclass, row.pct_wall, row.pct_mpi,
                                 size_range(counts, row.function), peers))
    return out


def _calls(functions: list[FunctionTotals]) -> str | None:
    if not functions:
        return None
    by_calls = sorted(functions, key=lambda r: (-r.calls, r.function))
    running, below = 0.0, 0
    for r in by_calls:
        running += r.pct_calls
        below += running < 80.0
    top = by_calls[:below + 1][:4]
    return calls_text([r.function for r in top], np_sum([r.pct_calls for r in top]), sum(r.calls for r in functions))


def _overlap(functions: list[FunctionTotals]) -> str | None:
    if not any(r.function in NONBLOCKING_SENDS for r in functions):
        return None
    waits = [r.pct_mpi for r in functions if r.fclass in CREDITED_CLASSES]
    return overlap_text(np_sum([0.0 if p != p else p for p in waits]))


def _imbalance(b: Breakdown, caveat: str | None) -> str | None:
    c = b.compute
    if b.nranks_present < 2 or math.isnan(c.max_over_mean):
        return None
    return imbalance_text(c.max_rank, c.max_over_mean, c.cv, b.mpi.cv, caveat)


def _sizes(counts: list[SizeCount]) -> str | None:
    sent = [c for c in counts if not c.credited]
    if not sent:
        return None
    total = sum(c.count for c in sent)
    small = sum(c.count for c in sent if c.hi <= 1024)
    large = sum(c.count for c in sent if c.lo >= 65536)
    return sizes_text(total, 100 * small / total, 100 * large / total)


def _locality(nb: Neighbourhood) -> str | None:
    if nb.empty or not nb.top_offsets:
        return None
    hit = [(k, s) for k, s in nb.within if s >= 0.9]
    k, share = hit[0] if hit else nb.within[-1]
    return locality_text(nb.nranks, k, share, nb.peers_median, nb.peers_max, nb.top_offsets[:4])


def _volume(v: Volume) -> str | None:
    if v.total == 0:
        return None
    s = v.per_rank_total
    return volume_text(v.total, v.p2p_total, v.collective_total, s.mean, s.max, s.max_rank)


def metadata_inputs(log) -> dict[str, Any]:
    """report/run/metadata.run_metadata's plain inputs: hosts, ranks per host, memory and MPI's own cost."""
    ranks = log.ranks
    hosts = [str(h) for h in log.meta.get("hosts") or []] or sorted({str(r["host"]) for r in ranks})
    per_host: dict[str, int] = {}
    for r in ranks:
        per_host[r["host"]] = per_host.get(r["host"], 0) + 1
    memory = None
    rss = [r["maxrss"] for r in ranks]
    if rss and any(x > 0 for x in rss):
        top = rss.index(max(rss))
        memory = (int(max(rss)), int(ranks[top]["rank"]), median(rss))
    cost = None
    if "rss_init_end" in log.columns and ranks:
        took = [float(r["rss_init_end"]) - float(r["rss_init_start"]) for r in ranks]
        wait = [float(r["finalize_time"]) for r in ranks]
        cost = (median(took), max(took), int(ranks[took.index(max(took))]["rank"]),
                median(wait), max(wait), int(ranks[wait.index(max(wait))]["rank"]))
    return {"hosts": hosts, "per_host": per_host, "memory": memory, "mpi_cost": cost}
