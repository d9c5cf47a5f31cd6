"""A crosstab as one self-contained HTML page: the survey, version and both questions with their
mechanisms, heatmaps (joint shares, and shares within each row) annotated with estimate and
interval, then the tables every format shows. Too-noisy numbers are never coloured as values."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from .charts import DESKTOP, DPI, Chart, ChartSize, responsive
from .crosstab_view import (
    COL_GIVEN_ROW,
    EXPLANATION,
    FLOOR,
    FLOOR_MARK,
    JOINT,
    TOO_NOISY,
    CrosstabReport,
    small_n_line,
    std_error_line,
    summary_line,
    tables,
)
from .html import CSS, chart_img, page_head

if TYPE_CHECKING:  # matplotlib is imported where it draws (charts.py)
    from matplotlib.figure import Figure

CELL_IN = 1.1
MAX_ANNOTATED = 400  # cells; larger maps are colour only
NOISY_FACE = "#eeeeee"
NOISY_EDGE = "#9a9a9a"
EXTRA_CSS = ("td.noisy{color:#8c959f;font-style:italic}.heatmap img.chart{max-width:none}"
             "h2 .qid{font-size:.65em;font-weight:normal}h2{font-size:1.15em}")


def render_crosstab_html(report: CrosstabReport) -> str:
    d = report.document
    parts = [
        *page_head(f"{report.title}: crosstab", CSS + EXTRA_CSS),
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="sub">Survey <span class="qid">{escape(str(d.get("survey", "?")))}</span> '
        f"version {escape(str(d.get('version', '?')))}"
        + (f" &middot; {int(d['n_submissions']):,} submissions"
           if isinstance(d.get("n_submissions"), int) else "") + "</p>",
        _questions(report),
        f'<p class="meta">{escape(summary_line(report))}</p>',
        f'<p class="meta">{escape(std_error_line(report))}</p>',
        *([] if (small := small_n_line(report)) is None
          else [f'<p class="small-n"><strong>{escape(small)}</strong></p>']),
        f'<div class="explain"><p>{escape(EXPLANATION)}</p></div>',
    ]
    if report.n >= 2:
        for kind, title in ((JOINT, "Joint shares (% of those who answered both)"),
                            (COL_GIVEN_ROW, "Shares within each row (each row sums to 100%)")):
            chart = heatmap_chart(report, kind, title)
            # shown at its drawn width (its text at its point size), scrolling when wider
            parts.append(f'<div class="scroll heatmap">{chart_img(chart, title + ": heatmap")}'
                         "</div>")
    else:
        parts.append('<p class="note">Fewer than 2 submissions answered both questions: '
                     "nothing to estimate.</p>")
    for table in tables(report):
        parts.append(f"<h2>{table.title(lambda qid: _html_name(report, qid), report)}</h2>")
        head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
        body = "".join(
            "<tr>" + "".join(f'<td{" class=noisy" if c == TOO_NOISY else ""}>{escape(c)}</td>'
                             for c in row) + "</tr>" for row in table.body)
        parts.append(f'<div class="scroll"><table><tr>{head}</tr>{body}</table></div>')
    notes = "".join(f"<li>{escape(n)}</li>" for n in d.get("notes", []))
    parts.append(f'<ul class="note">{notes}</ul></main></body></html>')
    return "\n".join(parts) + "\n"


def _html_name(report: CrosstabReport, qid: str) -> str:
    """A question in a heading: its text, the id in small print."""
    text = report.text_of(qid)
    return escape(text) + ("" if text == qid else f' <span class="qid">{escape(qid)}</span>')


def _questions(report: CrosstabReport) -> str:
    items = "".join(
        f"<li>{side_name}: {_html_name(report, report.document[side]['question'])} "
        f"&middot; mechanism {escape(report.mechanism_of(side))}</li>"
        for side, side_name in (("rows", "Rows"), ("cols", "Columns")))
    return f'<ul class="meta">{items}</ul>'


def heatmap_chart(report: CrosstabReport, kind: str, title: str) -> Chart:
    """The heatmap drawn for a desktop and for a phone (smaller cells, the same fonts)."""
    chart = responsive(lambda size: heatmap_figure(report, kind, title, size))
    assert chart is not None
    return chart


def precision(half_width: float | None, top: float) -> float:
    """How much of a cell's colour to keep: 1 - (its interval's width / the colour scale's
    range), at least 0. A cell whose interval spans the whole scale (51% ±36 on a 0-51% scale)
    is white: its colour would say nothing; a precise one keeps almost all of it."""
    if half_width is None or not top > 0:
        return 1.0
    return min(1.0, max(0.0, 1.0 - 2.0 * half_width / top))


def heatmap_figure(report: CrosstabReport, kind: str, title: str,
                   size: ChartSize = DESKTOP) -> Figure:
    """The grid of `kind`: colour = estimate in % clipped to [0, 100], faded toward white by
    the interval's width (`precision`: colour encodes the estimate only where it is precise),
    text = estimate and interval half-width; too-noisy cells are grey and hatched, never
    coloured, and the legend says so. Constrained layout keeps every title and label inside
    the figure; no text is below 9 pt (12 CSS px at the drawn width)."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    grid: list[list[Mapping[str, Any]]] = report.grid(kind)
    rows, cols = report.shown_rows, report.shown_cols
    noisy = np.array([[bool(c.get("too_noisy")) or c.get("estimate") is None for c in row]
                      for row in grid], dtype=bool).reshape(len(rows), len(cols))
    values = np.array([[c.get("estimate") if c.get("estimate") is not None else np.nan
                        for c in row] for row in grid], dtype=float).reshape(noisy.shape)
    shown = np.where(noisy, np.nan, np.clip(values, 0.0, 1.0) * 100)
    top = max(float(np.nanmax(shown)), 1.0) if np.isfinite(shown).any() else 100.0
    keep = np.array([[precision(_half_width(c), top) for c in row] for row in grid],
                    dtype=float).reshape(noisy.shape)
    phone = size.width_in < 6
    cell = CELL_IN * (0.55 if phone else 1.0)
    small = max(9.0, size.font - 4)  # annotations, legend: 9 pt at least
    width = max(size.width_in if phone else 5.0, (1.9 if phone else 2.4) + cell * len(cols))
    fig = Figure(figsize=(width, max(3.2, 2.2 + (0.5 if phone else 0.6) * len(rows))), dpi=DPI,
                 layout="constrained")
    FigureCanvasAgg(fig)
    fig.patch.set_alpha(0.0)  # its scroll wrapper's edge shadows show through (html.py .scroll)
    ax = fig.add_subplot()
    norm, cmap = Normalize(vmin=0.0, vmax=top), colormaps["Blues"]
    rgba = cmap(norm(np.nan_to_num(shown)))
    rgba[..., :3] = 1.0 - keep[..., None] * (1.0 - rgba[..., :3])  # fade toward white
    rgba[noisy] = (1.0, 1.0, 1.0, 0.0)
    ax.imshow(rgba, aspect="auto", interpolation="nearest")
    for i, j in zip(*np.nonzero(noisy), strict=True):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=NOISY_FACE,
                               edgecolor=NOISY_EDGE, hatch="///", linewidth=0))
    ticks = max(9.0, size.font - 3)
    limit = 12 if phone else 18
    ax.set_xticks(range(len(cols)), labels=[_short(c, limit) for c in cols], rotation=30,
                  ha="right", fontsize=ticks)
    ax.set_yticks(range(len(rows)), labels=[_short(r, limit) for r in rows], fontsize=ticks)
    chars = int(width * (8 if phone else 9))
    ax.set_xlabel(_wrap(report.text_of(report.cols_question), chars), fontsize=ticks)
    ax.set_ylabel(_wrap(report.text_of(report.rows_question), 24 if phone else 40),
                  fontsize=ticks)
    ax.set_title(_wrap(title, chars), fontsize=size.font - 2)
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax)
    bar.set_label("estimated share (%),\nclipped to 0–100", fontsize=small)
    bar.ax.tick_params(labelsize=small)
    legend = [Patch(facecolor="white", edgecolor="#9a9a9a",
                    label="paler: a wider interval (white: as wide as the colour scale)")]
    if noisy.any():
        legend.append(Patch(facecolor=NOISY_FACE, edgecolor=NOISY_EDGE, hatch="///",
                            label="too noisy: not a value, not coloured"))
    fig.legend(handles=legend, loc="outside lower center", frameon=False, fontsize=small,
               ncol=1 if phone else len(legend))
    if len(rows) * len(cols) <= MAX_ANNOTATED:
        for i, row in enumerate(grid):
            for j, cell_doc in enumerate(row):
                r, g, b = rgba[i, j, :3]
                light = noisy[i, j] or 0.299 * r + 0.587 * g + 0.114 * b > 0.55
                ax.text(j, i, _annotation(cell_doc), ha="center", va="center", fontsize=small,
                        color="#1f2328" if light else "white")
    return fig


def _half_width(cell: Mapping[str, Any]) -> float | None:
    """A cell's interval half-width in percentage points (None without an interval)."""
    low, high = cell.get("ci_low"), cell.get("ci_high")
    return None if low is None or high is None else (high - low) * 50


def _annotation(cell: Mapping[str, Any]) -> str:
    estimate, low, high = cell.get("estimate"), cell.get("ci_low"), cell.get("ci_high")
    if cell.get("too_noisy"):
        return TOO_NOISY.replace(" ", "\n")
    if estimate is None:
        return "–"
    text = f"{estimate * 100:.0f}%"
    if low is not None and high is not None:
        text += f"\n±{(high - low) * 50:.0f}"
        if cell.get("std_error_method") == FLOOR:
            text += FLOOR_MARK
    return text


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, max(width, 20))) or text


def _short(label: str, limit: int = 18) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"
