#!/usr/bin/env python3
"""The MPI_T variables each installed MPI library exposes, and which of them
scalewise reads: the tables of docs/mpit.md.

    .venv/bin/python scripts/mpit/mpit_vars.py                  # print the tables
    .venv/bin/python scripts/mpit/mpit_vars.py --update docs/mpit.md
    .venv/bin/python scripts/mpit/mpit_vars.py --mpi openmpi --mca mpi_spc_attach all

list_vars.c enumerates every pvar and cvar on one rank; a two-rank run of
an empty program under the profiler gives what scalewise read (the log's
MPI_T section).  Both are real runs of the libraries installed here."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import scalewise

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EMPTY = "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"
BEGIN, END = "<!-- mpit-vars:begin -->", "<!-- mpit-vars:end -->"


def launch(flavour: str, nranks: int, mca: list[tuple[str, str]]) -> list[str]:
    if flavour == "openmpi":
        return ["mpirun.openmpi", "--oversubscribe", "-np", str(nranks),
                *[x for k, v in mca for x in ("--mca", k, v)]]
    return ["mpiexec.mpich", "-n", str(nranks)]


def run(cmd: list[str], env: dict[str, str] | None = None) -> str:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **(env or {}))
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=300, env=env).stdout


def enumerate_vars(flavour: str, mca, tmp: Path) -> tuple[list[list[str]], list[list[str]]]:
    exe = tmp / f"list-{flavour}"
    run([f"mpicc.{flavour}", str(HERE / "list_vars.c"), "-o", str(exe)])
    lines = [line.split("\t") for line in run([*launch(flavour, 1, mca), str(exe)]).splitlines()]
    return [x[1:] for x in lines if x[0] == "pvar"], [x[1:] for x in lines if x[0] == "cvar"]


def profiled(flavour: str, mca, tmp: Path):
    src, exe, log = tmp / "empty.c", tmp / f"empty-{flavour}", tmp / f"empty-{flavour}.swlog"
    src.write_text(EMPTY)
    run([f"mpicc.{flavour}", str(src), "-o", str(exe)])
    lib = REPO / "build" / flavour / "libscalewise.so"
    run([*launch(flavour, 2, mca), str(exe)], {"LD_PRELOAD": str(lib), "SCALEWISE_LOGFILE": str(log),
                                               "SCALEWISE_QUIET": "1"})
    return scalewise.load(log)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def tables(flavour: str, mca) -> str:
    with tempfile.TemporaryDirectory() as d:
        pvars, cvars = enumerate_vars(flavour, mca, Path(d))
        p = profiled(flavour, mca, Path(d))
    read = set(p.pvars["variable"])
    library = " ".join(re.split(r"[,\n]", p.meta.get("mpi_library", flavour))[0].split())
    setting = " ".join(f"--mca {k} {v}" for k, v in mca)
    noobj = sum(1 for c in cvars if c[2] == "none")
    out = [f"### {library}{f' with `{setting}`' if setting else ''}", "",
           f"{len(pvars)} performance variables ({len({v[0] for v in pvars})} distinct names), "
           f"{len(cvars)} control variables ({noobj} bound to no object; {len(p.mpit.cvars)} recorded in a log, "
           "the others are of types scalewise does not read).", ""]
    if pvars:
        out += ["| variable | class | type | bound to | continuous | read | description |", "|---|---|---|---|---|---|---|"]
        counts = Counter(v[0] for v in pvars)
        for name, cls, typ, bind, cont, desc in {v[0]: v for v in pvars}.values():
            times = f" (x{counts[name]})" if counts[name] > 1 else ""
            out.append(f"| `{name}`{times} | {cls} | {typ} | {bind} | {'yes' if cont == '1' else 'no'} | "
                       f"{'**yes**' if name in read else 'no'} | {cell(desc)} |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", choices=["openmpi", "mpich", "all"], default="all")
    ap.add_argument("--mca", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="an Open MPI MCA parameter for both runs")
    ap.add_argument("--update", type=Path, help=f"replace the text between {BEGIN} and {END} in this file")
    args = ap.parse_args()
    flavours = ["openmpi", "mpich"] if args.mpi == "all" else [args.mpi]
    text = "\n".join(tables(f, args.mca if f == "openmpi" else []) for f in flavours)
    if args.update:
        doc = args.update.read_text()
        start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        args.update.write_text(doc[:start] + "\n" + text + "\n" + doc[end:])
    else:
        print(text)


if __name__ == "__main__":
    main()
