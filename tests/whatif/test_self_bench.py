"""bench/whatif_self.py's TCP counters: read from a real /proc file of this machine, each name given its own
value, and a counter a socket's traffic moves seen to move."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from support.benches import bench_module


def _bench():
    return bench_module("whatif_self")


def test_each_counter_gets_the_value_under_its_own_name():
    got = _bench().proc_counters("Tcp: RtoAlgorithm RetransSegs InSegs\nTcp: 1 17 950\n"
                                 "TcpExt: TCPTimeouts TCPLossProbes\nTcpExt: 3 40\n")
    assert got == {("Tcp", "RtoAlgorithm"): 1, ("Tcp", "RetransSegs"): 17, ("Tcp", "InSegs"): 950,
                   ("TcpExt", "TCPTimeouts"): 3, ("TcpExt", "TCPLossProbes"): 40}


def test_a_file_whose_lines_do_not_pair_is_refused():
    with pytest.raises(ValueError, match="not a /proc counters file"):
        _bench().proc_counters("Tcp: RetransSegs InSegs\nTcp: 17\n")


def test_this_machines_counters_are_read_and_move_with_traffic():
    bench = _bench()
    pid = os.getpid()
    for name in ("netstat", "snmp"):  # the real files parse whole
        assert len(bench.proc_counters(Path(f"/proc/{pid}/net/{name}").read_text())) > 10
    before = bench.tcp_counters(pid)
    assert set(before) == set(bench.TCP_COUNTERS) and all(v >= 0 for v in before.values())
    snmp = bench.proc_counters(Path(f"/proc/{pid}/net/snmp").read_text())
    segs = snmp[("Tcp", "OutSegs")]
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()) as client, server.accept()[0] as peer:
            client.sendall(b"x" * 100_000)
            assert len(peer.recv(10)) > 0
    after = bench.proc_counters(Path(f"/proc/{pid}/net/snmp").read_text())
    assert after[("Tcp", "OutSegs")] > segs  # the parsed field is the live one, not a neighbour's
    assert bench.counters_text([{"retrans": 5, "drops": 1}], [{"retrans": 9, "drops": 4}]) == "node 0: retrans 4 drops 3"
