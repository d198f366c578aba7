"""A study's results read and analysed as `scalewise study report` asks: the study file's declared
scaling base, node power and price, the command line's options winning over them."""

from __future__ import annotations

from pathlib import Path

from scalewise.analysis.study.energy import DEFAULT_PRICE_PER_KWH
from scalewise.analysis.study.findings import analyse_study
from scalewise.analysis.study.scaling import parse_base
from scalewise.analysis.study.study_analysis import StudyAnalysis
from scalewise.campaign.results import locate_results, read_results


def analyse_results(source: str | Path, *, base: tuple[str, ...] = (), metric: str = "auto",
                    watts_per_node: float | None = None, price_per_kwh: float | None = None,
                    include_oversubscribed: bool = False, include_stale: bool = False) -> StudyAnalysis:
    """Read the results ``source`` names (a study file, its output folder or results.sqlite) and analyse them.

    ``base`` is ``AXIS=N`` pairs (else the file's, else the smallest scale of each series); the node power and
    the price per kWh come from the command line, else the file's ``report:`` entries, else the defaults."""
    found = locate_results(source)  # a study file is parsed once, here
    study = read_results(found, include_stale=include_stale)
    declared = parse_base(base) or found.declared_base
    file_watts, file_price = found.declared_power
    watts_per_node = watts_per_node if watts_per_node is not None else file_watts
    price_per_kwh = next((p for p in (price_per_kwh, file_price) if p is not None), DEFAULT_PRICE_PER_KWH)
    return analyse_study(study, base=declared or None, metric=metric, watts_per_node=watts_per_node,
                         price_per_kwh=price_per_kwh, scaling_mode=found.scaling_mode(study),
                         include_oversubscribed=include_oversubscribed)
