"""Intel MPI 2021: the algorithm each collective runs, as observed in Intel MPI 2021.19 one rank per node
(data/intelmpi-2021-<cpu>-observed.json, written by scripts/intelmpi-observe.py, which stops rank 0 under
gdb in every algorithm function a call enters), and the schedules of those algorithms.

Intel MPI picks its algorithms from a binary tuning file per CPU and fabric (etc/tuning_<cpu>_*.dat, <cpu>
its own code: icx, spr, emr, ...), so one table per CPU code: the replay takes the one of the CPU it is
for (:func:`table_cpu`).  Its
documented dumps (I_MPI_TUNING_BIN_DUMP) write the same compressed binary back, so the decisions are
read off real calls instead.  Its table is autotuned: neighbouring sizes often take different
algorithms, and a power of two may be decided apart from the sizes just off it (Bcast on 3 ranks:
k-ary at 65536 and 131072 bytes, an inline algorithm at every size between, docs/whatif.md).  So
each power of two 2^k is observed, and one size inside each interval (2^(k-1), 2^k), 3 * 2^(k-2),
which stands for that interval.

A call the observations do not cover falls back to MPICH 5.0's default rules (mpich.py), and says so
(:func:`fallbacks`): a rank count or size outside those observed, an algorithm Intel MPI compiled
inline (gdb cannot stop in it: the small Allreduce, Bcast and Reduce, and Barrier, which its OFI
layer runs itself), or one whose messages are not published (Shumilin's, Allgather's k-nomial)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
from collections import Counter
from functools import cache
from importlib import resources
from pathlib import Path

from scalewise.whatif.collectives import algorithms as A
from scalewise.whatif.collectives import mpich

LINE = "intelmpi-2021"
FALLBACK_LINE = "mpich-5.0"
RADIX = 4  # k of the k-ary and k-nomial trees: an assumption (the tuning file may carry its own)
THROTTLE = mpich.THROTTLE  # peers in flight in "scattered": MPICH's default, an assumption


# Intel MPI's CPU codes (its tuning files' names), by generation: a CPU with no table of its own takes the
# nearest observed one in this order, and says so.
GENERATIONS = ("skx", "clx-ap", "icx", "spr", "emr", "gnr", "srf", "cwf")
CPU_VARIABLE = "SCALEWISE_INTELMPI_CPU"  # the CPU code to replay for, instead of this host's
_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scalewise" / "intelmpi-cpu"


def observed_cpus() -> list[str]:
    """The CPU codes a table was observed for, by generation."""
    names = [f.name for f in resources.files("scalewise.whatif").joinpath("data").iterdir()]
    found = [m.group(1) for n in names if (m := re.fullmatch(rf"{LINE}-([\w-]+?)-observed\.json", n))]
    return sorted(found, key=lambda c: GENERATIONS.index(c) if c in GENERATIONS else len(GENERATIONS))


@cache
def host_cpu() -> str | None:
    """Intel MPI's code for the CPU of the replay's host: $SCALEWISE_INTELMPI_CPU, else the one the Intel MPI on
    PATH gives it (the tuning file it loads, which I_MPI_DEBUG=6 names), cached per host and CPU model; None
    where no Intel MPI can say.  Not the CPU model: a virtual Emerald Rapids (model 207) without AMX is icx to it."""
    if os.environ.get(CPU_VARIABLE):
        return os.environ[CPU_VARIABLE]
    key = f"{socket.gethostname()} {_cpu_model()}"
    if _CACHE.is_file() and (line := _CACHE.read_text().strip()).rsplit(" ", 1)[0] == key:
        return line.rsplit(" ", 1)[1]
    code = _ask_intel_mpi()
    if code:
        _CACHE.parent.mkdir(parents=True, exist_ok=True)
        _CACHE.write_text(f"{key} {code}\n")
    return code


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    found = re.search(r"^model\s*:\s*(\d+)", text, re.MULTILINE)
    name = re.search(r"^model name\s*:\s*(.*?)\s*$", text, re.MULTILINE)
    return f"{name.group(1) if name else '?'}/{found.group(1) if found else '?'}".replace(" ", "_")


def _ask_intel_mpi() -> str | None:
    """Run Intel MPI's own benchmark once on one rank with I_MPI_DEBUG=6 and read its tuning file's CPU code."""
    launcher = shutil.which("mpiexec.hydra")
    bench = launcher and Path(launcher).with_name("IMB-MPI1")
    if not bench or not bench.is_file():
        return None
    try:
        done = subprocess.run([launcher, "-n", "1", str(bench), "-msglog", "0:0", "-iter", "1", "Barrier"],
                              env={**os.environ, "I_MPI_DEBUG": "6"}, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"tuning_([a-z]+(?:-ap)?)_", done.stdout + done.stderr)
    return found.group(1) if found else None


def table_cpu(cpu: str | None = None) -> tuple[str, str]:
    """(the CPU code whose table replays ``cpu``, or this host's where None; a sentence saying which and why)."""
    want = cpu or host_cpu()
    have = observed_cpus()
    if want in have:
        whose = "" if cpu else " (this host's CPU: the log records none)"
        return want, f"the table observed where Intel MPI loads its {want} tuning files{whose}"
    if want is None:
        return have[-1], (f"no Intel MPI here names this host's CPU: the table observed on {have[-1]} "
                          "(Intel MPI's code) assumed")
    rank = GENERATIONS.index(want) if want in GENERATIONS else len(GENERATIONS)
    # a tie goes to the later generation (Sapphire Rapids: Emerald Rapids is its refresh, Ice Lake its predecessor)
    near = min(have, key=lambda c: (abs(GENERATIONS.index(c) - rank), -GENERATIONS.index(c)))
    return near, f"no table observed for Intel MPI's CPU {want}: the nearest, {near}'s, assumed"


@cache
def observed(cpu: str | None = None) -> dict:
    """The observation file of ``cpu``'s table (:func:`table_cpu`):
    {"observed": {collective: {ranks: {bytes: [functions entered]}}}, ...}."""
    code = table_cpu(cpu)[0]
    text = resources.files("scalewise.whatif").joinpath(f"data/{LINE}-{code}-observed.json").read_text()
    return json.loads(text)


def algorithm(collective: str, entered: list[str]) -> str | None:
    """The collective's own algorithm among the functions a call entered (the first MPIR_<Coll>_intra_*
    one, its _impl helper read as itself), or None: an algorithm compiled inline, which gdb cannot stop in."""
    prefix = f"MPIR_{collective.capitalize()}_intra_"
    for func in entered:
        if func.startswith(prefix):
            return func.removeprefix(prefix).removesuffix("_impl")
    return None


def lookup(func: str, P: int, nbytes: int, cpu: str | None = None) -> tuple[str | None, str]:
    """(the algorithm Intel MPI was seen to run for this call on ``cpu`` (this host's where None; its
    table: :func:`table_cpu`), or None, and why not)."""
    coll = func[4:].lower()
    table = observed(cpu)["observed"].get(coll)
    if table is None:
        return None, "not observed"
    cells = table.get(str(P))
    if cells is None:
        return None, f"{P} ranks not observed"
    scale = P if coll == "alltoallv" else 1  # its key is the total a rank sends: P blocks
    key = _sample(nbytes // scale, sorted(int(k) // scale for k in cells))
    if key is None:
        return None, f"{nbytes} B above the {max(map(int, cells))} B observed"
    name = algorithm(coll, cells[str(key * scale)])
    return name, "" if name else "inline algorithm"


def _sample(nbytes: int, sampled: list[int]) -> int | None:
    """The observed size that stands for ``nbytes``: itself, else the one inside its interval between two
    powers of two; below the smallest, the smallest; above the largest, None."""
    if nbytes in sampled:
        return nbytes
    if nbytes > sampled[-1]:
        return None
    inside = [s for s in sampled if s & (s - 1) and s.bit_length() == max(nbytes, 1).bit_length()]
    return inside[0] if inside else min(s for s in sampled if s >= nbytes)


def _kary_children(v: int, P: int, k: int = RADIX) -> list[int]:
    return [c for c in range(v * k + 1, v * k + k + 1) if c < P]


def _nreduce(P: int, n: int) -> A.Schedule:
    """Intel's N-reduce, modelled as its variables name it (..._NREDUCE_NB_ALLTOALL, ..._NB_ALLGATHER):
    every rank sends each rank that rank's 1/P of the vector at once (a reduce-scatter as an all-to-all),
    then sends its reduced share to every rank at once (an allgather)."""
    share = [max(1, n // P)] * P
    return A.concat(A.linear_alltoall(P, share), A.linear_alltoall(P, share))


def _builders(P: int, sizes: list[int], root: int):
    n = sizes[0]
    rd_or_bruck = A.recursive_doubling_allgather if P & (P - 1) == 0 else A.bruck_allgather
    down = lambda children: lambda: A.tree_schedule(P, root, children, n, down=True)  # noqa: E731
    # recursive doubling's extra steps on a rank count not a power of two are not modelled: it falls back there
    rd = {"recursive_doubling": lambda: A.recursive_doubling_allgather(P, sizes)} if P & (P - 1) == 0 else {}
    up = lambda children: lambda: A.tree_schedule(P, root, children, n, down=False)  # noqa: E731
    return {
        "allreduce": {"recursive_doubling": lambda: A.allreduce_recursive_doubling(P, n),
                      "rabenseifner": lambda: A.rabenseifner(P, n),
                      "reduce_scatter_allgather": lambda: A.rabenseifner(P, n),
                      "ring": lambda: A.ring_allreduce(P, n), "nb_ring": lambda: A.ring_allreduce(P, n),
                      "nreduce": lambda: _nreduce(P, n)},
        "bcast": {"binomial": down(A.binomial_children),
                  "knomial": down(lambda v, p: A.knomial_children(v, p, RADIX)),
                  "kary": down(_kary_children),
                  "scatter_recursive_doubling_allgather": lambda: A.scatter_then_allgather(P, root, n, rd_or_bruck),
                  "scatter_ring_allgather": lambda: A.scatter_then_allgather(P, root, n, A.ring_allgather)},
        "reduce": {"binomial": up(A.binomial_children),
                   "knomial": up(lambda v, p: A.knomial_children(v, p, RADIX)),
                   "kary": up(_kary_children),
                   "redscat_gather": lambda: A.reduce_scatter_gather(P, n, root)},
        "allgather": {**rd, "brucks": lambda: A.bruck_allgather(P, sizes), "ring": lambda: A.ring_allgather(P, sizes)},
        "allgatherv": {**rd, "brucks": lambda: A.bruck_allgather(P, sizes), "ring": lambda: A.ring_allgather(P, sizes)},
        "alltoall": {"scattered": lambda: A.linear_alltoall(P, sizes, THROTTLE),
                     "pairwise": lambda: A.pairwise_alltoall(P, sizes), "brucks": lambda: A.bruck_alltoall(P, sizes)},
        "alltoallv": {"scattered": lambda: A.linear_alltoall(P, [s // P for s in sizes], THROTTLE)},
        "gather": {"binomial": lambda: A.binomial_gather(P, root, sizes, to_root=True)},
        "scatter": {"binomial": lambda: A.binomial_gather(P, root, sizes, to_root=False)},
    }


# (collective, why) -> how many distinct calls fell back to MPICH 5.0's rules, since the process started
_FELL_BACK: Counter = Counter()


def fallbacks() -> dict[tuple[str, str], int]:
    """The calls replayed with MPICH 5.0's rules instead of an observed decision, by collective and reason."""
    return dict(_FELL_BACK)


def choose(func: str, P: int, sizes: list[int], root: int, commutative: bool = True) -> tuple[str, A.Schedule]:
    """(algorithm, schedule) Intel MPI 2021 runs for this call: "intel:<name>" where an observation
    covers it, else MPICH 5.0's choice, named "mpich-5.0:<name>"."""
    if P == 1:
        return "self", A.empty(1)
    name, why = lookup(func, P, sizes[0])
    build = _builders(P, sizes, root).get(func[4:].lower(), {}).get(name) if name else None
    if build is not None:
        return f"intel:{name}", build()
    _FELL_BACK[(func, why or f"{name} not modelled")] += 1
    picked, schedule = mpich.choose(func, P, sizes, root, commutative, line=FALLBACK_LINE)
    return f"{FALLBACK_LINE}:{picked}", schedule
