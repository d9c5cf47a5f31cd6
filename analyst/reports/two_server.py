"""Reports of a two-server batch: the same per-question tables, charts and columns as today's
reports, plus what this mode adds: the guarantees in plain words, the batch and the reports
rejected by their validity proofs, and the declared crosstabs' joint cells.

Fed by `two_server_report(survey, batch)`: the manifest's `Survey` and the leader's
`CollectedBatch` (shared/two_server/results.py), estimated by shared/two_server/estimates.py;
or, for an estimate document already computed (e.g. received over HTTP), by
`TwoServerReport(survey_dict, document)`. Every format shows the same numbers.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

from ldpsurvey.shared.errors import ReportRenderError

from .model import (
    COLUMN_NOTES,
    NUMBER_FIELDS,
    OPTION,
    QuestionView,
    Report,
    Row,
    Truth,
    answer_label,
)

TWO_SERVER_NOTE = ("std error: sampling (which people answered), both servers' noise, and "
                   "the local randomization where a local epsilon is set; the interval "
                   "therefore covers the share in the whole population the respondents were "
                   "drawn from.")

EXPLANATION: tuple[tuple[str, str], ...] = (
    ("How the answers were collected",
     "Each respondent's device split every answer into two random-looking shares, one for the "
     "leader and one for the helper, run by different operators, with a proof that the shares "
     "add up to a valid answer. Neither server alone can read an answer. The servers added up "
     "the shares of the whole batch, and each added its own random noise before releasing its "
     "total: only these noisy totals were ever revealed, and this report is computed from "
     "them."),
    ("What the interval means",
     "The interval is a confidence interval: if people were drawn from the same population "
     "again and again, intervals computed this way would contain the population's true share "
     "(or mean) that often. It counts which people happened to answer (sampling), the "
     "servers' noise (a few respondents' worth for the whole batch) and, where a local epsilon "
     "is set, the randomization each device applied first. With two servers most of the width "
     "is usually sampling, as in any survey."),
    ("Why an estimate can be negative",
     "The noise added to a total can push a small share below zero. That is not an error: it "
     "says the true share is small, and the interval says how small. The 'consistent' column "
     "sets negative shares to zero and lowers the others by one common amount so they sum to "
     "100% (slightly biased). The s.e. bound is the worst case over every possible truth."),
    ("Rejected reports",
     "A report whose validity proof failed (a malformed or malicious share) was dropped during "
     "aggregation: it changed no total and no estimate. The count is shown so that nothing is "
     "dropped silently."),
)


@dataclass(frozen=True)
class TwoServerReport(Report):
    """A `Report` of one collected batch: the estimate document of
    `shared/two_server/estimates.estimate_batch` and the survey's canonical dict."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.estimates.get("collection") != "two-server":
            raise ReportRenderError("not a two-server estimate document")
        if not isinstance(self.estimates.get("guarantees"), Mapping):
            raise ReportRenderError("the two-server estimate document states no guarantees")

    @property
    def guarantees(self) -> list[str]:
        return [str(s) for s in self.estimates["guarantees"].get("statements", [])]

    @property
    def rejected(self) -> int:
        return int(self.estimates.get("rejected") or 0)

    @property
    def batch(self) -> str:
        return str(self.estimates.get("batch", "?"))

    @property
    def central_total(self) -> Mapping[str, Any] | None:
        return self.estimates["guarantees"].get("central")

    def crosstab_views(self) -> list[QuestionView]:
        """Each declared crosstab as a question-like view: one row per joint cell (with
        `report --lang`, each cell's answers shown in the language)."""
        from .language import answer_text

        text = self.text
        views = []
        for c in self.estimates.get("crosstabs") or []:
            rq, cq = self.question(c["rows"]), self.question(c["cols"])
            rows = [Row(question=f"{c['rows']} x {c['cols']}", kind=OPTION,
                        label=f"{answer_label(cell['row'])} / {answer_label(cell['col'])}",
                        **{f: _number(cell.get(f)) for f in NUMBER_FIELDS},
                        shown=None if text is None else
                        f"{answer_text(text, rq, answer_label(cell['row']))} / "
                        f"{answer_text(text, cq, answer_label(cell['col']))}")
                    for cell in c["cells"]]
            views.append(QuestionView(
                id=f"{c['rows']} x {c['cols']}",
                text=f"Joint shares: {c['rows']} (rows) and {c['cols']} (columns)",
                type="crosstab", epsilon=float(c["central_epsilon"]), mechanism="two-server",
                n=int(c["n"]), confidence=float(c["confidence"]), optional=False, rows=rows,
                notes=list(c.get("notes") or [])))
        return views


def _number(x: Any) -> float | None:
    return None if x is None or isinstance(x, bool) else float(x)


def two_server_report(survey: Any, batch: Any, confidence: float = 0.95,
                      truth: Truth | None = None) -> TwoServerReport:
    """The report of one collected batch of a two-server survey."""
    from ldpsurvey.shared.two_server.estimates import estimate_batch

    return TwoServerReport(survey=survey.to_dict(),
                           estimates=estimate_batch(survey, batch, confidence), truth=truth)


# --- formats ------------------------------------------------------------------------------------


def _summary(report: TwoServerReport) -> str:
    rejected = report.rejected
    what = (f"batch {report.batch}" if "design" not in report.estimates
            else f"{report.batch} combined by their design")
    return (f"two-server collection, {what}: {report.n_submissions:,} "
            f"respondents; {rejected:,} report{'' if rejected == 1 else 's'} rejected by "
            f"{'its' if rejected == 1 else 'their'} validity proof{'' if rejected == 1 else 's'}"
            f" (not counted); {report.confidence:.0%} intervals")


def render_table(report: TwoServerReport) -> str:
    from .table import question_block
    from .two_server_design import design_table

    lines = [f"{report.title} ({report.survey['id']} v{report.estimates.get('version', '?')})",
             _summary(report), "", "Privacy guarantees:"]
    for statement in report.guarantees:
        lines += textwrap.wrap(statement, 94, initial_indent="  ", subsequent_indent="    ")
    lines.append("")
    lines += design_table(report.estimates)
    for q in [*report.questions(), *report.crosstab_views()]:
        lines += question_block(q, report)
        lines.append("")
    lines += textwrap.wrap(COLUMN_NOTES + " " + TWO_SERVER_NOTE, 96)
    return "\n".join(lines) + "\n"


def render_markdown(report: TwoServerReport) -> str:
    from .markdown import _question, md_escape

    lines = [f"# {md_escape(report.title)}", "",
             f"Survey `{report.survey['id']}` version {report.estimates.get('version', '?')}, "
             + md_escape(_summary(report)) + ".", "", "## Privacy guarantees", ""]
    from .two_server_design import design_markdown

    lines += [f"- {md_escape(s)}" for s in report.guarantees] + [""]
    lines += design_markdown(report.estimates, md_escape)
    for q in report.questions():
        lines += _question(q, report)
    views = report.crosstab_views()
    if views:
        lines += ["## Declared crosstabs", ""]
        for q in views:
            lines += _question(q, report)
    lines += ["## Reading these numbers", ""]
    lines.append("\n\n".join(f"**{title}.** {body}" for title, body in EXPLANATION))
    lines += ["", md_escape(COLUMN_NOTES + " " + TWO_SERVER_NOTE), ""]
    return "\n".join(lines)


def render_html(report: TwoServerReport) -> str:
    from .html import _card, _question, page_head
    from .two_server_design import design_html

    version = report.estimates.get("version", "?")
    central = report.central_total or {}
    parts = [
        *page_head(f"{report.title}: estimates"),
        f"<h1>{escape(report.title)}</h1>",
        f'<p class="sub">Survey <span class="qid">{escape(str(report.survey["id"]))}</span> '
        f"version {escape(str(version))} &middot; two-server collection, batch "
        f"{escape(report.batch)}</p>",
        (f'<p>{escape(str(report.survey["description"]))}</p>'
         if report.survey.get("description") else ""),
        '<div class="cards">',
        _card("respondents", f"{report.n_submissions:,}"),
        _card("rejected reports", f"{report.rejected:,}"),
        _card("central ε per respondent", f"{float(central.get('basic_epsilon', 0)):g}"),
        _card("confidence level", f"{report.confidence:.0%}"),
        "</div>",
        "<h2>Privacy guarantees</h2>",
        "<ul>" + "".join(f"<li>{escape(s)}</li>" for s in report.guarantees) + "</ul>",
        design_html(report.estimates),
        '<div class="explain"><h2>How to read this report</h2>'
        + "".join(f"<h3>{escape(t)}</h3><p>{escape(b)}</p>" for t, b in EXPLANATION)
        + f'<p class="note">{escape(TWO_SERVER_NOTE)}</p></div>',
    ]
    parts += [_question(q, report) for q in report.questions()]
    views = report.crosstab_views()
    if views:
        parts.append("<h2>Declared crosstabs</h2>")
        parts += [_question(q, report) for q in views]
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


CSV_COLUMNS = ("survey", "version", "collection", "batch", "question", "kind", "option",
               "members", "mechanism", "central_epsilon", "local_epsilon", "n", "rejected",
               "confidence", *NUMBER_FIELDS)
# `report --lang` adds these (as csv_format.LANGUAGE_COLUMNS), after the design's columns.
LANGUAGE_COLUMNS = ("question_text", "option_text")


def render_csv(report: TwoServerReport) -> str:
    """One row per option, group, mean and crosstab cell (kind "cell", option "row / col")."""
    from .two_server_design import CSV_COLUMNS as DESIGN_COLUMNS
    from .two_server_design import csv_values

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    design = csv_values(report.estimates)  # only a report combining batches by design
    lang = report.language is not None  # report --lang: the texts in two more columns
    writer.writerow((*CSV_COLUMNS, *(DESIGN_COLUMNS if design else ()),
                     *(LANGUAGE_COLUMNS if lang else ())))
    version = report.estimates.get("version", "")
    head = [report.survey["id"], version, "two-server", report.batch]
    by_id = {q["question"]: q for q in report.estimates["questions"]}
    for q in report.questions():
        est = by_id[q.id]
        for r in q.rows:
            writer.writerow([*head, q.id, r.kind, r.label, "|".join(r.members), q.mechanism,
                             repr(q.epsilon), _csv(est.get("local_epsilon")), q.n,
                             est.get("rejected", 0), q.confidence, *_numbers(r), *design,
                             *((q.text, r.display) if lang else ())])
    for c, view in zip(report.estimates.get("crosstabs") or [], report.crosstab_views(),
                       strict=True):
        for r in view.rows:
            writer.writerow([*head, view.id, "cell", r.label, "", "two-server",
                             repr(view.epsilon), "", view.n, c.get("rejected", 0),
                             view.confidence, *_numbers(r), *design,
                             *((view.text, r.display) if lang else ())])
    return out.getvalue()


def _numbers(r: Row) -> list[str]:
    return [_csv(getattr(r, f)) for f in NUMBER_FIELDS]


def _csv(x: Any) -> str:
    return "" if x is None else repr(x)


def render_json(report: TwoServerReport) -> str:
    document: Any = report.estimates
    if report.language is not None:  # report --lang: the text, beside the unchanged numbers
        from .language import labels_document

        document = {**report.estimates, "labels": labels_document(report)}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


FORMATS = {"table": render_table, "json": render_json, "csv": render_csv,
           "md": render_markdown, "html": render_html}


def render_two_server(report: TwoServerReport, fmt_name: str) -> str:
    """The report in one format: the same names as today's reports (model.FORMATS)."""
    render = FORMATS.get(fmt_name)
    if render is None:
        raise ReportRenderError(f"unknown report format {fmt_name!r}; expected one of "
                                f"{', '.join(FORMATS)}")
    return render(report)


__all__ = ["EXPLANATION", "FORMATS", "TwoServerReport", "render_two_server",
           "two_server_report"]
