"""The run matrix: full product, zip, exclude, repetitions, and stable run IDs."""

from __future__ import annotations

from scalewise.campaign.expand import expand
from scalewise.campaign.study import load_study

STUDY = """name: sweep
applications:
  app:
    command: [./app, "{size}"]
axes:
  ranks: [1, 2, 4]
  mpi: [openmpi, mpich]
  transport: [shm, tcp]
  custom: {size: [tiny]}
repetitions: 2
"""


def _runs(write_study, text):
    return expand(load_study(write_study(text)))


def test_full_matrix_with_repetitions_outermost(write_study):
    runs = _runs(write_study, STUDY)
    assert len(runs) == 3 * 2 * 2 * 2
    assert [r.repetition for r in runs] == [0] * 12 + [1] * 12
    assert len({r.run_id for r in runs}) == 24
    assert [r.position for r in runs] == list(range(24))


def test_shuffled_order_runs_each_round_in_its_own_drawn_order_with_the_same_ids(write_study):
    plan = _runs(write_study, STUDY)
    shuffled = _runs(write_study, STUDY + "order: shuffled\nseed: 7\n")
    key = [(r.mpi, r.transport, r.ranks) for r in plan]
    mixed = [(r.mpi, r.transport, r.ranks) for r in shuffled]
    assert [r.repetition for r in shuffled] == [0] * 12 + [1] * 12, "still one full round per repetition"
    assert sorted(mixed[:12]) == sorted(key[:12]) and sorted(mixed[12:]) == sorted(key[12:])
    assert mixed[:12] != key[:12] and mixed[:12] != mixed[12:], "each round in its own order"
    assert {r.run_id for r in shuffled} == {r.run_id for r in plan}, "a run's ID is what it is, not when"
    assert [r.run_id for r in _runs(write_study, STUDY + "order: shuffled\nseed: 7\n")] == \
        [r.run_id for r in shuffled], "the same plan every time the study is read"


def test_ids_stable_when_axis_values_are_added(write_study):
    before = {(r.mpi, r.transport, r.ranks, r.repetition): r.run_id for r in _runs(write_study, STUDY)}
    grown = STUDY.replace("ranks: [1, 2, 4]", "ranks: [1, 2, 4, 8]").replace("repetitions: 2", "repetitions: 3")
    grown = grown.replace("  custom: {size: [tiny]}\n", "  custom: {size: [tiny]}\n  threads: [1]\n  nodes: [1]\n")
    after = {(r.mpi, r.transport, r.ranks, r.repetition): r.run_id for r in _runs(write_study, grown)}
    assert len(after) == 4 * 2 * 2 * 3
    assert all(after[key] == run_id for key, run_id in before.items())


def test_ids_change_when_what_a_setting_means_changes(write_study):
    text = STUDY + "parameter_sets:\n  tuned:\n    mca: {coll_tuned_allreduce_algorithm: 4}\n"
    text = text.replace("  custom: {size: [tiny]}\n", "  custom: {size: [tiny]}\n  params: [tuned]\n")
    first = {r.run_id for r in _runs(write_study, text) if r.mpi == "openmpi"}
    changed = {r.run_id for r in _runs(write_study, text.replace("algorithm: 4", "algorithm: 5")) if r.mpi == "openmpi"}
    assert first.isdisjoint(changed)


def test_zip_and_exclude(write_study):
    text = STUDY.replace("repetitions: 2", "repetitions: 1").replace("ranks: [1, 2, 4]", "ranks: [2, 4, 8]")
    text = text.replace("  custom: {size: [tiny]}\n", "  custom: {size: [tiny]}\n  nodes: [1, 2, 4]\n")
    text += "zip:\n  - [ranks, nodes]\nexclude:\n  - {mpi: mpich, transport: tcp}\n  - {ranks: 8, transport: [shm]}\n"
    runs = _runs(write_study, text)
    pairs = {(r.ranks, r.nodes) for r in runs}
    assert pairs == {(2, 1), (4, 2), (8, 4)}
    assert not [r for r in runs if r.mpi == "mpich" and r.transport == "tcp"]
    assert not [r for r in runs if r.ranks == 8 and r.transport == "shm"]
    assert len(runs) == 3 * 3 - 1 - 1  # 3 (ranks,nodes) x 3 (mpi,transport) kept combos, minus two 8-rank shm


def test_ranks_per_node_and_settings(write_study):
    text = STUDY.replace("ranks: [1, 2, 4]", "ranks_per_node: [2]\n  nodes: [1, 2]").replace("repetitions: 2", "")
    runs = _runs(write_study, text)
    assert sorted({(r.nodes, r.ranks) for r in runs}) == [(1, 2), (2, 4)]
    tcp_mpich = next(r for r in runs if r.mpi == "mpich" and r.transport == "tcp")
    assert ("cvar", "MPIR_CVAR_NOLOCAL", "1") in tcp_mpich.applied
    assert ("env", "UCX_TLS", "tcp,self") in tcp_mpich.applied
    shm_ompi = next(r for r in runs if r.mpi == "openmpi" and r.transport == "shm")
    assert ("mca", "btl", "self,vader") in shm_ompi.applied
    assert shm_ompi.settings()["size"] == "tiny"
