"""Data model: no I/O, no plotting."""

from scalewise.model.profile import Profile, bin_bounds, size_bin

__all__ = ["Profile", "bin_bounds", "size_bin"]
