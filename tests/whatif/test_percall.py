"""A collective's measured per-call cost in the replay: what calibrate measured beyond the replay of
the collective's point-to-point decomposition at the smallest size is charged to each such call,
inside the call."""

from __future__ import annotations

import pytest

from scalewise import whatif
from scalewise.whatif.network import MeasuredCollective
from scalewise.whatif.trace import Call as C


def _net(library: str = "openmpi"):
    base = whatif.presets()["gige"]
    measured = [MeasuredCollective(name="MPI_Allreduce", bytes=8, ranks=2, measured_us=50.0, predicted_us=20.0),
                MeasuredCollective(name="MPI_Allreduce", bytes=1008, ranks=2, measured_us=130.0, predicted_us=30.0),
                MeasuredCollective(name="MPI_Bcast", bytes=8, ranks=2, measured_us=5.0, predicted_us=20.0)]
    return base.model_copy(update={"name": "lab", "library": library, "collectives": measured}), base


def _one(name: str, nbytes: int, ranks: int = 2):
    return whatif.from_calls([[C(name, bytes=nbytes, root=0)]] * ranks)


# The cost per call is the one at the smallest size timed (8 B: 50 - 20 us), at every size: the 1008 B
# row's larger miss is a transport effect, not work per call.
@pytest.mark.parametrize("nbytes, extra_us", [(8, 30.0), (508, 30.0), (1008, 30.0), (1 << 20, 30.0)])
def test_a_call_gets_the_measured_cost_beyond_its_decomposition(nbytes, extra_us):
    net, base = _net()
    [p] = whatif.replay(_one("MPI_Allreduce", nbytes), net)
    [q] = whatif.replay(_one("MPI_Allreduce", nbytes), base)
    assert (p.wall_time - q.wall_time) * 1e6 == pytest.approx(extra_us, rel=1e-5)
    # inside the call: MPI time, not computation
    assert p.ranks["compute"].sum() == 0 and p.functions["MPI_Allreduce"].sum() == pytest.approx(2 * p.wall_time)


def test_no_cost_where_the_replay_is_slower_other_rank_counts_or_another_library():
    net, base = _net()
    for trace, library in ((_one("MPI_Bcast", 8), "openmpi"), (_one("MPI_Allreduce", 8, ranks=3), "openmpi"),
                           (_one("MPI_Allreduce", 8), "mpich")):
        [p] = whatif.replay(trace, net, library=library)
        [q] = whatif.replay(trace, base, library=library)
        assert p.wall_time == q.wall_time
