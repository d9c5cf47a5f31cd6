"""A crosstab as one self-contained HTML page: heatmaps (joint shares, and shares within each
row) annotated with estimate and interval, then the tables every format shows."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from html import escape
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .crosstab_view import (
    COL_GIVEN_ROW,
    EXPLANATION,
    JOINT,
    CrosstabReport,
    summary_line,
    tables,
)
from .html import CSS

DPI = 144
CELL_IN = 1.1
MAX_ANNOTATED = 400  # cells; larger maps are colour only


def render_crosstab_html(report: CrosstabReport) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(report.title)}: crosstab</title>",
        f"<style>{CSS}td.noisy{{color:#8c959f;font-style:italic}}</style></head><body><main>",
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="sub">{escape(summary_line(report))}</p>',
        f'<div class="explain"><p>{escape(EXPLANATION)}</p></div>',
    ]
    if report.n >= 2:
        for kind, title in ((JOINT, "Joint shares"),
                            (COL_GIVEN_ROW, f"{report.cols_question} within each "
                                            f"{report.rows_question}")):
            png = heatmap_png(report, kind, title)
            parts.append(f'<img class="chart" alt="{escape(title)} heatmap" '
                         f'src="data:image/png;base64,{png}">')
    else:
        parts.append('<p class="note">Fewer than 2 submissions answered both questions: '
                     "nothing to estimate.</p>")
    for table in tables(report):
        parts.append(f"<h2>{escape(table.title)}</h2>")
        head = "".join(f"<th>{escape(h)}</th>" for h in table.header)
        body = "".join(
            "<tr>" + "".join(f'<td{" class=noisy" if c == "too noisy" else ""}>{escape(c)}</td>'
                             for c in row) + "</tr>" for row in table.body)
        parts.append(f"<table><tr>{head}</tr>{body}</table>")
    notes = "".join(f"<li>{escape(n)}</li>" for n in report.document.get("notes", []))
    parts.append(f'<ul class="note">{notes}</ul></main></body></html>')
    return "\n".join(parts) + "\n"


def heatmap_png(report: CrosstabReport, kind: str, title: str) -> str:
    """The grid of `kind` as a base64 PNG: colour = estimate clipped to [0, 1], text =
    estimate and interval half-width (grey and hatched where too noisy)."""
    import numpy as np

    grid: list[list[Mapping[str, Any]]] = report.grid(kind)
    rows, cols = report.rows, report.cols
    values = np.array([[c.get("estimate") if c.get("estimate") is not None else np.nan
                        for c in row] for row in grid], dtype=float)
    shown = np.clip(values, 0.0, 1.0)
    top = max(float(np.nanmax(shown)) if np.isfinite(shown).any() else 0.0, 1e-9)
    fig = Figure(figsize=(max(4.5, 1.6 + CELL_IN * len(cols)),
                          max(2.5, 1.2 + 0.6 * len(rows))), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    image = ax.imshow(shown, cmap="Blues", vmin=0.0, vmax=top, aspect="auto")
    ax.set_xticks(range(len(cols)), labels=[_short(c) for c in cols], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), labels=[_short(r) for r in rows])
    ax.set_xlabel(report.cols_question)
    ax.set_ylabel(report.rows_question)
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label="estimated share (clipped at 0)")
    if len(rows) * len(cols) <= MAX_ANNOTATED:
        for i, row in enumerate(grid):
            for j, cell in enumerate(row):
                ax.text(j, i, _annotation(cell), ha="center", va="center", fontsize=8,
                        color="white" if shown[i, j] > 0.6 * top else "#1f2328")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _annotation(cell: Mapping[str, Any]) -> str:
    estimate, low, high = cell.get("estimate"), cell.get("ci_low"), cell.get("ci_high")
    if estimate is None:
        return "–"
    text = f"{estimate * 100:.0f}%"
    if low is not None and high is not None:
        text += f"\n±{(high - low) * 50:.0f}"
    if cell.get("too_noisy"):
        text += "\ntoo noisy"
    return text


def _short(label: str, limit: int = 18) -> str:
    return label if len(label) <= limit else label[:limit - 1] + "…"
