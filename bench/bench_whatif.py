"""End-to-end speed of `scalewise whatif`: the command reads a trace FILE,
decodes it, expands its collectives, matches requests, replays and prints
the answer (--json), in a child process whose CPU time and peak memory are
read from the kernel (its own rusage, from wait4).  Prints trace events per
second of CPU and resident bytes per event, for growing traces at 1,024 and
16,384 ranks,
and the engine's part alone (in this process: decode, templates, replay).

The traces are the stencil of tests/support/traces.py (halo_allreduce) (4
halo Irecv/Isend of 32 KiB, a Waitall and an 8-byte Allreduce per step, 5%
compute jitter, 0-2 us between calls), written rank by rank straight to the
file, so that a 100-million-event trace needs no trace in memory.

    .venv/bin/python bench/bench_whatif.py [--ranks 1024,16384] [--steps 98,977,9766:6,61,610] [--keep DIR]
        [--before BUILD]

With --before (a build directory holding another libswreplay.so), each trace
is also run on that engine, back to back with this one, and the ratios
printed: a comparison made under one and the same load.

(10 events per rank and step: the default steps make about 1, 10 and 100 million events.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

from scalewise.logfile import varint
from scalewise.whatif import network, templates
from scalewise.whatif.api import decode
from support.traces import FUNCTIONS, neighbours
from scalewise.whatif.trace import COLUMNS, Kind, RankEvents
from scalewise.logfile.tracefile import _HEADER, _RANK, MAGIC, VERSION, _table, read_trace

ROOT = Path(__file__).resolve().parents[1]
SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"


def halo_rank(r: int, P: int, steps: int, rng: np.random.Generator, compute: float = 1e-3, imbalance: float = 0.2,
              jitter: float = 0.05, halo_bytes: int = 32768) -> RankEvents:
    """One rank of halo_allreduce(P, steps, jitter=0.05) (the same events; its own random draws)."""
    nb = neighbours(r, P)
    step = {
        "kind": [Kind.IRECV] * 4 + [Kind.ISEND] * 4 + [Kind.WAIT, Kind.COLLECTIVE],
        "func": [0] * 4 + [1] * 4 + [2, 3],
        "peer": [nb[1], nb[0], nb[3], nb[2]] + nb + [-1, -1],
        "bytes": [halo_bytes] * 8 + [0, 8],
        "tag": [0, 1, 2, 3, 0, 1, 2, 3, 0, 0],
        "comm": [0] * 10, "req": list(range(8)) + [-1, -1], "root": [-1] * 10, "flags": [0] * 10,
        "nreq": [0] * 8 + [8, 0],
        "compute": [compute * (1 + imbalance * (r % 7) / 6)] + [0.0] * 9,
    }
    cols = {k: np.tile(np.asarray(step[k], dtype=t), steps) for k, t in COLUMNS.items()}
    it = np.repeat(np.arange(steps, dtype=np.int64), 10)
    cols["req"] = np.where(cols["req"] >= 0, cols["req"] + 8 * it, -1)
    cols["compute"] *= 1 + jitter * rng.uniform(-1, 1, len(it))
    cols["compute"] += np.where(cols["compute"] == 0, rng.uniform(0, 2e-6, len(it)), 0)
    cols["compute"] = np.rint(cols["compute"] * 1e9) * 1e-9
    waits = (np.arange(8, dtype=np.int64)[None, :] + 8 * np.arange(steps)[:, None]).ravel()
    return RankEvents(cols, waits)


def write_halo(path: Path, P: int, steps: int, seed: int = 0) -> int:
    """Write the P-rank, ``steps``-step stencil trace rank by rank; returns its size in bytes.

    The same file as _encode_rank of halo_rank for every rank, byte for byte, made faster: every column
    but peer and compute is the same for all ranks (encoded once), peer is one step's bytes repeated, and
    only compute, the rank's own random draws, is encoded rank by rank."""
    rng = np.random.default_rng(seed)
    n = 10 * steps
    one = halo_rank(0, P, steps, np.random.default_rng(0))
    c, waits = one.columns, one.wait_reqs.astype(np.int64)
    req = c["req"].astype(np.int64)
    made = req >= 0
    req_code = np.zeros(n, dtype=np.uint64)
    req_code[made] = varint.zigzag(req[made] - np.concatenate(([-1], req[made][:-1])) - 1) + np.uint64(1)
    head = c["kind"].astype(np.uint8).tobytes() + varint.encode(c["func"])
    middle = b"".join([varint.encode(c["bytes"]), varint.encode(varint.zigzag(c["tag"])), varint.encode(c["comm"]),
                       varint.encode(req_code), varint.encode(c["root"].astype(np.int64) + 1),
                       c["flags"].astype(np.uint8).tobytes(), varint.encode(c["nreq"])])
    tail = varint.encode(varint.zigzag(np.diff(np.concatenate(([-1], waits)))))
    first = np.arange(n) % 10 == 0
    with open(path, "wb") as f:
        f.write(_HEADER.pack(MAGIC, VERSION, 0, P, len(FUNCTIONS), 0))
        f.write(_table("\n".join(FUNCTIONS).encode()) + _table(b""))
        for r in range(P):
            nb = np.array(neighbours(r, P), dtype=np.int64)
            peers = np.concatenate((nb[[1, 0, 3, 2]], nb))
            peer = varint.encode(varint.zigzag(peers - r) + np.uint64(1)) + b"\x00\x00"
            compute = np.where(first, 1e-3 * (1 + 0.2 * (r % 7) / 6), 0.0)  # as halo_rank, draw for draw
            compute *= 1 + 0.05 * rng.uniform(-1, 1, n)
            compute += np.where(compute == 0, rng.uniform(0, 2e-6, n), 0)
            compute = np.rint(compute * 1e9) * 1e-9
            body = zlib.compress(b"".join([head, peer * steps, middle,
                                           varint.encode(np.rint(compute * 1e9).astype(np.uint64)), tail]), 6)
            f.write(_RANK.pack(r, 0, n, len(waits), len(body)) + body)
        return f.tell()


def _env(build: Path | None) -> dict:
    return {**os.environ, "SCALEWISE_BUILD": str(build)} if build else dict(os.environ)


def command(path: Path, build: Path | None = None) -> dict:
    """`scalewise whatif PATH --network edr-ib --json` in a child: its CPU seconds, peak RSS and answer."""
    t0 = time.perf_counter()
    child = subprocess.Popen([str(SCALEWISE), "whatif", str(path), "--network", "edr-ib", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(build))
    out = child.stdout.read()
    # this child's own usage: RUSAGE_CHILDREN's peak RSS would be the largest of every child so far
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"scalewise whatif {path} failed")
    return {"cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rss": usage.ru_maxrss * 1024,
            "answer": json.loads(out)}


def engine_only(path: Path) -> dict:
    """The compiled part alone, in this process: decode, templates, replay (CPU seconds each)."""
    c = time.process_time
    t0 = c()
    trace = read_trace(path)
    with decode(trace) as d:
        t1 = c()
        tpl = templates.build(d, trace.functions, trace.members, "openmpi")
        t2 = c()
        net = network("edr-ib")
        res = d.run(tpl, templates.costs(d, trace.functions, tpl, net, "openmpi"), net)
        t3 = c()
        return {"decode": t1 - t0, "templates": t2 - t1, "replay": t3 - t2, "ops": res.ops,
                "rows_bytes": d.resident_bytes}


def engine_child(path: Path, build: Path | None) -> dict:
    """engine_only in a child process, on the engine in ``build`` (None: this checkout's)."""
    out = subprocess.run([sys.executable, __file__, "--engine-only", str(path)], env=_env(build), check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def row(P: int, n: int, path: Path, cmd: dict, eng: dict, label: str) -> str:
    variable = eng["decode"] + eng["replay"]
    return (f"{label:>6} {P:>6} {n:>12,} {path.stat().st_size / n:>9.2f} {cmd['cpu']:>9.2f} {cmd['wall']:>10.2f} "
            f"{n / cmd['cpu'] / 1e6:>9.2f} {cmd['rss'] / n:>8.1f} | {eng['decode']:>7.2f} "
            f"{eng['templates']:>7.2f} {eng['replay']:>7.2f} {n / variable / 1e6:>12.1f} "
            f"{eng['rows_bytes'] / n:>9.1f}")


def main() -> None:
    if sys.argv[1:2] == ["--engine-only"]:
        print(json.dumps(engine_only(Path(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1024,16384")
    ap.add_argument("--steps", default="98,977,9766:6,61,610", help="step counts per rank count, ':' between them")
    ap.add_argument("--keep", type=Path, help="keep the trace files here (default: a temporary directory)")
    ap.add_argument("--before", type=Path, help="a build directory with another engine to compare, back to back")
    args = ap.parse_args()
    where = args.keep or Path(tempfile.mkdtemp(prefix="swbench-"))
    where.mkdir(parents=True, exist_ok=True)
    print(f"{'engine':>6} {'ranks':>6} {'events':>12} {'file B/ev':>9} {'cmd CPU s':>9} {'cmd wall s':>10} {'Mev/s CPU':>9} "
          f"{'RSS B/ev':>8} | {'decode':>7} {'templ.':>7} {'replay':>7} {'engine Mev/s':>12} {'rows B/ev':>9}")
    ranks = [int(x) for x in args.ranks.split(",")]
    largest = {}  # ranks -> (events, command's events per second of CPU) of the longest trace
    for P, counts in zip(ranks, args.steps.split(":")):
        for steps in (int(x) for x in counts.split(",")):
            path = where / f"halo-{P}-{steps}.swtrace"
            if not path.exists():
                write_halo(path, P, steps)
            n = 10 * P * steps
            if args.before:
                old, old_eng = command(path, args.before), engine_child(path, args.before)
                print(row(P, n, path, old, old_eng, "before"), flush=True)
            cmd = command(path)
            eng = engine_child(path, None) if args.before else engine_only(path)
            print(row(P, n, path, cmd, eng, "this"), flush=True)
            if args.before:
                if old["answer"] != cmd["answer"]:
                    raise SystemExit(f"{path}: the two engines' answers differ")
                print(f"{'':>6} ratio before/this: command CPU {old['cpu'] / cmd['cpu']:.2f}, decode "
                      f"{old_eng['decode'] / eng['decode']:.2f}, replay {old_eng['replay'] / eng['replay']:.2f}, "
                      f"peak RSS {old['rss'] / cmd['rss']:.2f}; answers identical", flush=True)
            if n >= largest.get(P, (0, 0))[0]:
                largest[P] = (n, n / cmd["cpu"])
            if not args.keep:
                os.unlink(path)
    for P, (n, rate) in largest.items():
        print(f"{P} ranks, {n:,} events from the file: {rate / 1e6:.2f} Mevents/s of CPU end to end, target 10: "
              f"{'met' if rate >= 10e6 else 'NOT met'}")
    print("cmd: the whole command (Python start, reading, decoding, templates, replay, JSON); engine: decode and "
          "replay, whose cost grows with the events (templates are built once per distinct collective call)")


if __name__ == "__main__":
    sys.exit(main())
