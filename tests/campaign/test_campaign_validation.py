"""Malformed study files are rejected up front with file:line: key: reason."""

from __future__ import annotations

import pytest

from scalewise.campaign.expand import expand
from scalewise.campaign.study import load_study
from scalewise.errors import ScalewiseError

BASE = """name: demo
applications:
  app:
    command: [./app, --size, "{size}"]
axes:
  ranks: [1, 2]
  custom: {size: [tiny]}
"""

CASES = {
    "report_base_axis": (BASE + "report:\n  base: {cores: 2}\n",
                         "study.yaml:9: report.base.cores.[key]: input should be 'ranks' or 'nodes', got 'cores'"),
    "report_base_zero": (BASE + "report:\n  base: {ranks: 0}\n",
                         "study.yaml:9: report.base: ranks must be a positive integer, got 0"),
    "syntax": ("name: demo\napplications: [unclosed\n",
               "study.yaml:3: (syntax): invalid YAML: expected ',' or ']', but got '<stream end>'"),
    "not_a_mapping": ("- a\n- b\n", "study.yaml:1: (top level): a study file must be a mapping of keys, got list"),
    "no_applications": ("name: demo\naxes:\n  ranks: [1]\n", "study.yaml:1: applications: required key is missing"),
    "misspelt_key": (BASE + "repetitons: 3\n", "study.yaml:8: repetitons: unknown key (did you mean 'repetitions'?)"),
    "ranks_word": (BASE.replace("ranks: [1, 2]", "ranks: four"),
                   "study.yaml:6: axes.ranks: expected a list of positive integers, got 'four'"),
    "ranks_negative": (BASE.replace("ranks: [1, 2]", "ranks: [1, -2]"),
                       "study.yaml:6: axes.ranks: expected a list of positive integers, got -2"),
    "ranks_and_per_node": (BASE + "  ranks_per_node: [2]\n",
                           "study.yaml:8: axes.ranks_per_node: give either 'ranks' (total) or 'ranks_per_node', not both"),
    "unknown_mpi": (BASE + "  mpi: [openmpi, intelmpi]\n",
                    "study.yaml:8: axes.mpi[1]: unknown MPI 'intelmpi' (expected openmpi, mpich or an identity such as "
                    "intelmpi-2021.19; defined under 'mpis': none)"),
    "unknown_transport": (BASE + "  transport: [shm, infiniband]\n",
                          "study.yaml:8: axes.transport[1]: unknown transport 'infiniband' "
                          "(defined: default, shm, tcp; define it under 'transports')"),
    "unknown_params": (BASE + "  params: [tuned]\n",
                       "study.yaml:8: axes.params[0]: unknown params 'tuned' (defined: default; "
                       "define it under 'parameter_sets')"),
    "zip_lengths": (BASE + "  nodes: [1, 2, 4]\nzip:\n  - [ranks, nodes]\n",
                    "study.yaml:10: zip[0]: zipped axes must have the same number of values (ranks has 2, nodes has 3)"),
    "zip_unknown_axis": (BASE + "zip:\n  - [ranks, colour]\n",
                         "study.yaml:9: zip[0]: unknown axis 'colour' (axes: nodes, ranks, threads, mpi, transport, "
                         "params, size)"),
    "exclude_unknown_axis": (BASE + "exclude:\n  - {compiler: gcc}\n",
                             "study.yaml:9: exclude[0].compiler: unknown axis 'compiler' (axes: app, mpi, nodes, "
                             "params, ranks, size, threads, transport, variant)"),
    "unknown_placeholder": (BASE.replace('"{size}"', '"{sise}"'),
                            "study.yaml:4: applications.app.command[2]: unknown placeholder {sise} (known: app, "
                            "builddir, flags, mpi, nodes, params, ranks, ranks_per_node, repetition, run_id, rundir, "
                            "size, threads, transport, variant, workdir)"),
    "shell_string_command": (BASE.replace('[./app, --size, "{size}"]', '"./app --size tiny"'),
                             "study.yaml:4: applications.app.command: expected an argument list (YAML list of "
                             "strings), not a shell string"),
    "bad_regex": (BASE.replace("    command", '    fom: {source: regex, pattern: "time=[0-9.+"}\n    command'),
                  "study.yaml:4: applications.app.fom.pattern: invalid regular expression: unterminated character "
                  "set at position 5"),
    "regex_without_group": (BASE.replace("    command", '    fom: {source: regex, pattern: "time=[0-9.]+"}\n    command'),
                            "study.yaml:4: applications.app.fom.pattern: the regular expression needs a capture "
                            "group around the number"),
    "zero_repetitions": (BASE + "repetitions: 0\n", "study.yaml:8: repetitions: expected a positive number, got 0"),
    "timeout_word": (BASE + "timeout: soon\n",
                     "study.yaml:8: timeout: input should be a valid number, unable to parse string as a number, "
                     "got 'soon'"),
    "duplicate_key": (BASE + "name: other\n", "study.yaml:8: name: duplicate key"),
    "everything_excluded": (BASE + "exclude:\n  - {size: tiny}\n",
                            "study.yaml:8: exclude: every combination is excluded: the study has no runs"),
    "too_few_ranks": (BASE + "  nodes: [1, 4]\n",
                      "study.yaml:6: axes.ranks: 1 ranks cannot fill 4 nodes; zip ranks with nodes, exclude the "
                      "combination or use ranks_per_node"),
    "mca_as_list": (BASE + "parameter_sets:\n  tuned:\n    mca: [coll_tuned_use_dynamic_rules]\n",
                    "study.yaml:10: parameter_sets.tuned.mca: expected a mapping of parameter names to values, "
                    "got ['coll_tuned_use_dynamic_rules']"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_study_is_rejected_with_precise_message(case, write_study):
    text, message = CASES[case]
    path = write_study(text)
    with pytest.raises(ScalewiseError) as err:
        expand(load_study(path))
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_missing_file_is_one_line_error(tmp_path):
    with pytest.raises(ScalewiseError, match=r"nope\.yaml: cannot read study file"):
        load_study(tmp_path / "nope.yaml")


def test_valid_study_loads(write_study):
    study = load_study(write_study(BASE))
    assert study.model.name == "demo"
    assert [r.ranks for r in expand(study)] == [1, 2]
