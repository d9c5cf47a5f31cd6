"""Matplotlib charts for the HTML report: bars with interval error bars, as base64 PNG.

Figures are built with the object API on the Agg canvas (no pyplot global state, no display),
so rendering is safe in a server thread. PNG rather than SVG: the page then holds no XML
namespace URLs at all and looks the same in every viewer.

Every chart is drawn twice, for the width it is shown at (`responsive`): a 9-inch figure for a
desktop column, and a PHONE one drawn for a ~340 CSS px column with its own fonts, label
wrapping and legend columns. A desktop figure scaled into a phone's column showed its 13 pt
text at ~6 px; the page's <picture> picks the phone drawing below PHONE_MAX_CSS px, where it is
shown at (about) its natural size, so its text has its point size (11 pt: 14.7 CSS px).

Matplotlib is imported inside the functions that draw, here and in every report module that
charts: it costs ~0.4 s, which every `ldpsurvey` command paid at start, `--help` included
(tests/test_cli_start.py keeps it out of the command's start).
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ldpsurvey.shared.estimand import mean_label
from ldpsurvey.shared.question_types.base import DISTRIBUTION as DISTRIBUTION_CHART

from .model import (
    ASKED_GROUP,
    ASKED_MEAN,
    ASKED_OPTION,
    DISTRIBUTION,
    GROUP,
    MAX_LISTED_OPTIONS,
    MEAN,
    OPTION,
    QUANTILE,
    QuestionView,
    Row,
    Truth,
    listed_options,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

WIDTH_IN = 9.0
DPI = 144
CSS_DPI = 96  # CSS pixels per inch: a chart shown at this scale has true point sizes
FONT = 13
PHONE_MAX_CSS = 600  # viewport width (CSS px) at and below which the phone drawing is shown
BAR = "#3b6ea8"
GROUP_BAR = "#7a9e4a"
ASKED_BAR = "#8a6bb0"  # skip logic: the shares among those asked
TRUTH = "#c23b22"
NEGATIVE_SHADE = "#f1f1f1"
LEGEND_ROW_IN = 0.28


@dataclass(frozen=True)
class ChartSize:
    """What a chart is drawn for: its width, its largest font (others a point or two less), the
    characters per label line and across the legend."""

    width_in: float
    font: float
    wrap: int
    legend_chars: int

    @property
    def scale(self) -> float:
        """Heights and marker sizes relative to the desktop drawing."""
        return self.font / FONT


DESKTOP = ChartSize(WIDTH_IN, FONT, 26, 85)
# 340 CSS px: a 360 px phone's column less the page's padding; 11 pt is 14.7 CSS px there.
PHONE = ChartSize(340 / CSS_DPI, 11, 16, 36)


@dataclass(frozen=True)
class Chart:
    """A PNG as base64, the width in CSS pixels at which its fonts have their point size, its
    smallest font (points), and the drawing for a phone's width when there is one."""

    png_base64: str
    css_width: int
    min_font_pt: float = 0.0
    phone: Chart | None = None


def chart_png(q: QuestionView, truth: Truth | None = None) -> Chart | None:
    """The chart of one question, or None when nobody has answered it yet."""
    if q.n == 0:
        return None
    draw = integer_chart if q.unit.chart == DISTRIBUTION_CHART else frequency_chart
    return responsive(lambda size: draw(q, truth, size))


def responsive(build: Callable[[ChartSize], Figure | None]) -> Chart | None:
    """The figure `build` draws for the desktop, with the one it draws for a phone."""
    desktop = build(DESKTOP)
    if desktop is None:
        return None
    phone = build(PHONE)
    return replace(chart_of(desktop), phone=None if phone is None else chart_of(phone))


def chart_of(fig: Figure) -> Chart:
    """A figure as an embeddable PNG, with the CSS width at which its fonts have their size
    and the smallest font of any text drawn (measured on the drawn figure)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    buf = io.BytesIO()
    FigureCanvasAgg(fig)
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    width_px = round(fig.get_figwidth() * DPI)
    fonts = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    return Chart(base64.b64encode(buf.getvalue()).decode("ascii"),
                 css_width=round(width_px * CSS_DPI / DPI), min_font_pt=min(fonts, default=0.0))


def wrap(label: str, width: int = 26) -> str:
    return "\n".join(textwrap.wrap(label, width)) or label


def frequency_chart(q: QuestionView, truth: Truth | None,
                    size: ChartSize = DESKTOP) -> Figure | None:
    """Horizontal bars, one per option then one per group, with the interval as error bar;
    a question with skip logic adds its shares among those asked (issue 39), in their own
    colour.

    Questions with many options chart the options `listed_options` picks, the same ones the
    table lists.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    listed, hidden = listed_options(q)
    options = [r for r in listed if r.estimate is not None]
    rows = options + [r for r in q.of_kind(GROUP) if r.estimate is not None]
    asked = [r for r in q.of_kind(ASKED_OPTION) + q.of_kind(ASKED_GROUP)
             if None not in (r.estimate, r.ci_low, r.ci_high, r.consistent)]
    rows += asked
    if not rows:
        return None
    suffix = {OPTION: "", GROUP: " (group)", ASKED_OPTION: f" ({q.among_title})",
              ASKED_GROUP: f" (group, {q.among_title})"}
    labels = [wrap(r.display + suffix[r.kind], size.wrap) for r in rows]
    height = size.scale * (1.3 + sum(0.34 + 0.2 * label.count("\n") for label in labels))
    fig = Figure(figsize=(size.width_in, max(2.0 * size.scale, height)), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(rows)))
    est = [r.estimate * 100 for r in rows]
    low = [(r.estimate - r.ci_low) * 100 for r in rows]
    high = [(r.ci_high - r.estimate) * 100 for r in rows]
    colors = [{GROUP: GROUP_BAR, ASKED_OPTION: ASKED_BAR, ASKED_GROUP: ASKED_BAR}.get(r.kind, BAR)
              for r in rows]
    ax.barh(ys, est, color=colors, height=0.62, zorder=2)
    ax.errorbar(est, ys, xerr=[low, high], fmt="none", ecolor="#222222", elinewidth=1.4,
                capsize=5, zorder=3)
    ax.scatter([r.consistent * 100 for r in rows], ys, marker="D", s=34 * size.scale ** 2,
               facecolor="white", edgecolor="#222222", zorder=4)
    handles = [Patch(color=BAR, label="estimate (option)"),
               Line2D([], [], color="#222222", marker="|", markersize=10, linewidth=1.4,
                      label=f"{q.confidence:.0%} interval"),
               Line2D([], [], linestyle="none", marker="D", markerfacecolor="white",
                      markeredgecolor="#222222", label="consistent view")]
    if any(r.kind == GROUP for r in rows):
        handles.insert(1, Patch(color=GROUP_BAR, label="estimate (group)"))
    if asked:
        handles.insert(1, Patch(color=ASKED_BAR, label=f"estimate {q.among_title}"))
    if truth is not None:
        tv = [truth.of(q.id, r.kind, r.label) for r in rows]
        pts = [(t * 100, y) for t, y in zip(tv, ys, strict=True) if t is not None]
        if pts:
            ax.scatter(*zip(*pts, strict=True), marker="|", s=420 * size.scale ** 2,
                       linewidths=2.6, color=TRUTH, zorder=5)
            handles.append(Line2D([], [], linestyle="none", marker="|", markersize=14,
                                  markeredgewidth=2.6, color=TRUTH, label="true value"))
    lo = min(0.0, *(r.ci_low * 100 for r in rows))
    hi = max(*(r.ci_high * 100 for r in rows), *(r.consistent * 100 for r in rows), 1.0)
    pad = 0.06 * (hi - lo)
    ax.set_xlim(lo - (pad if lo < 0 else 0), hi + pad)
    if lo < 0:
        ax.axvspan(lo - pad, 0, color=NEGATIVE_SHADE, zorder=0)
        handles.append(Patch(facecolor=NEGATIVE_SHADE, edgecolor="#bbbbbb",
                             label="below 0%: noise around a small share"))
    what = mean_label(q)
    for mean in q.of_kind(MEAN):  # ordinal: the mean score; multiselect: options selected
        if mean.estimate is not None:
            handles.append(Line2D([], [], linestyle="none",
                                  label=f"{what} {mean.estimate:.2f} "
                                        f"[{mean.ci_low:.2f}, {mean.ci_high:.2f}]"))
    if q.overlapping:  # several options per respondent: the markers are clipped shares
        handles.append(Line2D([], [], linestyle="none",
                              label="several may be selected: shares need not add up to 100%"))
    ax.axvline(0, color="#222222", linewidth=1, zorder=1)
    ax.set_yticks(ys, labels, fontsize=size.font)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # first option on top, no empty margin rows
    ax.set_xlabel("share of respondents (%)" if not asked else
                  f"share (%) of all respondents, or of those asked ({q.among_title})",
                  fontsize=size.font)
    if hidden:
        ax.set_title(wrap(f"the {MAX_LISTED_OPTIONS} largest of {MAX_LISTED_OPTIONS + hidden} "
                           "options, as in the table; CSV and JSON list all",
                           size.legend_chars),
                     fontsize=size.font - 1, color="#555555")
    ax.tick_params(axis="x", labelsize=size.font - 1)
    ax.grid(axis="x", color="#dddddd", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    _legend(fig, handles, size)
    return fig


def integer_chart(q: QuestionView, truth: Truth | None,
                  size: ChartSize = DESKTOP) -> Figure | None:
    """The estimated distribution as bars with error bars (when it is precise enough to read)
    and the mean with its interval; otherwise the mean alone on the answer's range."""
    dist = [r for r in q.of_kind(DISTRIBUTION) if r.estimate is not None]
    mean = next((r for r in q.of_kind(MEAN) + q.of_kind(ASKED_MEAN)  # skip logic: asked
                 if r.estimate is not None), None)
    if dist and q.distribution_is_informative():
        return _distribution_chart(q, dist, mean, truth, size)
    if mean is None:
        return None
    return _mean_chart(q, mean, truth, size)


def mean_axis_label(q: QuestionView, lo: float, hi: float) -> str:
    """What the mean chart's axis spans: the answers one could give, and, when the interval
    reaches past them (noise at a small n), that the axis is widened to show it."""
    if q.min is None or q.max is None:
        return "answer"
    could = f"answers one could give: {q.min:g} to {q.max:g}"
    if (lo, hi) == (q.min, q.max):
        return f"answer (the {could})"
    return (f"answer (the {could}, shaded; the axis runs {lo:.4g} to {hi:.4g} "
            f"to show the whole interval)")


def _mean_chart(q: QuestionView, mean: Row, truth: Truth | None,
                size: ChartSize) -> Figure:
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(size.width_in, 1.7 * size.scale), layout="constrained")
    ax = fig.add_subplot()
    ax.errorbar([mean.estimate], [0], xerr=[[mean.estimate - mean.ci_low],
                                            [mean.ci_high - mean.estimate]],
                fmt="o", color=BAR, ecolor="#222222", elinewidth=2, capsize=8, markersize=9,
                zorder=3)
    handles = [Line2D([], [], color=BAR, marker="o", linestyle="none", markersize=9,
                      label=f"estimated mean {mean.estimate:.2f}"),
               Line2D([], [], color="#222222", linewidth=2,
                      label=f"{q.confidence:.0%} interval [{mean.ci_low:.2f}, "
                            f"{mean.ci_high:.2f}]")]
    true_mean = truth.of(q.id, MEAN, "mean") if truth is not None else None
    if true_mean is not None:
        ax.scatter([true_mean], [0], marker="|", s=700 * size.scale ** 2, linewidths=2.6,
                   color=TRUTH, zorder=4)
        handles.append(Line2D([], [], linestyle="none", marker="|", markersize=14,
                              markeredgewidth=2.6, color=TRUTH,
                              label=f"true mean {true_mean:.2f}"))
    lo = q.min if q.min is not None else mean.ci_low
    hi = q.max if q.max is not None else mean.ci_high
    lo, hi = min(lo, mean.ci_low), max(hi, mean.ci_high)
    pad = 0.03 * (hi - lo or 1)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(-1, 1)
    ax.set_yticks([])
    ax.set_xlabel(wrap(mean_axis_label(q, lo, hi), size.legend_chars), fontsize=size.font)
    if q.min is not None and q.max is not None and (lo, hi) != (q.min, q.max):
        ax.axvspan(q.min, q.max, color="#eeeeee", zorder=0)  # the answers one could give
    ax.tick_params(labelsize=size.font - 1)
    ax.grid(axis="x", color="#dddddd", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    _legend(fig, handles, size)
    return fig


def _distribution_chart(q: QuestionView, dist: list[Row], mean: Row | None,
                        truth: Truth | None, size: ChartSize) -> Figure:
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    fig = Figure(figsize=(size.width_in, 3.8 * size.scale), layout="constrained")
    ax = fig.add_subplot()
    # each value at its place on the answer's axis; a number's bins ("0 to 1000": not one value)
    # side by side, named under their bars, the mean and the quantiles said in the legend
    valued = all(r.label.lstrip("-").isdigit() for r in dist)
    xs = [int(r.label) for r in dist] if valued else list(range(len(dist)))
    est = [r.estimate * 100 for r in dist]
    ax.bar(xs, est, width=0.75, color=BAR, zorder=2)
    ax.errorbar(xs, est, yerr=[[(r.estimate - r.ci_low) * 100 for r in dist],
                               [(r.ci_high - r.estimate) * 100 for r in dist]],
                fmt="none", ecolor="#222222", elinewidth=1, capsize=2, zorder=3)
    ax.axhline(0, color="#222222", linewidth=1, zorder=1)
    ax.set_ylabel("share of respondents (%)", fontsize=size.font)
    handles: list = [Patch(color=BAR, label="estimated share of each answer" if valued
                           else "estimated share in each bin"),
                     Line2D([], [], color="#222222", linewidth=1,
                            label=f"{q.confidence:.0%} interval")]
    if truth is not None:
        tv = [(x, truth.of(q.id, DISTRIBUTION, r.label)) for x, r in zip(xs, dist, strict=True)]
        pts = [(x, t * 100) for x, t in tv if t is not None]
        if pts:
            ax.step(*zip(*pts, strict=True), where="mid", color=TRUTH, linewidth=1.8, zorder=4)
            handles.append(Line2D([], [], color=TRUTH, linewidth=1.8, label="true distribution"))
    if min(r.ci_low for r in dist) < 0:
        handles.append(Line2D([], [], linestyle="none",
                              label="below 0%: noise around a small share"))
    if not valued:
        ax.set_xticks(xs, [r.label for r in dist], rotation=45, ha="right",
                      fontsize=size.font - 2)
        for row in ([mean] if mean is not None else []) + q.of_kind(QUANTILE):
            if row.estimate is not None and row.ci_low is not None and row.ci_high is not None:
                handles.append(Line2D([], [], linestyle="none",
                                      label=f"{row.label} {row.estimate:.4g} "
                                            f"[{row.ci_low:.4g}, {row.ci_high:.4g}]"))
        mean = None
    if mean is not None:
        ax.axvspan(mean.ci_low, mean.ci_high, color="#f0b429", alpha=0.3, zorder=1)
        ax.axvline(mean.estimate, color="#b7791f", linewidth=2, zorder=4)
        handles.append(Patch(color="#f0b429", alpha=0.5,
                             label=f"mean {mean.estimate:.2f} "
                                   f"[{mean.ci_low:.2f}, {mean.ci_high:.2f}]"))
        true_mean = truth.of(q.id, MEAN, "mean") if truth is not None else None
        if true_mean is not None:
            ax.axvline(true_mean, color=TRUTH, linestyle="--", linewidth=1.6, zorder=5)
            handles.append(Line2D([], [], color=TRUTH, linestyle="--",
                                  label=f"true mean {true_mean:.2f}"))
    ax.set_xlabel("answer" if valued else "answer (bins)", fontsize=size.font)
    ax.tick_params(labelsize=size.font - 1)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    _legend(fig, handles, size)
    return fig


def _legend(fig: Figure, handles: Sequence, size: ChartSize = DESKTOP) -> None:
    # About size.legend_chars characters fit across the figure: as many columns as the longest
    # label allows, and the figure grows by the legend's rows so the plot keeps its height.
    longest = max(len(h.get_label()) for h in handles)
    across = size.legend_chars
    ncol = min(len(handles), 3 if longest <= across * 0.28 else 2 if longest <= across * 0.47
               else 1)
    for h in handles:  # a label longer than a line wraps
        h.set_label(wrap(h.get_label(), across))
    fig.legend(handles=list(handles), loc="outside upper center", ncol=ncol,
               fontsize=size.font - 1, frameon=False)
    lines = sum(1 + h.get_label().count("\n") for h in handles[::ncol])
    fig.set_figheight(fig.get_figheight() + LEGEND_ROW_IN * size.scale * lines)
