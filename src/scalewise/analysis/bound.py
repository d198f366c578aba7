"""What bounds a run: the one classifier both the run report and the study report call.

Thresholds, on the MPI share of wall time (MPI time over wall time, summed over ranks):

* below ``COMPUTE_BOUND_BELOW`` (30%): ``compute-bound``;
* at or above ``COMM_BOUND_FROM`` (50%): ``communication-bound``, or ``imbalance-bound`` when the cause is known
  and waiting for the slowest rank is at least as large as moving data;
* in between: ``between compute- and communication-bound`` (or ``... imbalance-bound``).

The cause is POP's split of the time lost in MPI (docs/pop.md): load imbalance (the ranks waiting for the
slowest one: (largest - mean compute) / run time) against transfer (what even the slowest rank spends in
MPI).  When imbalance is the larger part, moving data faster would not help.  Without the split (NaN, as the
run report passes it) no imbalance is claimed.
"""

from __future__ import annotations

COMPUTE_BOUND_BELOW = 0.30
COMM_BOUND_FROM = 0.50


def bound_kind(share: float, imbalance: float = float("nan"), transfer: float = float("nan")) -> str:
    """The words for what bounds a run with MPI share ``share`` (0..1) and, when known, its POP split."""
    if share < COMPUTE_BOUND_BELOW:
        return "compute-bound"
    if imbalance == imbalance and imbalance >= transfer:  # NaN-safe: no profile split, no imbalance claim
        return "imbalance-bound" if share >= COMM_BOUND_FROM else "between compute- and imbalance-bound"
    return "communication-bound" if share >= COMM_BOUND_FROM else "between compute- and communication-bound"
