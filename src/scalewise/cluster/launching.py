"""A user's own launch line, made to run across the emulated nodes.

``mpirun -np 4 ./app`` becomes a launch that starts the MPI's daemons in the
nodes through the cluster's agent, with a hostfile of the nodes, ranks spread
evenly (``-np`` / ``-n`` over the nodes), shared memory inside a node and TCP
over the emulated links between nodes.  An option the user already gave wins
over the one added here (their own ``--hostfile``, ``--mca btl``,
``-ppn``...), and so does a transport variable already set (:data:`TRANSPORT`).

Two launchers cover every MPI scalewise knows, by family: Open MPI's mpirun
(ORTE in 4.1, PRRTE in 5.0, which take the same options under other
parameter names) and Hydra's mpiexec (MPICH's and Intel MPI's).  What
differs between release lines is data (:data:`OPENMPI_NAMES`,
:data:`TRANSPORT`), not code.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from scalewise.cluster.emulated import Cluster
from scalewise.cluster.paths import SUBNET
from scalewise.cluster.slurm import CONF, slurm_env
from scalewise.errors import ScalewiseError
from scalewise.launch.launchline import parse_launch_line
from scalewise.launch.mpirun import root_env, two_ranks
from scalewise.launch.mpis import family_of
from scalewise.launch.preload import idle_sleep_forwards, idle_sleep_us, with_idle_sleep, with_mpich_ucx
from scalewise.launch.releases import release_line
from scalewise.launch.srun import check_srun_app

NODE_INTERFACE = "eth0"  # each node's end of its link
HOST_INTERFACE = "swbr0"  # the host's side, where the launcher waits for its daemons
NODES_SUBNET = f"{SUBNET}.0/24"


@dataclass(frozen=True)
class OpenMpiNames:
    """What one Open MPI release line calls the settings a launch across the nodes makes."""

    daemon_option: str  # the option that sets the runtime's (ORTE's, PRRTE's) parameters
    agent: str  # the parameter naming the remote shell that starts a daemon in a node
    shared_memory: str  # the BTL of ranks on one node


OPENMPI_NAMES = {
    "openmpi-4.1": OpenMpiNames("--mca", "plm_rsh_agent", "vader"),
    # PRRTE: its own parameters (--prtemca), rsh became ssh; vader was renamed sm.
    "openmpi-5.0": OpenMpiNames("--prtemca", "plm_ssh_agent", "sm"),
}


def _openmpi_mca(names: OpenMpiNames) -> dict[str, str]:
    """The library's parameters: ob1 with shared memory in a node and TCP over the links between nodes."""
    return {"pml": "ob1", "btl": f"self,{names.shared_memory},tcp", "btl_tcp_if_include": NODES_SUBNET}


# Per release line: the variables that keep ranks of different nodes on TCP over the node's own
# link (``eth0``) and ranks of one node on the library's shared memory.  Open MPI's go on its
# command line when mpirun starts the job (:func:`_openmpi`), as variables under srun.
TRANSPORT: dict[str, dict[str, str]] = {
    line: {f"OMPI_MCA_{k}": v for k, v in _openmpi_mca(names).items()} for line, names in OPENMPI_NAMES.items()
} | {
    # MPICH's own shared memory inside a node; UCX over TCP on the node's link between nodes (UCX's
    # own shared memory would join "nodes" that share this machine's memory).
    "mpich-4.0": {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": NODE_INTERFACE},
    # PyPI's MPICH 5 holds both ch4 netmods, UCX first: named, so no other one is picked.
    "mpich-5.0": {"MPIR_CVAR_CH4_NETMOD": "ucx", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": NODE_INTERFACE},
    # Intel MPI: its shared memory inside a node, libfabric's tcp provider on the node's link between nodes.
    "intelmpi-2021": {"FI_PROVIDER": "tcp", "FI_TCP_IFACE": NODE_INTERFACE},
}


# Open MPI's TCP transport with its put protocol: the receiver of a large message asks for the rest
# with a control message (a PUT request), and the sender then writes the rest into the peer pair's
# one socket as one fragment (btl_tcp_rdma_pipeline_frag_size is 2 GB).  When two ranks exchange
# large messages at once, one rank's request waits behind its own outgoing data in that socket, so
# the two directions take turns (4 MiB both ways: 2.0 times one way in 3 or 4 of each 5 launches
# at 100 Mbit/s, 2 of 5 at 1 Gbit/s; docs/decisions.md).  Without put, the receiver's only control
# message goes out before any bulk data, and the directions overlap (1.02-1.07 in every launch).  The emulated cluster
# stands for an HPC interconnect, whose control messages do not queue behind bulk data in one byte
# stream, so its Open MPI launches drop put unless the cluster keeps the MPIs' TCP defaults
# (``cluster up --tcp-defaults``).  By release line: 4.1 and 5.0 share the default flags.
_NO_PUT = {"btl_tcp_flags": "send,inplace,need-ack,need-csum,hetero-rdma"}
CONTROL_APART: dict[str, dict[str, str]] = {"openmpi-4.1": _NO_PUT, "openmpi-5.0": _NO_PUT}


def control_apart(c: Cluster, line: str) -> dict[str, str]:
    """The MCA parameters the cluster's launches of release ``line`` get so that control messages do
    not wait behind bulk data (CONTROL_APART); none when the cluster keeps the MPIs' TCP defaults."""
    return {} if c.tcp_defaults else CONTROL_APART.get(line, {})


def launch_settings(c: Cluster) -> str:
    """What the cluster's launches set beyond the transport, in one line (``cluster status``)."""
    if c.tcp_defaults:
        return "each MPI's own TCP settings (--tcp-defaults)"
    said = "; ".join(f"{line}: " + " ".join(f"{k}={v}" for k, v in mca.items()) for line, mca in CONTROL_APART.items())
    return f"control messages apart from bulk data, as on an HPC interconnect ({said}; --tcp-defaults keeps the MPIs' own)"


@dataclass
class ClusterLaunch:
    argv: list[str]
    env: dict[str, str]
    ranks: int | None  # asked with -np / -n, when given
    ranks_per_node: int | None
    oversubscribed: bool
    cores_per_node: int | None = None


def _given(argv: list[str], *options: str) -> bool:
    return any(a in options for a in argv)


def _mca_given(argv: list[str], name: str) -> bool:
    return any(a in ("--mca", "-mca", "--prtemca", "-prtemca") and i + 1 < len(argv) and argv[i + 1] == name
               for i, a in enumerate(argv))


def _openmpi(c: Cluster, argv: list[str], slots: int, oversubscribed: bool, line: str,
             env: dict[str, str]) -> list[str]:
    names = OPENMPI_NAMES[line]
    extra: list[str] = []
    if not _given(argv, "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-H", "--host", "-host"):
        extra += ["--hostfile", str(c.hostfile("openmpi", slots))]
    daemons = {names.agent: str(c.agent), "oob_tcp_if_include": NODES_SUBNET}
    # the cluster's own settings yield to the user's, given on the line or as a variable
    apart = {k: v for k, v in control_apart(c, line).items() if f"OMPI_MCA_{k}" not in env}
    sleeping = idle_sleep_us(env) > 0
    if (oversubscribed or sleeping) and "OMPI_MCA_mpi_yield_when_idle" not in env:
        # More ranks than the node's cores: a waiting rank yields its core, as MPICH's do
        # (preload.with_mpich_ucx).  Open MPI yields by itself only when the hostfile's slots are too few,
        # and the cluster's hostfile gives a node as many slots as it gets ranks.  With the idle sleep
        # (preload.with_idle_sleep) the yield is what reaches the shim, at any placement.
        apart["mpi_yield_when_idle"] = "1"
    extra += idle_sleep_forwards(env, argv)  # the shim and its setting reach the ranks on other nodes
    for option, settings in ((names.daemon_option, daemons), ("--mca", _openmpi_mca(names) | apart)):
        for name, value in settings.items():
            if not _mca_given(argv, name):
                extra += [option, name, value]
    if not _given(argv, "--bind-to", "-bind-to"):
        extra += ["--bind-to", "none"]  # each node's processes are already kept on its cores
    if oversubscribed and not _given(argv, "--oversubscribe", "-oversubscribe"):
        extra += ["--oversubscribe"]
    return [argv[0], *extra, *argv[1:]]


def _hydra(c: Cluster, argv: list[str], slots: int) -> list[str]:
    """MPICH's and Intel MPI's mpiexec: the hostfile, the agent as an rsh, the host's side of the links."""
    extra: list[str] = []
    if not _given(argv, "-f", "-hostfile", "-machinefile", "-machine", "-hosts", "-host"):
        # Intel MPI's -f takes host names only (it fills each host's cores first); its -machinefile,
        # MPICH's -f under another name, reads the slots too.
        extra += ["-machinefile", str(c.hostfile("mpich", slots))]
    if not _given(argv, "-launcher", "-bootstrap"):
        extra += ["-launcher", "ssh"]
    if not _given(argv, "-launcher-exec", "-bootstrap-exec"):
        extra += ["-launcher-exec", str(c.agent)]
    if not _given(argv, "-iface"):
        extra += ["-iface", HOST_INTERFACE]
    return [argv[0], *extra, *argv[1:]]


def transport_env(mpi: str, env: dict[str, str]) -> dict[str, str]:
    """``env`` plus what keeps ``mpi``'s traffic between nodes on the emulated links and within a
    node on shared memory (:data:`TRANSPORT`); a value already set wins.  For launches that do not
    take options here (srun under the cluster's Slurm)."""
    out = dict(env)
    for name, value in TRANSPORT[release_line(mpi, "cluster")].items():
        out.setdefault(name, value)
    return out


def cluster_launch(c: Cluster, argv: list[str], base_env: dict[str, str] | None = None,
                   flavour: str | None = None) -> ClusterLaunch:
    """``argv`` (an mpirun / mpiexec line) and the environment that run it across ``c``'s nodes."""
    if not argv:
        raise ScalewiseError("nothing to run: give the launch command after --, e.g. -- mpirun -np 4 ./app")
    parsed = parse_launch_line(argv)
    # The launcher's own MPI first: its options and its library's transport are set here (an
    # application built for the standard ABI runs on whichever library that is).
    flavour = parsed.launcher_flavour or flavour or parsed.flavour_of_app
    if flavour is None:
        raise ScalewiseError(f"cannot tell which MPI '{argv[0]}' belongs to; pass --mpi openmpi or --mpi mpich")
    line = release_line(flavour, "cluster")
    dead = c.alive()
    if dead:
        raise ScalewiseError(f"cluster: node(s) {', '.join(dead)} are gone; run `scalewise cluster up` again")
    env = dict(os.environ if base_env is None else base_env)
    if parsed.kind == "srun":
        return _srun(c, argv, parsed.ranks, flavour, env, parsed.app)
    ranks = parsed.ranks
    nodes = len(c.nodes)
    per_node = -(-ranks // nodes) if ranks else None
    cores = min(len(n.cpus) for n in c.nodes)
    slots = per_node or cores
    total = (ranks or slots * nodes)
    oversubscribed = slots > cores or total > c.cpus_total
    if family_of(flavour) == "openmpi":
        out, env = _openmpi(c, argv, slots, oversubscribed, line, env), with_idle_sleep(root_env(env), "openmpi")
    else:
        out, env = _hydra(c, argv, slots), transport_env(flavour, env)
        if flavour == "mpich":  # Debian's MPICH 4.0 over UCX only (preload.with_mpich_ucx)
            env, _ = with_mpich_ucx(env, oversubscribed)
            env = with_idle_sleep(env, "mpich")
    return ClusterLaunch(out, env, ranks, per_node, oversubscribed, cores)


def _srun(c: Cluster, argv: list[str], ranks: int | None, flavour: str, env: dict[str, str],
          app: str | None) -> ClusterLaunch:
    """An srun line through the cluster's own Slurm (``cluster up --slurm``): the line as given, pointed at
    that Slurm, with the transport variables and ``--overcommit`` when the ranks outnumber the cores; a
    plugin that cannot start the application's library is a one-line error (launch/srun.py)."""
    if not CONF.is_file():
        raise ScalewiseError("srun on the emulated nodes needs their Slurm: run `scalewise cluster up --nodes "
                             f"{len(c.nodes)} --slurm` first")
    check_srun_app(argv, app, slurm_env(env))
    cores = min(len(n.cpus) for n in c.nodes)
    oversubscribed = ranks is not None and ranks > cores * len(c.nodes)
    out = list(argv)
    if oversubscribed and not _given(argv, "-O", "--overcommit"):
        out.insert(1, "--overcommit")  # else srun waits for cores no node has
    env = transport_env(flavour, slurm_env(env))
    for name, value in control_apart(c, release_line(flavour, "cluster")).items():
        env.setdefault(f"OMPI_MCA_{name}", value)
    if flavour == "mpich":  # Debian's MPICH 4.0 over UCX only (preload.with_mpich_ucx), as under mpiexec
        env, _ = with_mpich_ucx(env, oversubscribed)
    return ClusterLaunch(out, env, ranks, None, oversubscribed, cores)


def pair_launcher(c: Cluster, flavour: str, what: str) -> Callable[[list[str]], tuple[list[str], dict[str, str]]]:
    """Turns an application's argv into the line and environment that run it as 2 ranks, one on
    each of ``c``'s first two nodes (ping-pongs, calibration, two-node measurements); ``what``
    names the caller in the error when there are fewer nodes."""
    if len(c.nodes) < 2:
        raise ScalewiseError(f"{what} needs at least 2 nodes")

    def launcher(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        line = cluster_launch(c, [*two_ranks(flavour, one_per_node=True), *argv], flavour=flavour)
        return line.argv, line.env
    return launcher
