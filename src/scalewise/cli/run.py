"""`scalewise run -- LAUNCHER ... APP ARGS`: profile one MPI job."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import click

from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS, command_app, command_flavour, preload_env


def log_path_for(argv: list[str], outdir: Path) -> Path:
    """A fresh log name in outdir: <app>-<YYYYmmdd-HHMMSS>[-n].swlog."""
    app = command_app(argv)
    stem = Path(app).name if app else Path(argv[-1]).name
    base = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    path, n = outdir / f"{base}.swlog", 1
    while path.exists():
        n += 1
        path = outdir / f"{base}-{n}.swlog"
    return path


def run_profiled(argv: list[str], outdir: Path, flavour: str | None = None) -> tuple[int, Path]:
    """Run the launch command with the profiler injected; return (exit code, log path)."""
    if not argv:
        raise ScalewiseError("nothing to run: give the launch command after --, e.g. scalewise run -- mpirun -np 4 ./app")
    flavour = flavour or command_flavour(argv)
    if flavour is None:
        raise ScalewiseError(f"cannot tell which MPI '{' '.join(argv)}' uses; pass --mpi openmpi or --mpi mpich")
    outdir.mkdir(parents=True, exist_ok=True)
    log = log_path_for(argv, outdir)
    env = preload_env(flavour, log.resolve())
    env.setdefault("SCALEWISE_QUIET", "1")  # the path is printed after the summary instead
    try:
        proc = subprocess.run(argv, env=env)
    except FileNotFoundError:
        raise ScalewiseError(f"launcher not found: {argv[0]}") from None
    except PermissionError:
        raise ScalewiseError(f"launcher is not executable: {argv[0]}") from None
    return proc.returncode, log


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-o", "--output-dir", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Directory for the job log.")
@click.option("--mpi", "flavour", type=click.Choice(FLAVOURS), default=None,
              help="MPI flavour of the application (default: read from the executable).")
@click.option("--quiet", is_flag=True, help="Print only the log path, no summary.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(outdir: Path, flavour: str | None, quiet: bool, command: tuple[str, ...]) -> None:
    """Run an MPI job under the profiler, then summarise it.

    \b
    Example: scalewise run -o logs -- mpirun -np 4 ./app --size small
    """
    import scalewise
    from scalewise.report.terminal import print_summary

    code, log = run_profiled(list(command), outdir, flavour)
    if not log.exists():
        why = f"exited with code {code}" if code else "exited without writing one"
        raise ScalewiseError(f"no profile was written: the job {why} before every rank reached MPI_Finalize "
                             f"(expected {log})")
    profile = scalewise.load(log)
    if not quiet:
        print_summary(profile)
    click.echo(f"profile: {log}")
    if code:
        click.echo(f"scalewise: the job exited with code {code}; the profile is partial", err=True)
        sys.exit(code if 0 < code < 256 else 1)
