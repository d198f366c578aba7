"""P4-P6 on small hand-built runs."""

import numpy as np
import pytest

from scalewise.analysis.run.matrix import comm_matrix, neighbourhood
from scalewise.analysis.run.sizes import bin_label, size_distribution, size_range
from scalewise.formatting import human_bytes
from scalewise.analysis.run.volume import data_volume

RANKS = [(k, 10.0, 5.0) for k in range(4)]
# Ring of 4: every rank sends 10 messages of 50 B to each of its two neighbours.
RING = [(k, (k + d) % 4, 10, 500) for k in range(4) for d in (1, -1)]
FUNCTIONS = [row for k in range(4) for row in (
    (k, "MPI_Isend", "p2p", 20, 0.5, 1000),
    (k, "MPI_Waitall", "wait", 10, 4.0, 2000),
    (k, "MPI_Allreduce", "collective", 5, 0.5, 40),
    (k, "MPI_File_write", "io", 1, 0.0, 4096),
)]
# Isend: 20 x 50 B (bin 6 = [32, 64)); Waitall completes 30 of bin 6 and 10 of
# bin 17 = [64 KiB, 128 KiB); Allreduce 5 x 8 B (bin 4 = [8, 16)).
HIST = [row for k in range(4) for row in (
    (k, "MPI_Isend", 6, 20), (k, "MPI_Waitall", 6, 30), (k, "MPI_Waitall", 17, 10), (k, "MPI_Allreduce", 4, 5),
)]


@pytest.fixture
def ring(make_profile):
    return make_profile(RANKS, FUNCTIONS, HIST, RING)


def test_human_bytes_and_bin_labels():
    assert human_bytes(0) == "0 B" and human_bytes(1023) == "1023 B"
    assert human_bytes(65536) == "64 KiB" and human_bytes(3 * 2**20) == "3 MiB"
    assert human_bytes(1000 * 1024) == "1000 KiB"
    assert bin_label(0) == "0 B" and bin_label(1) == "1 B" and bin_label(17) == "64 KiB-128 KiB"


def test_size_distribution_sums_ranks_and_flags_wait_credited(ring):
    d = size_distribution(ring)
    w = d.counts[d.counts["function"] == "MPI_Waitall"].set_index("bin")
    assert w["count"].to_dict() == {6: 120, 17: 40}
    assert w["credited"].all()
    assert w.loc[6, "pct_of_function"] == pytest.approx(75.0)
    assert not d.counts.loc[d.counts["function"] == "MPI_Isend", "credited"].any()
    assert d.bins == [4, 6, 17]
    assert d.functions == ["MPI_Waitall", "MPI_Isend", "MPI_Allreduce"]
    s = d.by_function.set_index("function")
    assert s.loc["MPI_Waitall", "messages"] == 160 and s.loc["MPI_Waitall", "mode_bin"] == 6
    assert (s.loc["MPI_Waitall", "smallest_lo"], s.loc["MPI_Waitall", "largest_hi"]) == (32, 131072)


def test_size_range_covers_the_busiest_bins(ring):
    d = size_distribution(ring)
    assert size_range(d, "MPI_Waitall", 0.75) == (32, 32)
    assert size_range(d, "MPI_Waitall", 0.9) == (32, 65536)  # the 64 KiB messages, not their bin's upper edge
    assert size_range(d, "MPI_Bcast") is None


def test_exact_matrix(ring):
    m = comm_matrix(ring)
    assert m.block == 1 and m.ncells == 4 and not m.aggregated
    assert m.bytes[0, 1] == 500 and m.bytes[0, 3] == 500 and m.bytes[0, 2] == 0
    assert m.messages.sum() == 80 and m.total_bytes == 4000 and m.pairs == 8


def test_block_matrix_beyond_max_cells(make_profile):
    n = 600  # 600 ranks in cells of ceil(600 / 256) = 3 ranks: 200 x 200
    ring = [(k, (k + 1) % n, 1, 8) for k in range(n)]
    m = comm_matrix(make_profile([(k, 1.0, 0.5) for k in range(n)], p2p=ring))
    assert (m.block, m.ncells) == (3, 200) and m.aggregated
    assert m.bytes.sum() == 8 * n
    assert m.bytes[0, 0] == 16  # 0->1, 1->2 stay in block 0; 2->3 crosses into block 1
    assert m.bytes[0, 1] == 8 and m.bytes[199, 0] == 8  # the wrap 599 -> 0
    assert m.cell_ranks(199) == (597, 599)


def test_neighbourhood_of_a_ring(ring):
    nb = neighbourhood(ring)
    assert nb.peers_per_rank["peers"].tolist() == [2, 2, 2, 2]
    assert nb.peers.percentiles[50] == 2
    within = nb.within.set_index("k")["bytes_share"]
    # Every pair is a ring neighbour: 0 <-> 3 wraps around to offset -1/+1, like the other six.
    assert list(within.index) == [1, 2]  # at 4 ranks no partner is more than 2 away
    assert within.to_dict() == pytest.approx({1: 1.0, 2: 1.0})
    assert nb.top_offsets["offset"].tolist() == [-1, 1]
    assert nb.top_offsets["bytes"].tolist() == [2000, 2000]
    assert nb.self_bytes_share == 0.0


def test_receive_only_partner_counts_as_peer(make_profile):
    nb = neighbourhood(make_profile([(k, 1.0, 0.5) for k in range(3)], p2p=[(0, 2, 1, 8), (1, 1, 1, 8)]))
    assert nb.peers_per_rank.set_index("rank")["peers"].to_dict() == {0: 1, 1: 0, 2: 1}
    assert nb.peers_per_rank.set_index("rank")["sends_to"].to_dict() == {0: 1, 1: 0, 2: 0}
    assert nb.self_bytes_share == 0.5


def test_data_volume_counts_each_message_once(ring):
    v = data_volume(ring)
    r = v.per_rank.set_index("rank")
    assert r["p2p_sent"].tolist() == [1000] * 4 and r["p2p_recv"].tolist() == [1000] * 4
    assert r["collective"].tolist() == [40] * 4 and r["io"].tolist() == [4096] * 4
    assert r["total"].tolist() == [1040] * 4  # Waitall's 2000 B repeat the Isends; I/O is kept apart
    assert v.total == 4160 and v.p2p_total == 4000 and v.io_total == 16384
    assert v.per_rank_total.max_over_mean == 1.0


def test_empty_p2p(make_profile):
    p = make_profile([(0, 1.0, 0.0)])
    m, nb, v = comm_matrix(p), neighbourhood(p), data_volume(p)
    assert m.ncells == 1 and m.total_bytes == 0 and np.all(m.bytes == 0)
    assert nb.empty and nb.peers_per_rank["peers"].tolist() == [0]
    assert v.total == 0


def test_size_range_quotes_mean_sizes_only_where_the_bytes_pin_them(make_profile):
    # Rank 0 sends 3 x 100,000 B (bin 17 alone): the size is known.  Rank 1 mixes 8 B and 100,000 B,
    # so its bins say only "8-15 B" and "64-128 KiB".  MPI_Sendrecv counts both directions in its bytes:
    # its mean (2 x 40 B) leaves the bin and is not taken for a size.
    p = make_profile([(0, 1.0, 0.5), (1, 1.0, 0.5)],
                     [(0, "MPI_Isend", "p2p", 3, 0.1, 300_000), (1, "MPI_Isend", "p2p", 2, 0.1, 100_008),
                      (0, "MPI_Sendrecv", "p2p", 4, 0.1, 320)],
                     [(0, "MPI_Isend", 17, 3), (1, "MPI_Isend", 4, 1), (1, "MPI_Isend", 17, 1),
                      (0, "MPI_Sendrecv", 6, 4)])
    d = size_distribution(p)
    assert size_range(d, "MPI_Isend", 1.0) == (8, 100_000)
    assert size_range(d, "MPI_Sendrecv") == (32, 32)  # the bin's lower edge, never 80 B
