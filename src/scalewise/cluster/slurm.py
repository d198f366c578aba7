"""Real Slurm across the emulated nodes: slurmctld and munged on the host, one slurmd per node.

Each slurmd runs inside its node (its namespaces and cores, started through
the cluster's agent), takes its node name from its own hostname and listens
on the node's address, so Slurm sees N machines.  slurmctld listens on the
host's side of the bridge.  munged is reached through its socket file, which
every node sees (the nodes share the host's file system).  Nothing is
written to /etc (but in a chroot, below): clients find this Slurm through ``SLURM_CONF``.

Each slurmd runs in a mount namespace of its own that sees the cluster's
hosts file as /etc/hosts, so its jobs resolve names as on a real cluster:
each node's name to its address, the host's name to the host's side of the
bridge.  Hydra's mpiexec inside an allocation tells its proxies where to
call back by host name (``swnode1`` in a batch script, the host's name
under salloc); without this the names do not resolve in the nodes, or
resolve to the loopback.  In a chroot whose root is not a mount point no
mount namespace can keep that bind mount to itself; there the same lines go
first in the root's /etc/hosts between two marks, removed when Slurm stops.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from scalewise.cluster.links import rate_names
from scalewise.cluster.paths import HOST_ADDRESS, NODE_PREFIX
from scalewise.errors import ScalewiseError

# Outside the cluster's own state folder: `down` stops Slurm before it removes that folder.
BASE = Path(os.environ.get("SCALEWISE_CLUSTER_SLURM_DIR", "/run/scalewise-cluster-slurm"))
CONF = BASE / "etc" / "slurm.conf"
# Only where a mount namespace cannot hold the cluster's own hosts file (private_mounts)
ETC_HOSTS = Path("/etc/hosts")
HOSTS_MARK, HOSTS_END = "# scalewise emulated cluster: begin", "# scalewise emulated cluster: end"
CTLD_PORT, SLURMD_PORT = 16917, 16918  # not Slurm's defaults: no clash with a system Slurm


def slurm_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) pointed at the cluster's Slurm."""
    env = dict(os.environ if base is None else base)
    env["SLURM_CONF"] = str(CONF)
    return env


def base_config(b: Path, name: str, ctld: str, ctld_port: int, slurmd_port: int) -> list[str]:
    """The slurm.conf lines of a cluster whose daemons keep everything under ``b`` (``ctld``: ``host(address)``)."""
    return [
        f"ClusterName={name}", f"SlurmctldHost={ctld}", f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}", "SlurmUser=root", "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={b}/munge/munge.socket.2", f"StateSaveLocation={b}/state",
        f"SlurmdSpoolDir={b}/spool/%n", f"SlurmctldPidFile={b}/slurmctld.pid", f"SlurmdPidFile={b}/slurmd-%n.pid",
        f"SlurmctldLogFile={b}/log/slurmctld.log", f"SlurmdLogFile={b}/log/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "MpiDefault=none", "ReturnToService=2",
        # The nodes share one /tmp: each needs its own TmpFS, or PMIx step folders collide.
        f"TmpFS={b}/tmp/%n", "SchedulerParameters=sched_interval=1", "MinJobAge=300"]


def _config(cluster) -> str:
    n = len(cluster.nodes)
    net, last = cluster.nodes[0].address.rsplit(".", 1)[0], cluster.nodes[-1].address.rsplit(".", 1)[1]
    cores = min(len(node.cpus) for node in cluster.nodes)
    host = socket.gethostname().split(".")[0]
    return "\n".join([
        *base_config(BASE, "swcluster", f"{host}({HOST_ADDRESS})", CTLD_PORT, SLURMD_PORT),
        # Features name the link, so a study's interconnect axis (--constraint) finds these nodes.
        f"NodeName={NODE_PREFIX}[1-{n}] NodeAddr={net}.[1-{last}] CPUs={cores} "
        f"Features={','.join(rate_names(cluster.rate_bits))} State=UNKNOWN",
        f"PartitionName=swcluster Nodes={NODE_PREFIX}[1-{n}] Default=YES MaxTime=INFINITE State=UP", ""])


def hosts_file(cluster) -> str:
    """/etc/hosts as the cluster's jobs see it: the nodes, and the host by its own names at the bridge."""
    host = socket.gethostname()
    names = " ".join(dict.fromkeys([host, host.split(".")[0]]))
    return "\n".join(["127.0.0.1 localhost", f"{HOST_ADDRESS} {names}",
                      *(f"{node.address} {node.name}" for node in cluster.nodes), ""])


def start_slurm(cluster, timeout: float = 30) -> Path:
    """Start munged, slurmctld and one slurmd per node; wait until every node is idle.  Returns SLURM_CONF."""
    stop_all()
    hosts = BASE / "etc" / "hosts"
    hosts.parent.mkdir(parents=True, exist_ok=True)
    hosts.write_text(hosts_file(cluster))
    # Inside the node, on its cores (its hostname is its Slurm node name), seeing the cluster's hosts file.
    if private_mounts():
        slurmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                  shlex.quote(f"mount --bind {hosts} /etc/hosts && exec slurmd")]
    else:
        add_hosts_lines(hosts.read_text())
        slurmd = ["slurmd"]
    start_daemons(BASE, _config(cluster), {name: [str(cluster.agent), name, *slurmd] for name in cluster.hostnames},
                  timeout)
    return CONF


def start_daemons(b: Path, config: str, slurmds: dict[str, list[str]], timeout: float = 30) -> None:
    """Start munged, slurmctld (``config``, written to b/etc/slurm.conf) and each node's slurmd command
    (node name -> argv), all keeping their state under ``b``; wait until every node is idle.  Also the
    tests' localhost Slurm (tests/support/slurm.py)."""
    for sub in ("etc", "state", "spool", "log", "munge", "mungekey"):
        (b / sub).mkdir(parents=True, exist_ok=True)
    for name in slurmds:
        (b / "tmp" / name).mkdir(parents=True, exist_ok=True)
    os.chmod(b, 0o755)
    os.chmod(b / "munge", 0o755)  # munged insists on a world-executable socket folder
    os.chmod(b / "mungekey", 0o700)
    key = b / "mungekey" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    _start(["munged", f"--socket={b}/munge/munge.socket.2", f"--key-file={key}", f"--pid-file={b}/munge/munged.pid",
            f"--log-file={b}/munge/munged.log", f"--seed-file={b}/mungekey/seed"], "munged", b)
    conf = b / "etc" / "slurm.conf"
    conf.write_text(config)
    env = dict(os.environ, SLURM_CONF=str(conf))
    _start(["slurmctld", "-c"], "slurmctld", b, env)
    for name, argv in slurmds.items():
        _start(argv, f"slurmd on {name}", b, env)
    _wait_idle(len(slurmds), b, env, timeout)


def _start(argv: list[str], what: str, b: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise ScalewiseError(f"starting {what} failed: {said[-1] if said else 'no message'} (logs in {b / 'log'})")


def _wait_idle(count: int, b: Path, env: dict[str, str], timeout: float) -> None:
    deadline, out = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        out = subprocess.run(["sinfo", "-h", "-o", "%T %D"], env=env, capture_output=True, text=True).stdout
        if out.split()[:2] == ["idle", str(count)]:
            return
        time.sleep(0.3)
    raise ScalewiseError(f"Slurm did not come up ({out.strip() or 'no answer'}); logs in {b / 'log'}")


def stop_all() -> list[str]:
    """Stop the cluster's Slurm daemons and munged (by their pid files) and remove their state."""
    remove_hosts_lines()
    return stop_daemons(BASE)


def private_mounts() -> bool:
    """Whether a mount namespace can keep a bind mount to itself.  Not in a chroot whose root is not a
    mount point (util-linux: "cannot change root filesystem propagation"): a bind mount there would
    reach the outer system's view, so the cluster's names go into this root's /etc/hosts instead."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True).returncode == 0


def add_hosts_lines(lines: str, etc_hosts: Path = ETC_HOSTS) -> None:
    """Put the cluster's names first in ``etc_hosts`` (the first line naming a host wins), between marks."""
    kept = _without_block(etc_hosts.read_text() if etc_hosts.exists() else "")
    etc_hosts.write_text(f"{HOSTS_MARK}\n{lines.rstrip()}\n{HOSTS_END}\n{kept}")


def remove_hosts_lines(etc_hosts: Path = ETC_HOSTS) -> None:
    if etc_hosts.exists() and HOSTS_MARK in (text := etc_hosts.read_text()):
        etc_hosts.write_text(_without_block(text))


def _without_block(text: str) -> str:
    if HOSTS_MARK not in text:
        return text
    head, _, rest = text.partition(HOSTS_MARK + "\n")
    return head + rest.partition(HOSTS_END + "\n")[2]


def stop_daemons(b: Path) -> list[str]:
    """Stop the Slurm daemons and munged keeping their state under ``b`` (by their pid files); remove ``b``."""
    if not b.exists():
        return []
    conf = b / "etc" / "slurm.conf"
    if conf.exists():
        subprocess.run(["scontrol", "shutdown"], env=dict(os.environ, SLURM_CONF=str(conf)), capture_output=True,
                       timeout=30)
    # scontrol shutdown stops Slurm's daemons, not munged: it is told to end (else each down waited
    # out _end's grace period for it, 3 s, before killing it).
    stopped = [pidfile.stem for pidfile in sorted(b.glob("*.pid")) if _end(pidfile)]
    stopped += ["munged"] if _end(b / "munge" / "munged.pid", term=True) else []
    shutil.rmtree(b, ignore_errors=True)
    return [f"slurm daemons ({', '.join(stopped)})"] if stopped else ["slurm state"]


def _end(pidfile: Path, term: bool = False) -> bool:
    """Wait for the daemon of ``pidfile`` to end (after shutdown, or after SIGTERM with ``term``), else
    kill it; True if it was running."""
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, signal.SIGTERM if term else 0)
    except (OSError, ValueError):
        return False
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if _ended(pid):
            return True
        time.sleep(0.05)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    return True


def _ended(pid: int) -> bool:
    """Gone, or a zombie: the daemons' parent is init, which on some machines reaps them seconds late
    (munged ended 0.1 s after SIGTERM and stayed a zombie for 2 s here)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True
