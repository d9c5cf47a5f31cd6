"""One self-contained HTML page: inline CSS, charts as data: PNGs, no scripts, no links out.

It opens offline, from an e-mail attachment or a USB stick, and looks the same everywhere.
"""

from __future__ import annotations

from html import escape

from ldpsurvey.shared.question_types.base import MAP

from .charts import PHONE_MAX_CSS, Chart, chart_png
from .columns import columns, value_cells
from .design_view import design_css, html_design, html_side_by_side, reading_guide
from .location_chart import location_chart_png
from .model import (
    AMONG_ASKED,
    ASKED_GROUP,
    ASKED_MEAN,
    GROUP,
    MEAN,
    NUMBER_KINDS,
    OPTION,
    QUANTILE,
    QuestionView,
    Report,
    Row,
    epsilon_cell,
    epsilon_words,
    hidden_options_note,
    listed_options,
    shows_negative,
)
from .text import explanation

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
 color:#1f2328;margin:0;background:#f6f7f9;font-size:16px;line-height:1.5}
main{max-width:960px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1{font-size:1.8em;margin:.2em 0 .1em}h2{font-size:1.3em;margin:0 0 .2em}
.sub{color:#57606a;margin:0 0 1em}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0 20px}
.card{border:1px solid #d0d7de;border-radius:8px;padding:8px 14px;min-width:150px}
.card b{display:block;font-size:1.4em}
section.q{border-top:2px solid #d0d7de;padding-top:18px;margin-top:26px}
.qid{font-family:ui-monospace,Menlo,Consolas,monospace;color:#57606a;font-size:.9em}
.meta{color:#57606a;margin:.2em 0 .8em}
img.chart{display:block;max-width:100%;height:auto;margin:8px 0 12px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:.95em}
th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left;white-space:normal}
th{background:#f3f4f6;font-weight:600}
tr.group td{background:#f4f8ee}tr.mean td{background:#fff8e6;font-weight:600}
.neg{color:#9a3412}
.explain{background:#f3f6fb;border-left:4px solid #3b6ea8;padding:6px 18px;margin:18px 0}
.explain h3{font-size:1em;margin:.8em 0 .1em}.explain p{margin:.1em 0 .6em}
.note{color:#57606a;font-size:.9em}
.warn{background:#fff4e5;border-left:4px solid #c2410c;padding:6px 12px;margin:8px 0}
details summary{cursor:pointer;color:#3b6ea8}
.scroll{overflow-x:auto;max-width:100%;-webkit-overflow-scrolling:touch;background:
 linear-gradient(to right,#fff 40%,rgba(255,255,255,0)) left/28px 100% no-repeat local,
 linear-gradient(to left,#fff 40%,rgba(255,255,255,0)) right/28px 100% no-repeat local,
 radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.35),rgba(0,0,0,0)) left/14px 100% no-repeat,
 radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.35),rgba(0,0,0,0)) right/14px 100%
 no-repeat;background-color:#fff}
.scroll table{margin-bottom:0}.scroll{margin-bottom:14px}
picture{display:block}
h1,h2,p,li,.qid{overflow-wrap:anywhere}
@media (max-width:600px){main{padding:14px 12px 32px}h1{font-size:1.4em}
 .card{min-width:0;flex:1 1 40%}th,td{padding:4px 6px}}
"""



# .scroll: a table wider than the screen scrolls inside its wrapper, and a shadow at the edge
# it can scroll towards says so (no script: the wrapper's "local" white covers fade in and out
# over fixed shadows as it scrolls; a table that fits shows none).


def chart_img(chart: Chart, alt: str) -> str:
    """A chart as an <img>, in a <picture> with its phone drawing for narrow screens (so its
    text keeps its size there instead of shrinking with a wide drawing)."""
    img = (f'<img class="chart" alt="{escape(alt)}" width="{chart.css_width}" '
           f'data-font-pt="{chart.min_font_pt:g}" '
           f'src="data:image/png;base64,{chart.png_base64}">')
    if chart.phone is None:
        return img
    phone = chart.phone
    return (f'<picture><source media="(max-width: {PHONE_MAX_CSS}px)" width="{phone.css_width}" '
            f'data-font-pt="{phone.min_font_pt:g}" '
            f'srcset="data:image/png;base64,{phone.png_base64}">{img}</picture>')


def page_head(title: str, css: str = CSS) -> list[str]:
    """The opening of every self-contained HTML report: doctype, phone viewport, title, style."""
    return ["<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{css}</style></head><body><main>"]

def render_html(report: Report) -> str:
    questions = report.questions()
    conf = f"{report.confidence:.0%}"
    version = report.estimates.get("version", "?")
    last = report.estimates.get("last_submission_hour")
    parts = [
        *page_head(f"{report.title}: estimates", CSS + design_css(report)),
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="sub">Survey <span class="qid">{escape(str(report.survey["id"]))}</span> '
        f"version {escape(str(version))}"
        + (f" &middot; last submission in the hour starting {escape(str(last))}" if last else "")
        + "</p>",
        (f'<p>{escape(str(report.survey["description"]))}</p>'
         if report.survey.get("description") else ""),
        '<div class="cards">',
        _card("submissions", f"{report.n_submissions:,}"),
        _card("total ε per respondent", f"{report.total_epsilon:g}"),
        _card("questions", str(len(questions))),
        _card("confidence level", conf),
        "</div>",
        _budget(report),
        *([html_design(report)] if report.estimates.get("design") else []),
        _explanation(shows_negative(questions),
                     reading_guide(report) if report.estimates.get("design") else ()),
    ]
    for q in questions:
        parts.append(_question(q, report))
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


def _card(label: str, value: str) -> str:
    return f'<div class="card">{escape(label)}<b>{escape(value)}</b></div>'


def _budget(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{escape(str(q.get('text', q['id'])))} "
        f"<span class=\"qid\">{escape(q['id'])}</span></td>"
        f"<td>{escape(str(q.get('mechanism', '')))}</td><td>{escape(epsilon_cell(q))}</td></tr>"
        for q in report.survey["questions"])
    return ("<h2>Privacy budget</h2>"
            '<div class="scroll"><table><tr><th>question</th><th>mechanism</th><th>ε</th></tr>'
            f"{rows}<tr class=\"mean\"><td>total per respondent (sum)</td><td></td>"
            f"<td>{report.total_epsilon:g}</td></tr></table></div>")


def _explanation(negative: bool, design: tuple[tuple[str, str], ...] = ()) -> str:
    """How to read the page; a design-based page replaces the simple-random-sample interval
    box by its own (design_view.reading_guide)."""
    items = explanation(negative, design)
    body = "".join(f"<h3>{escape(title)}</h3><p>{escape(text)}</p>" for title, text in items)
    return f'<div class="explain"><h2>How to read this report</h2>{body}</div>'


def _question(q: QuestionView, report: Report) -> str:
    meta = (f"{escape(q.type)} question &middot; mechanism <b>{escape(q.mechanism)}</b> "
            f"&middot; {escape(epsilon_words(q, 'ε'))} &middot; n = {q.n:,} reports"
            + (" &middot; optional (skipping is visible to the server)" if q.optional else ""))
    out = [f'<section class="q" id="q-{escape(q.id)}">',
           f'<h2>{escape(q.text)}</h2><div class="qid">{escape(q.id)}</div>',
           f'<p class="meta">{meta}</p>']
    out += [f'<p class="warn" role="note"><b>Warning:</b> {escape(w)}</p>' for w in q.warnings]
    out += [f'<p class="note">{escape(n)}</p>' for n in q.notes]
    chart = (location_chart_png(q, report.question(q.id)) if q.unit.chart == MAP
             else chart_png(q, report.truth))
    if chart is None:
        out.append('<p class="note">No reports yet: nothing to estimate.</p>')
    else:
        out.append(chart_img(chart, f"chart of the estimates for {q.id}"))
    listed, hidden = listed_options(q)
    main_rows = listed + [r for r in q.rows
                          if r.kind not in (OPTION, "distribution", *AMONG_ASKED)]
    out.append(html_side_by_side(q, report) if q.design_based else _table(q, main_rows, report))
    asked = [r for r in q.rows if r.kind in AMONG_ASKED]
    # skip logic: the shares (or mean) among those asked (html_side_by_side has its own block)
    if asked and not q.design_based:
        out.append(f"<h3>{escape(q.among_title.capitalize())}</h3>{_table(q, asked, report)}")
    if hidden:
        out.append(f'<p class="note">{escape(hidden_options_note(hidden))}</p>')
    dist = q.of_kind("distribution")
    if dist:
        informative = q.distribution_is_informative()
        if not informative and q.n:
            out.append(f'<p class="note">{escape(q.distribution_summary())}</p>')
        what = "" if informative else ", mostly noise at this n"
        out.append(f"<details><summary>Estimated share of each answer ({len(dist)} values"
                   f"{what})</summary>{_table(q, dist, report)}</details>")
    out.append("</section>")
    return "\n".join(out)


def _table(q: QuestionView, rows: list[Row], report: Report) -> str:
    truth = report.truth
    head = ["", *(c.header for c in columns(q, truth))]
    lines = ['<div class="scroll"><table><tr>'
             + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        label = r.display if r.kind not in (GROUP, ASKED_GROUP) else \
            f"{r.display} ({' + '.join(r.display_members)})"
        if r.kind in NUMBER_KINDS:
            label = r.label  # "mean", "mean number selected" (multiselect), "median"
        neg = ' class="neg"' if r.estimate is not None and r.estimate < 0 else ""
        estimate, *rest = value_cells(q, r, truth)
        cells = [f"<td>{escape(label)}</td>", f"<td{neg}>{escape(estimate)}</td>",
                 *(f"<td>{escape(c)}</td>" for c in rest)]
        cls = {GROUP: ' class="group"', ASKED_GROUP: ' class="group"', MEAN: ' class="mean"',
               ASKED_MEAN: ' class="mean"', QUANTILE: ' class="mean"'}.get(r.kind, "")
        lines.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    lines.append("</table></div>")
    return "".join(lines)
