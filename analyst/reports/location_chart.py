"""The heatmap of a location question for the HTML report: EM shares per cell, and beside it
each cell's interval half-width, so a reader sees at once where the map is signal and where it
is noise. Region rows (groups) are the numbers to read; the map shows where people are."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .charts import FONT, Chart, chart_of
from .model import OPTION, QuestionView


def grid_of(q: QuestionView) -> tuple[np.ndarray, np.ndarray] | None:
    """(shares, half-widths) as rows x cols arrays from the cell rows ("row,col" labels)."""
    cells = [r for r in q.rows if r.kind == OPTION]
    try:
        at = [tuple(int(v) for v in r.label.split(",")) for r in cells]
    except ValueError:
        return None
    if not at or any(r.estimate is None for r in cells):
        return None
    rows, cols = max(r for r, _ in at), max(c for _, c in at)
    share = np.zeros((rows, cols))
    half = np.zeros((rows, cols))
    for (r, c), row in zip(at, cells, strict=True):
        share[r - 1, c - 1] = row.estimate or 0.0
        if row.ci_low is not None and row.ci_high is not None:
            half[r - 1, c - 1] = (row.ci_high - row.ci_low) / 2
    return share, half


def location_chart_png(q: QuestionView) -> Chart | None:
    """Two heatmaps side by side, or None when there is nothing to draw."""
    if q.n == 0:
        return None
    grids = grid_of(q)
    if grids is None:
        return None
    share, half = grids
    fig = Figure(figsize=(9.0, 4.4))
    for ax, data, title, cmap in (
            (fig.add_subplot(1, 2, 1), share, "estimated share per cell (EM)", "viridis"),
            (fig.add_subplot(1, 2, 2), half, f"{q.confidence:.0%} interval half-width",
             "magma")):
        image = ax.imshow(data * 100, cmap=cmap, interpolation="nearest",
                          extent=(0.5, data.shape[1] + 0.5, data.shape[0] + 0.5, 0.5))
        ax.set_title(title, fontsize=FONT)
        ax.set_xlabel("column", fontsize=FONT - 2)
        ax.set_ylabel("row", fontsize=FONT - 2)
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label("percent of respondents", fontsize=FONT - 3)
    fig.tight_layout()
    return chart_of(fig)
