"""scalewise: MPI benchmark campaigns, profiling and scaling reports.

The public API: :func:`load` reads one job log into a :class:`Profile`,
:func:`open_study` reads a study's results into :class:`StudyResults`.

The classes are imported on first use (PEP 562): the package itself stays
free of pandas, so a command that only launches a job (``scalewise run``
before its summary, ``scalewise --help``) does not pay for the analysis stack.
"""

from typing import TYPE_CHECKING

from scalewise._version import __version__

if TYPE_CHECKING:  # for the annotations only: imported on first use below
    from scalewise.model import Profile
    from scalewise.model.runset import StudyResults

_LAZY = {"Profile": "scalewise.model", "RunSet": "scalewise.model.runset", "StudyResults": "scalewise.model.runset"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'scalewise' has no attribute '{name}'")


def load(path) -> "Profile":
    """Read one scalewise job log (``*.swlog``) into a :class:`Profile`."""
    from scalewise.logfile.reader import read_profile

    return read_profile(path)


def open_study(path, include_stale: bool = False) -> "StudyResults":
    """Read a study's results (its study file, output folder or ``results.sqlite``) into :class:`StudyResults`.

    Runs of points no longer in the study file are left out unless ``include_stale``;
    the ``stale`` column marks them."""
    from scalewise.campaign.results import read_results

    return read_results(path, include_stale=include_stale)


__all__ = ["__version__", "Profile", "RunSet", "StudyResults", "load", "open_study"]
