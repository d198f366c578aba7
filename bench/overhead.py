#!/usr/bin/env python3
"""Profiler cost, measured side by side with bare runs in one session.

For each MPI flavour and rank count, runs bench/overhead.c bare and under
the profiler, alternating, and prints the added time per intercepted call
(min and median over all repetitions) and, for polling (Test*, Iprobe,
Improbe), one-sided and local calls, how much more that is than the
blocking path's (allreduce8), the memory added per rank, and the
log size per rank of bench/logsize.c (20 MPI functions, 6 peers per rank).

usage: overhead.py [--iters N] [--rounds R] [--ranks 1,2] [--flavours openmpi,mpich]
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from scalewise.logfile import layout as L  # noqa: E402
from scalewise.launch.preload import library_path  # noqa: E402

BLOCKING = "allreduce8"  # the reference: a blocking call's added cost
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "SCALEWISE_QUIET": "1"}


def launcher(flavour: str, n: int) -> list[str]:
    if flavour == "openmpi":
        # osc sm,pt2pt: Open MPI 4.1's default one-sided component fails on one rank over shared memory
        return ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
                "--mca", "osc", "sm,pt2pt", "-np", str(n)]
    return ["mpiexec.mpich", "-n", str(n)]


def build(flavour: str, src: str, outdir: Path) -> Path:
    exe = outdir / f"{Path(src).stem}-{flavour}"
    subprocess.run([f"mpicc.{flavour}", "-O2", "-o", str(exe), str(ROOT / "bench" / src)], check=True)
    return exe


def run_once(cmd: list[str], preload: Path | None, log: Path,
             extra: dict[str, str] | None = None) -> dict[str, list[float] | int]:
    env = {**ENV, **(extra or {})}
    if preload:
        env["LD_PRELOAD"] = str(preload)
        env["SCALEWISE_LOGFILE"] = str(log)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    res: dict = {}
    for line in out.splitlines():
        fields = dict(f.split("=", 1) for f in line.split())
        if "kernel" in fields:
            res[fields["kernel"]] = (int(fields["calls_per_iter"]), [float(x) for x in fields["ns_per_iter"].split(",")])
        elif "vm_hwm_kib" in fields:
            res["hwm"] = int(fields["vm_hwm_kib"])
    return res


def rank_block_sizes(log: Path) -> list[int]:
    data = log.read_bytes()
    nsec = struct.unpack_from("<I", data, 28)[0]
    for i in range(nsec):
        ident, _, _, off, size, _, _ = struct.unpack_from("<" + L.SECTION_ENTRY, data, L.HEADER_SIZE + i * L.SECTION_ENTRY_SIZE)
        if ident == L.SEC_RANK_INDEX:
            return [struct.unpack_from("<" + L.RANK_INDEX_ENTRY, data, off + j * 24)[3] for j in range(size // 24)]
    return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5, help="repetitions inside each run")
    ap.add_argument("--rounds", type=int, default=4, help="bare/profiled alternations")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--logsize-ranks", type=int, default=8)
    a = ap.parse_args()
    console = Console(width=200)  # every column whole, also when piped to a file
    cost = Table(title="Added cost per intercepted call (profiled - bare), ns")
    for col in ("MPI", "ranks", "kernel", "bare min", "profiled min", "added/call min", "bare median",
                "profiled median", "added/call median", "vs blocking"):
        cost.add_column(col, justify="right")
    mem = Table(title="Memory high-water mark of rank 0 (median over runs)")
    for col in ("MPI", "ranks", "bare KiB", "profiled KiB", "added KiB"):
        mem.add_column(col, justify="right")
    size = Table(title=f"Log size, bench/logsize.c at {a.logsize_ranks} ranks (20 functions, 6 peers per rank)")
    for col in ("MPI", "file bytes", "bytes per rank (file / ranks)", "compressed rank block, mean", "max"):
        size.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            lib = library_path(flavour)
            exe = build(flavour, "overhead.c", tmpd)
            for n in (int(x) for x in a.ranks.split(",")):
                cmd = launcher(flavour, n) + [str(exe), str(a.iters), str(a.reps)]
                samples: dict[str, dict[str, list[float]]] = {}
                hwm: dict[str, list[int]] = {"bare": [], "prof": []}
                for _ in range(a.rounds):
                    for mode, pre in (("bare", None), ("prof", lib)):
                        res = run_once(cmd, pre, tmpd / "o.swlog")
                        hwm[mode].append(res.pop("hwm"))
                        for k, (calls, ts) in res.items():
                            samples.setdefault(k, {"calls": [calls], "bare": [], "prof": []})[mode] += ts
                added = {k: (min(s["prof"]) - min(s["bare"])) / s["calls"][0] for k, s in samples.items()}
                for k, s in samples.items():
                    c = s["calls"][0]
                    bmin, pmin = min(s["bare"]), min(s["prof"])
                    bmed, pmed = statistics.median(s["bare"]), statistics.median(s["prof"])
                    # the added cost per call beyond the blocking path's (allreduce8), from the minima
                    cost.add_row(flavour, str(n), k, f"{bmin:.1f}", f"{pmin:.1f}", f"{(pmin - bmin) / c:.1f}",
                                 f"{bmed:.1f}", f"{pmed:.1f}", f"{(pmed - bmed) / c:.1f}",
                                 f"{added[k] - added[BLOCKING]:+.1f}")
                hb, hp = statistics.median(hwm["bare"]), statistics.median(hwm["prof"])
                mem.add_row(flavour, str(n), f"{hb:.0f}", f"{hp:.0f}", f"{hp - hb:.0f}")
            exe = build(flavour, "logsize.c", tmpd)
            log = tmpd / f"logsize-{flavour}.swlog"
            run_once(launcher(flavour, a.logsize_ranks) + [str(exe)], lib, log)
            blocks = rank_block_sizes(log)
            nbytes = log.stat().st_size
            size.add_row(flavour, str(nbytes), f"{nbytes / a.logsize_ranks:.0f}",
                         f"{statistics.mean(blocks):.0f}", str(max(blocks)))
        clock = tmpd / "clockcost"
        subprocess.run(["cc", "-O2", "-o", str(clock), str(ROOT / "bench" / "clockcost.c")], check=True)
        reads = dict(f.split("=") for f in subprocess.run([str(clock)], capture_output=True, text=True,
                                                          check=True).stdout.split())
    for t in (cost, mem, size):
        console.print(t)
    console.print(f"One clock read, same session (min of 5): rdtsc {reads['rdtsc_ns']} ns, "
                  f"clock_gettime {reads['clock_gettime_ns']} ns. The profiler reads rdtsc twice per call.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
