"""runtime/gen/genwrap.py: the same spec gives the same bytes, and a malformed
spec entry is rejected with one line naming the entry and the field."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support.mpijob import REPO

GENWRAP = REPO / "runtime" / "gen" / "genwrap.py"
SPEC = REPO / "runtime" / "spec" / "mpi.toml"
SEND_ARGS = "const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm"


def genwrap(spec, outdir, seed="0"):
    # Different hash seeds would reorder any set or dict built from strings.
    return subprocess.run([sys.executable, str(GENWRAP), str(spec), str(outdir), "--mpi-version", "3.1"],
                          capture_output=True, text=True, timeout=60, env={"PYTHONHASHSEED": seed})


def test_generation_is_deterministic(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    assert genwrap(SPEC, first, seed="1").returncode == 0
    assert genwrap(SPEC, second, seed="2").returncode == 0
    names = sorted(p.name for p in first.iterdir())
    assert names == ["functions.h", "wrappers.c"] == sorted(p.name for p in second.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    # Every function of the spec got its wrapper, under both names.
    wrappers = (first / "wrappers.c").read_text()
    for fn in ("MPI_Send", "MPI_Waitall", "MPI_Neighbor_alltoall", "MPI_File_read_at"):
        assert f'int {fn}(' in wrappers and f'int P{fn}(' in wrappers


BAD_ENTRIES = {
    "unknown key": (
        f'[MPI_Send]\nargs = "{SEND_ARGS}"\nclass = "p2p"\nbytez = "sw_bytes(count, datatype)"\n',
        "MPI_Send", "bytez"),
    "argument not a parameter": (
        f'[MPI_Send]\nargs = "{SEND_ARGS}"\nclass = "p2p"\nbytes = "sw_bytes(count, datatype)"\nsend_to = "dst, comm"\n',
        "MPI_Send.send_to", "'dst'"),
    "status not a parameter": (
        '[MPI_Wait]\nargs = "MPI_Request *request, MPI_Status *status"\nclass = "wait"\ncomplete = "one: request, stat"\n',
        "MPI_Wait.complete", "'stat'"),
    "unknown class": (
        f'[MPI_Send]\nargs = "{SEND_ARGS}"\nclass = "pointtopoint"\n',
        "MPI_Send.class", "'pointtopoint'"),
}


@pytest.mark.parametrize("case", BAD_ENTRIES)
def test_malformed_entry_is_rejected(tmp_path, case):
    text, entry, field = BAD_ENTRIES[case]
    # A valid entry first, so the error must point at the right one.
    good = '[MPI_Barrier]\nargs = "MPI_Comm comm"\nclass = "collective"\nbytes = "0"\n\n'
    spec = tmp_path / "spec.toml"
    spec.write_text(good + text)
    res = genwrap(spec, tmp_path / "out")
    assert res.returncode != 0
    message = res.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert entry in message and field in message
    assert "MPI_Barrier" not in message
    assert not (tmp_path / "out").exists()  # nothing half-generated


def test_coverage_list_is_the_spec(tmp_path):
    """docs/coverage.md is what runtime/gen/gencoverage.py makes of the spec."""
    out = tmp_path / "coverage.md"
    res = subprocess.run([sys.executable, str(REPO / "runtime" / "gen" / "gencoverage.py"), str(SPEC), str(out)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert out.read_text() == (REPO / "docs" / "coverage.md").read_text(), \
        "docs/coverage.md is stale: run runtime/gen/gencoverage.py runtime/spec/mpi.toml docs/coverage.md"
