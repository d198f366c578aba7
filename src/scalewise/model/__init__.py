"""Data model: no I/O, no plotting.

The names below are imported on first use (PEP 562): the model's pandas-free
modules (``bins``, ``mpit``'s plain values) load without pandas.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scalewise.model.profile import Profile, bin_bounds, size_bin


def __getattr__(name: str):
    if name in __all__:
        from scalewise.model import profile

        return getattr(profile, name)
    raise AttributeError(f"module 'scalewise.model' has no attribute '{name}'")


__all__ = ["Profile", "bin_bounds", "size_bin"]
