"""Findings carry their numbers, and the notes for degenerate runs appear."""

import json

import pytest

from scalewise.analysis.run.findings import analyse

RANKS = [(0, 10.0, 2.0), (1, 10.0, 4.0), (2, 10.0, 6.0), (3, 10.0, 8.0)]
FUNCTIONS = [row for k, w in [(0, 1.0), (1, 3.0), (2, 5.0), (3, 7.0)] for row in (
    (k, "MPI_Waitall", "wait", 10, w, 2000),
    (k, "MPI_Isend", "p2p", 20, 0.5, 1000),
    (k, "MPI_Allreduce", "collective", 5, 0.5, 40),
)]
HIST = [row for k in range(4) for row in (
    (k, "MPI_Isend", 6, 20), (k, "MPI_Waitall", 6, 30), (k, "MPI_Waitall", 17, 10), (k, "MPI_Allreduce", 4, 5),
)]
RING = [(k, (k + d) % 4, 10, 500) for k in range(4) for d in (1, -1)]


@pytest.fixture
def halo(make_profile):
    return make_profile(RANKS, FUNCTIONS, HIST, RING, path="/runs/halo.swlog")


def by_kind(a, kind):
    return [f for f in a.findings if f.kind == kind]


def test_bound_and_dominant_call(halo):
    a = analyse(halo)
    assert a.run == "halo.swlog" and a.notes == []
    (bound,) = by_kind(a, "bound")
    assert bound.text == "The run is communication-bound: MPI takes 50% of wall time, compute 50%."
    first = by_kind(a, "dominant")[0]
    assert first.text.startswith("MPI_Waitall takes 40% of wall time (80% of MPI time); "
                                 "the messages it completes are 32 B to 64 KiB, exchanged with 2 neighbours per rank.")
    assert first.numbers["pct_wall"] == pytest.approx(40) and first.numbers["peers_median"] == 2
    assert len(by_kind(a, "dominant")) == 1  # Isend and Allreduce are 10% of MPI time each
    assert all(f.run == "halo.swlog" for f in a.findings)


def test_calls_overlap_imbalance_sizes_locality_volume(halo):
    a = analyse(halo)
    assert by_kind(a, "calls")[0].text == "MPI_Isend and MPI_Waitall are 86% of 140 MPI calls."
    assert "waiting for them takes 80% of MPI time" in by_kind(a, "overlap")[0].text
    imb = by_kind(a, "imbalance")[0]
    assert "busiest rank (0) computes 1.60x the mean" in imb.text
    assert imb.numbers["compute_max_over_mean"] == pytest.approx(1.6)
    assert by_kind(a, "sizes")[0].numbers["pct_under_1KiB"] == 100.0
    loc = by_kind(a, "locality")[0]
    assert loc.numbers["k"] == 1 and loc.numbers["offsets"] == [-1, 1]
    assert loc.text.startswith("Point-to-point traffic: 100% of bytes stay within +-1 rank (of at most 2 at 4 ranks); "
                               "each rank talks to 2 peers")
    vol = by_kind(a, "volume")[0]
    assert vol.numbers["total_bytes"] == 4160 and "4.06 KiB in total" in vol.text


def test_compute_bound_and_balanced(make_profile):
    p = make_profile([(0, 10.0, 1.0), (1, 10.0, 1.0)], [(k, "MPI_Allreduce", "collective", 3, 1.0, 8) for k in (0, 1)])
    a = analyse(p)
    assert by_kind(a, "bound")[0].text.startswith("The run is compute-bound: MPI takes 10% of wall time")
    assert by_kind(a, "imbalance")[0].text == "Compute time is balanced across ranks: max/mean 1.00, CV 0.00."
    assert "Collectives are bound by latency" in by_kind(a, "dominant")[0].text


def test_zero_call_single_rank_and_partial_notes(make_profile):
    zero = analyse(make_profile([(0, 5.0, 0.0), (1, 5.0, 0.0)]))
    assert [n.numbers for n in zero.notes] == [{"mpi_calls": 0}]
    assert by_kind(zero, "bound")[0].numbers["mpi_pct"] == 0
    single = analyse(make_profile([(0, 5.0, 1.0)], [(0, "MPI_Barrier", "collective", 1, 1.0, 0)]))
    assert any("Single-rank run" in n.text for n in single.notes)
    self_only = analyse(make_profile([(0, 5.0, 1.0)], [(0, "MPI_Send", "p2p", 1, 1.0, 8)], p2p=[(0, 0, 1, 8)]))
    assert not by_kind(self_only, "locality")
    partial = analyse(make_profile([(0, 5.0, 1.0)], meta={"nranks": 4}, flags={"partial"}))
    assert partial.notes[0].text.startswith("Partial log: 1 of 4 ranks recorded")


def test_json_view_is_plain_json(halo, make_profile):
    for p in (halo, make_profile([(0, 0.0, 0.0)])):
        d = json.loads(json.dumps(analyse(p).to_json_dict(), allow_nan=False))
        assert set(d) >= {"breakdown", "functions", "sizes", "matrix", "neighbourhood", "volume", "findings", "notes"}
    d = analyse(halo).to_json_dict()
    assert d["breakdown"]["mpi_share"] == 0.5 and d["volume"]["total"] == 4160
    assert d["functions"][0]["function"] == "MPI_Waitall"


def _locality(make_profile, n, p2p):
    return by_kind(analyse(make_profile([(k, 1.0, 0.5) for k in range(n)], p2p=p2p)), "locality")[0]


def test_locality_says_something_at_small_rank_counts(make_profile):
    # A 4-rank ring: 0 <-> 3 wraps round to distance 1, so every byte is within +-1 of at most 2.
    ring = _locality(make_profile, 4, RING)
    assert ring.text.startswith("Point-to-point traffic: 100% of bytes stay within +-1 rank (of at most 2 at "
                                "4 ranks); each rank talks to 2 peers (median, max 2); busiest offsets -1, +1.")
    # Everyone to everyone at 4 ranks: half the bytes go 2 ranks away, which is as far as there is.
    a2a = _locality(make_profile, 4, [(s, d, 1, 100) for s in range(4) for d in range(4) if s != d])
    assert a2a.numbers["k"] == 2 and "partners up to 2 ranks apart, as far as 4 ranks allow" in a2a.text
    assert a2a.numbers["offsets"] == [-2, -1, 1]  # +2 and -2 are the same way round the ring: one offset
    pair = _locality(make_profile, 2, [(0, 1, 1, 8), (1, 0, 1, 8)])
    assert "at 2 ranks every rank neighbours every other, so locality cannot show; each rank talks to 1 peer " \
           "(median, max 1)" in pair.text
