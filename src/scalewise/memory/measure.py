"""Run the connection-memory probe (proxies/connmem) and collect its readings.

``scalewise memory`` runs the probe once per MPI library, connection set-up,
rank count, peer choice and repetition through the local scheduler (so MPICH
gets the launchers' support library and oversubscribed runs yield), and
returns one row per rank.  The fit is ``memory/analysis.py``'s; :func:`measure_memory` is the
whole of `scalewise memory`.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from scalewise.campaign.mpi_settings import BUILTIN_TRANSPORTS, MpiSettings
from scalewise.campaign.prepare import run_environment
from scalewise.cluster.scheduler import EmulatedScheduler
from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job
from scalewise.launch.local import LocalScheduler
from scalewise.launch.mpis import check_name, family
from scalewise.launch.preload import FLAVOURS, built_library
from scalewise.launch.releases import release_line
from scalewise.memory.analysis import MachineTarget, MemoryAnalysis, analyse_memory

PEER_CHOICES = ("none", "neighbours", "all")
_LINE = re.compile(r"^SCALEWISE_CONNMEM (.*)$", re.M)
_TCP = re.compile(r"^SCALEWISE_CONNMEM_TCP (.*)$", re.M)


@dataclass(frozen=True)
class ConnectionSetup:
    """One way a library sets up its connections, and the settings that select it."""

    name: str  # "on-demand" or "eager"
    mpi: str
    eager: bool  # every rank connected to every other one by the end of MPI_Init
    settings: MpiSettings = field(default_factory=MpiSettings)


# Over TCP (the builtin "tcp" transport) so that a connection is a real socket
# even on one node.  Open MPI's ob1 (4.1 and 5.0) opens a BTL connection on the
# first message to a peer unless mpi_preconnect_mpi=1
# (ompi/runtime/ompi_mpi_preconnect.c).  MPICH 4.0 ch4:ucx creates a UCX
# endpoint for every rank in MPI_Init (initial_address_exchange in
# src/mpid/ch4/netmod/ucx/ucx_init.c) and has no setting that defers it;
# MPICH 5.0 (PyPI's, ch4:ucx by default) likewise: a rank that sends nothing
# holds one socket more per rank in the job (8, 10, 12 at 2, 4, 6 ranks).
# Intel MPI over OFI's tcp provider connects on the first message to a peer
# and has no setting that connects eagerly; docs/memory.md cites all of them.
_TCP_SETTINGS = BUILTIN_TRANSPORTS["tcp"]
# Intel MPI without its shared memory (I_MPI_FABRICS=ofi), over libfabric's tcp provider.
_INTEL_TCP = MpiSettings(env={"I_MPI_FABRICS": "ofi", "FI_PROVIDER": "tcp"})
_OPENMPI_SETUPS = (
    ("on-demand", False, _TCP_SETTINGS),
    ("eager", True, _TCP_SETTINGS.model_copy(update={"mca": {**_TCP_SETTINGS.mca, "mpi_preconnect_mpi": "1"}})),
)
# Per family: (name, eager, settings) of each connection set-up it offers.
_SETUPS = {"openmpi": _OPENMPI_SETUPS, "mpich": (("eager", True, _TCP_SETTINGS),),
           "intelmpi": (("on-demand", False, _INTEL_TCP),)}


def setups(mpi: str) -> tuple[ConnectionSetup, ...]:
    """The connection set-ups of ``mpi`` (a Debian short name or an identity) the probe runs."""
    return tuple(ConnectionSetup(name, mpi, eager, settings) for name, eager, settings in _SETUPS[family(mpi)])


# Kept by name for Debian's two (what the tests and the docs call them).
SETUPS: dict[str, tuple[ConnectionSetup, ...]] = {m: setups(m) for m in ("openmpi", "mpich")}


class _Applied(NamedTuple):
    """What ``run_environment`` reads from a planned run."""

    applied: list[tuple[str, str, str]]
    mpi: str
    threads: int = 1


def parse_setting(text: str) -> MpiSettings:
    """``NAME=VALUE``: an MPICH CVAR (MPIR_CVAR_...), an environment variable (upper case) or an MCA parameter."""
    name, sep, value = text.partition("=")
    if not sep or not name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ScalewiseError(f"--setting '{text}': expected NAME=VALUE, e.g. btl_tcp_links=2 or UCX_TLS=tcp,self")
    if name.startswith("MPIR_CVAR_"):
        return MpiSettings(cvars={name: value})
    if name.isupper():
        return MpiSettings(env={name: value})
    return MpiSettings(mca={name: value})


def probe_path(mpi: str) -> Path:
    """The probe built for ``mpi``: Debian's by `make proxies`, any other MPI's on first use."""
    return built_library(mpi, "proxies/connmem", "connection-memory probe")


def _fields(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split())


def parse_output(text: str) -> tuple[list[dict], dict[str, int]]:
    """The per-rank rows and the host's TCP totals of one probe run's standard output."""
    rows = []
    for match in _LINE.finditer(text):
        f = _fields(match.group(1))
        rows.append({k: (f[k] if k == "host" else int(f[k])) for k in f})
    tcp = _TCP.search(text)
    return rows, ({k: int(v) for k, v in _fields(tcp.group(1)).items()} if tcp else {})


def applied_settings(setup: ConnectionSetup, extra: list[MpiSettings]) -> list[tuple[str, str, str]]:
    out = setup.settings.applied(setup.mpi)
    for more in extra:
        out += more.applied(setup.mpi)
    return out


def run_probe(setup: ConnectionSetup, ranks: int, peers: str, workdir: Path, extra: list[MpiSettings] = (),
              timeout: float = 120.0, scheduler: LocalScheduler | None = None, nodes: int = 1) -> pd.DataFrame:
    """One probe run: a row per rank with its readings (bytes, sockets) and the host's TCP totals.

    ``scheduler``/``nodes``: an :class:`EmulatedScheduler` and a node count run the ranks across
    emulated nodes (over their links) instead of on this host."""
    env, exported, mca = run_environment(_Applied(applied_settings(setup, list(extra)), setup.mpi))
    if nodes == 1 and family(setup.mpi) == "openmpi" and not any(k.startswith("btl_tcp_if_") for k in mca):
        # Every rank runs on this host, so loopback is the one right interface; left to itself the TCP BTL
        # also tries every other configured one (a down bridge here failed 1 preconnect in 3 at 32 ranks).
        mca["btl_tcp_if_include"] = "lo"
    if nodes == 1 and family(setup.mpi) == "intelmpi" and "FI_TCP_IFACE" not in env:
        # The same for libfabric's tcp provider: without it a 6-rank run here failed in its first
        # send ("Cannot assign requested address").
        env["FI_TCP_IFACE"] = "lo"
        exported = [*exported, "FI_TCP_IFACE"]

    workdir.mkdir(parents=True, exist_ok=True)
    # Every rank reads before any rank communicates again (proxies/connmem/connmem.c): a directory
    # of this run's own, seen by every rank on this host and on the emulated nodes.
    env["SCALEWISE_CONNMEM_SYNC"] = tempfile.mkdtemp(prefix="sync-", dir=workdir)
    exported = [*exported, "SCALEWISE_CONNMEM_SYNC"]
    job = Job(name=f"connmem-{setup.mpi}-{setup.name}-{ranks}-{peers}", mpi=setup.mpi, ranks=ranks, nodes=nodes,
              app_argv=[str(probe_path(setup.mpi)), "--peers", peers], env=env, exported=exported, mca=mca,
              rundir=workdir, stdout=workdir / "stdout", stderr=workdir / "stderr", timeout=timeout)
    # Every run launched as oversubscribed (unbound, yielding), whatever its rank count: binding changes
    # what MPI_Init maps (measured: 2 bound ranks had 3.3 MiB less than 3 unbound ones), a step the fit
    # would take for connection memory.
    outcome = (scheduler or LocalScheduler(cores=1)).run(job)
    text = job.stdout.read_text(errors="replace")
    rows, tcp = parse_output(text)
    if outcome.exit_code != 0 or len(rows) != ranks:
        err = [line.strip() for line in job.stderr.read_text(errors="replace").splitlines() if line.strip()]
        said = [line for line in err if "error" in line.lower()] or err[-1:]
        why = outcome.reason or (said[0] if said else f"exit code {outcome.exit_code}")
        raise ScalewiseError(f"connection-memory probe failed ({setup.mpi} {setup.name}, {ranks} ranks, "
                             f"peers={peers}): {why}")
    frame = pd.DataFrame(rows)
    for key, value in tcp.items():
        frame[f"tcp_{key}"] = value
    return frame.assign(mpi=setup.mpi, setup=setup.name, eager=setup.eager, mode=peers)


def measure(mpis: list[str], ranks: list[int], peers: list[str], repeats: int = 2, extra: list[MpiSettings] = (),
            workdir: Path | None = None, progress: Callable[[str], None] | None = None,
            emulated_nodes: int = 1) -> pd.DataFrame:
    """Every probe run of the plan, one row per rank (``rep`` numbers the repetition).

    ``emulated_nodes`` > 1 spreads each run's ranks over that many emulated nodes (root; the
    cluster is brought up for the measurement and taken down after, docs/cluster.md)."""
    for m in mpis:
        if m not in FLAVOURS:
            release_line(check_name(m), "--mpi")  # an identity of a known release line, or one line
    bad = [p for p in peers if p not in PEER_CHOICES]
    if bad:
        raise ScalewiseError(f"--peers: unknown choice '{bad[0]}' (expected {', '.join(PEER_CHOICES)})")
    if not ranks or min(ranks) < 2:
        raise ScalewiseError("--ranks: give rank counts of at least 2, e.g. 2,4,8")
    uneven = [p for p in ranks if p % emulated_nodes]
    if uneven:
        raise ScalewiseError(f"--ranks: {uneven[0]} ranks do not spread evenly over {emulated_nodes} emulated nodes")
    scheduler = EmulatedScheduler(cores=1) if emulated_nodes > 1 else None
    try:
        return _measure_all(mpis, ranks, peers, repeats, extra, workdir, progress, scheduler, emulated_nodes)
    finally:
        if scheduler is not None:
            scheduler.close()


def _measure_all(mpis, ranks, peers, repeats, extra, workdir, progress, scheduler, nodes) -> pd.DataFrame:
    with tempfile.TemporaryDirectory(prefix="scalewise-connmem-") as tmp:
        base = Path(workdir) if workdir else Path(tmp)
        frames = []
        for mpi in mpis:
            for setup in setups(mpi):
                for rep in range(repeats):
                    for p in ranks:
                        for mode in peers:
                            if progress:
                                progress(f"{mpi} {setup.name}: {p} ranks, peers={mode}, repetition {rep + 1}")
                            folder = base / f"{mpi}-{setup.name}-{p}-{mode}-{rep}"
                            frames.append(_run_twice(setup, p, mode, folder, extra, progress, scheduler,
                                                     nodes).assign(rep=rep))
    return pd.concat(frames, ignore_index=True)


def _run_twice(setup: ConnectionSetup, ranks: int, peers: str, folder: Path, extra: list[MpiSettings],
               progress: Callable[[str], None] | None, scheduler=None, nodes: int = 1) -> pd.DataFrame:
    """One probe run, started a second time if the first fails: Open MPI 4.1's TCP BTL now and then
    aborts during an all-to-all connection storm ("unknown handle"), which says nothing about memory."""
    try:
        return run_probe(setup, ranks, peers, folder, extra, scheduler=scheduler, nodes=nodes)
    except ScalewiseError as exc:
        if progress:
            progress(f"retrying once: {exc}")
        return run_probe(setup, ranks, peers, folder.with_name(folder.name + "-retry"), extra, scheduler=scheduler,
                         nodes=nodes)


def kernel_bytes_per_tcp_socket() -> int | None:
    """Slab memory the kernel holds for one TCP socket: a ``TCP`` object and its
    ``sock_inode_cache`` object (object sizes from /proc/slabinfo; None if unreadable).
    Socket buffers come on top while data is queued (the ``mem`` pages of /proc/net/sockstat)."""
    try:
        text = Path("/proc/slabinfo").read_text()
    except OSError:
        return None
    sizes = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[0] in ("TCP", "sock_inode_cache"):
            sizes[parts[0]] = int(parts[3])
    return sum(sizes.values()) if len(sizes) == 2 else None


def page_size() -> int:
    return os.sysconf("SC_PAGE_SIZE")


def measure_memory(mpis: list[str], ranks: list[int], peers: list[str], repeats: int, settings: list[str],
                   target: MachineTarget, workdir: Path | None = None, progress: Callable[[str], None] | None = None,
                   emulated_nodes: int = 1, page: Path | None = None) -> MemoryAnalysis:
    """`scalewise memory`: every probe run, the fits and the projection to ``target``; the page when asked."""
    extra = [parse_setting(s) for s in settings]
    readings = measure(mpis, ranks, peers, repeats, extra, workdir, progress, emulated_nodes)
    a = analyse_memory(readings, target, kernel_bytes_per_tcp_socket())
    if page:
        from scalewise.memory.html import write_memory_page  # matplotlib only when a page is asked for

        write_memory_page(a, page)
    return a
