"""scalewise: MPI benchmark campaigns, profiling and scaling reports."""

from scalewise._version import __version__
from scalewise.model import Profile


def load(path) -> Profile:
    """Read one scalewise job log (``*.swlog``) into a :class:`Profile`."""
    from scalewise.logfile.reader import read_profile

    return read_profile(path)


__all__ = ["__version__", "Profile", "load"]
