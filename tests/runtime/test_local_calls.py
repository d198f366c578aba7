"""Local calls (docs/runtime.md, "Local calls"): recorded in the class
`local` with their calls and no bytes, on both MPIs; the six hot ones are
passed on unrecorded unless SCALEWISE_HOT_LOCAL=1.
tests/runtime/programs/local_calls.c on two ranks."""

from __future__ import annotations

import pytest

import scalewise
from support.mpijob import FLAVOURS

REPS = 7
PER_REP = [  # called REPS times on every rank
    "MPI_Cart_coords", "MPI_Cart_get", "MPI_Cart_rank", "MPI_Cart_shift", "MPI_Cart_map", "MPI_Cartdim_get",
    "MPI_Topo_test", "MPI_Graph_get", "MPI_Graph_map", "MPI_Graph_neighbors_count", "MPI_Graph_neighbors",
    "MPI_Graphdims_get", "MPI_Comm_remote_size", "MPI_Comm_remote_group", "MPI_Comm_test_inter",
    "MPI_Group_compare", "MPI_Group_translate_ranks", "MPI_Error_class", "MPI_Pack", "MPI_Unpack",
    "MPI_Type_get_envelope", "MPI_Type_get_contents", "MPI_Comm_set_attr", "MPI_Comm_get_attr",
    "MPI_Comm_delete_attr", "MPI_Win_set_attr", "MPI_Win_get_attr", "MPI_Win_delete_attr", "MPI_Type_set_attr",
    "MPI_Type_get_attr", "MPI_Type_delete_attr", "MPI_Buffer_attach", "MPI_Buffer_detach", "MPI_File_get_amode",
    "MPI_File_get_byte_offset", "MPI_File_get_group", "MPI_File_get_info", "MPI_File_get_position",
    "MPI_File_get_size", "MPI_File_get_view", "MPI_Win_attach", "MPI_Win_detach", "MPI_Win_get_group",
    "MPI_Win_get_info", "MPI_Info_free",
]
ONCE = ["MPI_Dims_create", "MPI_Type_commit", "MPI_Comm_create_keyval", "MPI_Win_create_keyval",
        "MPI_Type_create_keyval", "MPI_Comm_free_keyval", "MPI_Win_free_keyval", "MPI_Type_free_keyval",
        "MPI_Type_vector"]
HOT = ["MPI_Comm_rank", "MPI_Comm_size", "MPI_Wtime", "MPI_Wtick", "MPI_Type_size", "MPI_Get_count"]
CASES = [pytest.param((f, hot), id=f"{f}-{'hot' if hot else 'default'}") for f in FLAVOURS for hot in (0, 1)]


def expected_calls(hot: int) -> dict[str, int]:
    calls = {fn: REPS for fn in PER_REP} | {fn: 1 for fn in ONCE}
    calls["MPI_Info_free"] = 2 * REPS  # after File_get_info and Win_get_info
    calls["MPI_Group_free"] = 3 * REPS + 2  # remote, file and window groups; two at the end
    if hot:  # the program's own first Comm_rank and Comm_size, then one of each per repetition
        calls |= {fn: REPS for fn in HOT} | {"MPI_Comm_rank": REPS + 1, "MPI_Comm_size": REPS + 1}
    return calls


@pytest.fixture(params=CASES)
def run(request, program, mpi_job):
    flavour, hot = request.param
    job = mpi_job(f"local-calls-{flavour}-{hot}", flavour, 2, [program("local_calls.c", flavour), REPS,
                                                                   "{workdir}/scratch"],
                  extra_env={"SCALEWISE_HOT_LOCAL": str(hot)})
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile), hot


def test_local_calls_are_counted_apart(run):
    profile, hot = run
    want = expected_calls(hot)
    f = profile.functions
    for rank in (0, 1):
        mine = f[f["rank"] == rank].set_index("function")
        got = {fn: int(mine.loc[fn, "calls"]) if fn in mine.index else 0 for fn in [*want, *HOT]}
        assert got == {fn: want.get(fn, 0) for fn in got}, f"rank {rank}"
        recorded = mine.loc[[fn for fn in want if fn != "MPI_Group_free"]]
        assert set(recorded["fclass"]) == {"local"}
        assert int(recorded["bytes"].sum()) == 0
    assert not profile.hist[profile.hist["function"].isin(list(want))].shape[0]
