"""The P8 legend of the study page in real headless Chromium: beside the panels, never over a bar, its text at
10 px or more as the page shows it, also when many panels make the figure wider than the page."""

from __future__ import annotations

import pytest
from support.chromium import Chromium
from click.testing import CliRunner
from support.legends import assert_legends_clear, legends
from study_synth import Planted, halo_profile, mpi_race

from scalewise.cli.main import cli


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium) as b:
        yield b


def _grid() -> list[Planted]:
    """Two apps x two MPIs x two transports at 1 and 2 ranks: P8 draws a panel per context, eight in all."""
    return [Planted(app=app, mpi=mpi, transport=t, ranks=r, wall=20.0 / r,
                    profile=halo_profile(r, 15.0 / r, 0.5 * r + (mpi == "mpich"), 1.0 + (t == "tcp")))
            for app in ("halo", "wave") for mpi in ("openmpi", "mpich") for t in ("ucx", "tcp") for r in (1, 2)]


@pytest.mark.parametrize("name,runs", [("one-panel", mpi_race()), ("eight-panels", _grid())])
def test_p8_legend_stands_beside_the_bars(browser, artifacts, planted, name, runs):
    page = artifacts / f"legend-{name}.html"
    result = CliRunner().invoke(cli, ["study", "report", str(planted(runs, name)), "-o", str(page)])
    assert result.exit_code == 0, result.output
    browser.open(page)
    browser.screenshot(artifacts / f"legend-{name}.png")
    p8 = [f for f in legends(browser) if f["figure"] == "p8-comm-share"]
    assert_legends_clear(p8, {"p8-comm-share"})
    assert p8[0]["bars"] >= 2 * len(p8) and p8[0]["texts"] >= 3  # it was checked against real bars
