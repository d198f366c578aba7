"""The words of one run's notes and findings, from plain numbers: the one
wording both the analysis over frames (findings.py) and the summary's lean
path (plain.py) print.  No pandas, no numpy here."""

from __future__ import annotations

from scalewise.analysis.bound import bound_kind
from scalewise.formatting import human_bytes, plural
from scalewise.formatting import short_pct as _pct

# A function is "dominant" from this share of MPI time (the first one always is).
DOMINANT_PCT_MPI = 25.0
# Imbalance worth reporting: slowest rank this much above the mean, or this CV.
IMBALANCE_MAX_OVER_MEAN = 1.10
IMBALANCE_CV = 0.10
NONBLOCKING_SENDS = ("MPI_Isend", "MPI_Irecv", "MPI_Ibsend", "MPI_Issend")


def join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def partial_note(present: int, nranks: int, partial_ranks: int) -> str:
    return (f"Partial log: {present} of {nranks} ranks recorded"
            + (f", {partial_ranks} of them hit a memory cap" if partial_ranks else "")
            + "; totals cover only what was recorded.")


ABORTED_NOTE = "The job aborted before MPI_Finalize; times end at the abort."
NO_CALLS_NOTE = "No MPI calls were recorded: the whole run is compute (or untraced) time."
SINGLE_RANK_NOTE = "Single-rank run: there is no traffic between ranks and no imbalance to show."


def setup_note(caveat: str) -> str:
    return (f"{caveat[0].upper()}{caveat[1:]}; the bound-ness and POP efficiencies below "
            "describe this set-up, not the program alone.")


def caveat_suffix(caveat: str | None) -> str:
    """The set-up caveat a bound-ness or efficiency finding carries (analysis/run/setup.py)."""
    return f" Caveat: {caveat}." if caveat else ""


def bound_text(share: float, caveat: str | None) -> str:
    """``share``: the MPI share of wall time, 0..1."""
    pct = 100 * share
    kind = bound_kind(share)  # one rule with the study's (analysis/bound.py)
    return f"The run is {kind}: MPI takes {_pct(pct)} of wall time, compute {_pct(100 - pct)}." + caveat_suffix(caveat)


def dominant_text(function: str, fclass: str, pct_wall: float, pct_mpi: float, rng: tuple | None,
                  peers_median: float | None) -> str:
    """``peers_median``: the median peers per rank when the run has point-to-point traffic and it is above 0."""
    text = f"{function} takes {_pct(pct_wall)} of wall time ({_pct(pct_mpi)} of MPI time)"
    if fclass in ("wait", "test") and rng:
        sizes = human_bytes(rng[0]) if rng[0] == rng[1] else f"{human_bytes(rng[0])} to {human_bytes(rng[1])}"
        text += f"; the messages it completes are {sizes}"
        if peers_median is not None:
            text += f", exchanged with {peers_median:g} neighbours per rank"
        text += ". Blocking waits point to load imbalance or latency"
    elif fclass == "collective":
        text += ". Collectives are bound by latency and bandwidth, and grow with the rank count"
    return text + "."


def calls_text(names: list[str], pct: float, total_calls: int) -> str:
    verb = "is" if len(names) == 1 else "are"
    return f"{join(names)} {verb} {_pct(pct)} of {total_calls:,} MPI calls."


def overlap_text(wait_pct: float) -> str:
    if wait_pct >= 50:
        return (f"Non-blocking calls are used, but waiting for them takes {_pct(wait_pct)} of MPI time: "
                "little communication is overlapped with computation.")
    return f"Non-blocking calls are used and waiting for them takes {_pct(wait_pct)} of MPI time."


def imbalance_text(max_rank: int, max_over_mean: float, cv: float, mpi_cv: float, caveat: str | None) -> str:
    if max_over_mean >= IMBALANCE_MAX_OVER_MEAN or cv >= IMBALANCE_CV:
        text = (f"Compute time is imbalanced: the busiest rank ({max_rank}) computes {max_over_mean:.2f}x the mean "
                f"(CV {cv:.2f}); the others wait for it inside MPI (MPI time CV {mpi_cv:.2f}).")
    else:
        text = f"Compute time is balanced across ranks: max/mean {max_over_mean:.2f}, CV {cv:.2f}."
    return text + caveat_suffix(caveat)


def sizes_text(total: int, pct_small: float, pct_large: float) -> str:
    if pct_small >= 50:
        return f"Most messages are small: {_pct(pct_small)} of {total:,} are under 1 KiB, so latency matters more than bandwidth."
    if pct_large >= 50:
        return f"Most messages are large: {_pct(pct_large)} of {total:,} are 64 KiB or more, so bandwidth matters most."
    return f"Message sizes are mixed: {_pct(pct_small)} under 1 KiB, {_pct(pct_large)} at 64 KiB or more."


def locality_text(n: int, k: int, share: float, peers_median: float, peers_max: float, offsets: list[int]) -> str:
    offs = ", ".join(f"{o:+d}" for o in offsets)
    # Offsets wrap around the world (matrix.py), so no partner is more than n // 2 ranks away: a share
    # "within +-k" says something only for k below that, and at 2 or 3 ranks nothing is.
    if n <= 3:
        where = f"at {n} ranks every rank neighbours every other, so locality cannot show"
    elif k < n // 2:
        where = f"{_pct(100 * share)} of bytes stay within +-{plural(k, 'rank')} (of at most {n // 2} at {n} ranks)"
    else:
        where = f"partners up to {plural(n // 2, 'rank')} apart, as far as {n} ranks allow (no locality to speak of)"
    return (f"Point-to-point traffic: {where}; "
            f"each rank talks to {plural(peers_median, 'peer')} (median, max {peers_max:g}); "
            f"busiest offsets {offs}.")


def volume_text(total: float, p2p: float, collective: float, mean: float, top: float, top_rank: int) -> str:
    return (f"Ranks sent {human_bytes(total)} in total ({human_bytes(p2p)} point-to-point, "
            f"{human_bytes(collective)} in collectives): {human_bytes(mean)} per rank on average, "
            f"at most {human_bytes(top)} (rank {top_rank}).")
