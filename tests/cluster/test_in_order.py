"""A link delivers a flow's packets in the order they were sent, as a wire does: two nodes sending
to each other at once see no reordering (a veth without receive steering handed packets to two
cores' backlogs, and TCP retransmitted hundreds a second that were never lost)."""

from __future__ import annotations

import subprocess
import sys
import time

from scalewise.cluster import cluster_up, parse_rate

PORT = 5917
MIB = 1 << 20
SINK = (f"import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"s.bind(('0.0.0.0', {PORT})); s.listen(); c, _ = s.accept()\n"
        "while c.recv(1 << 20): pass")


def _steering(c) -> list[str]:
    """rps_cpus of both ends of every node's link (inside a node, from its own sysfs)."""
    read = "cat /sys/class/net/{}/queues/rx-0/rps_cpus"
    shown = []
    for n in c.nodes:
        shown.append(subprocess.run(["sh", "-c", read.format(n.veth)], capture_output=True, text=True).stdout.strip())
        inside = ["nsenter", "-t", str(n.pid), "-n", "--", "unshare", "--mount", "sh", "-c",
                  f"mount -t sysfs sysfs /sys && {read.format('eth0')}"]
        shown.append(subprocess.run(inside, capture_output=True, text=True).stdout.strip())
    return shown


def _reordered(pid: int) -> int:
    """TcpExt TCPSACKReorder + TCPTSReorder + TCPRenoReorder of the node whose holder is ``pid``."""
    lines = open(f"/proc/{pid}/net/netstat").read().splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            row = dict(zip(names.split()[1:], map(int, values.split()[1:])))
            return sum(row.get(k, 0) for k in ("TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder"))
    raise AssertionError(f"no TcpExt in /proc/{pid}/net/netstat")


def test_both_ends_steer_and_an_exchange_arrives_in_order(two_nodes):
    # 100 ms: a queue deep enough that nothing is dropped, so any retransmission cue is reordering
    c = cluster_up(2, parse_rate("gige"), queue_us=100_000)
    assert all(int(mask.replace(",", ""), 16) > 0 for mask in _steering(c)), _steering(c)
    before = [_reordered(n.pid) for n in c.nodes]
    sinks = [subprocess.Popen([str(c.agent), n.name, f'{sys.executable} -c "{SINK}"']) for n in c.nodes]
    time.sleep(0.5)
    send = (f"import socket; s = socket.create_connection(('{{}}', {PORT})); "
            f"[s.sendall(bytes(4 * {MIB})) for _ in range(16)]; s.close()")
    sources = [subprocess.Popen([str(c.agent), n.name, f'{sys.executable} -c "{send.format(peer.address)}"'])
               for n, peer in zip(c.nodes, reversed(c.nodes))]
    assert [p.wait(timeout=60) for p in sources] == [0, 0]
    assert [p.wait(timeout=10) for p in sinks] == [0, 0]
    after = [_reordered(n.pid) for n in c.nodes]
    cluster_up(2, parse_rate("gige"), queue_us=2000)  # the session's pair back at the default queue
    assert [a - b for a, b in zip(after, before)] == [0, 0]
