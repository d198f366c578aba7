#!/usr/bin/env python3
"""Checks that the runtime's modules form no cycle, and that the base is a leaf.

A module is a stem of runtime/lib: ``x.c`` and ``x.h`` are one module.  Module
A depends on module B when one of A's files includes ``"B.h"``; headers that
are not in the folder (``functions.h``, generated; ``scalewise/format.h``) are
not modules.  Prints each cycle as ``a -> b -> a`` and exits 1; exits 0 with a
one-line summary otherwise.  Stdlib only.

usage: modules.py [LIBDIR]      (default: runtime/lib beside this folder)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.MULTILINE)
# The bottom every module may call: it may depend on these modules only.
BASE, BASE_MAY_USE = "base", {"table"}


def dependencies(lib: Path) -> dict[str, set[str]]:
    files = sorted(p for p in lib.iterdir() if p.suffix in (".c", ".h"))
    modules = {p.stem for p in files}
    deps: dict[str, set[str]] = {m: set() for m in modules}
    for p in files:
        for name in INCLUDE.findall(p.read_text()):
            if name in modules and name != p.stem:
                deps[p.stem].add(name)
    return deps


def cycles(deps: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        for d in sorted(deps[m]):
            if d not in index:
                visit(d)
                low[m] = min(low[m], low[d])
            elif d in stack:
                low[m] = min(low[m], index[d])
        if low[m] == index[m]:
            group = set()
            while True:
                x = stack.pop()
                group.add(x)
                if x == m:
                    break
            if len(group) > 1:
                groups.append(group)

    for m in sorted(deps):
        if m not in index:
            visit(m)
    return [path_within(deps, g) for g in groups]


def path_within(deps: dict[str, set[str]], group: set[str]) -> list[str]:
    """A cycle a -> ... -> a inside a strongly connected group."""
    start = min(group)
    path, seen, m = [start], {start}, start
    while True:
        m = min(d for d in deps[m] if d in group)
        path.append(m)
        if m in seen:
            return path[path.index(m):]
        seen.add(m)


def main(argv: list[str]) -> int:
    lib = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "lib"
    if not lib.is_dir():
        print(f"modules: {lib}: not a folder", file=sys.stderr)
        return 2
    deps = dependencies(lib)
    problems = [f"modules: cycle {' -> '.join(c)}" for c in cycles(deps)]
    if BASE in deps and deps[BASE] - BASE_MAY_USE:
        problems.append(f"modules: {BASE} depends on {', '.join(sorted(deps[BASE] - BASE_MAY_USE))}; "
                        f"it may use only {', '.join(sorted(BASE_MAY_USE))}")
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"modules: {len(deps)} modules in {lib.name}/, no cycle, {BASE} is a leaf")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
