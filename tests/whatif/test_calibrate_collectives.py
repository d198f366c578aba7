"""The collectives of `scalewise calibrate`: collbench's timings on real MPI,
the `collectives:` section of the network file beside the replay's own
prediction, and one-line errors for a failing benchmark and a bad section."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scalewise import whatif
from scalewise.errors import ScalewiseError
from scalewise.whatif.calibrate.collbench import measure_collectives
from scalewise.whatif.calibrate.pingpong import write_network

SCALEWISE = Path(sys.executable).parent / "scalewise"
SIZES = (8, 65536)


def scalewise(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEWISE), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_collbench_times_every_collective_at_every_size(mpi):
    timings = measure_collectives(mpi, sizes=SIZES, reps=3)
    assert [(t.name, t.bytes, t.ranks) for t in timings] == [
        ("MPI_Allreduce", 8, 2), ("MPI_Allreduce", 65536, 2), ("MPI_Bcast", 8, 2), ("MPI_Bcast", 65536, 2),
        ("MPI_Alltoall", 8, 2), ("MPI_Alltoall", 65536, 2), ("MPI_Barrier", 0, 2)]
    assert all(0 < t.best <= t.median < 1.0 for t in timings)


def test_collbench_on_more_ranks_than_cores_each_call_after_a_rest():
    timings = measure_collectives("openmpi", ("allreduce",), (8,), reps=3, ranks=3, pause=1e-3)
    assert [(t.name, t.bytes, t.ranks) for t in timings] == [("MPI_Allreduce", 8, 3)]


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_calibrate_writes_collectives_beside_their_replay(mpi, tmp_path):
    out = tmp_path / "net.yaml"
    res = scalewise("calibrate", "--mpi", mpi, "--reps", "3", "--coll-sizes", "8,65536", "-o", out)
    assert res.returncode == 0, res.stderr
    assert all(word in res.stdout for word in ("MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Barrier",
                                                 "measured", "predicted"))
    assert "off by more than 25%" in res.stdout or "within 25% of its measurement" in res.stdout
    net = whatif.network(out)
    assert [(c.name, c.bytes, c.ranks) for c in net.collectives] == [
        ("MPI_Allreduce", 8, 2), ("MPI_Allreduce", 65536, 2), ("MPI_Bcast", 8, 2), ("MPI_Bcast", 65536, 2),
        ("MPI_Alltoall", 8, 2), ("MPI_Alltoall", 65536, 2), ("MPI_Barrier", 0, 2)]
    assert all(c.measured_us > 0 and c.predicted_us > 0 and c.algorithm for c in net.collectives)
    # The prediction is exactly what the replay of the decomposition gives one such call on the ranges just fitted.
    planted = next(c for c in net.collectives if (c.name, c.bytes) == ("MPI_Allreduce", 8))
    trace = whatif.from_calls([[whatif.Call("MPI_Allreduce", bytes=8)]] * 2)
    [bare] = whatif.replay(trace, net.model_copy(update={"collectives": None}), library=mpi)
    assert planted.predicted_us == bare.wall_time * 1e6
    # ... and the replay with the file charges the library's measured per-call cost on top: one call costs
    # what calibrate measured (or the decomposition, where that is slower); another library's replay does not.
    [p] = whatif.replay(trace, str(out), library=mpi)
    assert p.wall_time * 1e6 == pytest.approx(max(planted.measured_us, planted.predicted_us), rel=1e-5)
    [other] = whatif.replay(trace, str(out), library="mpich" if mpi == "openmpi" else "openmpi")
    assert other.wall_time < p.wall_time or planted.measured_us <= planted.predicted_us
    whatif.write_trace(trace, tmp_path / "job.swtrace")
    res = scalewise("whatif", tmp_path / "job.swtrace", "--mpi", mpi, "--network", out, "--json")
    assert res.returncode == 0, res.stderr
    [row] = json.loads(res.stdout)["summary"]
    assert row["source"] == "net" and row["wall_time"] == p.wall_time


def test_no_collectives_writes_no_section(tmp_path):
    out = tmp_path / "net.yaml"
    res = scalewise("calibrate", "--reps", "2", "--collectives", "none", "-o", out)
    assert res.returncode == 0, res.stderr
    assert "collectives" not in yaml.safe_load(out.read_text()) and whatif.network(out).collectives is None


def test_a_failing_benchmark_is_a_one_line_error():
    failed = r"collective benchmark failed \(exit 2\): collbench: error: bad size '12' for --sizes"
    with pytest.raises(ScalewiseError, match=failed) as err:
        measure_collectives("mpich", ("bcast",), (12,), reps=1)  # collbench's own check: whole doubles only
    assert "\n" not in str(err.value)


def test_a_benchmark_that_prints_nothing_is_a_one_line_error():
    with pytest.raises(ScalewiseError, match=r"printed 0 of 3 results \(true\)"):
        measure_collectives("openmpi", ("bcast",), reps=1, launcher=lambda argv: (["true"], {}))


@pytest.mark.parametrize("args, message", [
    (["--coll-sizes", "8,12"], "--coll-sizes: 12: not a multiple of 8 bytes"),
    (["--coll-sizes", "8,big"], "--coll-sizes: expected byte counts"),
    (["--collectives", "allreduce,scan"], "--collectives: unknown 'scan'"),
    (["--hosts", "a,b", "--ranks", "4"], "--ranks: more than 2 ranks only on this host"),
])
def test_bad_collective_options_are_one_line_errors(args, message, tmp_path):
    res = scalewise("calibrate", *args, "-o", "x.yaml", cwd=tmp_path)
    assert res.returncode == 2 and message in res.stderr and len(res.stderr.splitlines()) == 1
    assert not (tmp_path / "x.yaml").exists()


GOOD = {"name": "MPI_Bcast", "bytes": 8, "ranks": 2, "algorithm": "binomial", "measured_us": 1.5,
        "predicted_us": 1.0}


@pytest.mark.parametrize("entry, message", [
    ({**GOOD, "measured_us": 0}, r"collectives entry 2 \(MPI_Bcast, 8 B\): measured_us: Input should be greater "),
    ({**GOOD, "name": "MPI_Scan"}, r"collectives entry 2 \(MPI_Scan, 8 B\): name: .*not a collective the replay"),
    ({k: v for k, v in GOOD.items() if k != "ranks"}, r"collectives entry 2 \(MPI_Bcast, 8 B\): ranks: Field required"),
    ({**GOOD, "seconds": 1}, r"collectives entry 2 \(MPI_Bcast, 8 B\): seconds: Extra inputs"),
    ("MPI_Bcast", r"collectives entry 2: Input should be a valid dictionary"),
])
def test_a_malformed_collectives_entry_is_named(entry, message, tmp_path):
    net = whatif.presets()["gige"].model_copy(update={"name": "lab"})
    path = write_network(net, tmp_path / "bad.yaml")
    data = yaml.safe_load(path.read_text())
    data["collectives"] = [GOOD, entry]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ScalewiseError, match=message) as err:
        whatif.network(path)
    assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)
    whatif.write_trace(whatif.from_calls([[whatif.Call("MPI_Barrier")]] * 2), tmp_path / "job.swtrace")
    res = scalewise("whatif", tmp_path / "job.swtrace", "--network", path)
    assert res.returncode == 2 and "collectives entry 2" in res.stderr, res.stderr
