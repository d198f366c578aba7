"""What one run was: its command, ranks, hosts, MPI library and times, as (label, value) rows."""

from __future__ import annotations

import shlex

from scalewise.analysis.run.setup import NodeSetup, run_setup
from scalewise.formatting import human_bytes, plural, seconds, when
from scalewise.logfile.meta import mpi_library_name
from scalewise.model.profile import Profile


def command_line(profile: Profile) -> str:
    cmd = profile.meta.get("command") or []
    if isinstance(cmd, str):
        return cmd
    return shlex.join(str(c) for c in cmd) if cmd else "(unknown)"


def app_name(profile: Profile) -> str:
    cmd = profile.meta.get("command") or []
    first = cmd if isinstance(cmd, str) else (cmd[0] if cmd else "")
    return str(first).rsplit("/", 1)[-1] or "MPI job"


def _hosts(profile: Profile) -> list[str]:
    hosts = profile.meta.get("hosts")
    if hosts:
        return [str(h) for h in hosts]
    return sorted({str(h) for h in profile.ranks["host"]}) if not profile.ranks.empty else []


def _memory(profile: Profile) -> list[tuple[str, str]]:
    """The memory high-water mark (maxrss) per rank: largest, median, and the rank that holds it."""
    rss = profile.ranks["maxrss"] if "maxrss" in profile.ranks else None
    if rss is None or rss.empty or not (rss > 0).any():
        return []
    top = profile.ranks.loc[rss.idxmax()]
    return [("memory high-water mark", f"{human_bytes(int(rss.max()))} (rank {int(top['rank'])}), "
             f"median {human_bytes(float(rss.median()))} per rank")]


def _mpi_cost(profile: Profile) -> list[tuple[str, str]]:
    """What MPI itself took (format 1.1 logs): the memory MPI_Init added per
    rank and the time ranks waited in MPI_Finalize, apart from the application."""
    r = profile.ranks
    if "rss_init_end" not in r or r.empty:
        return []
    took = r["rss_init_end"].astype(float) - r["rss_init_start"].astype(float)
    top, wait = r.loc[took.idxmax()], r["finalize_time"]
    slowest = r.loc[wait.idxmax()]
    return [("memory MPI_Init took", f"median {human_bytes(float(took.median()))} per rank, "
             f"most {human_bytes(float(took.max()))} (rank {int(top['rank'])})"),
            ("MPI_Finalize wait", f"median {seconds(float(wait.median()))} per rank, "
             f"longest {seconds(float(wait.max()))} (rank {int(slowest['rank'])}); not in MPI time")]


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


def _setup(profile: Profile) -> list[tuple[str, str]]:
    """Cores, ranks per node and how busy the machine was (format 1.3 logs; docs/report.md, "Run set-up")."""
    setup = run_setup(profile)
    if setup is None:
        return []
    named = len(setup.nodes) > 1
    shown = setup.nodes[:4]
    more = f"; ... ({len(setup.nodes) - 4} more nodes)" if len(setup.nodes) > 4 else ""
    return [("set-up", "; ".join(_node_text(n, named) for n in shown) + more),
            ("machine load", " | ".join(_load_text(n, named) for n in shown) + more)]


def run_metadata(profile: Profile) -> list[tuple[str, str]]:
    """(label, value) rows describing the job, in display order."""
    hosts = _hosts(profile)
    per_host = profile.ranks.groupby("host")["rank"].count() if not profile.ranks.empty else {}
    # Placement: how many ranks ran on each host (when more than one host took part).
    names = [f"{h} ({plural(per_host[h], 'rank')})" if len(hosts) > 1 and h in per_host else h for h in hosts]
    shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
    start, end = profile.meta.get("start_time"), profile.meta.get("end_time")
    rows = [
        ("command", command_line(profile)),
        ("ranks", f"{profile.nranks:,}" + ("" if len(profile.ranks) == profile.nranks
                                         else f" ({len(profile.ranks):,} recorded)")),
        ("hosts", f"{len(hosts):,}: {shown}" if hosts else "unknown"),
        *_setup(profile),
        ("MPI library", mpi_library_name(profile.meta)),
        *[(label, str(profile.meta[key])) for key, label in (("mpi_version", "MPI standard"),
                                                             ("thread_level", "thread level")) if profile.meta.get(key)],
        *_memory(profile),
        *_mpi_cost(profile),
        ("started", when(start)),
        ("ended", when(end)),
    ]
    if profile.meta.get("format") is not None:
        rows.append(("log format", str(profile.meta.get("format"))))
    if profile.path:
        rows.append(("log", str(profile.path)))
    return rows
