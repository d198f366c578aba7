"""Which algorithm Intel MPI 2021 runs for a collective, observed: rank 0 of a run runs under gdb, which
stops in a marker the program calls before each call (its byte count) and in every MPIR_/MPIDI_
algorithm function, and prints each one entered.  Several nodes are this one host under as many host
names: Hydra's ssh is replaced by an agent that starts each further proxy in a UTS namespace of its own,
so Intel MPI places one rank per "node", talks between them with its OFI netmod (libfabric's
tcp;ofi_rxm here) and loads its shm-ofi tuning file.  No pytest in here: the test and
scripts/intelmpi-observe.py both use it."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

PROGRAM = r"""#include <mpi.h>
#include <stdlib.h>
#include <string.h>
/* Called before each collective: the debugger stops here and reads which collective (its index in
   argv[1]'s list) moves how many bytes next; (-1, -1) after the call. */
void __attribute__((noinline)) mark(long coll, long bytes) { __asm__ volatile("" ::"r"(coll), "r"(bytes)); }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long k = 0;
    for (char *c = strtok(argv[1], ","); c; c = strtok(NULL, ","), k++)
        for (int i = 2; i < argc; i++) {
            long n = atol(argv[i]), d = n / 8 > 0 ? n / 8 : 1;
            char *a = calloc((size_t)(n + 8) * P, 1), *b = calloc((size_t)(n + 8) * P, 1);
            int *cnt = malloc(P * sizeof(int)), *dis = malloc(P * sizeof(int)), *dcnt = malloc(P * sizeof(int));
            for (int r = 0; r < P; r++) { cnt[r] = (int)n; dis[r] = (int)(r * n); dcnt[r] = (int)d; }
            MPI_Barrier(MPI_COMM_WORLD);
            mark(k, n);
            if (!strcmp(c, "allreduce")) MPI_Allreduce(a, b, (int)d, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (!strcmp(c, "reduce")) MPI_Reduce(a, b, (int)d, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (!strcmp(c, "reduce_scatter")) MPI_Reduce_scatter(a, b, dcnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            if (!strcmp(c, "bcast")) MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (!strcmp(c, "allgather")) MPI_Allgather(a, (int)n, MPI_BYTE, b, (int)n, MPI_BYTE, MPI_COMM_WORLD);
            if (!strcmp(c, "allgatherv")) MPI_Allgatherv(a, (int)n, MPI_BYTE, b, cnt, dis, MPI_BYTE, MPI_COMM_WORLD);
            if (!strcmp(c, "alltoall")) MPI_Alltoall(a, (int)n, MPI_BYTE, b, (int)n, MPI_BYTE, MPI_COMM_WORLD);
            if (!strcmp(c, "alltoallv")) MPI_Alltoallv(a, cnt, dis, MPI_BYTE, b, cnt, dis, MPI_BYTE, MPI_COMM_WORLD);
            if (!strcmp(c, "gather")) MPI_Gather(a, (int)n, MPI_BYTE, b, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (!strcmp(c, "scatter")) MPI_Scatter(a, (int)n, MPI_BYTE, b, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (!strcmp(c, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
            mark(-1, -1);
            free(a); free(b); free(cnt); free(dis); free(dcnt);
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
# Run to the first marker (the library is loaded by then), then stop in every algorithm-level function:
# MPIR_<Coll>_intra_* (MPICH's and Intel's own algorithms) and MPIDI_<Coll>_intra_composition_* (CH4's).
GDB = """set pagination off
set breakpoint pending on
break mark
run
rbreak ^MPIR_[A-Z][a-z_]*_intra_
rbreak ^MPIDI_[A-Z][a-z_]*_intra_composition
while 1
continue
end
"""
_HIT = re.compile(r"^Breakpoint \d+, (?:0x[0-9a-f]+ in )?(\w+) \((?:coll=(?:coll@entry=)?(-?\d+), "
                  r"bytes=(?:bytes@entry=)?(-?\d+))?", re.MULTILINE)
# Entered by every call, deciding nothing: the selection's entry points and each algorithm's sanity check.
_NOT_ALGORITHMS = re.compile(r"_auto(_safe)?$|_check$")

COLLECTIVES = ("allreduce", "bcast", "reduce", "allgather", "allgatherv", "alltoall", "alltoallv", "gather",
               "scatter", "barrier", "reduce_scatter")


def build(env: dict[str, str], work: Path) -> Path:
    """The observed program, built with Intel MPI's mpicc (in ``env``), and the agent beside it."""
    (work / "observe.c").write_text(PROGRAM)
    subprocess.run(["mpicc", "-O1", "-g", "observe.c", "-o", "observe"], cwd=work, env=env, check=True,
                   capture_output=True, timeout=300)
    (work / "agent").write_text(AGENT)
    (work / "agent").chmod(0o755)
    (work / "observe.gdb").write_text(GDB)
    return work / "observe"


def _where(work: Path, ranks: int) -> list[str]:
    """mpiexec.hydra's options that place one rank on each of ``ranks`` "nodes" (this host under other names)."""
    return ["-bootstrap", "ssh", "-bootstrap-exec", str(work / "agent"), "-ppn", "1", "-hosts",
            ",".join([socket.gethostname()] + [f"inode{i}" for i in range(1, ranks)])]


def tuning_file(env: dict[str, str], exe: Path) -> tuple[str, str]:
    """(Intel MPI's code for this host's CPU, the tuning file it loads on two such nodes), from its I_MPI_DEBUG=6
    output: it looks for tuning_<cpu>_<fabrics>.dat first, then falls back file by file ("not found") to others,
    on this host to another CPU's (tuning_skx_shm-ofi_tcp-ofi-rxm.dat for icx over tcp;ofi_rxm)."""
    done = subprocess.run(["mpiexec.hydra", *_where(exe.parent, 2), "-n", "2", str(exe), "barrier", "8"],
                          env={**env, "I_MPI_DEBUG": "6"}, capture_output=True, text=True, timeout=600)
    text = done.stdout + done.stderr
    named = re.findall(r"/(tuning_([a-z]+(?:-ap)?)_[\w.-]*?\.dat)", text)
    missing = set(re.findall(r'File "[^"]*/(tuning_[\w.-]+?\.dat)" not found', text))
    loaded = [f for f, _ in named if f not in missing]
    if not named or not loaded:
        raise RuntimeError(f"Intel MPI named no tuning file it loaded:\n{text[-3000:]}")
    return named[0][1], loaded[-1]


def observe(env: dict[str, str], exe: Path, collectives: list[str], ranks: int, sizes: list[int],
            nodes: bool = True) -> dict[str, dict[int, list[str]]]:
    """{collective: {bytes: the algorithm functions rank 0 entered in that call, in order}}, on ``ranks``
    nodes of one rank each (``nodes``) or on ``ranks`` ranks of this host; every collective is called
    once per size, one run for them all (most of a run is gdb reading the library's symbols)."""
    work = exe.parent
    where = _where(work, ranks) if nodes else []
    args = [str(exe), ",".join(collectives), *map(str, sizes)]
    rest = [":", "-n", str(ranks - 1), *args] if ranks > 1 else []
    # The other ranks wait for rank 0, stopped at each breakpoint: blocking (I_MPI_WAIT_MODE=1) rather than
    # polling, they leave the cores to gdb (minutes instead of an hour at 8 ranks on a loaded host; the same
    # decisions at 4 ranks either way, every collective and size).
    done = subprocess.run(["mpiexec.hydra", *where, "-n", "1", "gdb", "-q", "-batch", "-x", str(work / "observe.gdb"),
                           "--args", *args, *rest], env={"I_MPI_WAIT_MODE": "1", **env}, capture_output=True,
                          text=True, timeout=1800)
    out: dict[str, dict[int, list[str]]] = {c: {} for c in collectives}
    current = None
    for func, coll, marked in _HIT.findall(done.stdout):
        if func == "mark":
            current = (collectives[int(coll)], int(marked)) if int(coll) >= 0 else None
            if current is not None:
                out[current[0]][current[1]] = []
        elif current is not None and not _NOT_ALGORITHMS.search(func):
            out[current[0]][current[1]].append(func)
    if any(set(seen) != set(sizes) for seen in out.values()):
        raise RuntimeError(f"observing {collectives} on {ranks}: saw {out}\n{(done.stdout + done.stderr)[-3000:]}")
    return out

