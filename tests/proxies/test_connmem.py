"""The connection-memory probe under both MPIs, and `scalewise memory` end to end.

Memory itself is too noisy for exact answers; the socket counts are not: under
Open MPI over TCP a rank holds one socket per connected peer, so they show
which set-up connected what."""
from __future__ import annotations

import json
import re

from click.testing import CliRunner

from scalewise.cli.main import cli
from scalewise.memory.measure import SETUPS, run_probe


def _sockets(frame):
    return list(frame["sockets_init"]), list(frame["sockets_touched"])


def test_open_mpi_connects_peers_on_demand_or_all_in_init(proxies_built, tmp_path):
    lazy, eager = SETUPS["openmpi"]
    quiet = run_probe(lazy, 4, "none", tmp_path / "a")
    talked = run_probe(lazy, 4, "all", tmp_path / "b")
    pre = run_probe(eager, 4, "none", tmp_path / "c")
    assert list(talked["peers"]) == [3] * 4 and list(quiet["peers"]) == [0] * 4
    # every rank read before any rank communicated again (the probe's wait outside MPI)
    assert all(list(f["synced"]) == [1] * 4 for f in (quiet, talked, pre))
    base, after = _sockets(quiet)
    assert base == after  # nobody talked: no connection made
    # One socket per peer, made on the first message.  Two ranks that connect
    # to each other at once may briefly hold one extra or one fewer socket while
    # Open MPI settles which connection to keep, hence the band of one.
    init, touched = _sockets(talked)
    gains = [t - i for i, t in zip(init, touched)]
    assert all(2 <= g <= 4 for g in gains) and sorted(gains)[len(gains) // 2] == 3, gains
    init, touched = _sockets(pre)
    assert init == touched  # preconnect: every connection made inside MPI_Init, none after
    assert all(i - b >= 2 for i, b in zip(init, base)), (init, base)
    assert (talked["rss_init"] > talked["rss_start"]).all()
    assert set(talked["tcp_inuse_touched"]) and (talked["tcp_inuse_touched"] >= 12).all()


def test_mpich_runs_through_the_launcher_path_and_reports_every_rank(proxies_built, tmp_path):
    (setup,) = SETUPS["mpich"]
    frame = run_probe(setup, 3, "neighbours", tmp_path)
    assert sorted(frame["rank"]) == [0, 1, 2]
    assert list(frame["peers"]) == [2, 2, 2]
    assert (frame["rss_touched"] > frame["rss_start"]).all()


def test_memory_command_fits_projects_and_draws_b10(proxies_built, tmp_path):
    page = tmp_path / "memory.html"
    result = CliRunner().invoke(cli, ["memory", "--mpi", "openmpi", "--ranks", "2,3", "--peers", "none,all",
                                      "--repeats", "1", "--nodes", "1..8", "--json", "-o", str(page)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert [(f["mpi"], f["setup"], f["points"], f["runs"]) for f in out["fits"]] == [
        ("openmpi", "on-demand", 10, 4), ("openmpi", "eager", 10, 4)]
    assert [round(f["sockets_per_peer"], 6) for f in out["fits"]] == [1.0, 1.0]
    assert sorted({p["nodes"] for p in out["projection"]}) == [1, 2, 4, 8]
    assert len(out["findings"]) == 2 and all("10 points from 4 runs" in f["text"] for f in out["findings"])
    # The target values not given on the command line are stated wherever a projection is.
    assert out["assumed"] == ["256GiB per node", "128 ranks per node", "6 peers per rank under on-demand set-up"]
    for f in out["findings"]:
        assert f["numbers"]["assumed"] == out["assumed"]
        if f["kind"] == "growth":
            assert f["text"].endswith("(assumed, not given: 256GiB per node, 128 ranks per node, 6 peers per rank "
                                      "under on-demand set-up).")
    for p in out["projection"]:
        assert p["rank_bytes_low"] <= p["rank_bytes"] <= p["rank_bytes_high"]
    html = page.read_text()
    assert 'data-figure="b10-memory-vs-nodes"' in html and "data:image/svg+xml;base64," in html
    assert '<p class="note" id="assumed"><strong>Assumed, not given:</strong> 256GiB per node' in html


def test_memory_command_refuses_a_bad_peer_choice_in_one_line():
    result = CliRunner().invoke(cli, ["memory", "--mpi", "openmpi", "--peers", "some"])
    assert result.exit_code == 2
    assert result.output.strip() == ("scalewise: error: --peers: unknown choice 'some' "
                                     "(expected none, neighbours, all)")


def test_memory_command_prints_slopes_in_words_and_its_assumptions(proxies_built):
    result = CliRunner().invoke(cli, ["memory", "--mpi", "openmpi", "--ranks", "2,3", "--peers", "none,all",
                                      "--repeats", "1", "--nodes", "1..8", "--node-memory", "64GiB"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == ("assumed, not given: 128 ranks per node, 6 peers per rank under on-demand set-up "
                         "(--node-memory, --ranks-per-node, --nodes, --app-peers set them)")
    assert lines[0].split()[:4] == ["mpi", "setup", "fixed", "per_peer"]
    for row in lines[1:3]:  # a slope is a size, "below noise (...)" or "negative (...): not a cost", never "-12 KiB"
        assert not re.search(r"(^|\s)-\d", row), row
