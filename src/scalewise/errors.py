"""Errors a user can cause, and the exit status each kind ends scalewise with.

The CLI prints every one as one line on stderr.  Exit statuses
(docs/runtime.md, "Exit statuses"):

- 0: done;
- 1: the application failed (its own exit code or signal is in the message);
- 2: user error (an option, a file, a launch line that cannot work);
- 3: the profiler failed (the job ended well but left no readable log);
- 128 + N: scalewise itself was stopped by signal N (130 for SIGINT, 143 for SIGTERM).
"""

import signal

EXIT_APPLICATION = 1
EXIT_USER = 2
EXIT_PROFILER = 3


class ScalewiseError(Exception):
    """Base class: the message is complete and fit for a one-line report."""

    exit_code = EXIT_USER


class LogFormatError(ScalewiseError):
    """A log that is truncated, corrupt, foreign or of an unsupported version."""


class ApplicationFailed(ScalewiseError):
    """The profiled application ended badly (non-zero exit, signal, MPI_Abort)."""

    exit_code = EXIT_APPLICATION


class ProfilerFailed(ScalewiseError):
    """The application ended well, but the profiler left no readable log."""

    exit_code = EXIT_PROFILER


class Interrupted(Exception):
    """SIGINT or SIGTERM asked scalewise to stop (not a ScalewiseError: no run records it as its own failure)."""

    def __init__(self, signum: int, message: str = ""):
        self.signum = signum
        super().__init__(message or f"interrupted by {signal_name(signum)}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def describe_exit(code: int) -> str:
    """An exit status as a person reads it: 'exited with code 3', 'was killed by SIGSEGV'.

    Negative: killed by that signal (Python's convention); above 128: a shell or
    launcher reporting a rank killed by signal code-128."""
    if code < 0:
        return f"was killed by {signal_name(-code)}"
    if code > 128 and (code - 128) in signal.valid_signals():
        return f"exited with code {code} ({signal_name(code - 128)})"
    return f"exited with code {code}"
