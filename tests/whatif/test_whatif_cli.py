"""`scalewise whatif`: a planted trace with a known answer on the ideal network,
the side-by-side page, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scalewise import whatif
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
    assert res.stderr.strip() == f"scalewise: error: {bad}: not a scalewise trace (bad magic)"
