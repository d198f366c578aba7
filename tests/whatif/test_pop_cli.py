"""`scalewise pop`: a planted trace and its job log give exact efficiencies, and bad input one-line errors.

Rank 0 computes 1 ms and sends; rank 1 computes 3 ms and receives.  The log
says both ranks spanned 4 ms (compute 1 and 3 ms): LB = 2/3, CE = 3/4, PE = 1/2.
On the ideal network the run takes 3 ms: TE = 3/4, SerE = 3/3 = 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scalewise import whatif
from scalewise.logfile.writer import write_profile
from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, Profile
from scalewise.whatif.trace import Call as C

SCALEWISE = Path(sys.executable).parent / "scalewise"


def scalewise(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEWISE), *map(str, args)], capture_output=True, text=True, timeout=120)


def write_run(tmp_path: Path, library: str) -> Path:
    """The planted trace and its log, the log naming ``library`` as the run's MPI."""
    whatif.write_trace(whatif.from_calls([
        [C("MPI_Send", peer=1, bytes=8, compute=1e-3)],
        [C("MPI_Recv", peer=0, bytes=8, compute=3e-3)],
    ]), tmp_path / "job.swtrace")
    ranks = pd.DataFrame({"rank": [0, 1], "host": "node0", "pid": [10, 11], "wall": [4e-3, 4e-3],
                          "mpi_time": [3e-3, 1e-3], "compute_time": [1e-3, 3e-3], "maxrss": 1 << 20,
                          "nthreads": 1, "partial": False})[RANK_COLUMNS]
    functions = pd.DataFrame({"rank": [0, 1], "function": ["MPI_Send", "MPI_Recv"], "fclass": "p2p",
                              "calls": 1, "time": [3e-3, 1e-3], "tmin": [3e-3, 1e-3], "tmax": [3e-3, 1e-3],
                              "bytes": [8, 0]})[FUNCTION_COLUMNS]
    profile = Profile({"nranks": 2, "command": ["./app"], "mpi_library": library}, ranks, functions,
                      pd.DataFrame(columns=HIST_COLUMNS), pd.DataFrame(columns=P2P_COLUMNS))
    write_profile(profile, tmp_path / "job.swlog")
    return tmp_path


@pytest.fixture
def run_dir(tmp_path) -> Path:
    return write_run(tmp_path, "MPICH Version: 4.0")


def test_planted_run_gives_exact_efficiencies(run_dir):
    res = scalewise("pop", run_dir, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["runtime"] == pytest.approx(4e-3, rel=1e-9) and out["ideal_runtime"] == pytest.approx(3e-3, rel=1e-9)
    want = {"load_balance": 2 / 3, "communication_efficiency": 0.75, "parallel_efficiency": 0.5,
            "transfer_efficiency": 0.75, "serialisation_efficiency": 1.0}
    assert {k: out[k] for k in want} == pytest.approx(want, rel=1e-9)
    text = scalewise("pop", run_dir / "job.swtrace", "--mpi", "openmpi")
    assert text.returncode == 0 and "Transfer efficiency" in text.stdout and "75.0%" in text.stdout


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "nothing", "{p}: no such file or directory"),
    (lambda d: d, "{p}: no trace; name one .swtrace (record with scalewise run --trace)"),
])
def test_no_trace_is_a_one_line_error(tmp_path, make, message):
    p = make(tmp_path)
    res = scalewise("pop", p)
    assert res.returncode == 2 and res.stderr.strip() == "scalewise: error: " + message.format(p=p)


def test_two_traces_or_no_log_are_named(run_dir):
    (run_dir / "other.swtrace").write_bytes((run_dir / "job.swtrace").read_bytes())
    res = scalewise("pop", run_dir)
    assert res.returncode == 2 and "2 traces (job.swtrace, other.swtrace)" in res.stderr
    res = scalewise("pop", run_dir / "other.swtrace")
    assert res.returncode == 2 and res.stderr.strip() == (
        f"scalewise: error: {run_dir / 'other.swtrace'}: no job log other.swlog beside it "
        "(scalewise run --trace writes both)")


def test_a_job_log_stands_for_the_trace_beside_it_and_names_the_library(run_dir):
    log = run_dir / "job.swlog"
    pop = scalewise("pop", log, "--json")
    assert pop.returncode == 0, pop.stderr
    assert json.loads(pop.stdout)["trace"] == str(run_dir / "job.swtrace")
    res = scalewise("whatif", log, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    # the run's own library (its log says MPICH 4.0), not Open MPI's collectives; named by the identity it gives
    assert out["library"] == "mpich-4.0" and out["measured"] == str(log) and out["trace"] == str(run_dir / "job.swtrace")
    assert out["rules"] == "mpich-4.0" and out["assumption"] is None


@pytest.mark.parametrize("library, name, rules", [
    ("Open MPI v5.0.11, package: Open MPI ...", "openmpi-5.0.11", "openmpi-5.0"),
    ("Intel(R) MPI Library 2021.19 for Linux* OS", "intelmpi-2021.19", "intelmpi-2021")])
def test_the_logs_identity_picks_its_release_lines_rules(tmp_path, library, name, rules):
    log = write_run(tmp_path, library) / "job.swlog"
    res = scalewise("whatif", log, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["library"], out["rules"]) == (name, rules)
    if name.startswith("intelmpi"):
        note = out["assumption"]
        assert note.startswith(f"{name}'s collectives are replayed with the decisions observed in Intel(R) MPI")
        # the same source; which calls fell back to MPICH's rules follows it in each
        base = note.split("; fell back: ")[0]
        assert any(line.startswith(f"note: {base}") for line in scalewise("pop", log).stdout.splitlines())
    else:
        assert out["assumption"] is None
