"""The summary's lean path (report/run/lean.py: the log's rows, the plain
analysis, no numpy or pandas) prints the same bytes as the analysis over a
Profile's frames, over logs of real runs under both Debian MPIs and the logs
in tests/data; it refuses what the full reader refuses, with the same line;
and ``scalewise summary`` and ``scalewise run`` import neither numpy nor
pandas on their way to the summary."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from scalewise.errors import LogFormatError
from scalewise.logfile.plain import read_plain
from scalewise.logfile.reader import read_profile
from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.plain import analyse_plain
from scalewise.report.run.lean import lean_view
from scalewise.report.run.summary_view import render_summary
from scalewise.report.run.terminal import print_summary
from support import mpijob
from support.mutants import decode, encode, mutants

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
GROUNDTRUTH = ["{workdir}/io.dat", "3", "5", "0", "1", "7", "8", "1024", "65536"]
# (name, program, ranks, arguments, environment): groundtruth at 1, 2 and 4 ranks (4 oversubscribe
# this 2-core machine), phases, call sites on and off, MPI_T, a trace-mode run, a ring of 4, imbalance,
# one-sided bytes, polls and the profiler's own time.
JOBS = [
    ("groundtruth-1", "groundtruth.c", 1, GROUNDTRUTH, {}),
    ("groundtruth-2", "groundtruth.c", 2, GROUNDTRUTH, {}),
    ("groundtruth-4", "groundtruth.c", 4, GROUNDTRUTH, {}),
    ("phases", "phases.c", 2, [], {}),
    ("sites", "sites.c", 2, ["3", "5"], {}),
    ("sites-off", "sites.c", 2, ["3", "5"], {"SCALEWISE_SITES": "0"}),
    ("mpit", "unexpected.c", 2, [], {"SCALEWISE_MPIT": "all"}),
    ("traced", "traced.c", 4, [], {"SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": "{workdir}/job.swtrace"}),
    ("ring-4", "ring.c", 4, ["20", "4096"], {}),
    ("imbalance", "imbalance.c", 2, [], {}),
    ("rma", "rma_bytes.c", 2, ["5"], {}),
    ("polls", "polls.c", 2, [], {}),
    ("owntime", "owntime.c", 2, ["2000", "10"], {}),
    ("aborted", "abnormal_end.c", 3, ["abort", "2", "7", "4"], {}),  # a partial log: the aborting rank's
]
FAILING = {"aborted": 7}  # the exit status of a job that ends in MPI_Abort
WIDTHS = (80, 137, 1000)  # a terminal, an odd one, and a pipe (cli/output.py PIPE_WIDTH)
MUTANTS = 150  # per MPI


def _fill(value: str, workdir: Path) -> str:
    return value.replace("{workdir}", str(workdir))


@pytest.fixture(scope="module", params=mpijob.FLAVOURS)
def real_logs(request, tmp_path_factory) -> list[Path]:
    """One log per job under one MPI (each test runs under both), each from a real run."""
    flavour, logs = request.param, []
    assert mpijob.library(flavour).is_file(), "run make -C runtime"
    built: dict[str, Path] = {}
    for name, source, nranks, args, env in JOBS:
        workdir = tmp_path_factory.mktemp(f"{name}-{flavour}")
        if source not in built:
            exe = workdir / Path(source).stem
            subprocess.run(mpijob.compile_command(flavour, mpijob.PROGRAMS / source, exe), check=True,
                           capture_output=True, timeout=180)
            built[source] = exe
        log = workdir / "job.swlog"
        done = mpijob.run(flavour, nranks, [str(built[source]), *(_fill(a, workdir) for a in args)], log,
                          cwd=workdir, extra_env={k: _fill(v, workdir) for k, v in env.items()})
        assert done.returncode == FAILING.get(name, 0) and log.is_file(), f"{name} under {flavour}: {done.stderr[-2000:]}"
        logs.append(log)
    return logs


def _printed(write, width: int) -> str:
    out = io.StringIO()
    write(Console(file=out, width=width))
    return out.getvalue()


def _both(path: Path, widths: tuple[int, ...] = WIDTHS) -> list[tuple[str, str]]:
    """(full, lean) text of the summary of ``path`` at each width; each path reads and analyses once."""
    profile = read_profile(path)
    analysis = analyse(profile)
    log = read_plain(path)
    view = lean_view(log, analyse_plain(log))
    return [(_printed(lambda c: print_summary(profile, c, analysis), w), _printed(lambda c: render_summary(view, c), w))
            for w in widths]


def test_lean_summary_prints_the_full_paths_bytes_over_real_runs(real_logs):
    assert len(real_logs) == len(JOBS)
    seen = []
    for log in real_logs:
        for width, (full, lean) in zip(WIDTHS, _both(log)):
            assert lean == full, f"{log} at width {width}"
        seen.append(full)
    # The logs reach every part of the summary: the notes, the run set-up's caveat, phases, MPI_T and findings.
    text = "\n".join(seen)
    for part in ("Partial log", "aborted before MPI_Finalize", "oversubscribed", "Phases (MPI_Pcontrol)",
                 "POP efficiencies", "Single-rank run", "Point-to-point traffic", "Most messages are",
                 "Non-blocking calls", "prof. Init"):
        assert part in text, part
    if "Open MPI" in text:  # Open MPI's library counters (MPICH 4.0 lists none by default)
        assert "MPI library counters, MPI_T" in text


@pytest.mark.parametrize("log", sorted(DATA.glob("*.swlog")), ids=lambda p: p.name)
def test_lean_summary_prints_the_full_paths_bytes_over_the_stored_logs(log):
    for full, lean in _both(log):
        assert lean == full


def test_scalewise_summary_prints_what_the_full_path_prints(real_logs):
    """The command itself (through a pipe: rich's own 80 columns) against the full path's text."""
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    for log in real_logs[::4]:
        got = subprocess.run([sys.executable, "-m", "scalewise.cli.main", "summary", str(log)], capture_output=True,
                             text=True, env=env, check=True).stdout
        full = subprocess.run([sys.executable, "-c", "import sys\nfrom scalewise.logfile.reader import read_profile\n"
                               "from scalewise.report.run.terminal import print_summary\n"
                               "print_summary(read_profile(sys.argv[1]))", str(log)],
                              capture_output=True, text=True, env=env, check=True).stdout
        assert got == full and "scalewise profile" in got


def _outcome(read, path: Path) -> str:
    try:
        read(path)
    except LogFormatError as exc:
        return f"refused: {exc}"
    return "read"


def test_lean_reader_refuses_what_the_full_reader_refuses_with_the_same_line(real_logs, tmp_path):
    """Structure-aware mutants of real logs (checksums recomputed): the same outcome either way, and
    where both read the log, the same summary."""
    big_endian = decode((DATA / "golden-1.0-mpich-ring.swlog").read_bytes())
    big_endian.order = ">"
    seeds = [log.read_bytes() for log in real_logs[:4]] + [(DATA / "golden-1.4-mpich-owntime.swlog").read_bytes(),
                                                            encode(big_endian)]
    counts = {"refused": 0, "read": 0}
    for i, (what, data) in enumerate(mutants(seeds, MUTANTS, 20261127)):
        path = tmp_path / f"m{i}.swlog"
        path.write_bytes(data)
        full, lean = _outcome(read_profile, path), _outcome(read_plain, path)
        assert lean == full, f"{what}: full {full!r}, lean {lean!r}"
        counts[full.split(":")[0]] += 1
        if full == "read":
            [(full_text, lean_text)] = _both(path, (120,))
            assert lean_text == full_text, what
        path.unlink()
    assert counts["refused"] > MUTANTS // 2 and counts["read"] > 0, counts


HEAVY = ("numpy", "pandas", "pyarrow", "pydantic", "matplotlib", "scipy")


def _heavy_imports(stderr: str) -> set[str]:
    """Top-level packages among the modules ``python -X importtime`` reports."""
    names = {line.split("|")[-1].strip().split(".")[0] for line in stderr.splitlines() if line.startswith("import time:")}
    return names & set(HEAVY)


def test_scalewise_summary_imports_neither_numpy_nor_pandas(real_logs):
    for log in real_logs[::7]:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "scalewise.cli.main", "summary", str(log)],
                              capture_output=True, text=True, check=True)
        assert "scalewise profile" in done.stdout
        assert _heavy_imports(done.stderr) == set(), log
    # the check sees them when they are imported: --json takes the full reader
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "scalewise.cli.main", "summary", "--json",
                           str(real_logs[0])], capture_output=True, text=True, check=True)
    assert {"numpy", "pandas"} <= _heavy_imports(done.stderr)


@pytest.mark.parametrize("flavour", mpijob.FLAVOURS)
def test_scalewise_run_imports_neither_numpy_nor_pandas(flavour, tmp_path):
    """The run's whole path: the launch, the imports made while the job runs, the log read back, the summary."""
    exe = tmp_path / "hello"
    subprocess.run([f"mpicc.{flavour}", "-O1", "-o", str(exe), str(REPO / "bench" / "hello_mpi.c")], check=True,
                   timeout=180)
    launcher = {"openmpi": ["mpirun.openmpi", "--oversubscribe"], "mpich": ["mpirun.mpich"]}[flavour]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "scalewise.cli.main", "run", "-o", str(tmp_path),
                           "--", *launcher, "-np", "2", str(exe)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "scalewise profile" in done.stdout and "profile: " in done.stdout
    assert _heavy_imports(done.stderr) == set()
