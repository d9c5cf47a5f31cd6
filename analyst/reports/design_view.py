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

The sampling factor rests on a design variance estimate with the design's few degrees of
freedom: reports state the split in words only when its interval (`sampling_low`,
`sampling_high`) excludes 1, and otherwise give the total deff with that interval and say the
data cannot separate the two (docs/design-based.md §6).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from html import escape
from typing import Any

from ldpsurvey.shared.design.estimators import FIXED
from ldpsurvey.shared.distributions import t_value

from .model import (
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
    "randomization), – where the randomization swamps the sampling part; when the sampling "
    "factor's interval includes 1 (the design's degrees of freedom cannot carry the split) "
    "only the total is shown, with that interval: \"2.9 (sampling 0.4–6)\"; effective n: "
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


def _factor(x: Any) -> str:
    if x is None:
        return "–"
    x = float(x)
    return "0" if x < FIXED else f"{x:.2g}" if x < 10 else f"{x:,.0f}"


def split_unsupported(deff: Mapping[str, Any] | None) -> bool:
    """Whether the deff's split is not to be stated: its sampling factor's interval includes
    1 (documents without the interval, e.g. two-server ones, keep their split)."""
    return bool(deff) and deff.get("split_supported") is False and deff.get(
        "total") is not None and float(deff["total"]) >= FIXED  # type: ignore[union-attr]


def sampling_interval_text(deff: Mapping[str, Any]) -> str:
    """"0.4–6" (an unbounded interval: "0.4–∞"; none: "unknown")."""
    low, high = deff.get("sampling_low"), deff.get("sampling_high")
    if low is None:
        return "unknown"
    return f"{_factor(low) if float(low) >= FIXED else '0'}–" + (
        "∞" if high is None else _factor(high) if float(high) >= FIXED else "0")


def deff_text(deff: Mapping[str, Any] | None) -> str:
    """"3.1 = 1.4 × 2.2" (a factor that cannot be estimated shows as "–"); "3.1 (sampling
    0.4–6)" when the split is not supported (module docstring)."""
    if not deff or deff.get("total") is None:
        return "–"
    if split_unsupported(deff):
        return f"{_factor(deff['total'])} (sampling {sampling_interval_text(deff)})"
    return (f"{_factor(deff['total'])} = {_factor(deff.get('sampling'))} × "
            f"{_factor(deff.get('privacy'))}")


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


def interval_words(design: Mapping[str, Any], confidence: float) -> str:
    """"14 degrees of freedom (15 PSUs − 1 stratum); 95% intervals: estimate ± 2.145 s.e.
    (Student's t with 14 df)": how the intervals were made (empty without a stated df)."""
    df = design.get("df")
    if df is None:
        return ""
    source = (f"{design.get('psus', '?'):,} PSUs − {design.get('strata', '?'):,} strat"
              f"{'um' if design.get('strata') == 1 else 'a'}"
              if design.get("variance", "linearized") == "linearized"
              else "the rank of the replicate weights − 1")
    normal = design.get("interval_quantile") == "normal" or df < 1
    q = t_value(confidence, None if normal else df)
    how = ("the normal quantile" if normal else f"Student's t with {df:,} df")
    return (f"{df:,} design degrees of freedom ({source}); {confidence:.0%} intervals: "
            f"estimate ± {q:.3f} s.e. ({how})")


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
    if interval_words(design, report.confidence):
        lines.append(f"  {interval_words(design, report.confidence)}")
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
    if deff is not None and split_unsupported(deff):
        return (f"For {what} the design effect is {_factor(deff['total'])}, but the data "
                "cannot say how much of it is the sampling design's and how much the "
                "privacy's: the sampling factor's interval, "
                f"{sampling_interval_text(deff)}, includes 1 (a simple random sample's), "
                "because a design variance estimate with this design's degrees of freedom "
                "is too uncertain to be split from the known privacy noise.")
    if shares is None or deff is None:
        return (f"For {what} the design effect cannot be split at n = {q.n:,}: the "
                "randomization's noise swamps the answers' own spread, so the sampling part "
                "is not estimable.")
    srs, design, privacy = shares
    interval = ("" if deff.get("sampling_low") is None else
                f", interval {sampling_interval_text(deff)}")
    effect = ("adds" if design >= 0 else "saves")
    if design < 0:  # shares of a variance below a simple random sample's read as 4823%
        return (f"For {what} the sampling design saves variance: the estimate's variance is "
                f"{float(deff['total']):.2g} times that of a simple random sample of {q.n:,} "
                f"true answers (sampling factor {float(deff['sampling']):.2g}{interval}, "
                f"privacy factor {float(deff['privacy']):.2f}). These {q.n:,} answers are "
                f"worth {float(deff['effective_n']):,.0f} true answers of a simple random "
                "sample.")
    return (f"For {what}, {srs:.0%} of the variance is what a simple random sample of "
            f"{q.n:,} true answers would have; the sampling design {effect} "
            f"{abs(design):.0%} (factor {float(deff['sampling']):.2f}{interval}) and the "
            "privacy adds "
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
    """The estimate that speaks for a question in the summary: its mean, else the option its
    type names (the unit's `headline_option`: "yes" of a yes/no question), else its largest
    option (consistent view)."""
    means = q.of_kind(MEAN)
    if means:
        return means[0]
    options = q.of_kind(ASKED_OPTION) or q.of_kind("option")  # skip logic: among those asked
    if not options:
        return None
    headline = q.unit.headline_option  # e.g. "yes" of a yes/no question
    if headline is not None:
        return next((r for r in options if r.label == headline), options[-1])
    return max(options, key=lambda r: r.consistent or 0.0)


def _variance_sources(report: Report) -> str:
    """Per randomized question, where its headline estimate's variance comes from: the share
    a simple random sample of true answers would have, what the design adds, what the privacy
    adds (module docstring), with the factors and the effective n."""
    lines = []
    for q in report.questions():
        if q.disclosed or not q.design_based:
            continue
        row = headline_row(q)
        if row is None:
            continue
        shares = variance_shares(row.deff)
        label = f"{q.id}: {row.display if row.kind not in (MEAN, ASKED_MEAN) else 'mean'}" + (
            " among those asked" if row.kind in ASKED_KINDS else "")
        if shares is None or split_unsupported(row.deff):
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
            "this n, so the sampling part cannot be told apart, or (a deff shown with the "
            "sampling factor's interval) that this interval includes 1: with the design's "
            f"{_df_words(report)} the design variance estimate is too uncertain to tell what "
            "the design adds from what the privacy adds.</p>"
            '<div class="scroll"><table class="side"><tr>'
            + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>" + "".join(lines)
            + "</table></div>")


def _df_words(report: Report) -> str:
    df = (report.estimates.get("design") or {}).get("df")
    return "degrees of freedom" if df is None else f"{df:,} degrees of freedom"


def reading_guide(report: Report) -> tuple[tuple[str, str], ...]:
    """"What the interval means" for a design-based report, from the numbers shown: what the
    interval is about, how it was made (t with the design's df), and where the variance of the
    randomized questions' headline estimates comes from."""
    design = report.estimates.get("design") or {}
    conf = f"{report.confidence:.0%}"
    made = interval_words(design, report.confidence)
    about = (
        f"Each weighted estimate is about the population the sampling weights stand for "
        f"(estimated size {float(design['population']):,.0f}), not only about the people who "
        "answered. " if design.get("population") is not None else
        "Each weighted estimate is about the population the sampling weights stand for. ")
    interval = (
        about + f"Its {conf} interval would contain the true population value {conf} of the "
        "time over new samples drawn by the same design (new clusters within the same "
        "strata) and new randomized answers"
        + (f": {made}." if made else ".")
        + " With few degrees of freedom the t quantile is larger than the normal 1.96 and "
        "the standard errors themselves are uncertain.")
    privacy_shares, split = [], 0
    rows = 0
    for q in report.questions():
        if q.disclosed or not q.design_based:
            continue
        row = headline_row(q)
        if row is None or not row.deff or row.deff.get("privacy") is None:
            continue
        rows += 1
        privacy_shares.append(1 - 1 / float(row.deff["privacy"]))
        split += not split_unsupported(row.deff) and variance_shares(row.deff) is not None
    if privacy_shares:
        low, high = min(privacy_shares), max(privacy_shares)
        share = (f"{low:.0%}" if round(low, 2) == round(high, 2)
                 else f"from {low:.0%} to {high:.0%}")
        width = (
            f"Of the estimated variance of the {rows} randomized question"
            f"{'' if rows == 1 else 's'}' headline estimates (see 'Where the variance comes "
            f"from'), the privacy noise is {share}; the rest is the sampling design's and the "
            "answers' own spread, estimated from the variation between clusters "
            f"({_df_words(report)}). The split is stated for {split} of them: for the others "
            "the data cannot separate the design's part from the privacy's.")
    else:
        width = ("No randomized question's variance could be split into its sampling and "
                 "privacy parts at this n.")
    return (("What the interval means", interval), ("Where its width comes from", width))


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
                         f"{escape(q.among_title.capitalize())}</th></tr>")
        other = unweighted.get((r.kind, r.label))
        cells = [r.display if r.kind not in (MEAN, ASKED_MEAN) else r.label,
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
