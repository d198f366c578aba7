"""scalewise: MPI benchmark campaigns, profiling and scaling reports.

The public API: :func:`load` reads one job log into a :class:`Profile`,
:func:`open_study` reads a study's results into :class:`StudyResults`.
"""

from scalewise._version import __version__
from scalewise.campaign.results import read_results
from scalewise.logfile.reader import read_profile
from scalewise.model import Profile
from scalewise.model.runset import RunSet, StudyResults


def load(path) -> Profile:
    """Read one scalewise job log (``*.swlog``) into a :class:`Profile`."""
    return read_profile(path)


def open_study(path, include_stale: bool = False) -> StudyResults:
    """Read a study's results (its study file, output folder or ``results.sqlite``) into :class:`StudyResults`.

    Runs of points no longer in the study file are left out unless ``include_stale``;
    the ``stale`` column marks them."""
    return read_results(path, include_stale=include_stale)


__all__ = ["__version__", "Profile", "RunSet", "StudyResults", "load", "open_study"]
