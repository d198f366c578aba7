"""An axis that cannot change a run (interconnect on one node, transport at one rank, a custom axis no command
uses) is said by `study plan` and `study run`, on stderr."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scalewise.cli.study import study


def _plan(write_study, text: str):
    result = CliRunner().invoke(study, ["plan", "--json", str(write_study(text))])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), [line for line in result.stderr.splitlines() if line.startswith("warning: ")]


def test_plan_warns_of_axes_that_change_nothing(write_study):
    runs, warnings = _plan(write_study, """name: idle
applications:
  app:
    command: [./app, "{size}"]
  other:
    command: [./other]
axes:
  nodes: [1, 2]
  ranks_per_node: [1]
  interconnect: [gige, 10gige]
  transport: [shm, tcp]
  custom:
    size: [small, large]
""")
    assert len(runs) == 32
    assert warnings == [
        "warning: interconnect: on 1 node the ranks never use the network, so 16 of 32 runs repeat the same run for "
        "each of its 2 values (gige, 10gige); exclude them or zip interconnect with nodes",
        "warning: transport: at 1 rank there is no peer to talk to, so 16 of 32 runs repeat the same run for each "
        "of its 2 values (shm, tcp); exclude them or zip transport with ranks",
        "warning: size: no placeholder {size} in the command of other, so 16 of 32 runs repeat the same run for each "
        "of its 2 values"]


def test_plan_without_idle_axes_says_nothing(write_study):
    runs, warnings = _plan(write_study, """name: busy
applications:
  app:
    command: [./app, "{size}"]
axes:
  nodes: [2, 4]
  ranks_per_node: [2]
  interconnect: [gige, 10gige]
  transport: [shm, tcp]
  custom:
    size: [small, large]
exclude:
  - {nodes: 4, size: small}
""")
    assert len(runs) == 12 and warnings == []


def test_run_warns_before_running(write_study, swtest_dir):
    """The same warning from `study run`, which still runs the plan."""
    path = write_study(f"""name: idlerun
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest", --size, tiny]
    fom: {{source: result_line}}
axes:
  ranks: [1]
  mpi: [mpich]
  transport: [shm, tcp]
timeout: 60
""")
    result = CliRunner().invoke(study, ["run", "--quiet", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: transport: at 1 rank there is no peer to talk to, so 2 of 2 runs")
    assert "ran 2 ok" in result.stdout
