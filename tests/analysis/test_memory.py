"""The connection-memory fit and projection on readings planted in code with known costs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalewise.analysis.memory import Target, analyse_memory, parse_nodes, parse_size, project
from scalewise.errors import ScalewiseError

KIB, MIB, GIB = 2**10, 2**20, 2**30


def plant(mpi: str, setup: str, eager: bool, per_peer: float, noise: float, sockets_per_peer: int = 1,
          seed: int = 1) -> pd.DataFrame:
    """Readings of ranks 2..16 x peers none/neighbours/all x 2 repetitions: 8 MiB fixed plus per_peer each."""
    rng = np.random.default_rng(seed)
    rows = []
    for size in (2, 4, 8, 16):
        for mode, touched in (("none", 0), ("neighbours", min(2, size - 1)), ("all", size - 1)):
            for rep in range(2):
                for rank in range(size):
                    connected = size - 1 if eager else touched
                    start = 3 * MIB
                    rows.append({"rank": rank, "size": size, "peers": touched, "mode": mode, "rep": rep,
                                 "mpi": mpi, "setup": setup, "eager": eager, "rss_start": start,
                                 "rss_init": start + 8 * MIB,
                                 "rss_touched": start + 8 * MIB + per_peer * connected + rng.normal(0, noise),
                                 "sockets_init": 3, "sockets_touched": 3 + sockets_per_peer * connected})
    return pd.DataFrame(rows)


TARGET = Target(node_memory=256 * GIB, ranks_per_node=128, nodes=parse_nodes("1..1024"), app_peers=6)


def test_fit_recovers_the_planted_cost_per_peer_and_says_where_eager_stops_fitting():
    readings = pd.concat([plant("openmpi", "eager", True, 500 * KIB, 20 * KIB),
                          plant("openmpi", "on-demand", False, 500 * KIB, 20 * KIB, seed=2)])
    a = analyse_memory(readings, TARGET, kernel_per_socket=3000)
    eager, lazy = a.fits
    for fit in (eager, lazy):
        assert fit.measurable
        assert abs(fit.per_peer - 500 * KIB) < 3 * fit.per_peer_se + 1
        assert abs(fit.fixed - 8 * MIB) < 20 * KIB
        assert fit.points == 2 * 3 * (2 + 4 + 8 + 16)
        assert fit.runs == 24
        assert fit.sockets_per_peer == pytest.approx(1.0)
        assert fit.kernel_per_peer == pytest.approx(3000)
    assert abs(lazy.per_rank) < 5 * KIB  # nothing planted per rank in the job
    # Per node: 128 x (8 MiB + 503,000 B x (128 n - 1)) <= 256 GiB holds up to n = 33 (hand-computed), so
    # of the powers of two 32 is the last that fits.
    proj = a.projection[a.projection["setup"] == "eager"]
    assert list(proj[proj["fits"]]["nodes"]) == [1, 2, 4, 8, 16, 32]
    text = a.findings[0].text
    assert "beyond 32 nodes" in text and "openmpi eager" in text and "180 points from 24 runs" in text
    assert a.findings[0].numbers["last_nodes_that_fit"] == 32
    assert a.projection[a.projection["setup"] == "on-demand"]["fits"].all()


def test_no_cost_claimed_when_memory_does_not_grow_with_peers():
    a = analyse_memory(plant("mpich", "eager", True, 0.0, 30 * KIB), TARGET, kernel_per_socket=None)
    (fit,) = a.fits
    assert not fit.measurable
    assert fit.noise > 0
    assert a.findings[0].kind == "note"
    assert a.findings[0].text.startswith("mpich eager: no per-connection cost measurable above the noise of ±")


def test_projection_counts_all_ranks_for_eager_and_app_peers_for_on_demand():
    readings = pd.concat([plant("openmpi", "eager", True, 1 * KIB, 0.0),
                          plant("openmpi", "on-demand", False, 1 * KIB, 0.0)])
    a = analyse_memory(readings, Target(GIB, 4, (1, 2), app_peers=3), kernel_per_socket=None)
    proj = project(a.fits, a.target).set_index(["setup", "nodes"])
    assert proj.loc[("eager", 2), "connections"] == 7
    assert proj.loc[("on-demand", 2), "connections"] == 3
    assert proj.loc[("eager", 2), "rank_bytes"] == pytest.approx(8 * MIB + 7 * KIB, rel=1e-6)


def test_sizes_and_node_ranges_parse_and_bad_ones_say_what():
    assert parse_size("256GiB", "--node-memory") == 256 * GIB
    assert parse_size("1.5 MB", "--node-memory") == 1.5e6
    assert parse_nodes("1..6") == (1, 2, 4, 6)
    assert parse_nodes("8,1,64") == (1, 8, 64)
    with pytest.raises(ScalewiseError, match="--node-memory: cannot read 'lots'"):
        parse_size("lots", "--node-memory")
    with pytest.raises(ScalewiseError, match="--nodes: cannot read '4..2'"):
        parse_nodes("4..2")
