"""The page's self-containment and escaping as text, the figure files, and the terminal summary."""

from __future__ import annotations

import re

from report_profiles import halo_profile, zero_call_profile
from rich.console import Console

from scalewise.analysis.run.findings import analyse
from scalewise import formatting
from scalewise.report.run.html import render_html
from scalewise.report.figure import draw_figures, write_figure_files
from scalewise.report.run.registry import FIGURES, SECTIONS
from scalewise.report.run.terminal import print_summary


def test_page_needs_no_network():
    p = halo_profile(2, 2)
    html = render_html(p, analyse(p))
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # Every src/href is inline data; nothing points at a server or another file.
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith("data:image/svg+xml;base64,") for r in refs)
    assert "<script" not in html and "@import" not in html and "url(" not in html


def test_command_and_metadata_are_escaped():
    p = halo_profile(2, 1, command=["./x", "<script>alert(1)</script>", "&amp;"])
    p.meta["mpi_library"] = "<img src=x onerror=alert(1)>"
    html = render_html(p, analyse(p))
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&amp;amp;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_registry_covers_p1_to_p6_with_docstrings():
    assert {f.ref for f in FIGURES} == {"P1", "P2", "P3", "P4", "P5", "P6"}
    assert {f.section for f in FIGURES} <= set(SECTIONS)
    assert len({f.id for f in FIGURES}) == len(FIGURES)
    a = analyse(halo_profile(2, 2))
    for f in draw_figures(a, FIGURES):
        assert f.figure is not None and (f.spec.function.__doc__ or "").startswith(f.spec.ref + ":")


def test_figure_files_are_png_and_svg(tmp_path):
    written = write_figure_files(draw_figures(analyse(halo_profile(2, 2)), FIGURES), tmp_path / "figs")
    names = sorted(p.name for p in written)
    assert names == sorted(f"{f.id}.{ext}" for f in FIGURES for ext in ("png", "svg"))
    for p in written:
        head = p.read_bytes()[:200]
        assert head.startswith(b"\x89PNG") if p.suffix == ".png" else b"<svg" in head


def test_missing_figures_are_not_written(tmp_path):
    written = write_figure_files(draw_figures(analyse(zero_call_profile()), FIGURES), tmp_path)
    # No time bins either: the two figures over time are missing too.
    assert sorted(p.name for p in written) == ["p1-mpi-vs-compute.png", "p1-mpi-vs-compute.svg"]


def summary_text(profile) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_summary(profile, console)
    return console.export_text()


def test_terminal_summary_quotes_the_analysis():
    p = halo_profile(4, 2)
    a = analyse(p)
    out = summary_text(p)
    assert formatting.pct(100 * a.breakdown.mpi_share) in out  # 20.4%
    assert f"wall time (slowest rank) {formatting.seconds(a.breakdown.wall.max)}" in out
    assert f"total bytes sent {formatting.human_bytes(a.volume.total)}" in out
    top = a.functions.iloc[0]
    line = next(ln for ln in out.splitlines() if ln.strip().startswith(top["function"]))
    for cell in (formatting.seconds(top["time"]), formatting.pct(top["pct_wall"]), formatting.count(top["calls"]),
                 formatting.human_bytes(top["bytes"])):
        assert cell in line
    assert a.findings[0].text in out
    assert "./halo2d --steps 100" in out and "Open MPI v4.1.4" in out
    # The memory high-water mark the runtime records per rank (256 MiB here), as on the page.
    assert "memory high-water mark  256 MiB (rank 0), median 256 MiB per rank" in out


def test_terminal_summary_of_zero_calls_and_markup_in_command():
    out = summary_text(zero_call_profile())
    assert "note: No MPI calls were recorded" in out and "Top MPI functions" not in out
    out = summary_text(halo_profile(2, 1, command=["./app", "[bold]x[/bold]"]))
    assert "'[bold]x[/bold]'" in out


def test_byte_axis_ticks_are_binary_and_leave_headroom():
    from matplotlib.figure import Figure

    from scalewise.report.run.figures import binary_byte_axis

    for top in (2_000_000.0, 6_000_000.0, 65_536.0, 3.0):  # 6 MB once gave ticks at 1.91, 3.81, 5.72 MiB
        ax = Figure().add_subplot()
        ax.bar([0, 1], [top / 2, top])
        binary_byte_axis(ax, top)
        ticks = [t for t in ax.get_yticks() if 0 < t <= ax.get_ylim()[1]]
        step = ticks[1] - ticks[0]
        assert step == 2 ** round(__import__("math").log2(step)), ticks  # a power of two
        assert all(t % step == 0 for t in ticks) and 4 <= len(ticks) <= 9, ticks
        assert ax.get_ylim()[1] >= 1.05 * top  # the tallest bar does not touch the frame


def test_hosts_line_counts_ranks_in_the_right_number():
    from scalewise.report.run.metadata import run_metadata

    hosts = dict(run_metadata(halo_profile(17, 1)))["hosts"]  # 16 ranks per host in this profile
    assert hosts == "2: node000 (16 ranks), node001 (1 rank)"
