"""A figure-of-merit pattern that matches several different values: the study says which counts, or the run fails
naming the matches."""

from __future__ import annotations

import pytest
from support.swtest import stored_rows

from scalewise.campaign.evaluate import regex_fom
from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study
from scalewise.campaign.studyfile import Fom


def test_several_matches_need_a_declared_rule(swtest_dir, write_study):
    """swtest prints ARGV[0]= .. ARGV[2]=: the pattern on the index matches 0, 1 and 2 in every run."""
    apps = ""
    for name, match in (("unset", ""), ("first", ", match: first"), ("last", ", match: last"),
                        ("mean", ", match: mean")):
        apps += (f"  {name}:\n    command: [\"{swtest_dir}/{{mpi}}/swtest\", --size, tiny]\n"
                 f"    fom: {{source: regex, pattern: 'ARGV\\[([0-9]+)\\]='{match}}}\n")
    text = f"name: fommatch\napplications:\n{apps}axes:\n  ranks: [1]\n  mpi: [mpich]\ntimeout: 60\n"
    loaded = load_study(write_study(text))
    run_study(loaded, "local")
    runs = {r["app"]: r for r in stored_rows(loaded, "SELECT * FROM runs")}
    assert runs["unset"]["status"] == "failed" and runs["unset"]["fom"] is None
    assert runs["unset"]["reason"] == ("figure of merit ambiguous: /ARGV\\[([0-9]+)\\]=/ matched 3 different values "
                                       "(0, 1, 2); set fom.match to first, last or mean")
    assert {a: (runs[a]["status"], runs[a]["fom"]) for a in ("first", "last", "mean")} == {
        "first": ("ok", 0.0), "last": ("ok", 2.0), "mean": ("ok", 1.0)}


@pytest.mark.parametrize("stdout, match, expected", [
    ("t=1.5\nt=1.5\n", None, (1.5, None)),  # one value printed twice is that value
    ("t=1\nt=2\nt=4\nt=8\nt=16\nt=32\n", None, (None, "figure of merit ambiguous: /t=([0-9.]+)/ matched 6 different "
                                                       "values (1, 2, 4, 8, 16, ... (6 matches)); set fom.match to "
                                                       "first, last or mean")),
    ("t=1\nt=2\nt=6\n", "mean", (3.0, None)),
    ("t=.\n", None, (None, "figure of merit not a number: /t=([0-9.]+)/ matched '.'")),
    ("nothing\n", "last", (None, "figure of merit not found: no number matched /t=([0-9.]+)/")),
])
def test_regex_rule(stdout, match, expected):
    assert regex_fom(Fom(source="regex", pattern=r"t=([0-9.]+)", match=match), stdout) == expected
