"""What `scalewise tune` says: the plan, each stage's lines, and the one JSON document (docs/json-schema.md)."""

from __future__ import annotations

import pandas as pd

from scalewise.tune.plan import TunePlan, TuneSource
from scalewise.tune.rounds import TuneOutcome, interval_text


def plan_lines(src: TuneSource, plan: TunePlan, repetitions: int, budget: float) -> list[str]:
    """The targets, the runs the plan makes and what the budget left out."""
    lines = [f"target {t.name}: {t.pct_mpi:.0f}% of MPI time, {t.calls} calls, {t.size_label}, {t.comm_size} ranks"
             for t in plan.targets]
    lines.append(f"{src.mpi}: {len(plan.study['axes']['params'])} sets x {repetitions} repetitions = {plan.runs} runs, "
                 f"then a confirmation of the picks and a held-out round; at most about {plan.seconds / 60:.1f} min")
    if plan.dropped:
        lines.append(f"left out to fit --budget {budget:g}: {', '.join(plan.dropped)}")
    return lines


def screening_line(target: str, row: pd.Series | None) -> str:
    if row is None:
        return f"screening, {target}: no set's median is 5% better than the default's; nothing to confirm"
    return (f"screening, {target}: picks {row['params']} for confirmation (median {row['gain_pct']:+.1f}% "
            f"{row['metric']}, {int(row['n'])} runs: a selection, not a verdict)")


def best_line(row: pd.Series | None) -> str:
    if row is None:
        return "best setting: none beats the default beyond noise on fresh runs"
    return (f"best setting: {row['params']} {row['gain_pct']:+.1f}% {row['metric']} in the held-out round "
            f"({interval_text(row)}, p {row['p']:.3g})")


def outcome_lines(outcome: TuneOutcome) -> list[str]:
    """Every stage's result, then where the study and the settings file are."""
    lines = []
    if outcome.launch and outcome.launch.warn:
        lines.append(f"note: {outcome.launch.text}")
    lines += [screening_line(target, row) for target, row in outcome.per_target.items()]
    if outcome.confirm_path:
        passed = set() if outcome.passed.empty else set(outcome.passed["params"])
        lines.append(f"confirmation on fresh runs, shuffled, Holm's correction over the sets ({outcome.confirm_path}):")
        for _, row in outcome.confirmed[outcome.confirmed["params"] != "default"].iterrows():
            lines.append(f"  {row['params']}: {row['gain_pct']:+.1f}% ({interval_text(row)}; margin "
                         f"{row['margin_pct']:.0f}%, p {row['p']:.3g}), "
                         f"{'passes' if row['params'] in passed else 'does not pass'}")
    if outcome.held_out_path:
        lines.append(f"held-out round, the default against {outcome.passed.iloc[0]['params']} "
                     f"({outcome.held_out_path})")
    lines.append(best_line(outcome.best))
    if outcome.failed:
        lines.append(f"{outcome.failed} runs did not succeed and are left out (see `scalewise study status "
                     f"{outcome.study_path}`)")
    lines.append(f"study: {outcome.study_path}\nsettings: {outcome.settings_path}")
    return lines


def outcome_json(src: TuneSource, plan: TunePlan, outcome: TuneOutcome) -> dict:
    """`scalewise tune --json`: the targets, the three rounds' B3 tables and the verdict."""
    return {
        "mpi": src.mpi, "study": str(outcome.study_path), "settings_file": str(outcome.settings_path),
        "targets": [t.__dict__ | {"size": t.size_label} for t in plan.targets],
        "confirm_study": outcome.confirm_path and str(outcome.confirm_path),
        "held_out_study": outcome.held_out_path and str(outcome.held_out_path),
        "sets": outcome.tuning.to_dict("records"), "confirmed": outcome.confirmed.to_dict("records"),
        "passed": [] if outcome.passed.empty else list(outcome.passed["params"]),
        "held_out": outcome.held_out.to_dict("records"), "failed_runs": outcome.failed,
        "screening": {k: (None if r is None else r["params"]) for k, r in outcome.per_target.items()},
        "best": None if outcome.best is None else outcome.best.to_dict(),
        "launch_overhead": outcome.launch and outcome.launch.to_json_dict()}
