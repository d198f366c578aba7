"""What one run was: its command, ranks, hosts, MPI library and times, as (label, value) rows."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from scalewise.analysis.run.setup import NodeSetup, RunSetup, run_setup
from scalewise.formatting import human_bytes, plural, seconds, when
from scalewise.logfile.meta import mpi_library_name

if TYPE_CHECKING:  # the rows' words take plain values (metadata_rows): the summary's lean path has no frames
    from scalewise.model.profile import Profile


def command_line(profile: Profile) -> str:
    return command_line_of(profile.meta)


def command_line_of(meta: dict[str, Any]) -> str:
    cmd = meta.get("command") or []
    if isinstance(cmd, str):
        return cmd
    return shlex.join(str(c) for c in cmd) if cmd else "(unknown)"


def app_name(profile: Profile) -> str:
    return app_name_of(profile.meta)


def app_name_of(meta: dict[str, Any]) -> str:
    cmd = meta.get("command") or []
    first = cmd if isinstance(cmd, str) else (cmd[0] if cmd else "")
    return str(first).rsplit("/", 1)[-1] or "MPI job"


def _hosts(profile: Profile) -> list[str]:
    hosts = profile.meta.get("hosts")
    if hosts:
        return [str(h) for h in hosts]
    return sorted({str(h) for h in profile.ranks["host"]}) if not profile.ranks.empty else []


def _memory(profile: Profile) -> tuple[int, int, float] | None:
    """The memory high-water mark (maxrss) per rank: largest, the rank that holds it, median."""
    rss = profile.ranks["maxrss"] if "maxrss" in profile.ranks else None
    if rss is None or rss.empty or not (rss > 0).any():
        return None
    top = profile.ranks.loc[rss.idxmax()]
    return int(rss.max()), int(top["rank"]), float(rss.median())


def _memory_rows(memory: tuple[int, int, float] | None) -> list[tuple[str, str]]:
    if memory is None:
        return []
    top, rank, median = memory
    return [("memory high-water mark", f"{human_bytes(top)} (rank {rank}), median {human_bytes(median)} per rank")]


def _mpi_cost(profile: Profile) -> tuple | None:
    """What MPI itself took (format 1.1 logs): the memory MPI_Init added per rank (median, most, its rank)
    and the time ranks waited in MPI_Finalize (median, longest, its rank)."""
    r = profile.ranks
    if "rss_init_end" not in r or r.empty:
        return None
    took = r["rss_init_end"].astype(float) - r["rss_init_start"].astype(float)
    top, wait = r.loc[took.idxmax()], r["finalize_time"]
    slowest = r.loc[wait.idxmax()]
    return (float(took.median()), float(took.max()), int(top["rank"]),
            float(wait.median()), float(wait.max()), int(slowest["rank"]))


def _mpi_cost_rows(cost: tuple | None) -> list[tuple[str, str]]:
    """What MPI itself took, apart from the application (format 1.1 logs)."""
    if cost is None:
        return []
    took_median, took_max, took_rank, wait_median, wait_max, wait_rank = cost
    return [("memory MPI_Init took", f"median {human_bytes(took_median)} per rank, "
             f"most {human_bytes(took_max)} (rank {took_rank})"),
            ("MPI_Finalize wait", f"median {seconds(wait_median)} per rank, "
             f"longest {seconds(wait_max)} (rank {wait_rank}); not in MPI time")]


def _node_text(n: NodeSetup, named: bool) -> str:
    where = f"{n.host}: " if named else ""
    threads = f" x {n.threads} threads" if n.threads > 1 else ""
    state = "oversubscribed" if n.oversubscribed else "contended" if n.contended else "not oversubscribed"
    return (f"{where}{plural(n.ranks, 'rank')}{threads} on {plural(n.cores, 'core')} "
            f"({n.cpus_online} online): {state}")


def _load_text(n: NodeSetup, named: bool) -> str:
    parts = [f"load average {n.load_start:.2f} at start, {n.load_end:.2f} at end"]
    if n.cpu_share == n.cpu_share:
        parts.append(f"ranks got {100 * n.cpu_share:.0f}% of their wall as CPU time")
    if n.others_cores == n.others_cores:
        parts.append(f"other processes used {n.others_cores:.2f} cores")
    if n.steal_share == n.steal_share and n.steal_share > 0:
        parts.append(f"steal {100 * n.steal_share:.1f}%")
    if n.nivcsw_per_s == n.nivcsw_per_s:
        parts.append(f"{n.nivcsw_per_s:,.0f} involuntary context switches/s per rank")
    return (f"{n.host}: " if named else "") + "; ".join(parts)


def _setup(setup: RunSetup | None) -> list[tuple[str, str]]:
    """Cores, ranks per node and how busy the machine was (format 1.3 logs; docs/report.md, "Run set-up")."""
    if setup is None:
        return []
    named = len(setup.nodes) > 1
    shown = setup.nodes[:4]
    more = f"; ... ({len(setup.nodes) - 4} more nodes)" if len(setup.nodes) > 4 else ""
    return [("set-up", "; ".join(_node_text(n, named) for n in shown) + more),
            ("machine load", " | ".join(_load_text(n, named) for n in shown) + more)]


def run_metadata(profile: Profile) -> list[tuple[str, str]]:
    """(label, value) rows describing the job, in display order."""
    per_host = profile.ranks.groupby("host")["rank"].count() if not profile.ranks.empty else {}
    return metadata_rows(profile.meta, profile.path, profile.nranks, len(profile.ranks), _hosts(profile),
                         {h: int(n) for h, n in dict(per_host).items()}, run_setup(profile), _memory(profile),
                         _mpi_cost(profile))


def metadata_rows(meta: dict[str, Any], path: str | None, nranks: int, recorded: int, hosts: list[str],
                  per_host: dict[str, int], setup: RunSetup | None, memory: tuple | None,
                  mpi_cost: tuple | None) -> list[tuple[str, str]]:
    """The rows of :func:`run_metadata` from plain values: ``per_host`` ranks recorded per host,
    ``memory`` and ``mpi_cost`` as _memory and _mpi_cost give them (None: not in the log)."""
    # Placement: how many ranks ran on each host (when more than one host took part).
    names = [f"{h} ({plural(per_host[h], 'rank')})" if len(hosts) > 1 and h in per_host else h for h in hosts]
    shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
    start, end = meta.get("start_time"), meta.get("end_time")
    rows = [
        ("command", command_line_of(meta)),
        ("ranks", f"{nranks:,}" + ("" if recorded == nranks else f" ({recorded:,} recorded)")),
        ("hosts", f"{len(hosts):,}: {shown}" if hosts else "unknown"),
        *_setup(setup),
        ("MPI library", mpi_library_name(meta)),
        *[(label, str(meta[key])) for key, label in (("mpi_version", "MPI standard"),
                                                     ("thread_level", "thread level")) if meta.get(key)],
        *_memory_rows(memory),
        *_mpi_cost_rows(mpi_cost),
        ("started", when(start)),
        ("ended", when(end)),
    ]
    if meta.get("format") is not None:
        rows.append(("log format", str(meta.get("format"))))
    if path:
        rows.append(("log", str(path)))
    return rows
