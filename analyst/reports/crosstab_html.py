"""A crosstab as one self-contained HTML page: the survey, version and both questions with their
mechanisms, heatmaps (joint shares, and shares within each row) annotated with estimate and
interval, then the tables every format shows. Too-noisy numbers are never coloured as values."""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Mapping
from html import escape
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

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
from .html import CSS, page_head

DPI = 144
CSS_DPI = 96
CELL_IN = 1.1
MAX_ANNOTATED = 400  # cells; larger maps are colour only
NOISY_FACE = "#eeeeee"
NOISY_EDGE = "#9a9a9a"
EXTRA_CSS = ("td.noisy{color:#8c959f;font-style:italic}"
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
            png, width = heatmap_png(report, kind, title)
            parts.append(f'<img class="chart" alt="{escape(title)}: heatmap" width="{width}" '
                         f'src="data:image/png;base64,{png}">')
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


def heatmap_png(report: CrosstabReport, kind: str, title: str) -> tuple[str, int]:
    """The heatmap as a base64 PNG and the CSS width at which its fonts have their size."""
    fig = heatmap_figure(report, kind, title)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    css_width = round(fig.get_figwidth() * CSS_DPI)
    return base64.b64encode(buf.getvalue()).decode("ascii"), css_width


def heatmap_figure(report: CrosstabReport, kind: str, title: str) -> Figure:
    """The grid of `kind`: colour = estimate in % clipped to [0, 100], text = estimate and
    interval half-width; too-noisy cells are grey and hatched, never coloured, and the legend
    says so. Constrained layout keeps every title and label inside the figure."""
    import numpy as np

    grid: list[list[Mapping[str, Any]]] = report.grid(kind)
    rows, cols = report.rows, report.cols
    noisy = np.array([[bool(c.get("too_noisy")) or c.get("estimate") is None for c in row]
                      for row in grid], dtype=bool).reshape(len(rows), len(cols))
    values = np.array([[c.get("estimate") if c.get("estimate") is not None else np.nan
                        for c in row] for row in grid], dtype=float).reshape(noisy.shape)
    shown = np.where(noisy, np.nan, np.clip(values, 0.0, 1.0) * 100)
    top = max(float(np.nanmax(shown)), 1.0) if np.isfinite(shown).any() else 100.0
    width = max(5.0, 2.4 + CELL_IN * len(cols))
    fig = Figure(figsize=(width, max(3.2, 2.2 + 0.6 * len(rows))), dpi=DPI,
                 layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(shown), cmap="Blues", vmin=0.0, vmax=top,
                      aspect="auto")
    for i, j in zip(*np.nonzero(noisy), strict=True):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=NOISY_FACE,
                               edgecolor=NOISY_EDGE, hatch="///", linewidth=0))
    ax.set_xticks(range(len(cols)), labels=[_short(c) for c in cols], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), labels=[_short(r) for r in rows])
    chars = int(width * 9)
    ax.set_xlabel(_wrap(report.text_of(report.cols_question), chars))
    ax.set_ylabel(_wrap(report.text_of(report.rows_question), 40))
    ax.set_title(_wrap(title, chars), fontsize=11)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label("estimated share (%),\nclipped to 0–100")
    if noisy.any():
        fig.legend(handles=[Patch(facecolor=NOISY_FACE, edgecolor=NOISY_EDGE, hatch="///",
                                  label="too noisy: not a value, not coloured")],
                   loc="outside lower center", frameon=False, fontsize=9)
    if len(rows) * len(cols) <= MAX_ANNOTATED:
        for i, row in enumerate(grid):
            for j, cell in enumerate(row):
                light = noisy[i, j] or shown[i, j] <= 0.6 * top
                ax.text(j, i, _annotation(cell), ha="center", va="center", fontsize=8,
                        color="#1f2328" if light else "white")
    return fig


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
