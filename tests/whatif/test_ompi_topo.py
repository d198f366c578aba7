"""Open MPI's trees (collectives/ompi_topo.py) against trees worked out by hand from
ompi/mca/coll/base/coll_base_topo.c (v5.0.10), and the tuned algorithms that use them
(collectives/openmpi.py).  Each expected tree is written as {rank: children} with the parent
implied; the source's own comment examples are among them."""

from __future__ import annotations

import pytest

from scalewise.whatif.collectives import ompi_topo as T
from scalewise.whatif.collectives import openmpi
from scalewise.whatif.collectives.algorithms import RECV, SEND


def as_children(tree):
    return {r: kids for r, (_, kids) in enumerate(tree) if kids}


def consistent(tree):
    """Every child names its parent, one root, every other rank has exactly one parent."""
    for r, (_, kids) in enumerate(tree):
        for k in kids:
            assert tree[k][0] == r
    assert sum(prev is None for prev, _ in tree) == 1
    assert sorted(k for _, kids in tree for k in kids) == sorted(r for r, (p, _) in enumerate(tree) if p is not None)


@pytest.mark.parametrize("size, root, expected", [
    # the source's comment, size 8 root 0: 0 -> 1 2 4, 1 -> 3 5, 2 -> 6, 3 -> 7 (a child clears its highest bit)
    (8, 0, {0: [1, 2, 4], 1: [3, 5], 2: [6], 3: [7]}),
    # size 5 root 2: vranks 0..4 are ranks 2 3 4 0 1; vrank 1 -> 3 (rank 0), vrank 2 -> nothing (4 + 2 = 6 > 4)
    (5, 2, {2: [3, 4, 1], 3: [0]}),
    # size 6 root 5: vranks 0..5 are ranks 5 0 1 2 3 4; vrank 1 -> 3, 5 (ranks 2, 4); vrank 2 -> 6? no
    (6, 5, {5: [0, 1, 3], 0: [2, 4]}),
    # size 7 root 3: ranks 3 4 5 6 0 1 2; vrank 1 -> 3, 5 (ranks 6, 1); vrank 2 -> 6 (rank 2)
    (7, 3, {3: [4, 5, 0], 4: [6, 1], 5: [2]}),
])
def test_bmtree_children_clear_the_highest_bit(size, root, expected):
    tree = T.bmtree(size, root)
    consistent(tree)
    assert as_children(tree) == expected


@pytest.mark.parametrize("size, root, expected", [
    # the source's comment, size 8: 0 -> 1 2 4, 2 -> 3, 4 -> 5 6, 6 -> 7 (a child clears its lowest bit)
    (8, 0, {0: [1, 2, 4], 2: [3], 4: [5, 6], 6: [7]}),
    # size 7 root 3: ranks 3 4 5 6 0 1 2 by vrank; vrank 2 -> 3, vrank 4 -> 5, 6
    (7, 3, {3: [4, 5, 0], 5: [6], 0: [1, 2]}),
    (6, 5, {5: [0, 1, 3], 1: [2], 3: [4]}),
])
def test_in_order_bmtree_children_clear_the_lowest_bit(size, root, expected):
    tree = T.in_order_bmtree(size, root)
    consistent(tree)
    assert as_children(tree) == expected


@pytest.mark.parametrize("fanout, size, root, expected", [
    # the source's comment, fanout 2 size 7: 0 -> 1 2, 1 -> 3 5, 2 -> 4 6 (children delta = 2^level apart)
    (2, 7, 0, {0: [1, 2], 1: [3, 5], 2: [4, 6]}),
    # fanout 2 size 6 root 5: shifted ranks 0..5 are 5 0 1 2 3 4; 1 -> 3, 5 (ranks 2, 4); 2 -> 4 (rank 3)
    (2, 6, 5, {5: [0, 1], 0: [2, 4], 1: [3]}),
    # fanout 2 size 5 root 2: shifted 0..4 are 2 3 4 0 1; 1 -> 3 (rank 0), 2 -> 4 (rank 1)
    (2, 5, 2, {2: [3, 4], 3: [0], 4: [1]}),
    # fanout 4 size 7 root 3: level 1 is shifted 1..4 (delta 4): 1 -> 5, 2 -> 6
    (4, 7, 3, {3: [4, 5, 6, 0], 4: [1], 5: [2]}),
    # fanout 3 size 10: level 1 = 1 2 3 (delta 3): 1 -> 4 7, 2 -> 5 8, 3 -> 6 9
    (3, 10, 0, {0: [1, 2, 3], 1: [4, 7], 2: [5, 8], 3: [6, 9]}),
])
def test_tree_fills_levels_with_children_delta_apart(fanout, size, root, expected):
    tree = T.tree(fanout, size, root)
    consistent(tree)
    assert as_children(tree) == expected


@pytest.mark.parametrize("size, expected", [
    # the source's comment: size 2, 3, 4 and 9
    (2, {1: [0]}), (3, {2: [1, 0]}), (4, {3: [2, 1], 1: [0]}),
    (9, {8: [7, 3], 7: [6, 5], 5: [4], 3: [2, 1], 1: [0]}),
    # size 6: root 5, right subtree 3 ranks (0 1 2, rooted at 2), left 2 ranks (3 4, rooted at 4)
    (6, {5: [4, 2], 4: [3], 2: [1, 0]}),
])
def test_in_order_bintree_is_rooted_at_the_last_rank(size, expected):
    tree = T.in_order_bintree(size)
    consistent(tree)
    assert tree[size - 1][0] is None
    assert as_children(tree) == expected


@pytest.mark.parametrize("fanout, size, root, expected", [
    # fanout 4 size 7: 6 ranks in 4 chains, maxchainlen 2, mark 2: chains 1-2, 3-4, 5, 6
    (4, 7, 0, {0: [1, 3, 5, 6], 1: [2], 3: [4]}),
    # the same shifted by root 3: shifted ranks 1..6 are 4 5 6 0 1 2
    (4, 7, 3, {3: [4, 6, 1, 2], 4: [5], 6: [0]}),
    # fanout 4 size 5: 4 chains of one
    (4, 5, 2, {2: [3, 4, 0, 1]}),
    # fanout 4 size 6: 5 ranks, maxchainlen 2, mark 1: chains 1-2, 3, 4, 5
    (4, 6, 5, {5: [0, 2, 3, 4], 0: [1]}),
    # fanout 3 size 10: 9 ranks divide evenly, chains 1-2-3, 4-5-6, 7-8-9
    (3, 10, 0, {0: [1, 4, 7], 1: [2], 2: [3], 4: [5], 5: [6], 7: [8], 8: [9]}),
    # fanout 1 (and 0, which build_chain forces to 1): a pipeline from the root
    (1, 5, 2, {2: [3], 3: [4], 4: [0], 0: [1]}),
    (0, 5, 2, {2: [3], 3: [4], 4: [0], 0: [1]}),
])
def test_chain_splits_the_ranks_into_fanout_chains_longest_first(fanout, size, root, expected):
    tree = T.chain(fanout, size, root)
    consistent(tree)
    assert as_children(tree) == expected


@pytest.mark.parametrize("radix, expected", [
    # the source's comment, size 10
    (2, {0: [8, 4, 2, 1], 8: [9], 4: [6, 5], 6: [7], 2: [3]}),
    (3, {0: [9, 3, 6, 1, 2], 3: [4, 5], 6: [7, 8]}),
    (4, {0: [4, 8, 1, 2, 3], 4: [5, 6, 7], 8: [9]}),
])
def test_kmtree_matches_the_sources_example(radix, expected):
    tree = T.kmtree(10, 0, radix)
    consistent(tree)
    assert as_children(tree) == expected


def test_every_builder_makes_one_tree_for_every_size_and_root():
    for size in range(1, 34):
        consistent(T.in_order_bintree(size))
        for root in range(size):
            for tree in (T.bmtree(size, root), T.in_order_bmtree(size, root), T.kmtree(size, root, 4),
                         *(T.tree(f, size, root) for f in (1, 2, 3, 4)), *(T.chain(f, size, root) for f in (0, 2, 4))):
                consistent(tree)
                assert tree[root][0] is None


def sends(schedule):
    out = {}
    for r, phases in enumerate(schedule):
        for d, q, b in (m for ph in phases for m in ph):
            if d == SEND:
                out[(r, q)] = out.get((r, q), 0) + b
    return out


def test_tuned_bcast_binomial_follows_bmtree_not_mpichs_tree():
    # 5 ranks, root 2: bmtree's vrank 1 (rank 3) feeds vrank 3 (rank 0); MPICH's tree would feed
    # vrank 3 from vrank 2 (rank 4)
    _, s = openmpi.forced("MPI_Bcast", 6, 5, 800, 2)
    assert sends(s) == {(2, 3): 800, (2, 4): 800, (2, 1): 800, (3, 0): 800}


def test_fixed_rules_chain_has_fan_out_one_and_a_forced_chain_four():
    fixed = openmpi._bcast(2, 7, 800, 3)[1]
    assert sends(fixed) == {(3, 4): 800, (4, 5): 800, (5, 6): 800, (6, 0): 800, (0, 1): 800, (1, 2): 800}
    forced = openmpi.forced("MPI_Bcast", 2, 7, 800, 3)[1]
    assert sends(forced) == {(3, 4): 800, (3, 6): 800, (3, 1): 800, (3, 2): 800, (4, 5): 800, (6, 0): 800}


def test_split_binary_tree_sends_halves_down_the_subtrees_then_swaps_them():
    # 5 ranks root 0, 101 doubles: halves of 51 and 50; tree 0 -> 1 2, 1 -> 3, 2 -> 4; odd ranks
    # (left, first half) swap with the rank above
    _, s = openmpi.forced("MPI_Bcast", 4, 5, 808, 0)
    h0, h1 = 51 * 8, 50 * 8
    assert sends(s) == {(0, 1): h0, (0, 2): h1, (1, 3): h0, (2, 4): h1,
                        (1, 2): h0, (2, 1): h1, (3, 4): h0, (4, 3): h1}
    # 6 ranks root 0: rank 5 (a left-subtree rank with no pair) takes the second half from the root
    _, s = openmpi.forced("MPI_Bcast", 4, 6, 808, 0)
    assert sends(s)[(0, 5)] == h1 and (5, 0) not in sends(s)


def test_in_order_binary_reduce_ends_at_the_last_rank_which_sends_to_the_root():
    _, s = openmpi.forced("MPI_Reduce", 6, 6, 80, 1)
    assert sends(s) == {(4, 5): 80, (2, 5): 80, (3, 4): 80, (1, 2): 80, (0, 2): 80, (5, 1): 80}
    assert s[1][-1] == [(RECV, 5, 80)]


def test_reduce_binomial_uses_the_in_order_bmtree_and_redscat_falls_back_to_linear():
    _, s = openmpi.forced("MPI_Reduce", 5, 7, 80, 3)
    assert sends(s) == {(4, 3): 80, (5, 3): 80, (0, 3): 80, (6, 5): 80, (1, 0): 80, (2, 0): 80}
    name, s = openmpi.forced("MPI_Reduce", 7, 7, 24, 3)  # 3 doubles < 4 (the power of two below 7)
    assert name == "linear" and sends(s) == {(q, 3): 24 for q in range(7) if q != 3}
    assert [ph[0][1] for ph in s[3]] == [6, 5, 4, 2, 1, 0]  # the root takes them from the last rank down


def test_tree_barrier_goes_up_and_down_one_partner_at_a_time():
    _, s = openmpi.forced("MPI_Barrier", 6, 6, 0)
    assert s[0] == [[(RECV, 1, 0)], [(RECV, 2, 0)], [(RECV, 4, 0)], [(SEND, 4, 0)], [(SEND, 2, 0)], [(SEND, 1, 0)]]
    assert s[5] == [[(SEND, 4, 0)], [(RECV, 4, 0)]]
