#!/usr/bin/env python3
"""Write docs/coverage.md, the list of recorded MPI functions, from spec/mpi.toml.

Stdlib only.  Usage: gencoverage.py SPEC OUT.  tests/runtime/test_genwrap.py
checks that the committed file is what this prints, so the list stays true.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ORDER = ["p2p", "wait", "test", "collective", "rma", "io", "comm", "local", "init", "other"]
TITLES = {"p2p": "Point-to-point", "wait": "Wait", "test": "Test", "collective": "Collectives",
          "rma": "One-sided", "io": "MPI-IO", "comm": "Communicators, groups and dynamic processes",
          "local": "Local calls", "init": "Start and end", "other": "Other"}


def credit(rule: dict) -> str:
    """How the function's bytes are credited, in the words of docs/runtime.md."""
    if "persist_send" in rule or rule.get("persistent"):
        return "none here: credited to MPI_Start/MPI_Startall"
    if "bytes" in rule:
        expr = rule["bytes"]
        if expr == "0":
            return "0 (one entry in bin 0)"
        dest = "; a send to MPI_PROC_NULL 0" if "send_to" in rule else ""
        recv = "; plus what it received, from the status (two entries)" if "recv_status" in rule else ""
        alone = "; 0 on a one-rank communicator" if rule["class"] == "collective" else ""
        where = "; again to the Wait/Test that completes it" if "request" in rule else ""
        return f"`{expr}`{dest}{recv}{alone}{where}"
    if "recv_status" in rule:
        return "received or read, from the status"
    if rule.get("req_recv"):
        return "received or read, from the status, to the Wait/Test that completes it"
    if "start" in rule:
        return "the started sends; receives when completed"
    if "complete" in rule:
        return "each operation it completes, with that operation's bytes"
    return "none"


def render(spec: dict) -> str:
    lines = ["# Recorded MPI functions",
             "",
             "Generated from [runtime/spec/mpi.toml](../runtime/spec/mpi.toml) by",
             "`runtime/gen/gencoverage.py`; do not edit.  Every function below is recorded",
             "from C and from every Fortran binding of both MPIs (docs/runtime.md, \"How calls",
             "are intercepted\"): calls, time and, in the column *bytes*, what it credits (the",
             "expressions are the rules of docs/runtime.md, \"Bytes: the rules\"; `sw_bytes(n, t)`",
             "is n x the size of t).  A function marked *hot* is recorded only with",
             "`SCALEWISE_HOT_LOCAL=1`; *large count*: its MPI-4 `_c` form too (MPICH 4.0);",
             "*Fortran entry*: the Fortran bindings' own entry points too; *MPI 4.0*: only",
             "under MPI 4.0 headers.",
             ""]
    for cls in ORDER:
        fns = [(n, r) for n, r in spec.items() if r["class"] == cls]
        if not fns:
            continue
        lines += [f"## {TITLES[cls]} (class `{cls}`, {len(fns)})", "", "| function | bytes | notes |", "|---|---|---|"]
        for name, rule in fns:
            notes = [label for key, label in (("hot", "hot"), ("large_count", "large count"),
                                              ("fortran_entry", "Fortran entry")) if rule.get(key)]
            if rule.get("since", "1.0") >= "4.0":
                notes.append("MPI 4.0")
            lines.append(f"| {name} | {credit(rule)} | {', '.join(notes)} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    spec_path, out = Path(argv[0]), Path(argv[1])
    with spec_path.open("rb") as fh:
        out.write_text(render(tomllib.load(fh)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
