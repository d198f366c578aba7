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
TRACED = {"SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": "{workdir}/job.swtrace"}
# (name, program, ranks, arguments, environment, the key of the shared job): groundtruth at 1, 2 and 4 ranks
# (4 oversubscribe this 2-core machine), phases, call sites on and off, MPI_T, a trace-mode run, a ring of 4,
# imbalance, one-sided bytes, polls and the profiler's own time. A key the runtime tests run with the same
# program, ranks, arguments and environment makes one run serve both (mpi_job, tests/conftest.py; a key's
# launch is checked); "{exe}" is the compiled program's folder, part of the keys of tests/runtime/test_timeline.py.
JOBS = [
    ("groundtruth-1", "groundtruth.c", 1, GROUNDTRUTH, {}, "groundtruth-c-{flavour}-1"),
    ("groundtruth-2", "groundtruth.c", 2, GROUNDTRUTH, {}, "groundtruth-c-{flavour}-2"),
    ("groundtruth-4", "groundtruth.c", 4, GROUNDTRUTH, {}, "groundtruth-c-{flavour}-4"),
    ("phases", "phases.c", 2, [], {}, "timeline-{flavour}-{exe}-"),
    ("sites", "sites.c", 2, ["3", "5"], {}, "lean-sites-{flavour}"),
    ("sites-off", "sites.c", 2, ["3", "5"], {"SCALEWISE_SITES": "0"}, "lean-sites-off-{flavour}"),
    ("mpit", "unexpected.c", 2, [], {"SCALEWISE_MPIT": "all"}, "lean-mpit-{flavour}"),
    ("traced", "traced.c", 4, [], TRACED, "trace-planted-{flavour}"),
    ("ring-4", "ring.c", 4, ["20", "4096"], {}, "lean-ring-4-{flavour}"),
    ("imbalance", "imbalance.c", 2, [], {}, "lean-imbalance-{flavour}"),
    ("rma", "rma_bytes.c", 3, ["20"], {}, "rma-bytes-{flavour}-3"),
    ("polls", "polls.c", 3, [], {}, "polls-{flavour}-3"),
    ("owntime", "owntime.c", 2, ["2000", "10"], {}, "lean-owntime-{flavour}"),
    ("aborted", "abnormal_end.c", 3, ["abort", "2", "7", "4"], {}, "abort-{flavour}"),  # a partial log: the aborting rank's
]
FAILING = {"aborted": 7}  # the exit status of a job that ends in MPI_Abort
WIDTHS = (80, 137, 1000)  # a terminal, an odd one, and a pipe (cli/output.py PIPE_WIDTH)
MUTANTS = 150  # per MPI


@pytest.fixture(scope="module", params=mpijob.FLAVOURS)
def real_logs(request, program, mpi_job) -> list[Path]:
    """One log per job under one MPI (each test runs under both), each from a real run."""
    flavour, logs = request.param, []
    for name, source, nranks, args, env, key in JOBS:
        exe = program(source, flavour)
        job = mpi_job(key.format(flavour=flavour, exe=exe.parent.name), flavour, nranks, [exe, *args], extra_env=env)
        assert job.returncode == FAILING.get(name, 0) and job.logfile.is_file(), f"{name} under {flavour}: {job.stderr[-2000:]}"
        logs.append(job.logfile)
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
