"""`scalewise whatif` prints its table and JSON from plain rows (whatif/results.py, the log read by
logfile/plain.py): the same bytes as the comparison's frames (compare.py, the log read into a
Profile), with the replay's sums and the measured run's added as numpy and pandas add them; and the
command imports neither pandas nor matplotlib on its way there."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from scalewise import whatif
from scalewise.jsonsafe import json_safe
from scalewise.logfile.plain import read_plain
from scalewise.logfile.reader import read_profile
from scalewise.logfile.writer import write_profile
from scalewise.report.whatif.html import page_rows
from scalewise.report.whatif.table import summary_rows
from scalewise.whatif.compare import _measured, against_measured
from scalewise.whatif.hostcost import host_costs
from scalewise.whatif.predict import predict
from scalewise.whatif.results import measured_row
from support.profiles import build_profile
from support.traces import halo_allreduce

HEAVY = ("pandas", "matplotlib", "pyarrow", "jinja2", "scipy")
RANKS = 300  # above numpy's 128-value blocks: the sums are pairwise
FUNCS = ["MPI_Init", "MPI_Irecv", "MPI_Isend", "MPI_Issend", "MPI_Waitall", "MPI_Allreduce", "MPI_Finalize"]


def random_log(path, nranks: int, seed: int, library: str = "Open MPI v4.1.4"):
    """A log of ``nranks`` ranks with drawn times: several rows a rank, two kinds of non-blocking send."""
    rng = np.random.default_rng(seed)
    wall = rng.uniform(0.5, 2.0, nranks)
    ranks = [(r, float(wall[r]), float(wall[r] * rng.uniform(0.05, 0.9))) for r in range(nranks)]
    functions = [(r, f, "p2p", int(rng.integers(0, 50)), float(rng.uniform(0, 1e-3)), 0)
                 for r in range(nranks) for f in FUNCS if rng.random() < 0.9]
    write_profile(build_profile(ranks, functions, meta={"mpi_library": library}), path)
    return path


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """A measured-looking trace of RANKS ranks with its own log beside it, and another run's log."""
    d = tmp_path_factory.mktemp("lean")
    trace = d / "job.swtrace"
    whatif.write_trace(halo_allreduce(RANKS, 3, jitter=0.3, seed=4), trace)
    random_log(d / "job.swlog", RANKS, 1)
    other = random_log(d / "other.swlog", RANKS, 2, "MPICH Version: 4.0.2")
    return trace, other


def frames_json(p) -> dict:
    """The command's JSON as the comparison's frames give it (what the command printed before)."""
    w = p.frames()
    return {**p.to_json_dict(), "summary": w.summary.reset_index().to_dict("records"),
            "vs_measured": against_measured(w).reset_index(names="source").to_dict("records")}


def dumped(d: dict) -> str:
    return json.dumps(json_safe(d), indent=2, allow_nan=False)


@pytest.mark.parametrize("case", ["own log", "another run's log", "no log", "ranks share nodes"])
def test_plain_rows_print_the_frames_bytes(traced, case, tmp_path):
    trace, other = traced
    args = {"names": ["gige", "edr-ib", "ideal"]}
    if case == "another run's log":
        args["measured"] = other
    if case == "no log":
        alone = tmp_path / "alone.swtrace"
        alone.write_bytes(trace.read_bytes())
        trace = alone
    if case == "ranks share nodes":
        args.update(ranks_per_node=4, local="ideal", library="openmpi-5.0.11")
    p = predict(trace, **args)
    assert (p.measured is None) == (case == "no log")
    assert dumped(p.to_json_dict()) == dumped(frames_json(p))
    assert summary_rows(p.summary, p.changes) == page_rows(p.frames())
    if case == "another run's log":
        assert p.same_compute is not None and len(p.changes["gige"]) == 5
    # the replay's sums are the frames' (pandas') sums
    for pred in p.predictions + (p.same_predictions or []):
        assert pred.compute_total == float(pred.ranks["compute"].sum())
        assert pred.mpi_total == float(pred.ranks["mpi"].sum())
        assert pred.mpi_share == float(pred.ranks["mpi"].sum()) / float(pred.ranks["finish"].sum())


@pytest.mark.parametrize("seed", range(20))
def test_a_logs_plain_rows_give_the_frames_measured_row_and_host_costs(seed, tmp_path):
    nranks = [1, 7, 129, 300, 1000][seed % 5]
    log = random_log(tmp_path / "job.swlog", nranks, seed)
    plain, profile = read_plain(log), read_profile(log)
    assert measured_row(plain) == _measured(profile)[0]
    a, b = host_costs(plain, nranks), host_costs(profile, nranks)
    assert a.per_message.tobytes() == b.per_message.tobytes() and a.irecv.tobytes() == b.irecv.tobytes()


def test_numpy_sums_the_replays_arrays_as_the_frames_do():
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 8, 9, 127, 128, 129, 1000, 16384, 16385):
        finish, compute, mpi = (rng.exponential(1e-3, n) * 10 ** rng.uniform(-3, 3, n) for _ in range(3))
        frame = pd.DataFrame({"finish": finish, "compute": compute, "mpi": mpi})
        for name, a in (("finish", finish), ("compute", compute), ("mpi", mpi)):
            assert float(np.sum(a)) == float(frame[name].sum())


CLI = """import sys
from scalewise.cli.main import cli
try:
    cli(sys.argv[1:])
except SystemExit as done:
    assert not done.code, done.code
print("imported:", *(m for m in {heavy!r} if any(k == m or k.startswith(m + ".") for k in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_command_imports_neither_pandas_nor_matplotlib(traced, json_flag):
    trace, _ = traced
    done = subprocess.run([sys.executable, "-c", CLI.format(heavy=HEAVY), "whatif", str(trace),
                           "--network", "gige,ideal", *json_flag], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "imported:"
    assert ("measured" in done.stdout) and ("gige" in done.stdout)
    # the page does draw: its figures need the frames and matplotlib
    page = trace.with_name("w.html")
    drawn = subprocess.run([sys.executable, "-c", CLI.format(heavy=HEAVY), "whatif", str(trace),
                            "--network", "gige", "-o", str(page), *json_flag], capture_output=True, text=True,
                           timeout=120)
    assert drawn.returncode == 0, drawn.stderr
    assert {"pandas", "matplotlib"} <= set(drawn.stderr.strip().splitlines()[-1].split()[1:])
