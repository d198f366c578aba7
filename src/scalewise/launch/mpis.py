"""Which MPI is which, told by the MPI itself.

An MPI is named by its *identity*, its own answer to ``MPI_Get_library_version``
(``openmpi-5.0.11``, ``mpich-5.0.2``, ``intelmpi-2021.19``), asked of the
library an executable links (``ldd``) or the library its compiler wrapper
links (a one-line program compiled with the wrapper).  The answers are kept in
``$XDG_CACHE_HOME/scalewise/mpis.json``, keyed by file, size and time.

Debian's two packaged MPIs keep their short names ``openmpi`` and ``mpich``
(aliases of their identities, built into the project's ``build/`` by
``make setup``); every other MPI is built on first use into
``$XDG_CACHE_HOME/scalewise/build/<identity>`` (:mod:`scalewise.launch.mpibuild`).
Executables linked against ``libmpi_abi.so`` (the MPI-5 standard ABI) all use
one more build, :data:`ABI_FLAVOUR`, compiled with ``mpi_abi.h``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from scalewise.errors import ScalewiseError

# Debian's packaged MPIs: their short names and the wrappers Debian installs.
ALIASES = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
ABI_FLAVOUR = "mpi-abi-1"
# The MPI libraries an executable may link; libmpi_abi is the standard ABI.
_LIBRARY = re.compile(r"^lib(mpi|mpich|mpi_abi)\.so(\.\d+)*$")
_IDENTITY = re.compile(r"^(openmpi|mpich|intelmpi)-\d+(\.\d+)*$")
FAMILY_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI"}

# Asked in a child process: loading an MPI library into scalewise itself
# would start its threads and constructors here.  MPI_Get_library_version may
# be called before MPI_Init.
_ASK = """import ctypes, sys
lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_LOCAL)
buf, n = ctypes.create_string_buffer(8192), ctypes.c_int()
sys.exit(lib.MPI_Get_library_version(buf, ctypes.byref(n)) or print(buf.value.decode(errors='replace')))
"""


@dataclass(frozen=True)
class Mpi:
    """One MPI library: who it says it is, where it is, whether it is the standard ABI."""

    identity: str
    library: str
    abi: bool = False

    @property
    def flavour(self) -> str:
        """The name its builds and runs go by: a Debian alias or the identity."""
        return alias_of(self.identity) or self.identity

    @property
    def build(self) -> str:
        """The build an executable linking this library is profiled with."""
        return ABI_FLAVOUR if self.abi else self.flavour


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scalewise"


def family(flavour: str) -> str:
    """``openmpi``, ``mpich`` or ``intelmpi`` (an alias is its own family; the ABI build counts as MPICH's)."""
    if flavour == ABI_FLAVOUR:
        return "mpich"
    return flavour.split("-", 1)[0]


def display_name(flavour: str) -> str:
    """How messages name a flavour: the library's name for Debian's two, the identity otherwise."""
    return FAMILY_NAMES[flavour] if flavour in ALIASES else flavour


def identity_from_version(text: str) -> str | None:
    """``openmpi-5.0.11`` from Open MPI's, MPICH's or Intel MPI's version string."""
    for pattern, name in ((r"Open MPI v(\d+(?:\.\d+)*)", "openmpi"), (r"MPICH Version:\s*(\d+(?:\.\d+)*)", "mpich"),
                          (r"Intel\(R\) MPI Library (\d+\.\d+)", "intelmpi")):
        found = re.search(pattern, text)
        if found:
            return f"{name}-{found.group(1)}"
    return None


LDD_KEPT = 256  # executables whose ldd answer is kept (linked_library)
_STORE: dict[str, object] = {}  # the cache file as last read or written here, and its stat


def _known(store: Path) -> dict:
    """The cache file's entries, parsed once per process unless the file changed."""
    try:
        st = store.stat()
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    if _STORE.get("path") != store or _STORE.get("stamp") != stamp:
        try:
            known = json.loads(store.read_text())
        except (OSError, ValueError):
            known = {}
        _STORE.update(path=store, stamp=stamp, known=known if isinstance(known, dict) else {})
    return _STORE["known"]


def _remembered(kind: str, path: str, compute) -> str:
    """``compute()`` for the file at ``path``, kept on disk until the file changes."""
    st = os.stat(path)
    key = f"{kind}:{os.path.realpath(path)}:{st.st_size}:{st.st_mtime_ns}"
    store = cache_root() / "mpis.json"
    known = dict(_known(store))
    if key not in known:
        known[key] = compute()
        executables = [k for k in known if k.startswith("ldd[")]
        for old in executables[:-LDD_KEPT]:  # the oldest first: one entry per executable ever run would pile up
            del known[old]
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=store.parent, delete=False) as f:
                json.dump(known, f, indent=1)
            os.replace(f.name, store)
        except OSError:
            pass  # an unwritable cache only means asking again next time
        _STORE.clear()
    return known[key]


def library_version(library: str, env: dict[str, str] | None = None) -> str:
    """The library's ``MPI_Get_library_version`` string."""
    def ask() -> str:
        done = subprocess.run([sys.executable, "-c", _ASK, library], capture_output=True, text=True, timeout=60,
                              env=env)
        if done.returncode != 0:
            raise ScalewiseError(f"{library}: cannot ask this MPI library its version "
                                 f"({(done.stderr.strip().splitlines() or ['no answer'])[-1]})")
        return done.stdout.strip()
    return _remembered("version", library, ask)


def identify_library(library: str, abi: bool | None = None, env: dict[str, str] | None = None) -> Mpi:
    text = library_version(library, env)
    identity = identity_from_version(text)
    if identity is None:
        first = text.splitlines()[0] if text else "?"
        raise ScalewiseError(f"{library}: an MPI library scalewise does not know ({first})")
    if abi is None:
        abi = Path(library).name.startswith("libmpi_abi.")
    return Mpi(identity, os.path.realpath(library), abi)


def linked_library(path: str | os.PathLike, env: dict[str, str] | None = None) -> str | None:
    """The MPI library ``path`` loads (resolved by ``ldd``, so LD_LIBRARY_PATH counts).
    In this process's environment the answer is kept on disk (_remembered) until the
    executable, LD_LIBRARY_PATH, a folder on it or the loader's cache (ldconfig) changes,
    or the library found is gone: no ldd on every `scalewise run`."""
    if env is not None:
        return _ldd(path, env)
    found = _remembered(f"ldd[{_loader_state()}]", str(path), lambda: _ldd(path))
    return found if found is None or os.path.isfile(found) else _ldd(path)


def _loader_state() -> str:
    """What decides where the loader finds a library, besides the executable itself."""
    folders = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    stamps = []
    for f in [*folders, "/etc/ld.so.cache"]:
        try:
            stamps.append(f"{f}@{os.stat(f).st_mtime_ns}")
        except OSError:
            stamps.append(f"{f}@-")
    return ";".join(stamps)


def _ldd(path: str | os.PathLike, env: dict[str, str] | None = None) -> str | None:
    try:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30, env=env).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if _LIBRARY.match(name) and rest.startswith("/"):
            return rest.split(" (", 1)[0]
    return None


@lru_cache(maxsize=256)
def _binary_mpi(path: str, mtime: int, ld_path: str) -> Mpi | None:
    library = linked_library(path)
    return identify_library(library) if library else None


def binary_mpi(path: str | os.PathLike) -> Mpi | None:
    """The MPI an executable links, or None for a program without MPI."""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return _binary_mpi(str(path), mtime, os.environ.get("LD_LIBRARY_PATH", ""))


_PROGRAM = "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n"


# What points a wrapper or a program at another MPI's files than its own.
_OTHER_MPI_VARIABLES = ("OPAL_PREFIX", "LD_LIBRARY_PATH", "I_MPI_ROOT")


def wrapper_mpi(mpicc: str, own_files: bool = False, env: dict[str, str] | None = None) -> Mpi:
    """The MPI a compiler wrapper builds for: compile one line with it, ask what it links.
    ``own_files``: without the variables a loaded module sets (a system MPI's wrapper);
    ``env``: the environment to compile in (default: this process's)."""
    env = {k: v for k, v in (os.environ if env is None else env).items()
           if not (own_files and k in _OTHER_MPI_VARIABLES)}
    exe = shutil.which(mpicc, path=env.get("PATH"))
    if exe is None:
        raise ScalewiseError(f"{mpicc}: compiler wrapper not found")

    def compile_and_look() -> str:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "p.c").write_text(_PROGRAM)
            done = subprocess.run([exe, "p.c", "-o", "p"], cwd=tmp, capture_output=True, text=True, timeout=120,
                                  env=env)
            if done.returncode != 0:
                raise ScalewiseError(missing_pieces(exe) or f"{exe}: cannot compile an MPI program: "
                                     f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
            library = linked_library(Path(tmp) / "p", env)
            if library is None:
                raise ScalewiseError(f"{exe}: the program it builds links no MPI library")
            return os.path.realpath(library)
    library = _remembered("wrapper-own" if own_files else "wrapper", exe, compile_and_look)
    return identify_library(library, abi=Path(library).name.startswith("libmpi_abi."), env=env)


def wrapper_compiler(mpicc: str) -> str | None:
    """The C compiler a wrapper calls (the first word of its ``-show``)."""
    for flag in ("-show", "--showme"):
        done = subprocess.run([mpicc, flag], capture_output=True, text=True, timeout=30)
        if done.returncode == 0 and done.stdout.split():
            return done.stdout.split()[0]
    return None


def missing_pieces(mpicc: str) -> str | None:
    """What stops ``mpicc`` from building scalewise's runtime, in one line, or None."""
    missing = []
    compiler = wrapper_compiler(mpicc)
    if compiler and shutil.which(compiler) is None:
        missing.append(f"the C compiler '{compiler}' it calls (load a compiler module or install gcc)")
    elif compiler:
        for header, what in (("mpi.h", "the MPI's C headers (its development package, e.g. impi-devel)"),
                             ("zlib.h", "zlib's headers (zlib1g-dev, zlib-devel or a zlib module)")):
            probe = subprocess.run([mpicc, "-E", "-x", "c", "-"], input=f"#include <{header}>\n",
                                   capture_output=True, text=True, timeout=60)
            if probe.returncode != 0:
                missing.append(what)
    if shutil.which("make") is None:
        missing.append("make")
    return f"{mpicc} cannot build scalewise's runtime: missing {'; '.join(missing)}" if missing else None


@lru_cache(maxsize=None)
def _alias_identities() -> dict[str, str]:
    found = {}
    for alias, mpicc in ALIASES.items():
        try:
            found[wrapper_mpi(mpicc, own_files=True).identity] = alias
        except ScalewiseError:
            continue  # not installed, or not usable here: that alias names nothing
    return found


def alias_of(identity: str) -> str | None:
    """``openmpi`` for Debian's Open MPI's identity, and so on; None for any other MPI."""
    if identity in ALIASES:
        return identity
    return _alias_identities().get(identity)


def alias_identity(alias: str) -> str | None:
    """The identity Debian's short name ``alias`` builds with here (alias_of's inverse); None if not installed."""
    return next((identity for identity, a in _alias_identities().items() if a == alias), None)


def is_identity(name: str) -> bool:
    return name in ALIASES or name == ABI_FLAVOUR or bool(_IDENTITY.match(name))


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an MPI, or None."""
    if is_identity(name):
        return None
    return (f"'{name}' names no MPI (expected openmpi, mpich, {ABI_FLAVOUR} or an identity such as "
            "openmpi-5.0.11, mpich-5.0.2, intelmpi-2021.19)")


def check_name(name: str, where: str = "--mpi") -> str:
    """``name`` if it can name an MPI; a one-line error otherwise."""
    problem = name_problem(name)
    if problem:
        raise ScalewiseError(f"{where}: {problem}")
    return name


def launcher_mpi(launcher: str) -> Mpi | None:
    """The MPI a launcher (mpirun, mpiexec, prterun, mpiexec.hydra) starts: the library in its own prefix."""
    exe = shutil.which(launcher) or launcher
    for bindir in dict.fromkeys((Path(exe).parent, Path(os.path.realpath(exe)).parent)):
        for pattern in ("lib/libmpi.so.*", "lib/libmpich.so.*", "lib/release/libmpi.so.*"):
            for library in sorted((bindir.parent).glob(pattern)):
                if _LIBRARY.match(library.name):
                    return identify_library(str(library), abi=False)
    return None


@dataclass(frozen=True)
class Binding:
    """A study's own name for an MPI: its installation prefix and the variables its module sets."""

    name: str
    prefix: str
    variables: tuple[tuple[str, str], ...] = ()

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` as after ``module load``: the prefix's bin/ and lib/ first, then the variables."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = f"{self.prefix}/bin:{env.get('PATH', '')}"
        env["LD_LIBRARY_PATH"] = f"{self.prefix}/lib" + (f":{env['LD_LIBRARY_PATH']}" if env.get("LD_LIBRARY_PATH")
                                                          else "")
        env.update((k, v.replace("{prefix}", self.prefix)) for k, v in self.variables)
        return env

    @property
    def mpicc(self) -> str:
        return f"{self.prefix}/bin/mpicc"

    @property
    def mpi(self) -> Mpi:
        """Who the MPI under the prefix says it is."""
        if not Path(self.mpicc).is_file():
            raise ScalewiseError(f"MPI '{self.name}': no compiler wrapper {self.mpicc} "
                                 f"(is prefix {self.prefix} an MPI?)")
        return wrapper_mpi(self.mpicc, env=self.environment())


_BINDINGS: dict[str, Binding] = {}


def bind(name: str, prefix: str, variables: dict[str, str]) -> Binding:
    """Make ``name`` stand for the MPI under ``prefix`` in this process (a study's ``mpis:``)."""
    _BINDINGS[name] = Binding(name, os.path.expanduser(prefix), tuple(sorted(variables.items())))
    return _BINDINGS[name]


def binding(name: str) -> Binding | None:
    return _BINDINGS.get(name)


def family_of(name: str) -> str:
    """The family of a name a study or a command line uses: a binding's by what its MPI says."""
    bound = binding(name)
    return family(bound.mpi.identity) if bound else family(name)


def environment_of(name: str, base: dict[str, str]) -> dict[str, str]:
    """``base`` with a bound MPI's module environment; unchanged for any other name."""
    bound = binding(name)
    return bound.environment(base) if bound else dict(base)


def launcher_command(name: str, family_launcher: str) -> str:
    """The launcher of the MPI ``name`` stands for: Debian's by its own name, a bound MPI's
    from its prefix, an identity's from PATH (the MPI in use)."""
    if name == "openmpi":
        return "mpirun.openmpi"
    if name == "mpich":
        return "mpiexec.mpich"
    bound = binding(name)
    return f"{bound.prefix}/bin/{family_launcher}" if bound else family_launcher
