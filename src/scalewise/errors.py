"""Errors a user can cause; the CLI prints them as one line and exits non-zero."""


class ScalewiseError(Exception):
    """Base class: the message is complete and fit for a one-line report."""


class LogFormatError(ScalewiseError):
    """A log that is truncated, corrupt, foreign or of an unsupported version."""
