"""What design-based reports add to every format: the design named, the design effect split
into what the sampling design costs and what the privacy costs, the effective n, the
Horvitz-Thompson totals (population counts) with their standard errors when the weights are
scaled to a population, and (HTML) the weighted estimates beside today's unweighted ones.

The design effect of an estimate (shared/design/estimators.py): its variance V over V_srs, the
variance of a simple random sample of as many TRUE answers. It splits as
deff = sampling × privacy: sampling = V_sampling / V_srs (what the weights, strata and clusters
do, had the true answers been seen), privacy = V / V_sampling (what the randomization adds).
So V = V_srs + (V_sampling − V_srs) + (V − V_sampling): the shares of the variance a simple
random sample would have, that the design adds, and that the privacy adds are 1/deff,
(sampling − 1)/deff and (privacy − 1)/privacy, which sum to 1.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from html import escape
from typing import Any

from ...shared.design.estimators import FIXED
from .model import (
    AMONG_ASKED_TITLE,
    ASKED_GROUP,
    ASKED_MEAN,
    ASKED_OPTION,
    MEAN,
    Column,
    QuestionView,
    Report,
    Row,
    fmt,
)

ASKED_KINDS = (ASKED_OPTION, ASKED_GROUP, ASKED_MEAN)

DEFF_HEADER = "deff = sampling × privacy"
EFFECTIVE_HEADER = "effective n"
TOTAL_HEADER = "total"
TOTAL_SE_HEADER = "total s.e."

DESIGN_COLUMN_NOTES = (
    "estimate: weighted (design-based), can be negative by noise; consistent: non-negative, "
    "sums to 100% (Norm-Sub), or for a check-all-that-apply question each share clipped to "
    "[0%, 100%] (shares need not sum to 100%); deff: the variance over that of a simple "
    "random sample of as many true answers = sampling (the design) × privacy (the "
    "randomization), – where the randomization swamps the sampling part; effective n: "
    "respondents / deff.")

EXPLANATION = (
    ("What the design changes",
     "Each respondent counts with their sampling weight (how many people of the population "
     "they stand for), and the standard errors follow the sampling design: strata, clusters "
     "(respondents of one cluster resemble each other, so they tell less than as many "
     "independent people) and, when given, calibration to known population totals. The "
     "unweighted columns are what the same reports give as a simple random sample."),
    ("Totals",
     "When the weights are scaled to the population (design weights 1/selection probability, "
     "or calibrated to population totals), each option's total is the estimated number of "
     "people in the population who would give it, and an integer question's total is the "
     "population total of its answer (Horvitz-Thompson; over those who answered an optional "
     "question). Relative weights give no totals: the design section says why."),
    ("The design effect (deff)",
     "The deff compares an estimate's variance with that of a simple random sample of as many "
     "respondents whose TRUE answers were seen. It is the product of two factors: sampling, "
     "what the design does (unequal weights and clusters raise it, strata can lower it), and "
     "privacy, what the randomized answers add on top. The effective n is the number of true "
     "answers of a simple random sample that would be as precise: the respondents divided by "
     "the deff."),
)


def deff_text(deff: Mapping[str, Any] | None) -> str:
    """"3.1 = 1.4 × 2.2" (a factor that cannot be estimated shows as "–")."""
    if not deff or deff.get("total") is None:
        return "–"

    def f(x: Any) -> str:
        if x is None:
            return "–"
        x = float(x)
        return "0" if x < FIXED else f"{x:.2g}" if x < 10 else f"{x:,.0f}"

    return f"{f(deff['total'])} = {f(deff.get('sampling'))} × {f(deff.get('privacy'))}"


def effective_text(deff: Mapping[str, Any] | None) -> str:
    if not deff or deff.get("effective_n") is None or float(deff["total"]) < FIXED:
        return "–"
    return f"{float(deff['effective_n']):,.0f}"


def total_text(x: Any) -> str:
    """A total or its standard error: whole numbers with separators from 100 up, three
    significant digits below ("–": none)."""
    if x is None:
        return "–"
    x = float(x)
    if abs(x) < 0.005:
        return "0"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def total_cells(row: Row) -> tuple[str, str]:
    """(total, its standard error) of a row: "" for a row without one (a mean score)."""
    if row.total is None:
        return "", ""
    return total_text(row.total.get("estimate")), total_text(row.total.get("std_error"))


def has_totals(q: QuestionView) -> bool:
    """Whether a question's rows carry totals (population-scaled weights)."""
    return any(r.total is not None for r in q.rows)


def design_columns(q: QuestionView | None = None) -> list[Column]:
    """The columns design-based estimates add (model.columns puts them after 'consistent'):
    the deff, the effective n, and the total with its s.e. when the question has totals."""
    cols = [Column(DEFF_HEADER, lambda q, r, t: deff_text(r.deff)),
            Column(EFFECTIVE_HEADER, lambda q, r, t: effective_text(r.deff))]
    if q is not None and has_totals(q):
        cols += [Column(TOTAL_HEADER, lambda q, r, t: total_cells(r)[0]),
                 Column(TOTAL_SE_HEADER, lambda q, r, t: total_cells(r)[1])]
    return cols


def totals_line(design: Mapping[str, Any]) -> str | None:
    """What the design block says of totals (None: a document without the key)."""
    if "totals" not in design:
        return None
    return str(design.get("totals_note") or "")


def design_lines(report: Report) -> list[str]:
    """The lines naming the design, for the text formats' heads (empty: not design-based)."""
    design = report.estimates.get("design")
    if not design:
        return []
    lines = [f"design: {design.get('description')}",
             f"  from {design.get('source')}; variance "
             f"{design.get('variance_description') or design.get('variance')}"
             + (f"; population {float(design['population']):,.0f}"
                if design.get("population") is not None else "")]
    if design.get("note"):
        lines += textwrap.wrap(str(design["note"]), 96, initial_indent="  ",
                               subsequent_indent="  ")
    totals = totals_line(design)
    if totals:
        lines += textwrap.wrap(f"totals: {totals}", 96, initial_indent="  ",
                               subsequent_indent="  ")
    return lines


def variance_shares(deff: Mapping[str, Any] | None) -> tuple[float, float, float] | None:
    """(simple random sample, design, privacy) shares of the variance (module docstring)."""
    if not deff or None in (deff.get("total"), deff.get("sampling"), deff.get("privacy")):
        return None
    total, sampling, privacy = (float(deff[k]) for k in ("total", "sampling", "privacy"))
    if total < FIXED:  # fixed by the calibration: no variance to share out
        return None
    return 1 / total, (sampling - 1) / total, (privacy - 1) / privacy


def plain_words(q: QuestionView, row: Row) -> str:
    """One sentence on a row's design effect, for a statistician who reads the HTML."""
    deff = row.deff
    shares = variance_shares(deff)
    what = f"{q.id} = {row.display}" if row.kind != MEAN else f"the mean of {q.id}"
    if row.kind in ASKED_KINDS:
        what = (f"the mean of {q.id} among those asked" if row.kind == ASKED_MEAN
                else f"{q.id} = {row.display} among those asked")
    if deff is not None and deff.get("total") is not None and float(deff["total"]) < FIXED:
        return (f"{what} is fixed by the calibration (its population total was given): it has "
                "no sampling or privacy variance.")
    if shares is None or deff is None:
        return (f"For {what} the design effect cannot be split at n = {q.n:,}: the "
                "randomization's noise swamps the answers' own spread, so the sampling part "
                "is not estimable.")
    srs, design, privacy = shares
    effect = ("adds" if design >= 0 else "saves")
    return (f"For {what}, {srs:.0%} of the variance is what a simple random sample of "
            f"{q.n:,} true answers would have; the sampling design {effect} "
            f"{abs(design):.0%} (factor {float(deff['sampling']):.2f}) and the privacy adds "
            f"{privacy:.0%} (factor {float(deff['privacy']):.2f}). These {q.n:,} answers are "
            f"worth {float(deff['effective_n']):,.0f} true answers of a simple random sample.")


# --- HTML ------------------------------------------------------------------------------------


def design_css(report: Report) -> str:
    """The style rules design-based pages add (none for other reports: unchanged bytes)."""
    if not report.estimates.get("design"):
        return ""
    return ("table.design td{text-align:left;white-space:normal}table.side th{white-space:normal}"
            "table.side tr.section th{text-align:left;padding-top:.8em}\n")


def html_design(report: Report) -> str:
    """The design section of the HTML page: what it is and how to read the deff."""
    design = report.estimates.get("design")
    if not design:
        return ""
    items = [("design", design.get("description")), ("from", design.get("source")),
             ("variance", design.get("variance_description") or design.get("variance")),
             ("single-PSU strata", design.get("lonely_psu")),
             ("totals", totals_line(design))]
    rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>"
                   for k, v in items if v is not None)
    body = "".join(f"<h3>{escape(t)}</h3><p>{escape(x)}</p>" for t, x in EXPLANATION)
    return ("<h2>Sampling design</h2>"
            f'<div class="scroll"><table class="design">{rows}</table></div>'
            + _variance_sources(report)
            + f'<div class="explain"><h2>Weighted estimates</h2>{body}</div>')


def headline_row(q: QuestionView) -> Row | None:
    """The estimate that speaks for a question in the summary: its mean, else "yes" of a
    yes/no question, else its largest option (consistent view)."""
    means = q.of_kind(MEAN)
    if means:
        return means[0]
    options = q.of_kind(ASKED_OPTION) or q.of_kind("option")  # skip logic: among those asked
    if not options:
        return None
    if q.type == "binary":
        return next((r for r in options if r.label == "yes"), options[-1])
    return max(options, key=lambda r: r.consistent or 0.0)


def _variance_sources(report: Report) -> str:
    """Per randomized question, where its headline estimate's variance comes from: the share
    a simple random sample of true answers would have, what the design adds, what the privacy
    adds (module docstring), with the factors and the effective n."""
    lines = []
    for q in report.questions():
        if q.mechanism == "disclosed" or not q.design_based:
            continue
        row = headline_row(q)
        if row is None:
            continue
        shares = variance_shares(row.deff)
        label = f"{q.id}: {row.display if row.kind not in (MEAN, ASKED_MEAN) else 'mean'}" + (
            " among those asked" if row.kind in ASKED_KINDS else "")
        if shares is None:
            cells = [label, deff_text(row.deff), "–", "–", "–", effective_text(row.deff)]
        else:
            srs, design, privacy = shares
            cells = [label, deff_text(row.deff), f"{srs:.0%}", f"{design:+.0%}",
                     f"{privacy:.0%}", effective_text(row.deff)]
        lines.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    if not lines:
        return ""
    head = ["estimate", DEFF_HEADER, "simple random sample", "the design adds",
            "the privacy adds", EFFECTIVE_HEADER]
    return ("<h2>Where the variance comes from</h2>"
            "<p>Of each estimate's variance: the part a simple random sample of as many true "
            "answers would have, what the sampling design adds (negative: the design saves "
            "variance, as strata can), and what the randomized answers add. The three sum to "
            "100%. A \u2013 means the randomization's noise swamps the answers' own spread at "
            "this n, so the sampling part cannot be told apart.</p>"
            '<div class="scroll"><table class="side"><tr>'
            + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>" + "".join(lines)
            + "</table></div>")


def html_side_by_side(q: QuestionView, report: Report) -> str:
    """A question's weighted and unweighted estimates side by side, with the deff, the
    effective n and, per row, the deff in plain words."""
    unweighted = _unweighted_rows(report, q.id)
    totals = has_totals(q)
    head = ["", "weighted", "std error", f"{q.confidence:.0%} interval", "unweighted",
            "std error", DEFF_HEADER, EFFECTIVE_HEADER,
            *(("population total", "std error") if totals else ())]
    lines = ['<div class="scroll"><table class="side"><tr>'
             + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"]
    words = []
    asked_said = False
    for r in q.rows:
        if r.kind == "distribution":
            continue
        if r.kind in ASKED_KINDS and not asked_said:  # skip logic: its own block of rows
            asked_said = True
            lines.append(f'<tr class="section"><th colspan="{len(head)}">'
                         f"{escape(AMONG_ASKED_TITLE.capitalize())}</th></tr>")
        other = unweighted.get((r.kind, r.label))
        cells = [r.display if r.kind not in (MEAN, ASKED_MEAN) else "mean",
                 fmt(q, r, r.estimate),
                 fmt(q, r, r.std_error),
                 f"[{fmt(q, r, r.ci_low)}, {fmt(q, r, r.ci_high)}]",
                 fmt(q, r, None if other is None else other.estimate),
                 fmt(q, r, None if other is None else other.std_error),
                 deff_text(r.deff), effective_text(r.deff),
                 *(total_cells(r) if totals else ())]
        cls = (' class="group"' if r.kind in ("group", ASKED_GROUP) else
               f' class="{MEAN}"' if r.kind in (MEAN, ASKED_MEAN) else "")
        lines.append(f"<tr{cls}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        words.append(plain_words(q, r))
    lines.append("</table></div>")
    lines.append("<details><summary>The design effect in plain words</summary>"
                 + "".join(f"<p>{escape(w)}</p>" for w in words) + "</details>")
    return "".join(lines)


def _unweighted_rows(report: Report, qid: str) -> dict[tuple[str, str], Row]:
    if report.unweighted is None:
        return {}
    plain = Report(report.survey, report.unweighted)
    for view in plain.questions():
        if view.id == qid:
            return {(r.kind, r.label): r for r in view.rows}
    return {}
