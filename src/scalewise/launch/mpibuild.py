"""Building the runtime and proxy apps for an MPI on first use.

Debian's two MPIs are built into the project's ``build/`` by ``make setup``;
every other MPI, named by its identity, into
``$XDG_CACHE_HOME/scalewise/build/<identity>`` by ``make`` in the checkout's
``runtime/`` (and ``proxies/``), with the MPI's own compiler wrapper.  The
wrapper is the one that builds for that very identity, looked for in
``$MPICC``, on ``PATH`` and beside the library.  The ABI build
(:data:`~scalewise.launch.mpis.ABI_FLAVOUR`) is compiled with ``mpicc_abi``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import ABI_FLAVOUR, ALIASES, cache_root, missing_pieces, wrapper_mpi

RUNTIME_OUTPUTS = ("libscalewise.so", "libscalewise-probe.so")


def source_root() -> Path | None:
    """The checkout holding runtime/ and proxies/ (an editable install's), or None."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "runtime" / "Makefile").is_file() else None


def builds_root() -> Path:
    return Path(os.environ.get("SCALEWISE_MPI_BUILDS") or cache_root() / "build")


def _candidates(flavour: str, library: str | None) -> list[str]:
    names = ["mpicc_abi"] if flavour == ABI_FLAVOUR else ["mpicc"]
    found = [os.environ[v] for v in ("MPICC_ABI" if flavour == ABI_FLAVOUR else "MPICC",) if os.environ.get(v)]
    found += [w for w in (shutil.which(n) for n in names) if w]
    if library:
        libdir = Path(library).parent
        found += [str(d / "bin" / n) for d in (libdir.parent, libdir.parent.parent) for n in names]
    if flavour != ABI_FLAVOUR:
        found += [w for w in (shutil.which(a) for a in ALIASES.values()) if w]
    return [w for w in dict.fromkeys(found) if shutil.which(w)]


def _builds_for(mpicc: str, flavour: str) -> bool:
    mpi = wrapper_mpi(mpicc, own_files=Path(mpicc).name in ALIASES.values())
    if flavour == ABI_FLAVOUR:
        return mpi.abi
    return not mpi.abi and flavour in (mpi.identity, mpi.flavour)


def find_wrapper(flavour: str, library: str | None = None) -> str:
    """The compiler wrapper that builds for ``flavour``; a one-line error naming where it looked.
    ``SCALEWISE_MPICC`` (``scalewise run --mpicc``) is the only one tried, and must build for it."""
    named = os.environ.get("SCALEWISE_MPICC")
    if named:
        if not _builds_for(named, flavour):
            raise ScalewiseError(f"MPI mismatch: --mpicc {named} builds for {wrapper_mpi(named).build} "
                                 f"but the application needs the build for {flavour}")
        return named
    tried = _candidates(flavour, library)
    for mpicc in tried:
        try:
            if _builds_for(mpicc, flavour):
                return mpicc
        except ScalewiseError:
            continue
    for mpicc in tried:  # say why a wrapper that could not compile failed
        problem = missing_pieces(mpicc)
        if problem:
            raise ScalewiseError(problem)
    what = "mpicc_abi" if flavour == ABI_FLAVOUR else "mpicc"
    raise ScalewiseError(f"no compiler wrapper builds for {flavour} (tried: {', '.join(tried) or 'none found'}); "
                         f"load that MPI's module or set {'MPICC_ABI' if flavour == ABI_FLAVOUR else 'MPICC'}="
                         f"/path/to/{what}")


def fortran_wrapper(mpicc: str) -> str:
    """The Fortran wrapper beside ``mpicc`` (mpifort, mpif90), or "" when this MPI ships none
    (the Open MPI 5 and MPICH 5 wheels on PyPI)."""
    bindir = Path(shutil.which(mpicc) or mpicc).parent
    for name in ("mpifort", "mpif90"):
        if (bindir / name).is_file() and os.access(bindir / name, os.X_OK):
            return str(bindir / name)
    return ""


def _newest_source(part: str) -> float:
    """When the sources of ``part`` last changed (0 without a checkout)."""
    root = source_root()
    if root is None:
        return 0.0
    dirs = ["lib", "include", "gen", "spec", "probe"] if part == "runtime" else ["."]
    files = [p for d in dirs for p in (root / part / d).rglob("*") if p.is_file()] + [root / part / "Makefile"]
    return max([p.stat().st_mtime for p in files] + [(root / "scripts" / "flavours.mk").stat().st_mtime])


def _up_to_date(out: Path, part: str) -> bool:
    made = [out / name for name in RUNTIME_OUTPUTS] if part == "runtime" else [out / "proxies" / ".built"]
    return all(p.is_file() for p in made) and min(p.stat().st_mtime for p in made) >= _newest_source(part)


FORTRAN_BINDINGS = {
    "mpif.h": "program p\n  implicit none\n  include 'mpif.h'\n  integer :: e\n  call MPI_Init(e)\nend program p\n",
    "use mpi": "program p\n  use mpi\n  implicit none\n  integer :: e\n  call MPI_Init(e)\nend program p\n",
    "use mpi_f08": "program p\n  use mpi_f08\n  implicit none\n  call MPI_Init()\nend program p\n",
}


def fortran_bindings(mpifort: str, env: dict[str, str] | None = None) -> dict[str, bool]:
    """Which Fortran bindings compile with ``mpifort`` (an MPI's module files may be another
    compiler's: Intel MPI's wheel ships ifx's mpi.mod, which gfortran cannot read)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in FORTRAN_BINDINGS.items():
            (Path(tmp) / "p.f90").write_text(text)
            done = subprocess.run([mpifort, "-c", "p.f90", "-o", "p.o"], cwd=tmp, capture_output=True, timeout=120,
                                  env=env)
            out[name] = done.returncode == 0
    return out


def ensure_built(flavour: str, part: str = "runtime", library: str | None = None, mpicc: str | None = None,
                 env: dict[str, str] | None = None) -> Path:
    """The directory of ``flavour``'s builds, building ``part`` (runtime or proxies) if missing or
    older than its sources (a checkout that was pulled: make rebuilds only what changed)."""
    out = builds_root() / flavour
    if _up_to_date(out, part):
        return out
    source = source_root()
    if source is None:
        raise ScalewiseError(f"the runtime for {flavour} is not built and this installation has no sources to "
                             "build it from (install scalewise from a checkout with pip install -e .)")
    mpicc = mpicc or find_wrapper(flavour, library)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; the others find it done
        if _up_to_date(out, part):
            return out
        mpifort = fortran_wrapper(mpicc)
        print(f"scalewise: building the {part} for {flavour} with {mpicc} into {out}", file=sys.stderr)
        if part == "proxies" and not mpifort:
            print(f"scalewise: {flavour} has no Fortran wrapper beside {mpicc} (no mpifort, no mpif90): "
                  "its Fortran proxy apps are not built", file=sys.stderr)
        elif part == "proxies" and not fortran_bindings(mpifort, env)["use mpi_f08"]:
            # Intel MPI's wheel: its mpi_f08.mod is ifx's, which gfortran cannot read.
            print(f"scalewise: {mpifort} cannot compile 'use mpi_f08': {flavour}'s Fortran proxy apps are not built",
                  file=sys.stderr)
            mpifort = ""
        _forget_other_checkout(out, part, source)
        argv = ["make", "--no-print-directory", "-C", str(source / part), f"BUILD={out.parent}",
                f"FLAVOURS={flavour}", f"MPICC={mpicc}", f"MPIFORT={mpifort}", f"PY={sys.executable}"]
        if part == "runtime":
            argv += [str(out / name) for name in RUNTIME_OUTPUTS]
        done = subprocess.run(argv, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            (out / f"{part}-build.log").write_text(done.stdout + done.stderr)
            raise ScalewiseError(missing_pieces(mpicc) or f"building the {part} for {flavour} failed "
                                 f"(log: {out / f'{part}-build.log'})")
        for made in ([out / name for name in RUNTIME_OUTPUTS] if part == "runtime" else [out / "proxies" / ".built"]):
            made.touch()  # up to date even where make found nothing to redo
        (out / f".{part}-source").write_text(str(source))
    return out


def _forget_other_checkout(out: Path, part: str, source: Path) -> None:
    """The builds are kept per MPI, not per checkout: objects made from another checkout (one moved,
    re-cloned, or a second worktree) carry dependency files naming that checkout's sources, and make
    stops at the first one that is gone.  So ``part``'s objects are dropped, and rebuilt, unless this
    checkout made them (recorded in ``.<part>-source``)."""
    stamp = out / f".{part}-source"
    if stamp.is_file() and stamp.read_text() == str(source):
        return
    shutil.rmtree(out / "obj" if part == "runtime" else out / "proxies" / "obj", ignore_errors=True)
