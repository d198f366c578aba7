"""`scalewise whatif`: a planted trace with a known answer on the ideal network,
the side-by-side page, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scalewise import whatif
from scalewise.logfile.layout import MAGIC as LOG_MAGIC
from scalewise.whatif.calibrate.pingpong import write_network
from scalewise.whatif.trace import Call as C

SCALEWISE = Path(sys.executable).parent / "scalewise"


@pytest.fixture
def planted(tmp_path) -> Path:
    # Rank 1 computes 2 ms longer before it receives: on the ideal network the
    # 1 MiB message costs nothing, rank 0 waits those 2 ms, and the run takes 3 ms.
    trace = whatif.from_calls([
        [C("MPI_Send", peer=1, bytes=1 << 20, compute=1e-3)],
        [C("MPI_Recv", peer=0, bytes=1 << 20, compute=3e-3)],
    ])
    path = tmp_path / "job.swtrace"
    whatif.write_trace(trace, path)
    return path


def scalewise(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEWISE), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_ideal_network_keeps_the_wait_and_gige_adds_the_transfer(planted):
    res = scalewise("whatif", planted, "--network", "ideal,gige", "--mpi", "mpich", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    rows = {r["source"]: r for r in out["summary"]}
    assert out["measured"] is None and out["library"] == "mpich"
    ideal, gige = rows["ideal"], rows["gige"]
    assert ideal["wall_time"] == pytest.approx(3e-3, abs=1e-12)
    assert ideal["jobs_per_day"] == pytest.approx(86400 / 3e-3)
    assert ideal["mpi"] == pytest.approx(2e-3, abs=1e-12)  # rank 0 waits for the late receiver
    assert ideal["mpi_share"] == pytest.approx(2e-3 / 6e-3)
    # 1 MiB at gige's 0.941 Gbit/s takes about 8.9 ms more than on the ideal network
    assert gige["wall_time"] - ideal["wall_time"] > (1 << 20) * 8 / 0.941e9


def test_page_shows_every_source_and_figure(planted, tmp_path):
    page = tmp_path / "w.html"
    res = scalewise("whatif", planted, "--network", "gige,edr-ib,ideal", "-o", page)
    assert res.returncode == 0, res.stderr
    html = page.read_text()
    for source in ("gige", "edr-ib", "ideal"):
        assert f'data-source="{source}"' in html and source in res.stdout
    for fig in ("b1-jobs-per-day", "p2-time-per-function", "p1-time-per-rank"):
        assert f'data-figure="{fig}"' in html
    assert html.count("data:image/svg+xml;base64,") == 3


@pytest.mark.parametrize("args, message", [
    (["--network", "token-ring"], "unknown network 'token-ring'"),
    (["--network", ","], "--network: no network named"),
    (["--mpi", "lam"], "Invalid value for '--mpi'"),
])
def test_bad_options_are_one_line_errors(planted, args, message):
    res = scalewise("whatif", planted, *args)
    assert res.returncode == 2 and message in res.stderr


def test_a_log_instead_of_a_trace_is_named(tmp_path):
    bad = tmp_path / "job.swlog"
    bad.write_bytes(b"SWLOG\0\0\0" + bytes(40))
    res = scalewise("whatif", bad)
    assert res.returncode == 2
    assert res.stderr.strip() == (f"scalewise: error: {bad}: a job log with no trace job.swtrace beside it "
                                  "(record with scalewise run --trace)")
    renamed = tmp_path / "other.swtrace"
    renamed.write_bytes(LOG_MAGIC + bytes(40))
    res = scalewise("whatif", renamed)
    assert res.returncode == 2
    assert res.stderr.strip() == (f"scalewise: error: {renamed}: a scalewise job log, not a trace; "
                                  "record a trace with scalewise run --trace")


def test_a_run_directory_is_read_like_its_trace(planted):
    by_file = json.loads(scalewise("whatif", planted, "--json").stdout)
    res = scalewise("whatif", planted.parent, "--json")
    assert res.returncode == 0, res.stderr
    by_dir = json.loads(res.stdout)
    assert by_dir["summary"] == by_file["summary"] and by_dir["library"] == "openmpi"  # no log: Open MPI's


def test_two_networks_of_one_name_are_an_error_naming_both(planted, tmp_path):
    for k in ("a", "b"):
        write_network(whatif.presets()["gige"].model_copy(update={"name": "lab"}), tmp_path / f"{k}.yaml")
    res = scalewise("whatif", planted, "--network", f"{tmp_path / 'a.yaml'},{tmp_path / 'b.yaml'}")
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert f"{tmp_path / 'a.yaml'} and {tmp_path / 'b.yaml'} are both named 'lab'" in res.stderr


def test_an_unknown_network_gets_the_nearest_preset(planted):
    res = scalewise("whatif", planted, "--network", "edr")
    assert res.returncode == 2 and "unknown network 'edr' (did you mean 'edr-ib'?" in res.stderr


def test_the_comparison_refuses_two_sources_of_one_name(planted):
    from scalewise.errors import ScalewiseError
    from scalewise.whatif.compare import compare

    with pytest.raises(ScalewiseError, match="two sources named 'gige'"):
        compare(whatif.replay(whatif.read_trace(planted), ["gige", "gige"]))


def test_ranks_per_node_costs_messages_inside_a_node_with_the_local_network(planted):
    # Both ranks on one node: the 1 MiB message goes through --local (ideal), so the run takes the
    # planted 3 ms whatever the network; one rank per node sends it over gige.
    together = scalewise("whatif", planted, "--network", "gige", "--ranks-per-node", "2", "--local", "ideal", "--json")
    apart = scalewise("whatif", planted, "--network", "gige", "--ranks-per-node", "1", "--local", "ideal", "--json")
    assert together.returncode == 0 and apart.returncode == 0, together.stderr + apart.stderr
    [t] = json.loads(together.stdout)["summary"]
    [a] = json.loads(apart.stdout)["summary"]
    assert t["wall_time"] == pytest.approx(3e-3, abs=1e-12)
    assert a["wall_time"] - 3e-3 > (1 << 20) * 8 / 0.941e9


@pytest.mark.parametrize("args, says", [
    (["--ranks-per-node", "2"], "--ranks-per-node: give --local NET.yaml"),
    (["--ranks-per-node", "0", "--local", "ideal"], "--ranks-per-node 0: give 1 or more"),
    (["--local", "ideal"], "--local: give --ranks-per-node too"),
])
def test_placement_options_explain_what_is_missing(planted, args, says):
    res = scalewise("whatif", planted, "--network", "gige", *args)
    assert res.returncode != 0 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_another_runs_log_is_also_compared_at_its_own_compute(planted, tmp_path):
    # The measured run computed twice as long as the traced one (a slower spell of the machine):
    # rank 0 2 ms then 4 ms waiting, rank 1 6 ms.  On the ideal network the plain replay is 50% fast;
    # given each rank's measured compute it is exact, wall and MPI share.
    from scalewise.logfile.writer import write_profile
    from support.profiles import build_profile

    other = tmp_path / "other" / "job.swlog"
    other.parent.mkdir()
    write_profile(build_profile([(0, 6e-3, 4e-3), (1, 6e-3, 0.0)],
                                [(0, "MPI_Send", "p2p", 1, 4e-3, 1 << 20), (1, "MPI_Recv", "p2p", 1, 0.0, 0)]), other)
    res = scalewise("whatif", planted, "--network", "ideal", "--measured", other, "--json")
    assert res.returncode == 0, res.stderr
    [row] = json.loads(res.stdout)["vs_measured"]
    assert row["wall_change"] == pytest.approx(-0.5) and row["compute_change"] == pytest.approx(-0.5)
    assert row["wall_change_same_compute"] == pytest.approx(0.0, abs=1e-9)
    assert row["mpi_share_points_same_compute"] == pytest.approx(0.0, abs=1e-6)
    # the trace's own log is the run itself: no second replay, no same-compute columns
    write_profile(build_profile([(0, 3e-3, 2e-3), (1, 3e-3, 0.0)]), planted.with_suffix(".swlog"))
    [own] = json.loads(scalewise("whatif", planted, "--network", "ideal", "--json").stdout)["vs_measured"]
    assert "wall_change_same_compute" not in own and own["wall_change"] == pytest.approx(0.0, abs=1e-9)
