"""Reading a user's own launch line (``scalewise run -- LINE``): which launcher,
which application, how many ranks it asks for.

Only the options that take a value need to be known: everything else starting
with ``-`` is a flag, and the first other word is the application.  When an
option this table does not know takes a value, the first word found that is an
MPI-linked executable is the application instead, so an unknown option never
turns a valid line into an error.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import display_name, family
from scalewise.launch.preload import binary_flavour, binary_mpi, launcher_flavour

# Options taking one value; two-value options map to 2.  ``--name=value`` forms need no entry.
_OPENMPI = {o: 1 for o in (
    "-np", "--np", "-n", "-c", "-N", "-npernode", "--npernode", "-npersocket", "--npersocket", "-x",
    "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "--machinefile", "--default-hostfile",
    "-wdir", "--wdir", "-wd", "--wd", "-path", "--path", "-prefix", "--prefix", "-map-by", "--map-by",
    "-bind-to", "--bind-to", "-rank-by", "--rank-by", "-output-filename", "--output-filename", "--preload-files",
    "-tune", "--tune", "--timeout", "-cpu-set", "--cpu-set", "-cpus-per-proc", "--cpus-per-proc",
    "-cpus-per-rank", "--cpus-per-rank", "-stdin", "--stdin", "-rf", "--rankfile")} | {
    "-mca": 2, "--mca": 2, "-gmca": 2, "--gmca": 2}
_HYDRA = {o: 1 for o in (
    "-n", "-np", "-f", "-hostfile", "-machinefile", "-hosts", "-host", "-ppn", "-wdir", "-genvlist",
    "-envlist", "-launcher", "-launcher-exec", "-bootstrap", "-bootstrap-exec", "-iface", "-rmk", "-demux",
    "-outfile-pattern", "-errfile-pattern", "-bind-to", "-binding", "-map-by", "-membind", "-gpus-per-proc",
    "-localhost", "-nameserver", "-usize", "-tmpdir",
    "-perhost", "-configfile", "-machine", "-genvexcl", "-env-list")} | {"-genv": 2, "-env": 2}  # the last: Intel MPI
_SRUN = {o: 1 for o in (
    "-n", "-N", "-c", "-p", "-t", "-w", "-x", "-o", "-e", "-i", "-J", "-A", "-D", "-m", "-q", "-d", "-C",
    "-G", "-T", "-W", "-L", "-M", "-r", "-S", "--ntasks", "--nodes", "--cpus-per-task", "--partition", "--time",
    "--nodelist", "--exclude", "--output", "--error", "--input", "--job-name", "--account", "--chdir",
    "--distribution", "--qos", "--dependency", "--constraint", "--gpus", "--mem", "--mem-per-cpu", "--mpi",
    "--export", "--ntasks-per-node", "--cpu-bind", "--mem-bind", "--reservation", "--gres")}
OPTIONS = {"openmpi": _OPENMPI, "mpich": _HYDRA, "srun": _SRUN}
RANK_OPTIONS = {"openmpi": ("-np", "--np", "-n", "-c"), "mpich": ("-n", "-np"), "srun": ("-n", "--ntasks")}
FLAVOUR_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}
# Option tables by launcher family: Intel MPI's mpiexec is Hydra, like MPICH's.
_FAMILY_KIND = {"openmpi": "openmpi", "mpich": "mpich", "intelmpi": "mpich"}


@dataclass
class LaunchLine:
    """A launch line taken apart."""

    argv: list[str]
    # "openmpi" (Open MPI's mpirun/prterun), "mpich" (Hydra's mpiexec), "srun", or None for a singleton
    kind: str | None
    app: str | None  # the application's executable, resolved
    app_index: int | None
    ranks: int | None  # asked for on the line; None when the launcher decides (hostfile, -H, allocation)
    launcher_mpi: str | None = None  # the MPI whose launcher argv[0] is (a flavour: openmpi, mpich-5.0.2, ...)

    @property
    def launcher_flavour(self) -> str | None:
        return self.launcher_mpi

    @property
    def flavour_of_app(self) -> str | None:
        return binary_flavour(self.app) if self.app else None


def _executable(word: str) -> str | None:
    path = shutil.which(word) if os.sep not in word else word
    return path if path and os.path.isfile(path) and os.access(path, os.X_OK) else None


def launcher_kind(word: str) -> str | None:
    if os.path.basename(word) == "srun":
        return "srun"
    flavour = launcher_flavour(word)
    return _FAMILY_KIND.get(family(flavour)) if flavour else None


def _split_options(argv: list[str], table: dict[str, int], glued: bool) -> tuple[int | None, dict[str, str]]:
    """Index of the first word that is not an option or an option's value, and the single-value options seen."""
    seen: dict[str, str] = {}
    i = 1
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return (i + 1 if i + 1 < len(argv) else None), seen
        if not word.startswith("-") or word == "-":
            return i, seen
        name, eq, value = word.partition("=")
        if eq:
            seen[name] = value
        elif word in table:
            if table[word] == 1 and i + 1 < len(argv):
                seen[word] = argv[i + 1]
            i += table[word]
        elif glued and len(word) > 2 and word[:2] in table and not word.startswith("--"):  # srun's -n4
            seen[word[:2]] = word[2:]
        i += 1
    return None, seen


def parse_launch_line(argv: list[str]) -> LaunchLine:
    """Take ``argv`` apart; a launcher or application that does not exist is a one-line error."""
    if not argv:
        raise ScalewiseError("nothing to run: give the launch command after --, e.g. scalewise run -- mpirun -np 4 ./app")
    if _executable(argv[0]) is None:
        raise ScalewiseError(f"{argv[0]}: not found (neither a launcher nor an executable on PATH)")
    kind = launcher_kind(argv[0])
    if kind is None:
        singleton = binary_flavour(_executable(argv[0])) is not None
        app = _executable(argv[0]) if singleton else _first_mpi_executable(argv[1:])
        index = 0 if singleton else (argv.index(app) if app in argv else None)
        return LaunchLine(argv, None, app, index, 1 if singleton else None)
    index, seen = _split_options(argv, OPTIONS[kind], glued=kind == "srun")
    if index is None:
        raise ScalewiseError(f"no application in '{' '.join(argv)}': give the program after the launcher options")
    app = _executable(argv[index])
    if app is None:
        # An option this table does not know may have taken the word as its value.
        app = _first_mpi_executable(argv[index + 1:])
        if app is None:
            raise ScalewiseError(f"{argv[index]}: application not found (launch line: {' '.join(argv)})")
        index = argv.index(app, index + 1) if app in argv[index + 1:] else index
    ranks = None
    if ":" not in argv[index:]:  # several app contexts (MPMD): the launcher adds them up
        asked = [seen[o] for o in RANK_OPTIONS[kind] if o in seen]
        ranks = int(asked[0]) if asked and asked[0].isdigit() else None
    return LaunchLine(argv, kind, app, index, ranks, launcher_flavour(argv[0]) if kind in FLAVOUR_NAMES else None)


def _first_mpi_executable(words: list[str]) -> str | None:
    for word in words:
        exe = _executable(word)
        if exe and binary_flavour(exe):
            return word if os.sep in word else exe
    return None


def check_flavours(line: LaunchLine, asked: str | None) -> str:
    """The MPI flavour to profile with; a one-line error when the binary, the launcher and ``--mpi`` disagree."""
    mpi = binary_mpi(line.app) if line.app else None
    binary = mpi.flavour if mpi else None  # the library it loads (for the ABI: whose libmpi_abi)
    launcher = line.launcher_flavour
    if binary and launcher and binary != launcher:
        raise ScalewiseError(
            f"MPI mismatch: {line.app} is built with {display_name(binary)} but {line.argv[0]} is "
            f"{display_name(launcher)}'s launcher; start it with {display_name(binary)}'s mpirun/mpiexec")
    known = binary or launcher
    if asked and known and asked != known and not (mpi and asked == mpi.build):
        what = f"{line.app} is built with" if binary else f"{line.argv[0]} is the launcher of"
        raise ScalewiseError(f"MPI mismatch: --mpi {asked} but {what} {display_name(known)}")
    flavour = (mpi.build if mpi else None) or asked or launcher
    if flavour is None:
        raise ScalewiseError(f"cannot tell which MPI '{' '.join(line.argv)}' uses; pass --mpi openmpi or --mpi mpich "
                             "(or an MPI's identity, e.g. --mpi openmpi-5.0.11)")
    return flavour
