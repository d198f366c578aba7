"""The eager-threshold sets `tune` offers for Debian's MPICH move the threshold of the transport that
really carries the messages, checked on real runs without timing: UCX prints the protocol it picks for
each size range (UCX_PROTO_INFO=y, with UCX_PROTO_ENABLE=y: the protocol selection that prints it; the
default one honours UCX_RNDV_THRESH the same way, as the ping-pong steps in docs/benchmarks.md show), and
the range where rendezvous starts must be the set's value.  Debian's MPICH 4.0 is built ch4:ucx, so UCX
carries the messages on one node too and the POSIX cell size tune once moved changed nothing."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from scalewise.tune.choices import threshold_sets
from scalewise.tune.targets import TuneTarget

PROGRAM = r"""#include <mpi.h>
int main(int argc, char **argv) {
    char b[64] = {0};
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Sendrecv_replace(b, 64, MPI_CHAR, 1 - rank, 0, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""
# "|                 32K..inf | (?) rendezvous zero-copy read from remote | cma/memory  |"
_RANGE = re.compile(r"\|\s+(\d+[KMG]?)\.\.(?:\d+[KMG]?|inf) \| [^|]*rendezvous[^|]*\|")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _bytes(text: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMG]?)", text).groups()
    return int(number) * _UNITS[unit]


def _target(mode_bin: int) -> TuneTarget:
    return TuneTarget(name="MPI_Send", pct_mpi=50.0, time=1.0, calls=100, mean_bytes=float(1 << mode_bin - 1),
                      mode_bin=mode_bin, comm_size=2)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    work = tmp_path_factory.mktemp("ucx")
    (work / "x.c").write_text(PROGRAM)
    subprocess.run(["mpicc.mpich", "x.c", "-o", "x"], cwd=work, check=True, capture_output=True, timeout=300)
    return work / "x"


def _rendezvous_from(program, env: dict[str, str]) -> set[int]:
    done = subprocess.run(["mpiexec.mpich", "-n", "2", str(program)], capture_output=True, text=True, timeout=300,
                          env={**env, "UCX_PROTO_ENABLE": "y", "UCX_PROTO_INFO": "y"})
    assert done.returncode == 0, done.stderr[-2000:]
    # the tables of the tagged sends between the two ranks (shared memory), not a rank's to itself
    tables = [t for t in re.split(r"\n(?=.*\| 0x[0-9a-f]+ ep_cfg)", done.stdout + done.stderr)
              if "ucp_tag_send" in t.split("\n", 1)[0] and "sysv/memory" in t]
    assert tables, (done.stdout + done.stderr)[-3000:]
    return {_bytes(m.group(1)) for t in tables for m in _RANGE.finditer(t)}


@pytest.mark.parametrize("mode_bin", [13, 15])  # 4-8 KiB and 16-32 KiB messages: sets below and above UCX's 8 KiB
def test_debian_mpich_sets_move_ucx_rendezvous_on_one_node(program, mode_bin):
    sets = threshold_sets("mpich-4.0", _target(mode_bin), over_network=False)
    assert sets, "no threshold set for Debian's MPICH on one node"
    for name, settings in sets.items():
        value = int(name.split("-")[1])
        env = {**os.environ, **{k: v for _, k, v in settings.applied("mpich")}}
        assert _rendezvous_from(program, env) == {value}, (name, settings)
