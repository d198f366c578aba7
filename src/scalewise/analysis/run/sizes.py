"""Message-size distribution per MPI function (figure P4).

The runtime keeps one log2 histogram per (rank, function): bin 0 counts
0-byte messages and bin k >= 1 counts sizes in [2**(k-1), 2**k).  Wait, Waitall,
Test, ... rows hold the sizes of the non-blocking messages they complete, so
their histograms answer "what sizes does MPI_Waitall wait for", the question
the reference studies ask; those rows are flagged ``credited``.

A bin alone only says a message lies between two powers of two.  Where a
rank's messages of one function all fall in one bin, that rank's byte total
over its count is their mean size, which is the size itself when they are all
alike (a halo face, a fixed buffer): ``size`` carries it, so a sentence can
quote 97.7 KiB rather than the bin's 64 KiB or 128 KiB edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.formatting import human_bytes
from scalewise.model.profile import Profile, bin_bounds

# Classes whose byte counts and histograms are credited from the requests they complete.
CREDITED_CLASSES = frozenset({"wait", "test"})


def bin_label(b: int) -> str:
    """Readable range of histogram bin ``b``: '0 B', '1 B', '64 KiB-128 KiB'."""
    lo, hi = bin_bounds(int(b))
    if hi - lo == 1:
        return human_bytes(lo)
    return f"{human_bytes(lo)}-{human_bytes(hi)}"


@dataclass(frozen=True)
class SizeDistribution:
    """P4: counts per (function, size bin) summed over ranks."""

    counts: pd.DataFrame  # function, fclass, credited, bin, lo, hi, label, count, pct_of_function, size_min, size_max
    by_function: pd.DataFrame  # function, fclass, credited, messages, smallest_lo, largest_hi, mode_bin, mode_label, mode_pct
    bins: list[int]  # every bin that occurs, ascending (the figure's x axis)
    functions: list[str]  # functions with a histogram, most messages first

    @property
    def empty(self) -> bool:
        return self.counts.empty


def size_distribution(profile: Profile) -> SizeDistribution:
    """Histogram counts per function over all ranks, with per-function summaries."""
    h = profile.hist
    if h.empty:
        empty = pd.DataFrame(columns=["function", "fclass", "credited", "bin", "lo", "hi", "label", "count",
                                      "pct_of_function", "size_min", "size_max"])
        summary = pd.DataFrame(columns=["function", "fclass", "credited", "messages", "smallest_lo", "largest_hi",
                                        "mode_bin", "mode_label", "mode_pct"])
        return SizeDistribution(empty, summary, [], [])
    g = h.groupby(["function", "bin"], sort=True, as_index=False)["count"].sum()
    g = g[g["count"] > 0]
    classes = profile.functions.groupby("function")["fclass"].first() if not profile.functions.empty else pd.Series(dtype=str)
    g["fclass"] = g["function"].map(classes).fillna("other").astype(str)
    g["credited"] = g["fclass"].isin(CREDITED_CLASSES)
    g["bin"] = g["bin"].astype(int)
    g["lo"] = [bin_bounds(b)[0] for b in g["bin"]]
    g["hi"] = [bin_bounds(b)[1] for b in g["bin"]]
    g["label"] = [bin_label(b) for b in g["bin"]]
    g["count"] = g["count"].astype(np.int64)
    fn_total = g.groupby("function")["count"].transform("sum")
    g["pct_of_function"] = 100.0 * g["count"] / fn_total
    g = g.merge(_mean_sizes(profile), on=["function", "bin"], how="left")
    counts = g[["function", "fclass", "credited", "bin", "lo", "hi", "label", "count", "pct_of_function",
                "size_min", "size_max"]].reset_index(drop=True)

    rows = []
    for fn, part in counts.groupby("function", sort=False):
        mode = part.sort_values(["count", "bin"], ascending=[False, True]).iloc[0]
        rows.append({
            "function": fn, "fclass": part["fclass"].iloc[0], "credited": bool(part["credited"].iloc[0]),
            "messages": int(part["count"].sum()), "smallest_lo": int(part["lo"].min()), "largest_hi": int(part["hi"].max()),
            "mode_bin": int(mode["bin"]), "mode_label": str(mode["label"]), "mode_pct": float(mode["pct_of_function"]),
        })
    by_function = pd.DataFrame(rows).sort_values(["messages", "function"], ascending=[False, True]).reset_index(drop=True)
    return SizeDistribution(counts, by_function, sorted(counts["bin"].unique().tolist()), by_function["function"].tolist())


def _mean_sizes(profile: Profile) -> pd.DataFrame:
    """Per (function, bin): the smallest and largest mean message size over the ranks whose messages of that
    function all fall in that one bin (NaN where no rank does).

    A mean outside its bin means the byte total counts more than the histogram (MPI_Sendrecv counts both
    directions): such ranks give no size."""
    h, f = profile.hist, profile.functions
    h = h[h["count"] > 0]
    none = pd.DataFrame({"function": pd.Series(dtype=object), "bin": pd.Series(dtype=int),
                         "size_min": pd.Series(dtype=float), "size_max": pd.Series(dtype=float)})
    if h.empty or f.empty:
        return none
    # Integer keys (rank, function code) and sorted runs instead of a groupby on strings: millions of rows.
    codes, names = pd.factorize(h["function"])
    width = len(names)
    key = h["rank"].to_numpy(np.int64) * width + codes
    order = np.argsort(key, kind="stable")
    key, b = key[order], h["bin"].to_numpy(np.int64)[order]
    count, lo, hi = (h[c].to_numpy(np.int64)[order] for c in ("count", "lo", "hi"))
    starts = np.flatnonzero(np.concatenate([[True], key[1:] != key[:-1]]))
    one_bin = np.minimum.reduceat(b, starts) == np.maximum.reduceat(b, starts)
    single = pd.DataFrame({"key": key[starts], "bin": b[starts], "lo": lo[starts], "hi": hi[starts],
                           "count": np.add.reduceat(count, starts)})[one_bin]
    f_local, f_names = pd.factorize(f["function"])  # names looked up once each, not once per row
    f_code = np.where(f_local >= 0, pd.Index(names).get_indexer(f_names)[f_local], -1)
    mine = f_code >= 0
    f_keys = pd.DataFrame({"key": f["rank"].to_numpy(np.int64)[mine] * width + f_code[mine],
                           "bytes": f["bytes"].to_numpy()[mine]})
    single = single.merge(f_keys, on="key", how="inner")
    single["mean"] = single["bytes"] / single["count"]
    single = single[(single["mean"] >= single["lo"]) & (single["mean"] < single["hi"])]
    if single.empty:
        return none
    single["code"] = single["key"] % width
    sizes = single.groupby(["code", "bin"])["mean"].agg(size_min="min", size_max="max").reset_index()
    sizes.insert(0, "function", np.asarray(names, dtype=object)[sizes.pop("code").to_numpy()])
    return sizes.astype({"bin": int})


def size_range(dist: SizeDistribution, function: str, coverage: float = 0.9) -> tuple[float, float] | None:
    """The smallest and the largest message size among the busiest bins that together hold ``coverage`` of a
    function's messages: the mean size where a rank's messages pin it down (see the module), else the bin's
    lower edge, so a 65,536-byte message reads 64 KiB and a 100,000-byte one 97.7 KiB; never a bin's upper edge,
    which would overstate (a 64 KiB message sits in bin [64 KiB, 128 KiB)).

    Bins are taken largest count first until they hold the requested share,
    so a finding can say "the messages it completes are 64 KiB to 4 MiB"
    without being stretched by a handful of outliers.
    """
    part = dist.counts[dist.counts["function"] == function]
    if part.empty:
        return None
    part = part.sort_values(["count", "bin"], ascending=[False, True])
    share = part["count"].cumsum() / part["count"].sum()
    keep = part.iloc[: int(np.searchsorted(share.to_numpy(), coverage - 1e-12)) + 1]
    low, high = keep.loc[keep["bin"].idxmin()], keep.loc[keep["bin"].idxmax()]
    smallest = low["size_min"] if pd.notna(low["size_min"]) else low["lo"]
    largest = high["size_max"] if pd.notna(high["size_max"]) else high["lo"]
    return _whole(smallest), _whole(largest)


def _whole(size: float) -> float:
    return int(size) if float(size).is_integer() else float(size)
