"""The fan-in proxy calibrate times exchanges with several nodes by: one line per repetition, the
payload rate from what rank 0 received, and a one-line complaint about bad arguments."""
from __future__ import annotations

import re
import subprocess

import pytest


def _run(proxies_built, *args: str) -> subprocess.CompletedProcess:
    exe = proxies_built / "mpich" / "proxies" / "fanin"
    return subprocess.run(["mpiexec.mpich", "-n", "4", str(exe), *args], capture_output=True, text=True, timeout=120)


def test_fan_in_and_all_to_all_print_every_repetition(proxies_built):
    for extra in ([], ["--all"]):
        done = _run(proxies_built, "3", "65536", "2", "4", "0", *extra)
        assert done.returncode == 0, done.stderr
        reps = re.findall(r"rep=(\d+) seconds=([\d.]+) mbit_in=([\d.]+)", done.stdout)
        assert [int(r[0]) for r in reps] == [0, 1, 2, 3]
        for _, seconds, mbit in reps:  # 3 senders x 2 messages x 64 KiB into rank 0
            assert float(mbit) == pytest.approx(8e-6 * 3 * 2 * 65536 / float(seconds), rel=0.01)


def test_more_senders_than_other_ranks_is_a_one_line_error(proxies_built):
    done = _run(proxies_built, "4", "65536", "2", "4")
    assert done.returncode != 0
    assert "fanin: need 1 <= K < ranks" in done.stderr
