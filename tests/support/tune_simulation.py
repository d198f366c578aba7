"""`tune`'s whole decision (screen -> confirm -> held out) on drawn values: its error rate and power.

Each simulated call draws every run as ``time / effect x noise``, the noise
resampled from real spreads (each repetition's value over its configuration's
median, ``tests/study/data/measured_spreads.json``), and hands the three
rounds to :func:`scalewise.tune.decision.procedure`, the function
`scalewise tune` itself decides with.  ``bench/tune_sim.py`` prints the table
docs/benchmarks.md quotes; ``tests/tune/test_tune_procedure.py`` asserts it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis.study.tuning import DEFAULT, tuning_table
from scalewise.tune.decision import procedure

# The shape of a typical call: an Allreduce with Open MPI's six algorithms and point-to-point with two
# eager limits (the planted effect, when there is one, is on the first algorithm).
TARGETS = {"allreduce": [f"allreduce-{i}" for i in range(1, 7)], "p2p": ["eager-low", "eager-high"]}
SCREEN_REPS, CONFIRM_REPS, HELD_OUT_REPS = 3, 5, 5


@dataclass(frozen=True)
class Call:
    chosen: str | None  # the set tune reports, None when it keeps the default
    effect: float  # that set's true speed over the default's (1.0 without one)
    gain_pct: float  # the gain it reports (nan without one)


def _table(rng, pool: np.ndarray, effects: dict[str, float], reps: int) -> pd.DataFrame:
    rows = []
    for name, effect in {DEFAULT: 1.0, **effects}.items():
        for k, noise in enumerate(rng.choice(pool, reps)):
            time = noise / effect
            rows.append({"app": "a", "params": name, "run_id": f"{name}{k}", "repetition": k, "wall": time,
                         "value": time, "metric": "time", "unit": "s", "higher_is_better": False})
    return tuning_table(pd.DataFrame(rows), ["app", "params"])


def effect_of(name: str, effects: dict[str, float], picked: list[str]) -> float:
    """A set's true speed-up; ``combined`` is its members' product."""
    if name == "combined":
        return float(np.prod([effects.get(p, 1.0) for p in picked]))
    return effects.get(name, 1.0)


def one_call(rng, pool: np.ndarray, planted: float = 1.0) -> Call:
    """One `tune` call: the first algorithm ``planted`` times faster than the default, every other set equal."""
    effects = {TARGETS["allreduce"][0]: planted}
    picked: list[str] = []

    def confirm_round(chosen: list[str]) -> pd.DataFrame:
        picked[:] = chosen
        sets = chosen + (["combined"] if len(chosen) > 1 else [])
        return _table(rng, pool, {s: effect_of(s, effects, chosen) for s in sets}, CONFIRM_REPS)

    def held_out_round(name: str) -> pd.DataFrame:
        return _table(rng, pool, {name: effect_of(name, effects, picked)}, HELD_OUT_REPS)

    screening = _table(rng, pool, {s: effects.get(s, 1.0) for sets in TARGETS.values() for s in sets}, SCREEN_REPS)
    d = procedure(screening, TARGETS, confirm_round, held_out_round)
    if d.best is None:
        return Call(None, 1.0, float("nan"))
    name = str(d.best["params"])
    return Call(name, effect_of(name, effects, picked), float(d.best["gain_pct"]))


def rates(pool: np.ndarray, planted: float, seeds: int, seed: int = 0) -> dict[str, float]:
    """Over ``seeds`` calls: the share that report a set no faster than the default (``false``), that report
    one with the planted speed-up (``found``), and the median gain reported when found."""
    rng = np.random.default_rng(seed)
    calls = [one_call(rng, pool, planted) for _ in range(seeds)]
    false = sum(c.chosen is not None and c.effect <= 1.0 for c in calls) / seeds
    hits = [c for c in calls if c.chosen is not None and c.effect >= planted > 1.0]
    return {"false": false, "found": len(hits) / seeds,
            "gain_pct": float(np.median([c.gain_pct for c in hits])) if hits else float("nan")}
