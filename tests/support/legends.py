"""Where a page's figure legends land, measured in the browser at the page's display size.

Each figure's SVG is parsed out of its data: URI and laid over the page at the
size its <img> is shown, so every box below is in CSS pixels as the reader sees
it.  For every legend: its smallest text size, and the plot areas (each axes'
background) and bars (filled patches of an axes) it intersects."""

from __future__ import annotations

import json

LEGENDS = r"""(() => {
  const area = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left))
                       * Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const filled = p => { const f = (p.getAttribute('style') || '').match(/fill:\s*([^;]+)/);
                        return f && !['none', '#ffffff'].includes(f[1].trim()); };
  const out = [];
  for (const fig of document.querySelectorAll('figure[data-figure]')) {
    const img = fig.querySelector('img');
    if (!img) continue;
    const svg = new DOMParser().parseFromString(atob(img.src.split(',')[1]), 'image/svg+xml').documentElement;
    const shown = img.getBoundingClientRect(), inner = img.clientWidth;
    const scale = inner / parseFloat(svg.getAttribute('viewBox').split(' ')[2]);  // CSS px per SVG unit (pt)
    svg.setAttribute('width', inner); svg.setAttribute('height', img.clientHeight);
    const holder = document.createElement('div');
    holder.style.cssText = `position:absolute; left:${shown.left + window.scrollX + img.clientLeft}px;`
                         + ` top:${shown.top + window.scrollY + img.clientTop}px`;
    holder.appendChild(svg); document.body.appendChild(holder);
    const frame = svg.getBoundingClientRect();
    const axes = Array.from(svg.querySelectorAll('g[id^="axes_"]'));
    const plots = axes.map(a => a.querySelector(':scope > g[id^="patch_"] > path')).filter(p => p);
    const bars = axes.flatMap(a => Array.from(a.querySelectorAll(':scope > g[id^="patch_"] > path')).slice(1))
                     .filter(filled);
    for (const legend of svg.querySelectorAll('g[id^="legend_"]')) {
      const box = legend.getBoundingClientRect();
      const sizes = Array.from(legend.querySelectorAll('text'))
        .map(t => scale * parseFloat(t.getAttribute('style').match(/font-size:\s*([\d.]+)px/)[1]));
      out.push({figure: fig.dataset.figure, text_px: Math.min(...sizes), texts: sizes.length,
                over_plots: plots.filter(p => area(box, p.getBoundingClientRect()) > 0.5).length,
                over_bars: bars.filter(p => area(box, p.getBoundingClientRect()) > 0.5).length,
                bars: bars.length,
                inside: box.left >= frame.left - 0.5 && box.right <= frame.right + 0.5
                        && box.top >= frame.top - 0.5 && box.bottom <= frame.bottom + 0.5});
    }
    holder.remove();
  }
  return JSON.stringify(out);
})()"""


def legends(browser) -> list[dict]:
    return json.loads(browser.evaluate(LEGENDS))


def assert_legends_clear(found: list[dict], figures: set[str]) -> None:
    """Every legend of ``figures`` is readable, whole, and beside the plots: over no plot area, no bar."""
    assert {f["figure"] for f in found} == figures, found
    for f in found:
        assert f["texts"] > 0 and f["text_px"] >= 10.0, f
        assert f["inside"] and f["over_plots"] == 0 and f["over_bars"] == 0, f
