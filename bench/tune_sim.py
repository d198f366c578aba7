#!/usr/bin/env python3
"""`scalewise tune`'s whole decision on simulated calls: how often it calls an equal set "better", and its power.

Each call screens the default and eight sets (six Allreduce algorithms, two
eager limits) at 3 runs, confirms screening's picks on 5 fresh runs with
Holm's correction, and holds out the chosen set against the default on 5
more (tune/decision.py, `procedure`, the function tune decides with).
Every run is drawn as time / effect x noise, the noise resampled from real
spreads (tests/study/data/measured_spreads.json: wall times and the apps'
figures of merit of the demo study on this 2-core machine).  With every set
equal, any set reported is a false "better"; with the first algorithm 1.2,
1.5 or 2 times as fast, the power is the share of calls that report it (or
a combination holding it).

usage: tune_sim.py [--seeds 5000] [--power-seeds 2000]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from support import tune_simulation as tune_sim

SPREADS = Path(__file__).resolve().parent.parent / "tests" / "study" / "data" / "measured_spreads.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5000, help="calls with every set equal")
    ap.add_argument("--power-seeds", type=int, default=2000, help="calls per planted effect")
    args = ap.parse_args()
    spreads = json.loads(SPREADS.read_text())
    table = Table(title="scalewise tune, whole procedure (screen 3 -> confirm 5, Holm -> held out 5), simulated",
                  box=None)
    for col in ("noise drawn from", "effect", "calls", "false \"better\"", "95% upper bound", "found",
                "median gain reported", "time"):
        table.add_column(col)
    for pool in ("wall", "fom"):
        values = np.array(spreads[pool])
        for effect in (1.0, 1.2, 1.5, 2.0):
            n = args.seeds if effect == 1.0 else args.power_seeds
            t0 = time.monotonic()
            r = tune_sim.rates(values, effect, n, seed=int(effect * 10))
            # one-sided 95% upper bound of a binomial rate (exact for zero events: 1 - 0.05^(1/n))
            f = r["false"]
            upper = 1 - 0.05 ** (1 / n) if f == 0 else f + 1.645 * math.sqrt(f * (1 - f) / n)
            table.add_row(pool, "equal" if effect == 1.0 else f"{effect:g}x", str(n), f"{r['false']:.2%}",
                          f"{upper:.2%}", "" if effect == 1.0 else f"{r['found']:.1%}",
                          "" if math.isnan(r["gain_pct"]) else f"{r['gain_pct']:+.0f}%",
                          f"{time.monotonic() - t0:.0f} s")
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
