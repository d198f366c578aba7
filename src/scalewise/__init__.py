"""scalewise: MPI benchmark campaigns, profiling and scaling reports."""

from scalewise._version import __version__
from scalewise.model import Profile
from scalewise.model.runset import RunSet, Study


def load(path) -> Profile:
    """Read one scalewise job log (``*.swlog``) into a :class:`Profile`."""
    from scalewise.logfile.reader import read_profile

    return read_profile(path)


def open_study(path) -> Study:
    """Read a study's results (its study file, output folder or ``results.sqlite``) into a :class:`Study`."""
    from scalewise.studydb import read_study

    return read_study(path)


__all__ = ["__version__", "Profile", "RunSet", "Study", "load", "open_study"]
