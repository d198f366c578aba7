"""The connection-memory fit and projection on readings planted in code with known costs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalewise.errors import ScalewiseError
from scalewise.memory.analysis import MachineTarget, analyse_memory, parse_nodes, parse_size, project

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


TARGET = MachineTarget(node_memory=256 * GIB, ranks_per_node=128, nodes=parse_nodes("1..1024"), app_peers=6)


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
    a = analyse_memory(readings, MachineTarget(GIB, 4, (1, 2), app_peers=3), kernel_per_socket=None)
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


def test_projection_has_an_interval_from_the_fits_covariance():
    """Two peer counts (1 and 3, as eager MPICH at 2 and 4 ranks) and a noisy slope: a wide interval, said."""
    rows = []
    rng = np.random.default_rng(7)
    for size in (2, 4):
        for rep in range(2):
            for rank in range(size):
                rows.append({"rank": rank, "size": size, "peers": size - 1, "mode": "all", "rep": rep, "mpi": "mpich",
                             "setup": "eager", "eager": True, "rss_start": 0.0,
                             "rss_touched": 8 * MIB + 57 * KIB * (size - 1) + rng.normal(0, 40 * KIB),
                             "sockets_init": 3, "sockets_touched": 3})
    target = MachineTarget(256 * GIB, 128, parse_nodes("1..1024"), 6, ("256GiB per node", "128 ranks per node"))
    a = analyse_memory(pd.DataFrame(rows), target, kernel_per_socket=None)
    (fit,) = a.fits
    proj = a.projection.set_index("nodes")
    # The interval is the fit's: fixed and per-peer errors combined through their covariance.
    x = np.array([1.0, 128 * 8 - 1])
    se = float(np.sqrt(x @ fit.cov @ x))
    assert proj.loc[8, "rank_bytes_high"] - proj.loc[8, "rank_bytes"] == pytest.approx(2 * se)
    assert proj.loc[8, "rank_bytes"] == pytest.approx(fit.fixed + fit.per_peer * (128 * 8 - 1))
    assert (proj["rank_bytes_low"] <= proj["rank_bytes"]).all() and (proj["rank_bytes"] < proj["rank_bytes_high"]).all()
    f = a.findings[0]
    assert fit.measurable, "this seed's slope is 60.5 KiB ± 16.9 KiB"
    low, high = f.numbers["last_nodes_that_fit_high_cost"], f.numbers["last_nodes_that_fit_low_cost"]
    assert (low, f.numbers["last_nodes_that_fit"], high) == (128, 256, 256)
    assert "beyond 256 nodes (the last count that fits is 128 to 256 within the interval)" in f.text
    assert "± 2 standard errors" in f.text
    assert f.text.endswith("(assumed, not given: 256GiB per node, 128 ranks per node).")
    assert f.numbers["assumed"] == ["256GiB per node", "128 ranks per node"]


def test_a_negative_slope_is_said_and_never_projected():
    from scalewise.memory.html import fits_rows
    a = analyse_memory(plant("mpich", "eager", True, -200 * KIB, 10 * KIB), TARGET, kernel_per_socket=None)
    (fit,) = a.fits
    assert fit.negative and not fit.measurable
    assert a.projection.empty
    assert a.findings[0].kind == "note" and "memory fell as peers were added" in a.findings[0].text
    assert "no projection is made from it" in a.findings[0].text
    row = fits_rows(a)[0]
    assert row["per_peer"].startswith("negative (-") and row["per_peer"].endswith("not a cost")


def test_a_slope_within_noise_is_shown_as_below_noise():
    from scalewise.memory.html import fits_rows
    a = analyse_memory(plant("mpich", "eager", True, 0.0, 30 * KIB), TARGET, kernel_per_socket=None)
    assert fits_rows(a)[0]["per_peer"].startswith("below noise (±")
