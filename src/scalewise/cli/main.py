"""The `scalewise` command: a thin shell over the library.

Every user error (ScalewiseError) is printed as one line on stderr with a
non-zero exit status; anything else is a bug and keeps its traceback.

Each command's module is imported when the command runs (or is looked up),
never all of them: `scalewise run` must not pay for the analysis and drawing
stack of `report` or `whatif`, and `scalewise --help` for none of them.
"""

from __future__ import annotations

import click

from scalewise._version import __version__
from scalewise.cli.group import LazyCommands, OneLineErrors

# Explicit list: a command exists because it is named here, not found by globbing.
# name: (module:attribute, the first paragraph of its help, shown by `scalewise --help`
# without importing the module; tests/test_cli_lazy.py keeps the two equal).
COMMANDS = {
    "run": ("scalewise.cli.run:run", "Run an MPI job under the profiler, then summarise it."),
    "summary": ("scalewise.cli.show:summary",
                "Print the summary of one profiled run: time, MPI share, top functions, bytes."),
    "study": ("scalewise.cli.main:_study_group",
              "Benchmark campaigns: sweep an application over MPI settings, record every run."),
    "report": ("scalewise.cli.show:report",
               "Write a self-contained HTML report of one profiled run (opens from disk, no network)."),
    "cluster": ("scalewise.cli.cluster:cluster",
                "Emulated nodes on this machine: network namespaces joined by shaped links (needs root)."),
    "memory": ("scalewise.cli.memory:memory",
               "Measure MPI's memory per connected peer (eager vs on-demand set-up) and project it to a "
               "target machine."),
    "tune": ("scalewise.cli.tune:tune",
             "Find the MPI settings (collective algorithms, eager threshold) that speed up a run."),
    "whatif": ("scalewise.cli.whatif:whatif",
               "Replay a trace (.swtrace from scalewise run --trace, its .swlog, or their run directory) on "
               "each network and set it beside the measured run."),
    "calibrate": ("scalewise.cli.calibrate:calibrate",
                  "Ping-pong over message sizes from 0 to 4 MiB, fitted into a network file the replay "
                  "accepts; then a few collectives timed and set beside their replay on that network."),
    "pop": ("scalewise.cli.pop:pop",
            "POP efficiencies of a run recorded with scalewise run --trace: load balance, communication "
            "efficiency and its split into serialisation and transfer (the run replayed on the ideal "
            "network).  See docs/pop.md."),
}


def _study_group() -> click.Group:
    from scalewise.cli import study, study_report

    if "report" not in study.study.commands:
        study.study.add_command(study_report.report)  # analysis side of `study`, kept in its own module
    return study.study


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scalewise")
def cli() -> None:
    """Profile MPI applications, run benchmark campaigns, report how they scale."""


cli.commands = LazyCommands(COMMANDS)

if __name__ == "__main__":
    cli()
