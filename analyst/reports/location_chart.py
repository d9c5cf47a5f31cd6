"""The heatmap of a location question for the HTML report: EM's share per cell over the
survey's own background image, with the designer's regions outlined and named, and beside it
each cell's interval half-width, so a reader sees at once where people are, which region is
which, and where the map is signal and where noise. Region rows (groups) are the numbers to
read; when the map cannot be read at this n its title says so (the question's warning)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .charts import DESKTOP, Chart, ChartSize, responsive, wrap
from .model import GROUP, OPTION, QuestionView

if TYPE_CHECKING:  # matplotlib is imported where it draws (charts.py)
    from matplotlib.figure import Figure

OVERLAY_ALPHA = 0.6  # the shares over a background: the map stays legible beneath


def grid_of(q: QuestionView) -> tuple[np.ndarray, np.ndarray] | None:
    """(EM shares, interval half-widths) as rows x cols arrays from the cell rows ("row,col"
    labels): the map is the consistent view, the half-width the report's own interval's."""
    cells = [r for r in q.rows if r.kind == OPTION]
    at = [_cell(r.label) for r in cells]
    if not at or any(a is None for a in at) or any(r.consistent is None for r in cells):
        return None
    rows, cols = max(a[0] for a in at if a), max(a[1] for a in at if a)
    share = np.zeros((rows, cols))
    half = np.zeros((rows, cols))
    for a, row in zip(at, cells, strict=True):
        assert a is not None
        share[a[0] - 1, a[1] - 1] = row.consistent or 0.0
        if row.ci_low is not None and row.ci_high is not None:
            half[a[0] - 1, a[1] - 1] = (row.ci_high - row.ci_low) / 2
    return share, half


def _cell(label: str) -> tuple[int, int] | None:
    try:
        r, c = (int(v) for v in label.split(","))
    except ValueError:
        return None
    return r, c


def region_edges(members: tuple[str, ...]) -> list[tuple[tuple[float, float],
                                                         tuple[float, float]]]:
    """The outline of a set of cells as unit segments in plot coordinates (x = column,
    y = row, cell centres at integers): every cell side whose neighbour is not a member."""
    cells = {c for c in (_cell(m) for m in members) if c is not None}
    out = []
    for r, c in cells:
        for dr, dc, seg in ((-1, 0, ((c - .5, r - .5), (c + .5, r - .5))),
                            (1, 0, ((c - .5, r + .5), (c + .5, r + .5))),
                            (0, -1, ((c - .5, r - .5), (c - .5, r + .5))),
                            (0, 1, ((c + .5, r - .5), (c + .5, r + .5)))):
            if (r + dr, c + dc) not in cells:
                out.append(seg)
    return out


def label_cell(members: tuple[str, ...]) -> tuple[int, int]:
    """Where a region's name goes: its member nearest the centroid (first in row order on a
    tie), as the respondent's page and shared/mechanisms/location.py central_cell choose."""
    cells = sorted(c for c in (_cell(m) for m in members) if c is not None)
    rs, cs = np.array([c[0] for c in cells]), np.array([c[1] for c in cells])
    far = (rs - rs.mean()) ** 2 + (cs - cs.mean()) ** 2
    return cells[int(np.argmin(far))]


def background_image(question: Mapping[str, Any] | None) -> np.ndarray | None:
    """The survey's background (a data: URL inside the signed survey) as an RGB(A) array, or
    None (no background, or one matplotlib cannot read)."""
    url = (question or {}).get("background")
    if not isinstance(url, str) or "," not in url:
        return None
    from PIL import Image  # matplotlib's own dependency

    try:
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
            return np.asarray(image.convert("RGBA"))
    except (OSError, ValueError):
        return None


def location_chart_png(q: QuestionView, question: Mapping[str, Any] | None = None
                       ) -> Chart | None:
    """Two heatmaps side by side as a PNG, or None when there is nothing to draw. `question`
    is the survey's definition (its background)."""
    return responsive(lambda size: location_figure(q, question, size))


def location_figure(q: QuestionView, question: Mapping[str, Any] | None = None,
                    size: ChartSize = DESKTOP) -> Figure | None:
    """The figure of `location_chart_png`, drawn for `size` (on a phone the two maps are one
    above the other)."""
    from matplotlib.figure import Figure

    if q.n == 0:
        return None
    grids = grid_of(q)
    if grids is None:
        return None
    share, half = grids
    background = background_image(question)
    extent = (0.5, share.shape[1] + 0.5, share.shape[0] + 0.5, 0.5)
    side_by_side = size.width_in >= 6
    fig = Figure(figsize=(size.width_in, 4.8 if side_by_side else 1.8 * size.width_in + 1.2))
    shape = (1, 2) if side_by_side else (2, 1)
    font = size.font
    unreadable = any("cannot be read" in w for w in q.warnings)
    left = ("EM's map (cannot be read at this n: see the warning)" if unreadable
            else "estimated share per cell (EM)")
    for ax, data, title, cmap in (
            (fig.add_subplot(*shape, 1), share, wrap(left, size.legend_chars), "viridis"),
            (fig.add_subplot(*shape, 2), half, f"{q.confidence:.0%} interval half-width",
             "magma")):
        alpha = 1.0
        if background is not None:
            ax.imshow(background, extent=extent, interpolation="bilinear")
            alpha = OVERLAY_ALPHA
        image = ax.imshow(data * 100, cmap=cmap, interpolation="nearest", extent=extent,
                          alpha=alpha)
        _regions(ax, q, max(9.0, font - 3))
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
        small = side_by_side and unreadable and ax is fig.axes[0]
        ax.set_title(title, fontsize=font - (2 if small else 0))
        ax.set_xlabel("column", fontsize=max(9.0, font - 2))
        ax.set_ylabel("row", fontsize=max(9.0, font - 2))
        ax.tick_params(labelsize=max(9.0, font - 2))
        bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label("percent of respondents", fontsize=max(9.0, font - 3))
        bar.ax.tick_params(labelsize=max(9.0, font - 3))
    fig.tight_layout()
    return fig


def _regions(ax: Any, q: QuestionView, fontsize: float) -> None:
    """Outline and name every region (white under black, legible on any colour)."""
    from matplotlib import patheffects
    from matplotlib.collections import LineCollection

    for r in q.rows:
        if r.kind != GROUP or not r.members:
            continue
        edges = region_edges(r.members)
        ax.add_collection(LineCollection(edges, colors="white", linewidths=3.2))
        ax.add_collection(LineCollection(edges, colors="black", linewidths=1.4))
        row, col = label_cell(r.members)
        text = ax.text(col, row, r.display, ha="center", va="center", fontsize=fontsize,
                       color="black")
        text.set_path_effects([patheffects.withStroke(linewidth=3, foreground="white")])
