"""What the analyst reports' layout tests check in Chromium at a phone's width (shared by
test_report_layout.py and test_regress_layout.py).

- chart text: the smallest font a chart draws, at the size the browser shows the chosen image
  (a <picture>'s phone drawing or the desktop one), in CSS px: font_pt · 96/72 · shown width /
  natural width (the PNG is drawn at 144 dpi: its natural CSS width is its pixels · 96/144);
- the scroll cue: with the table's own text, borders and cell backgrounds made transparent, only
  the wrapper's background is left; a shadow must darken the edge the table can scroll toward,
  and only that edge (none at all for a table that fits).
"""

from __future__ import annotations

import io
from typing import Any

MIN_TEXT_PX = 12.0 * 0.99  # 12 px, less the rounding of a chart's width to whole CSS px
CHART_DPI = 144

CHART_TEXT = """() => [...document.querySelectorAll('img.chart')].map(img => {
    const source = img.closest('picture')?.querySelector('source');
    const phone = source !== null && source !== undefined && img.currentSrc !== img.src;
    const pt = parseFloat((phone ? source : img).dataset.fontPt);
    const natural = img.naturalWidth * 96 / CHART_DPI;
    return {alt: img.alt, phone, px: pt * 96 / 72 * img.getBoundingClientRect().width / natural};
})""".replace("CHART_DPI", str(CHART_DPI))

HIDE_TABLE_INK = """() => { const s = document.createElement('style');
    s.textContent = '.scroll table, .scroll th, .scroll td, .scroll tr {color: transparent ' +
      '!important; background: transparent !important; border-color: transparent !important}';
    document.head.appendChild(s); }"""


def chart_text_sizes(page: Any) -> list[dict[str, Any]]:
    """Every chart's smallest text as shown, in CSS px, and whether the phone drawing shows."""
    return page.evaluate(CHART_TEXT)


def edge_darkness(page: Any, index: int) -> tuple[float, float]:
    """(left, right): how much darker than white the outer 4 CSS px of the index-th .scroll
    wrapper are (0 = white), read from a screenshot of it."""
    from matplotlib.image import imread

    wrapper = page.locator(".scroll").nth(index)
    pixels = imread(io.BytesIO(wrapper.screenshot()))[:, :, :3]
    strip = max(1, round(4 * pixels.shape[1] / wrapper.bounding_box()["width"]))
    return (float(1 - pixels[:, :strip].mean()), float(1 - pixels[:, -strip:].mean()))


def check_scroll_cues(page: Any) -> int:
    """Assert every table wrapper shows a shadow exactly toward where it can scroll; the
    number of wrappers that overflow (so a test can require some)."""
    page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.evaluate(HIDE_TABLE_INK)
    overflowing = 0
    count = page.locator(".scroll").count()
    for i in range(count):
        wrapper = page.locator(".scroll").nth(i)
        if wrapper.locator("table").count() == 0:
            continue
        wide = wrapper.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        wrapper.evaluate("e => { e.scrollLeft = 0; }")
        left, right = edge_darkness(page, i)
        assert left < 0.01, f"table {i}: a shadow on the left before any scrolling"
        if not wide:
            assert right < 0.01, f"table {i} fits, yet shows a scroll shadow"
            continue
        overflowing += 1
        assert right > 0.03, f"table {i} scrolls sideways with no cue at its right edge"
        wrapper.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
        left, right = edge_darkness(page, i)
        assert left > 0.03 and right < 0.01, f"table {i}: the cue does not follow the scroll"
    return overflowing
