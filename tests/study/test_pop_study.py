"""The POP table of a study: planted per-rank compute times, hand-computed efficiencies, checked in Chromium.

Strong scaling of 8 s of work (docs/pop.md):

    ranks  useful per rank     run time      LB         CE     PE    CS          GE
    1      8                   8             1          1      1     1           1
    2      4, 4.4              5             4.2/4.4    0.88   0.84  8/8.4       0.8
    4      2, 2, 2, 4          4.5, 5, 6     2.5/4      0.8    0.5   8/10        0.4

At 4 ranks the three repetitions take 4.5, 5 and 6 s: the median one (5 s) is quoted.
"""

from __future__ import annotations

import json

import pytest
from support.chromium import Chromium
from click.testing import CliRunner
from study_synth import Planted, halo_profile

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.analysis.study.pop_table import POP_ROWS
from scalewise.cli.main import cli
from scalewise.report.style import efficiency_colour

PLANT = {1: ([8.0], [8.0, 8.0, 8.0]), 2: ([4.0, 4.4], [5.0, 5.0, 5.0]), 4: ([2.0, 2.0, 2.0, 4.0], [4.5, 5.0, 6.0])}
EXPECTED = {  # ranks -> metric -> value
    1: {"global_efficiency": 1.0, "parallel_efficiency": 1.0, "load_balance": 1.0, "communication_efficiency": 1.0,
        "computation_scalability": 1.0},
    2: {"global_efficiency": 0.8, "parallel_efficiency": 0.84, "load_balance": 4.2 / 4.4,
        "communication_efficiency": 0.88, "computation_scalability": 8 / 8.4},
    4: {"global_efficiency": 0.4, "parallel_efficiency": 0.5, "load_balance": 0.625, "communication_efficiency": 0.8,
        "computation_scalability": 0.8},
}


def busy(computes: list[float], runtime: float):
    """Every rank spans ``runtime``; rank k computes ``computes[k]`` and waits in MPI for the rest."""
    prof = halo_profile(len(computes), compute=1.0, allreduce=0.0, waitall=0.0)
    r = prof.ranks
    r["compute_time"] = computes
    r["mpi_time"] = [runtime - c for c in computes]
    r["wall"] = runtime
    return prof


def pop_study(planted):
    return planted([Planted(ranks=n, repetition=k, wall=t, profile=busy(c, t))
                    for n, (c, times) in PLANT.items() for k, t in enumerate(times)], name="pop")


def test_study_pop_table_has_the_planted_numbers(planted):
    db = pop_study(planted)
    a = analyse_study(scalewise.open_study(db))
    pop = a.pop.set_index("ranks")
    for n, want in EXPECTED.items():
        assert pop.loc[n, list(want)].to_dict() == pytest.approx(want, rel=1e-12), n
    assert pop[["serialisation_efficiency", "transfer_efficiency"]].isna().all().all()
    # The quoted 4-rank run is the 5 s repetition, and the profile table quotes the same run.
    runs = scalewise.open_study(db).runs.set_index("run_id")
    assert runs.loc[pop.loc[4, "pop_run"], "runtime"] == 5.0
    assert a.profile.set_index("ranks").loc[4, "load_balance"] == 0.625
    weak = analyse_study(scalewise.open_study(db), scaling_mode="weak").pop.set_index("ranks")
    # Weak scaling: the ideal useful time grows with the ranks, 8 s x 4 / 10 s at 4 ranks.
    assert weak["computation_scalability"].to_dict() == pytest.approx({1: 1.0, 2: 8 * 2 / 8.4, 4: 8 * 4 / 10.0})


def test_study_json_carries_the_pop_table(planted):
    res = CliRunner().invoke(cli, ["study", "report", str(pop_study(planted)), "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["ranks"]: r for r in json.loads(res.stdout)["tables"]["pop"]}
    assert rows[4]["global_efficiency"] == pytest.approx(0.4) and rows[4]["serialisation_efficiency"] is None


CELLS = """JSON.stringify(Array.from(document.querySelectorAll('table.pop-table tr[data-pop] td[data-metric]')).map(
  td => ({metric: td.dataset.metric, value: td.dataset.value, text: td.textContent.trim(),
          colour: getComputedStyle(td).backgroundColor,
          scale: td.closest('table').rows[0].cells[td.cellIndex].dataset.scale})))"""


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_study_page_shows_the_pop_table_in_colour(planted, tmp_path, chromium, artifacts):
    page = tmp_path / "pop.html"
    res = CliRunner().invoke(cli, ["study", "report", str(pop_study(planted)), "-o", str(page)])
    assert res.exit_code == 0, res.output
    with Chromium(chromium) as b:
        b.open(page)
        b.screenshot(artifacts / "pop.png")
        assert b.errors() == []
        labels = json.loads(b.evaluate("JSON.stringify(Array.from(document.querySelectorAll("
                                       "'table.pop-table tr[data-pop]')).map(tr => tr.dataset.pop))"))
        cells = json.loads(b.evaluate(CELLS))
    assert labels == [key for key, _, _ in POP_ROWS]
    assert len(cells) == len(POP_ROWS) * 3
    for c in cells:
        n = int(c["scale"])
        if c["metric"] in ("serialisation_efficiency", "transfer_efficiency"):
            assert c["text"] == "\u2014" and c["value"] == "nan"
            continue
        want = EXPECTED[n][c["metric"]]
        assert float(c["value"]) == pytest.approx(want, rel=1e-12)
        assert c["text"] == f"{100 * want:.1f}%"
        assert c["colour"] == _rgb(efficiency_colour(want)), c
    # POP's thresholds on the continuous scale: 40% global efficiency red, 100% green.
    ge = {int(c["scale"]): c["colour"] for c in cells if c["metric"] == "global_efficiency"}
    assert ge[4] == _rgb(efficiency_colour(0.4)) == "rgb(165, 0, 38)" and ge[1] == "rgb(0, 104, 55)"
