"""What a study value may be: the character sets of names and the bounds of counts.

Everything a run needs is checked when the file is loaded, so that a value
that would break a launch (a path separator in a name, an environment name
bash would read as a function, a timeout no scheduler accepts) is a one-line
error of `study plan`, never an exception in the middle of `study run`.
docs/studies.md lists these rules for users.
"""

from __future__ import annotations

import math
import re

# Environment variables, MCA parameters and CVARs: a POSIX shell identifier
# (launch/base.py, where the Slurm scheduler applies the same rule).
from scalewise.launch.base import BASH_FUNCTION_PREFIX, ENV_NAME_RE

# Names of applications, variants, transports, parameter sets and the study:
# they become folder and file names, so no separators, no leading dot.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

MAX_TEXT = 32 * 1024        # one argument, one environment value
MAX_NODES = 100_000
MAX_RANKS = 10_000_000
MAX_THREADS = 4096
MAX_REPETITIONS = 1000
MAX_SECONDS = 7 * 24 * 3600  # timeouts: a week
DEFAULT_MAX_RUNS = 10_000     # the plan-size limit a study may raise with `max_runs:`
MAX_MAX_RUNS = 1_000_000

COUNT_BOUNDS = {"nodes": MAX_NODES, "ranks": MAX_RANKS, "ranks_per_node": MAX_RANKS, "threads": MAX_THREADS}


def check_name(value: object, what: str = "name") -> str:
    """``value`` if it is a valid name; ValueError saying which characters are allowed otherwise."""
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise ValueError(f"{what} must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or "
                         f"digit, got {value!r}")
    return value


def check_env_name(name: str) -> str:
    if name.startswith(BASH_FUNCTION_PREFIX):
        raise ValueError(f"environment name {name!r}: names starting with {BASH_FUNCTION_PREFIX} are bash "
                         "functions, not variables")
    if not ENV_NAME_RE.match(name):
        raise ValueError(f"environment name {name!r} must be letters, digits and '_', not starting with a digit")
    return name


def check_text(value: str, what: str) -> str:
    if len(value) > MAX_TEXT:
        raise ValueError(f"{what} is {len(value):,} characters long (at most {MAX_TEXT:,})")
    return value


def check_seconds(value: float) -> float:
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise ValueError(f"expected seconds between 0 and {MAX_SECONDS:,} (a week), got {value!r}")
    return value



def string_mapping(value: object, what: str) -> dict[str, str]:
    """An ``env:``, ``mca:`` or ``cvars:`` mapping: identifier names, string or number values of bounded length.

    MCA parameters and CVARs become environment names too (``OMPI_MCA_x``, ``MPIR_CVAR_x``).
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping of {what} names to values, got {value!r}")
    out = {}
    for key, val in value.items():
        check_env_name(str(key))
        if isinstance(val, (dict, list)) or val is None:
            raise ValueError(f"value of '{key}' must be a string or number, got {val!r}")
        out[str(key)] = check_text(("1" if val else "0") if isinstance(val, bool) else str(val), f"value of '{key}'")
    return out
