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


def open_study(path) -> StudyResults:
    """Read a study's results (its study file, output folder or ``results.sqlite``) into :class:`StudyResults`."""
    return read_results(path)


__all__ = ["__version__", "Profile", "RunSet", "StudyResults", "load", "open_study"]
