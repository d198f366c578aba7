"""Bring an emulated cluster up, describe it, take it down.

What ``up`` makes, all named with the ``sw`` prefix and recorded in the state
folder (``/run/scalewise-cluster``, ``SCALEWISE_CLUSTER_DIR`` overrides):

* one holder process per node (``unshare --net --uts``): the node's network
  and hostname (``swnode1``, ``swnode2``, ...);
* a bridge ``swbr0`` on the host side with ``10.213.0.254/24``; with
  ``blocking`` the second half of the nodes sits on ``swbr1``, joined to
  ``swbr0`` by the veth pair ``swup0``/``swup1``;
* per node a veth pair, ``swvN`` on the bridge and ``eth0`` inside the node
  with ``10.213.0.N/24``, shaped with tc tbf in both directions, each with
  a queue of ``queue_us`` of traffic;
* the agent script MPI launchers use to start processes inside a node.

``down`` kills every process inside the nodes' namespaces, deletes the links
and the state folder.  ``up`` first takes down whatever an earlier run left
behind unless it already has the asked shape; both are idempotent.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scalewise.cluster import slurm
from scalewise.cluster.links import DEFAULT_QUEUE_US, EARLIER_QUEUE_US, queue_text, rate_text, tbf_args
from scalewise.cluster.paths import HOST_ADDRESS, NODE_PREFIX, NOT_ROOT, SUBNET, state_dir
from scalewise.errors import ScalewiseError
from scalewise.formatting import plural

MAX_NODES = 200
HOLDER_MARK = "scalewise-node-"  # argv[0] of each node's holder, so leftovers can be found
TOOLS = ("ip", "tc", "unshare", "nsenter", "taskset", "bash")
LINK_PREFIXES = ("swbr", "swv", "swup", "swprobe")  # every host-side link up makes, so down can find them


@dataclass
class Node:
    name: str  # its hostname
    pid: int  # the holder process: its namespaces are the node's
    address: str
    veth: str  # host-side end of its link
    cpus: list[int]


@dataclass
class Cluster:
    nodes: list[Node]
    rate_bits: int
    blocking: str | None  # None (non-blocking) or "2:1"
    cpus_total: int
    folder: str
    links: list[str] = field(default_factory=list)  # host-side links made, bridges included
    queue_us: int = DEFAULT_QUEUE_US  # how long a packet may wait in a link's queue
    # The queue of each node's own sending end (its eth0, the emulated NIC) when not queue_us: a real
    # NIC holds its host's TCP back instead of dropping it (docs/decisions.md); None: queue_us.
    sending_queue_us: int | None = None
    # False: launches keep a peer's control messages out from behind bulk data in one byte stream, as
    # an HPC interconnect does (launching.CONTROL_APART); True: each MPI's own TCP settings.
    tcp_defaults: bool = False

    @property
    def agent(self) -> Path:
        return Path(self.folder) / "agent"

    @property
    def hostnames(self) -> list[str]:
        return [n.name for n in self.nodes]

    def hostfile(self, mpi: str, slots: int | None = None) -> Path:
        """A hostfile in the MPI's own syntax, ``slots`` per node (default: the node's cores)."""
        path = Path(self.folder) / f"hosts.{mpi}"
        lines = []
        for n in self.nodes:
            k = slots or len(n.cpus)
            lines.append(f"{n.name} slots={k}" if mpi == "openmpi" else f"{n.name}:{k}")
        path.write_text("\n".join(lines) + "\n")
        return path

    def alive(self) -> list[str]:
        """Names of the nodes whose holder is gone (empty when the cluster is whole)."""
        return [n.name for n in self.nodes if not _running(n.pid)]

    def describe(self) -> str:
        shape = (f"{plural(len(self.nodes), 'node')}, links {rate_text(self.rate_bits)}, "
                 f"queue {queue_text(self.queue_us)}")
        if self.sending_queue_us is not None:
            shape += f" ({queue_text(self.sending_queue_us)} at each node's sending end)"
        if self.blocking:
            shape += f", {self.blocking} blocking between the two halves"
        return shape + (", the MPIs' own TCP settings" if self.tcp_defaults else "")


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise ScalewiseError(f"cluster: {what} failed: {' '.join(argv)}: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def _in_node(node: Node, argv: list[str], what: str) -> str:
    return _run(["nsenter", "-t", str(node.pid), "-n", "-u", "--", *argv], what)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a holder this process started stays one until reaped)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def check_can_emulate() -> None:
    """One-line errors for what makes emulation impossible here: not root, a missing tool or kernel feature."""
    if os.geteuid() != 0:
        raise ScalewiseError(NOT_ROOT)
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise ScalewiseError(f"cluster: missing tools: {', '.join(missing)} (Debian: iproute2, util-linux)")
    probe = "swprobe0"
    done = subprocess.run(["ip", "link", "add", probe, "type", "veth", "peer", "name", "swprobe1"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ScalewiseError(f"cluster: this kernel cannot make veth pairs: {done.stderr.strip()}")
    try:
        done = subprocess.run(["tc", "qdisc", "add", "dev", probe, "root", *tbf_args(10**9)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise ScalewiseError(f"cluster: this kernel cannot shape links with tc tbf: {done.stderr.strip()}")
    finally:
        subprocess.run(["ip", "link", "del", probe], capture_output=True)


def _cpu_sets(nodes: int) -> tuple[list[list[int]], int]:
    """Each node's share of this process's cores: equal blocks, or one (shared) core each when nodes outnumber cores."""
    cpus = sorted(os.sched_getaffinity(0))
    per = len(cpus) // nodes
    if per >= 1:
        return [cpus[i * per:(i + 1) * per] for i in range(nodes)], len(cpus)
    return [[cpus[i % len(cpus)]] for i in range(nodes)], len(cpus)


def _start_holder(name: str) -> int:
    # Without --fork, unshare enters the new namespaces itself and execs bash:
    # the holder's pid is the Popen's.  argv[0] carries the mark for clean-ups.
    proc = subprocess.Popen(["unshare", "--net", "--uts", "--", "bash", "-c",
                             'hostname "$1" && exec -a "$2" sleep infinity', "holder", name, HOLDER_MARK + name],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ScalewiseError(f"cluster: node {name} could not start: {proc.stderr.read().decode().strip()}")
        try:
            if Path(f"/proc/{proc.pid}/cmdline").read_bytes().startswith(HOLDER_MARK.encode()):
                return proc.pid
        except OSError:
            pass
        time.sleep(0.01)
    proc.kill()
    raise ScalewiseError(f"cluster: node {name} did not come up within 10 s")


def _shape(dev: str, bits: int, queue_us: int, node: Node | None = None) -> None:
    argv = ["tc", "qdisc", "replace", "dev", dev, "root", *tbf_args(bits, queue_us)]
    if node is None:
        _run(argv, f"shaping {dev}")
    else:
        _in_node(node, argv, f"shaping {node.name}")


def _add_bridge(name: str, links: list[str]) -> None:
    _run(["ip", "link", "add", name, "type", "bridge"], f"making bridge {name}")
    links.append(name)
    _run(["ip", "link", "set", name, "up"], f"starting bridge {name}")


AGENT = """#!/bin/sh
# The emulated cluster's rsh/ssh-style agent: [options] host command...
# Runs the command inside the node's network and UTS namespaces, on its cores.
while [ $# -gt 0 ]; do
  case "$1" in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    --) shift; break ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=$1; shift
entry="{folder}/nodes/$host"
[ -f "$entry" ] || {{ echo "scalewise cluster agent: no emulated node '$host'" >&2; exit 255; }}
read pid cpus < "$entry"
exec nsenter -t "$pid" -n -u -- taskset -c "$cpus" sh -c "$*"
"""


def _write_state(c: Cluster) -> None:
    folder = Path(c.folder)
    (folder / "nodes").mkdir(parents=True, exist_ok=True)
    for n in c.nodes:
        (folder / "nodes" / n.name).write_text(f"{n.pid} {','.join(map(str, n.cpus))}\n")
    c.agent.write_text(AGENT.format(folder=folder))
    c.agent.chmod(0o755)
    record = asdict(c)
    if record["sending_queue_us"] is None:  # a record without it is read by every earlier version as well
        del record["sending_queue_us"]
    (folder / "state.json").write_text(json.dumps(record, indent=1))


def current_cluster() -> Cluster | None:
    """The cluster ``up`` made, or None."""
    path = state_dir() / "state.json"
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text())
        raw.setdefault("queue_us", EARLIER_QUEUE_US)
        raw.setdefault("tcp_defaults", True)  # recorded before the setting: launched with the MPIs' own
        return Cluster(**{**raw, "nodes": [Node(**n) for n in raw["nodes"]]})
    except (ValueError, TypeError, KeyError) as exc:
        raise ScalewiseError(f"cluster: state file {path} is damaged ({exc}); run `scalewise cluster down`") from None


def require_cluster() -> Cluster:
    """The running cluster; a one-line error when there is none."""
    c = current_cluster()
    if c is None:
        raise ScalewiseError("no emulated cluster is up: run `scalewise cluster up --nodes N` first")
    return c


def cluster_up(nodes: int, rate_bits: int, blocking: str | None = None, queue_us: int | None = None,
               tcp_defaults: bool | None = None, sending_queue_us: int | None = None) -> Cluster:
    """N emulated nodes joined at ``rate_bits``; reuses a healthy cluster of the same shape.
    ``queue_us``: how long a packet may wait in a link's queue; None keeps a running cluster's
    (so a study's reshaping keeps what ``cluster up --queue`` set), DEFAULT_QUEUE_US for a new one.
    ``tcp_defaults``: launch with each MPI's own TCP settings (Cluster.tcp_defaults); None keeps a
    running cluster's, False for a new one.  ``sending_queue_us``: the queue of each node's own
    sending end (Cluster.sending_queue_us); None: ``queue_us`` at both ends."""
    if not 1 <= nodes <= MAX_NODES:
        raise ScalewiseError(f"cluster: --nodes must be 1..{MAX_NODES}, got {nodes}")
    if blocking not in (None, "2:1"):
        raise ScalewiseError(f"cluster: --blocking accepts only 2:1, got {blocking!r}")
    if blocking and nodes < 2:
        raise ScalewiseError("cluster: a blocking topology needs at least 2 nodes")
    check_can_emulate()
    old = current_cluster()
    if old and len(old.nodes) == nodes and old.blocking == blocking and not old.alive():
        queue_us = old.queue_us if queue_us is None else queue_us
        if (old.rate_bits, old.queue_us, old.sending_queue_us) != (rate_bits, queue_us, sending_queue_us):
            # other links: reshape in place, keep what runs there
            old.rate_bits, old.queue_us, old.sending_queue_us = rate_bits, queue_us, sending_queue_us
            _shape_links(old)
            _write_state(old)
        if tcp_defaults is not None and tcp_defaults != old.tcp_defaults:  # the next launches' settings
            old.tcp_defaults = tcp_defaults
            _write_state(old)
        return old
    cluster_down()
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    cpu_sets, total = _cpu_sets(nodes)
    c = Cluster(nodes=[], rate_bits=rate_bits, blocking=blocking, cpus_total=total, folder=str(folder),
                queue_us=DEFAULT_QUEUE_US if queue_us is None else queue_us, tcp_defaults=bool(tcp_defaults),
                sending_queue_us=sending_queue_us)
    try:
        _build(c, nodes, cpu_sets)
    except BaseException:
        _write_state(c)  # so down finds what was made before the failure
        cluster_down()
        raise
    _write_state(c)
    return c


def _build(c: Cluster, nodes: int, cpu_sets: list[list[int]]) -> None:
    _add_bridge("swbr0", c.links)
    _run(["ip", "addr", "add", f"{HOST_ADDRESS}/24", "dev", "swbr0"], "addressing swbr0")
    bridge_of = ["swbr0"] * nodes
    if c.blocking:
        # 2:1: the second half hangs off swbr1; the uplink carries half of what that half can send.
        _add_bridge("swbr1", c.links)
        half = nodes // 2
        bridge_of = ["swbr0"] * (nodes - half) + ["swbr1"] * half
        _run(["ip", "link", "add", "swup0", "type", "veth", "peer", "name", "swup1"], "making the uplink")
        c.links.append("swup0")
        for end, br in (("swup0", "swbr0"), ("swup1", "swbr1")):
            _run(["ip", "link", "set", end, "master", br, "up"], "attaching the uplink")
    for i in range(1, nodes + 1):
        name = f"{NODE_PREFIX}{i}"
        node = Node(name, _start_holder(name), f"{SUBNET}.{i}", f"swv{i}", cpu_sets[i - 1])
        c.nodes.append(node)
        inner = f"swp{i}"
        _run(["ip", "link", "add", node.veth, "type", "veth", "peer", "name", inner], f"making the link of {name}")
        c.links.append(node.veth)
        _run(["ip", "link", "set", inner, "netns", str(node.pid)], f"moving the link into {name}")
        _run(["ip", "link", "set", node.veth, "master", bridge_of[i - 1], "up"], f"attaching {name}")
        for argv in (["ip", "link", "set", inner, "name", "eth0"], ["ip", "addr", "add", f"{node.address}/24", "dev", "eth0"],
                     ["ip", "link", "set", "eth0", "up"], ["ip", "link", "set", "lo", "up"]):
            _in_node(node, argv, f"configuring {name}")
    _shape_links(c)


def _shape_links(c: Cluster) -> None:
    """Every link at the cluster's rate and queue: both ends of each node's link, and with 2:1
    blocking the uplink between the halves at half of what one half can send."""
    for node in c.nodes:
        _shape(node.veth, c.rate_bits, c.queue_us)
        _shape("eth0", c.rate_bits, c.queue_us if c.sending_queue_us is None else c.sending_queue_us, node)
    if c.blocking:
        for end in ("swup0", "swup1"):
            _shape(end, max(1, len(c.nodes) // 2 * c.rate_bits // 2), c.queue_us)


def _namespace_members(pids: list[int]) -> list[int]:
    """Every process sharing a network namespace with one of ``pids`` (the holders included)."""
    wanted = set()
    for pid in pids:
        try:
            wanted.add(os.readlink(f"/proc/{pid}/ns/net"))
        except OSError:
            pass
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "net") in wanted:
                    members.append(int(entry.name))
            except OSError:
                continue
    return members


def node_holders() -> list[int]:
    """Every node holder process alive on this machine, found by its process name (recorded or not)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(HOLDER_MARK.encode()):
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def cluster_down() -> list[str]:
    """Remove everything an ``up`` made (or left behind when it crashed); what was removed, in words."""
    removed = slurm.stop_all()
    c = current_cluster() if (state_dir() / "state.json").is_file() else None
    holders = sorted(set(([n.pid for n in c.nodes] if c else []) + node_holders()))
    victims = _namespace_members(holders)
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if victims:
        removed.append(f"{len(victims)} processes in {len(holders)} node namespaces")
    deadline = time.monotonic() + 5
    while any(_running(p) for p in victims) and time.monotonic() < deadline:
        time.sleep(0.02)
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    ours = sorted({line.split(":")[1].strip().split("@")[0] for line in links.splitlines()
                   if line.split(":")[1].strip().startswith(LINK_PREFIXES)})
    for name in ours:
        if subprocess.run(["ip", "link", "del", name], capture_output=True).returncode == 0:
            removed.append(f"link {name}")
    if state_dir().exists():
        shutil.rmtree(state_dir())
        removed.append(f"state folder {state_dir()}")
    return removed
