"""Golden counts from real applications: run one under scalewise, compare with mpiP's figures.

Each application has a folder here with ``manifest.toml`` (how to prepare and
run it, which MPIs Debian builds it for, which functions are excluded and
why) and, per MPI flavour, ``golden.<flavour>.json`` (mpiP's per-rank calls
and bytes, established once by ``establish.py``) beside ``mpip.<flavour>.txt``
(mpiP's report of that execution).  docs/validation.md says how to read them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"
LAUNCHERS = {"openmpi": ["mpirun.openmpi"], "mpich": ["mpirun.mpich"]}

# How mpiP's bytes of a function relate to scalewise's (docs/runtime.md),
# and so which are golden.  SAME_BYTES: the same quantity.  mpiP counts the
# data of the calls below from the origin's (or the target's, which MPI
# requires to match) count and type: the data moved, also for an
# MPI_Get_accumulate with MPI_NO_OP, whose fetched result is the target's
# count and type.
SAME_BYTES = frozenset(f"MPI_{name}" for name in (
    "Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend", "Issend", "Irsend",
    "Bcast", "Ibcast", "Reduce", "Ireduce", "Allreduce", "Iallreduce", "Scan", "Iscan",
    "Gather", "Allgather", "Gatherv", "Allgatherv",
    "Put", "Rput", "Rget", "Accumulate", "Raccumulate", "Get_accumulate", "Rget_accumulate"))
# Not MPI_Get: mpiP 3.5 takes its origin_count for a datatype (make-wrappers.py,
# rmaParamDict), so its Get bytes are wrong.
# mpiP counts one block of an MPI_Alltoall (sendcount x sendtype); what a rank
# sends is that block to each of the P ranks.
TIMES_RANKS = frozenset({"MPI_Alltoall", "MPI_Ialltoall"})


UNMOVED = ("mpiP less what never moves: calls on one-rank communicators and a root's in-place block "
           "(docs/runtime.md), which mpiP credits")


def golden_functions(mpip: dict, nranks: int, received: dict[str, list[str]] | None = None,
                     unmoved: dict[str, list[int]] | None = None) -> dict:
    """The goldens of every function mpiP recorded: its calls, and its bytes where they are golden.

    ``received``: receive functions whose bytes are what the other rank sent
    with the listed functions (a manifest's ``[received_bytes]``, for 2-rank
    jobs where they are the only receives and no rank sends to itself).
    ``unmoved``: per function, the bytes per rank mpiP credits to calls that move
    nothing (a manifest's ``[unmoved_bytes]``), taken off its figure."""
    out = {}
    for name, f in sorted(mpip.items()):
        got = f["bytes"]
        if got is not None and name in SAME_BYTES:
            bytes_, source = got, "mpiP"
        elif got is not None and name in TIMES_RANKS:
            bytes_, source = [b * nranks for b in got], "mpiP x ranks (mpiP counts one block of P)"
        else:
            bytes_, source = None, "not golden: mpiP records no bytes or another quantity"
        out[name] = {"calls": f["calls"], "bytes": bytes_, "bytes_source": source, "mpip_bytes": got}
    for name, senders in (received or {}).items():
        if nranks != 2:
            raise ValueError("[received_bytes] holds for 2 ranks only")
        sent = [sum((mpip[s]["bytes"] or [0] * nranks)[rank] for s in senders if s in mpip) for rank in range(nranks)]
        out[name].update(bytes=sent[::-1], bytes_source=f"mpiP: what the other rank sent with {', '.join(senders)}")
    for name, less in (unmoved or {}).items():
        out[name].update(bytes=[b - u for b, u in zip(out[name]["bytes"], less)], bytes_source=UNMOVED)
    return out


@dataclass
class App:
    """One application of the validation set, as its manifest declares it."""

    name: str
    folder: Path
    description: str
    packages: list[str]
    ranks: int
    commands: dict[str, list[str]]  # flavour -> the application's command line
    not_provided: dict[str, str]  # flavour -> why Debian has no build of it
    broken: dict[str, str]  # flavour -> why Debian's build of it gives no golden
    copies: list[dict]
    setup: list[list[str]]
    env: dict[str, str]
    excluded: dict[str, str]  # function -> why its counts are not deterministic
    timeout: int = 600
    received_bytes: dict[str, list[str]] = field(default_factory=dict)
    unmoved_bytes: dict[str, list[int]] = field(default_factory=dict)  # function -> bytes per rank that never move

    def golden_path(self, flavour: str) -> Path:
        return self.folder / f"golden.{flavour}.json"

    def mpip_path(self, flavour: str) -> Path:
        return self.folder / f"mpip.{flavour}.txt"


def load_app(name: str) -> App:
    folder = HERE / name
    path = folder / "manifest.toml"
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"validate: {path}: {exc}") from exc
    flavours = data.get("flavours", {})
    return App(
        name=name, folder=folder, description=data["description"], packages=data["packages"],
        ranks=data.get("ranks", 2),
        commands={f: v["command"] for f, v in flavours.items() if "command" in v},
        not_provided={f: v["not_provided"] for f, v in flavours.items() if "not_provided" in v},
        broken={f: v["broken"] for f, v in flavours.items() if "broken" in v},
        copies=data.get("copy", []), setup=data.get("setup", []), env=data.get("env", {}),
        excluded=data.get("excluded", {}),
        timeout=data.get("timeout", 600), received_bytes=data.get("received_bytes", {}),
        unmoved_bytes=data.get("unmoved_bytes", {}))


def app_names() -> list[str]:
    return sorted(p.parent.name for p in HERE.glob("*/manifest.toml"))


def prepare(app: App, work: Path) -> None:
    """A fresh work folder with the application's inputs: copied from the Debian
    packages (shortened by the manifest's replacements) or from the app's folder."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for item in app.copies:
        src = Path(item["from"]) if item["from"].startswith("/") else app.folder / item["from"]
        dst = work / item.get("to", src.name)
        if src.is_dir():
            shutil.copytree(src, dst)
        elif src.suffix == ".gz" and item.get("gunzip"):
            dst.write_bytes(gzip.decompress(src.read_bytes()))
        else:
            shutil.copyfile(src, dst)
        for old, new in item.get("replace", []):
            target = dst / item["in"] if "in" in item else dst
            text = target.read_text()
            if old not in text:
                raise SystemExit(f"validate: {app.name}: '{old}' not found in {target} (the package changed?)")
            target.write_text(text.replace(old, new))
    for step in app.setup:
        done = subprocess.run(step, cwd=work, env=app_env(app), capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"validate: {app.name}: set-up step {' '.join(step)} failed "
                             f"({done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}")


def app_env(app: App, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", **app.env)
    return dict(env, **(extra or {}))


def launch_line(app: App, flavour: str, before_app: list[str] | None = None) -> list[str]:
    return [*LAUNCHERS[flavour], "-np", str(app.ranks), *(before_app or []), *app.commands[flavour]]


def run_scalewise(app: App, flavour: str, work: Path, before_app: list[str] | None = None,
                  extra_env: dict[str, str] | None = None) -> dict:
    """Run the application under ``scalewise run --json``; the profile it prints."""
    argv = [str(SCALEWISE), "run", "--json", "--mpi", flavour, "-o", str(work / "logs"), "--",
            *launch_line(app, flavour, before_app)]
    done = subprocess.run(argv, cwd=work, env=app_env(app, extra_env), capture_output=True, text=True,
                          timeout=app.timeout)
    (work / "job-output.txt").write_text(done.stderr)
    if done.returncode:
        raise AssertionError(f"{app.name} on {flavour} failed ({done.returncode}); the last of its output:\n"
                             f"{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def scalewise_figures(profile: dict) -> dict[str, dict[str, list[int]]]:
    """Per function, its calls and bytes on each rank (rank order), from a ``run --json`` profile."""
    nranks = profile["nranks"]
    out: dict[str, dict[str, list[int]]] = {}
    for rank in profile["ranks"]:
        for name, f in rank["functions"].items():
            entry = out.setdefault(name, {"calls": [0] * nranks, "bytes": [0] * nranks})
            entry["calls"][rank["rank"]] = int(f["calls"])
            entry["bytes"][rank["rank"]] = int(f["bytes"])
    return out


_SECTION = re.compile(r"^@--- (.*?) -+$")


def parse_mpip(text: str, nranks: int) -> dict[str, dict[str, list[int] | None]]:
    """Per function, mpiP's calls and sent (or I/O, RMA origin) bytes on each rank,
    summed over its call sites, from the per-rank rows of its report (``-e``: exact bytes)."""
    out: dict[str, dict] = {}
    section = ""
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        cols = line.split()
        if len(cols) < 5 or not cols[2].isdigit() or not cols[1].isdigit():
            continue
        name, rank = "MPI_" + cols[0], int(cols[2])
        entry = out.setdefault(name, {"calls": [0] * nranks, "bytes": None})
        if section.startswith("Callsite Time statistics"):
            entry["calls"][rank] += int(cols[3])
        elif section.startswith(("Callsite Message Sent statistics", "Callsite I/O statistics",
                                 "Callsite RMA statistics")):
            if entry["bytes"] is None:
                entry["bytes"] = [0] * nranks
            total = float(cols[7])
            if total != int(total):
                raise ValueError(f"mpiP byte figure {cols[7]} is not whole: run mpiP with -e")
            entry["bytes"][rank] += int(total)
    return out


@dataclass
class Outcome:
    mismatches: dict[str, str]  # "MPI_x calls" or "MPI_x bytes" -> both figures
    missing: list[str]  # golden functions scalewise did not report
    checked: int

    def problems(self) -> list[str]:
        """Every difference from the goldens: empty when the case passes.  A function mpiP
        records and scalewise does not is one too."""
        out = [f"{key}: {text}" for key, text in sorted(self.mismatches.items())]
        if self.missing:
            out.append(f"recorded by mpiP, not reported by scalewise: {sorted(self.missing)}")
        return out


def compare(app: App, flavour: str, figures: dict) -> Outcome:
    """Every golden function's calls and bytes against scalewise's, excluded ones aside."""
    golden = json.loads(app.golden_path(flavour).read_text())
    mismatches, missing, checked = {}, [], 0
    for name, want in sorted(golden["functions"].items()):
        if name in app.excluded:
            continue
        got = figures.get(name)
        if got is None:
            missing.append(name)
            continue
        checked += 1
        if got["calls"] != want["calls"]:
            mismatches[f"{name} calls"] = f"per rank scalewise {got['calls']}, golden {want['calls']}"
        if want.get("bytes") is not None and got["bytes"] != want["bytes"]:
            mismatches[f"{name} bytes"] = (f"per rank scalewise {got['bytes']}, golden {want['bytes']} "
                                           f"({want['bytes_source']})")
    return Outcome(mismatches, missing, checked)


def validate(app: App, flavour: str, work: Path) -> Outcome:
    prepare(app, work)
    return compare(app, flavour, scalewise_figures(run_scalewise(app, flavour, work)))


def work_dir(name: str, flavour: str) -> Path:
    return ROOT / "out" / "validate" / f"{name}-{flavour}"


def main(argv: list[str]) -> int:
    """``python validate/golden.py [APP[:FLAVOUR]...]``: check, print one line per case."""
    cases = [(a, f) for a in app_names() for f in load_app(a).commands]
    if argv:
        cases = [(a, f) for a, f in cases if a in argv or f"{a}:{f}" in argv]
    bad = 0
    for name, flavour in cases:
        app = load_app(name)
        problems = validate(app, flavour, work_dir(name, flavour)).problems()
        bad += bool(problems)
        print(f"{name} {flavour}: {'FAILED' if problems else 'ok'}" + "".join(f"\n  {p}" for p in problems))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
