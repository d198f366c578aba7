"""A user's own launch line, made to run across the emulated nodes.

``mpirun.openmpi -np 4 ./app`` becomes a launch that starts its daemons in
the nodes through the cluster's agent, with a hostfile of the nodes, ranks
spread evenly (``-np`` / ``-n`` over the nodes), shared memory inside a node
and TCP over the emulated links between nodes.  An option the user already
gave wins over the one added here (their own ``--hostfile``, ``--mca btl``,
``-ppn``...).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from scalewise.cluster.emulated import Cluster
from scalewise.cluster.paths import SUBNET
from scalewise.errors import ScalewiseError
from scalewise.launch.launchline import parse_launch_line
from scalewise.launch.mpirun import two_ranks
from scalewise.launch.preload import with_mpich_ucx

NODE_INTERFACE = "eth0"  # each node's end of its link


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
    return any(a in ("--mca", "-mca") and i + 1 < len(argv) and argv[i + 1] == name for i, a in enumerate(argv))


def _openmpi(c: Cluster, argv: list[str], slots: int, oversubscribed: bool) -> list[str]:
    subnet = f"{SUBNET}.0/24"
    extra: list[str] = []
    if not _given(argv, "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-H", "--host", "-host"):
        extra += ["--hostfile", str(c.hostfile("openmpi", slots))]
    for name, value in (("plm_rsh_agent", str(c.agent)), ("pml", "ob1"), ("btl", "self,vader,tcp"),
                        ("btl_tcp_if_include", subnet), ("oob_tcp_if_include", subnet)):
        if not _mca_given(argv, name):
            extra += ["--mca", name, value]
    if not _given(argv, "--bind-to", "-bind-to"):
        extra += ["--bind-to", "none"]  # each node's processes are already kept on its cores
    if oversubscribed and not _given(argv, "--oversubscribe", "-oversubscribe"):
        extra += ["--oversubscribe"]
    return [argv[0], *extra, *argv[1:]]


def _mpich(c: Cluster, argv: list[str], slots: int) -> list[str]:
    extra: list[str] = []
    if not _given(argv, "-f", "-hostfile", "-machinefile", "-hosts", "-host"):
        extra += ["-f", str(c.hostfile("mpich", slots))]
    if not _given(argv, "-launcher", "-bootstrap"):
        extra += ["-launcher", "ssh"]
    if not _given(argv, "-launcher-exec", "-bootstrap-exec"):
        extra += ["-launcher-exec", str(c.agent)]
    if not _given(argv, "-iface"):
        extra += ["-iface", "swbr0"]
    return [argv[0], *extra, *argv[1:]]


def transport_env(mpi: str, env: dict[str, str]) -> dict[str, str]:
    """``env`` plus what keeps an MPI's traffic between nodes on the emulated links (TCP over their
    ``eth0``) and within a node on shared memory; a value already set wins.  For launches that do not
    take options here (srun under the cluster's Slurm)."""
    env = dict(env)
    if mpi == "openmpi":
        for name, value in (("pml", "ob1"), ("btl", "self,vader,tcp"), ("btl_tcp_if_include", f"{SUBNET}.0/24"),
                            ("oob_tcp_if_include", f"{SUBNET}.0/24")):
            env.setdefault(f"OMPI_MCA_{name}", value)
    elif mpi == "mpich":
        # MPICH's own shared memory inside a node; UCX over TCP on the node's link between nodes
        # (UCX's own shared memory would join "nodes" that share this machine's memory).
        env.setdefault("UCX_TLS", "tcp,self")
        env.setdefault("UCX_NET_DEVICES", NODE_INTERFACE)
    return env


def cluster_launch(c: Cluster, argv: list[str], base_env: dict[str, str] | None = None,
                   flavour: str | None = None) -> ClusterLaunch:
    """``argv`` (an mpirun / mpiexec line) and the environment that run it across ``c``'s nodes."""
    if not argv:
        raise ScalewiseError("nothing to run: give the launch command after --, e.g. -- mpirun -np 4 ./app")
    line = parse_launch_line(argv)
    flavour = flavour or line.launcher_flavour or line.flavour_of_app
    if flavour is None:
        raise ScalewiseError(f"cannot tell which MPI '{argv[0]}' belongs to; pass --mpi openmpi or --mpi mpich")
    dead = c.alive()
    if dead:
        raise ScalewiseError(f"cluster: node(s) {', '.join(dead)} are gone; run `scalewise cluster up` again")
    env = dict(os.environ if base_env is None else base_env)
    ranks = line.ranks
    nodes = len(c.nodes)
    per_node = -(-ranks // nodes) if ranks else None
    cores = min(len(n.cpus) for n in c.nodes)
    slots = per_node or cores
    total = (ranks or slots * nodes)
    oversubscribed = slots > cores or total > c.cpus_total
    if flavour == "openmpi":
        out = _openmpi(c, argv, slots, oversubscribed)
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    elif flavour == "mpich":
        out = _mpich(c, argv, slots)
        env, _ = with_mpich_ucx(transport_env("mpich", env), oversubscribed)
    else:
        raise ScalewiseError(f"cluster: no launch recipe for MPI flavour {flavour!r}")
    return ClusterLaunch(out, env, ranks, per_node, oversubscribed, cores)


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
