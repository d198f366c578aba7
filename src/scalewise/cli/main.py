"""The `scalewise` command: a thin shell over the library.

Every user error (ScalewiseError) is printed as one line on stderr with a
non-zero exit status; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import click

from scalewise._version import __version__
from scalewise.cli import calibrate, cluster, memory, pop, run, show, study, study_report, tune, whatif
from scalewise.cli.group import OneLineErrors


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scalewise")
def cli() -> None:
    """Profile MPI applications, run benchmark campaigns, report how they scale."""


# Explicit list: a command exists because it is named here, not found by globbing.
cli.add_command(run.run)
cli.add_command(show.summary)
cli.add_command(study.study)
study.study.add_command(study_report.report)  # analysis side of `study`, kept in its own module
cli.add_command(show.report)
cli.add_command(cluster.cluster)
cli.add_command(memory.memory)
cli.add_command(tune.tune)
cli.add_command(whatif.whatif)
cli.add_command(calibrate.calibrate)
cli.add_command(pop.pop)

if __name__ == "__main__":
    cli()
