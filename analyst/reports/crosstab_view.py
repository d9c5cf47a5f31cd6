"""A crosstab report: the server's crosstab document (`GET .../crosstab`) read into tables that
every format shows the same way (terminal table, Markdown, CSV, JSON; HTML in crosstab_html).

Reports never recompute an estimate: they format what `shared.crosstab` produced.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ldpsurvey.shared.errors import PlanError, ReportRenderError

from .markdown import md_escape
from .model import answer_label, num, pct
from .table import text_grid

JOINT, COL_GIVEN_ROW, ROW_GIVEN_COL = "joint", "col_given_row", "row_given_col"
ROW_SHARES, COL_SHARES = "row_shares", "col_shares"
COLS_MEAN, ROWS_MEAN = "cols_mean_given_row", "rows_mean_given_col"
QUANTILES = "quantiles_given_category"  # a number's quartiles among each category
FIELDS = ("estimate", "std_error", "ci_low", "ci_high", "variance_bound")


@dataclass(frozen=True)
class CrosstabTruth:
    """Known true values (simulations): table kind -> grid (or list) of true numbers."""

    tables: Mapping[str, Any] = field(default_factory=dict)

    def of(self, kind: str, i: int, j: int | None = None) -> float | None:
        table = self.tables.get(kind)
        if table is None:
            return None
        value = table[i] if j is None else table[i][j]
        return None if value is None or not math.isfinite(value) else float(value)


@dataclass(frozen=True)
class CrosstabReport:
    """A crosstab document, with question texts from the survey when known."""

    document: Mapping[str, Any]
    survey: Mapping[str, Any] | None = None
    truth: CrosstabTruth | None = None
    # report --lang: the survey's language the questions and cells are labelled in (None:
    # the survey's own; language.py)
    language: str | None = None

    def __post_init__(self) -> None:
        for key in ("rows", "cols", "joint", "col_given_row", "row_given_col", "n"):
            if key not in self.document:
                raise ReportRenderError(f"the crosstab document has no {key!r}")

    @property
    def rows(self) -> list[str]:
        return [answer_label(v) for v in self.document["rows"]["cells"]]

    @property
    def cols(self) -> list[str]:
        return [answer_label(v) for v in self.document["cols"]["cells"]]

    @property
    def text(self) -> Any:
        """The survey's text in `language` (a SurveyText), None without --lang."""
        if self.language is None or self.survey is None:
            return None
        from ldpsurvey.shared.translations import SurveyText

        return SurveyText(self.survey, self.language)

    @property
    def shown_rows(self) -> list[str]:
        """The rows' cells as the text formats show them (in `language`; else `rows`)."""
        return self._shown("rows", self.rows)

    @property
    def shown_cols(self) -> list[str]:
        return self._shown("cols", self.cols)

    def _shown(self, side: str, labels: list[str]) -> list[str]:
        text = self.text
        if text is None:
            return labels
        from .language import side_texts

        return side_texts(text, self.question(self.document[side]["question"]),
                          self.document[side], labels)

    def question(self, qid: str) -> Mapping[str, Any] | None:
        """The survey's definition of a question (None when the survey is not known)."""
        return next((q for q in (self.survey or {}).get("questions", [])
                     if q.get("id") == qid), None)

    @property
    def rows_question(self) -> str:
        return str(self.document["rows"]["question"])

    @property
    def cols_question(self) -> str:
        return str(self.document["cols"]["question"])

    @property
    def n(self) -> int:
        return int(self.document["n"])

    def mechanism_of(self, side: str) -> str:
        """The side's mechanism, with its ε when the survey is known: "grr, ε = 2"."""
        qid = self.document[side]["question"]
        mechanism = str(self.document[side].get("mechanism", "?"))
        for q in (self.survey or {}).get("questions", []):
            if q.get("id") == qid and q.get("epsilon") is not None:
                return f"{mechanism}, ε = {float(q['epsilon']):g}"
        return mechanism

    @property
    def confidence(self) -> float:
        return float(self.document.get("confidence", 0.95))

    def text_of(self, qid: str) -> str:
        """The question's text from the survey (its id when the survey is not known), and the
        group when the side is one of its declared groups against the rest."""
        text = qid
        for q in (self.survey or {}).get("questions", []):
            if q.get("id") == qid:
                text = str(q.get("text") or qid)
        if self.text is not None and self.question(qid) is not None:
            text = self.text.question(qid).text or qid
        for side in ("rows", "cols"):
            group = self.document[side].get("group")
            if self.document[side].get("question") == qid and group is not None:
                if self.text is not None:
                    group = self._shown(side, [str(group)])[0]
                text += f" (group: {group}, against the rest)"
        return text

    def name_of(self, qid: str) -> str:
        """How plain-text formats name a question: its text, with the id in brackets."""
        text = self.text_of(qid)
        return qid if text == qid else f"{text} [{qid}]"

    @property
    def title(self) -> str:
        return (f"{self.text_of(self.rows_question)} x {self.text_of(self.cols_question)}")

    @property
    def uses_floor(self) -> bool:
        """Whether any number's std error is the model floor rather than the sample's."""
        return any(c.get("std_error_method") == FLOOR for c in self.cells())

    def cells(self) -> list[Mapping[str, Any]]:
        out: list[Mapping[str, Any]] = []
        for kind in (JOINT, COL_GIVEN_ROW, ROW_GIVEN_COL):
            out += [c for row in self.grid(kind) for c in row]
        for kind in (ROW_SHARES, COL_SHARES, COLS_MEAN, ROWS_MEAN):
            out += self.document.get(kind) or []
        return out

    def grid(self, kind: str) -> list[list[Mapping[str, Any]]]:
        return self.document[kind]

    def means(self, kind: str) -> list[Mapping[str, Any]] | None:
        return self.document.get(kind)


# --- cell text shared by the text formats ------------------------------------------------------


FLOOR = "floor"
FLOOR_MARK = "†"
TOO_NOISY = "too noisy"


def share_cell(cell: Mapping[str, Any], truth: float | None = None) -> str:
    """"12.3% ±4.5" (the interval's half-width in points; "†" when the std error is the model
    floor), "too noisy" when flagged: a flagged number is never shown as a value."""
    if cell.get("too_noisy"):
        return TOO_NOISY
    return _with_half(cell, pct, truth)


def mean_cell(cell: Mapping[str, Any], truth: float | None = None) -> str:
    if cell.get("too_noisy"):
        return TOO_NOISY
    return _with_half(cell, num, truth)


def _with_half(cell: Mapping[str, Any], show: Callable[[float | None], str],
               truth: float | None) -> str:
    estimate, low, high = cell.get("estimate"), cell.get("ci_low"), cell.get("ci_high")
    if estimate is None:
        return "–"
    text = show(estimate)
    if low is not None and high is not None:
        half = show((high - low) / 2).rstrip("%")
        text += f" ±{half}"
        if cell.get("std_error_method") == FLOOR:
            text += FLOOR_MARK
    if truth is not None:
        text += f" (true {show(truth)})"
    return text


@dataclass(frozen=True)
class Table:
    """One rows x columns table of a crosstab report, as strings. The title is a template in
    which {rows} and {cols} stand for the two questions, named as each format names them."""

    template: str
    header: list[str]
    body: list[list[str]]

    def title(self, name: Callable[[str], str], report: CrosstabReport) -> str:
        return self.template.format(rows=name(report.rows_question),
                                    cols=name(report.cols_question))


def tables(report: CrosstabReport) -> list[Table]:
    """The tables every text format shows, in order (the corner cell names the questions by
    id; the titles by their text)."""
    rows, cols, t = report.shown_rows, report.shown_cols, report.truth
    rq, cq = report.rows_question, report.cols_question
    joint = report.grid(JOINT)
    row_shares = report.document.get(ROW_SHARES) or []
    col_shares = report.document.get(COL_SHARES) or []

    def truth(kind: str, i: int, j: int | None = None) -> float | None:
        return None if t is None else t.of(kind, i, j)

    out = [Table("Joint shares. Rows: {rows}; columns: {cols} ('all': each alone)",
                 [f"{rq} \\ {cq}", *cols, "all"],
                 [[r, *(share_cell(joint[i][j], truth(JOINT, i, j)) for j in range(len(cols))),
                   share_cell(row_shares[i], truth(ROW_SHARES, i)) if row_shares else ""]
                  for i, r in enumerate(rows)]
                 + [["all", *(share_cell(c, truth(COL_SHARES, j))
                              for j, c in enumerate(col_shares)), ""]])]
    cond = report.grid(COL_GIVEN_ROW)
    out.append(Table("{cols} among those answering each {rows} (each row sums to 100%)",
                     [f"{rq} \\ {cq}", *cols],
                     [[r, *(share_cell(cond[i][j], truth(COL_GIVEN_ROW, i, j))
                            for j in range(len(cols)))] for i, r in enumerate(rows)]))
    cond = report.grid(ROW_GIVEN_COL)
    out.append(Table("{rows} among those answering each {cols} (each column sums to 100%)",
                     [f"{rq} \\ {cq}", *cols],
                     [[r, *(share_cell(cond[i][j], truth(ROW_GIVEN_COL, i, j))
                            for j in range(len(cols)))] for i, r in enumerate(rows)]))
    means = report.means(COLS_MEAN)
    if means is not None:
        out.append(Table("Mean {cols} among those answering each {rows}", [rq, f"mean {cq}"],
                         [[r, mean_cell(means[i], truth(COLS_MEAN, i))]
                          for i, r in enumerate(rows)]))
    means = report.means(ROWS_MEAN)
    if means is not None:
        out.append(Table("Mean {rows} among those answering each {cols}", [cq, f"mean {rq}"],
                         [[c, mean_cell(means[j], truth(ROWS_MEAN, j))]
                          for j, c in enumerate(cols)]))
    found = report.document.get(QUANTILES)
    if found:
        out.append(quantile_table(report, found))
    from .crosstab_design import deff_tables

    return out + deff_tables(report, Table)


QUANTILE_METHODS = {  # how the quartiles table's title says they were made, by `method`
    "joint_ems": "EM over both reports; {confidence} bootstrap intervals",
    "design": "design-based CDF per category; {confidence} intervals by test inversion",
    "none": "not estimated",
}


def quantile_table(report: CrosstabReport, found: Mapping[str, Any]) -> Table:
    """The number's quartiles among each category: "median [low, high]" per cell (with the
    truth in a simulation); a category whose quartiles are not estimated says why in a note
    column."""
    number, by = ("{rows}", "{cols}") if found["question"] == report.rows_question else (
        "{cols}", "{rows}")
    shown = report.shown_rows if found["by"] == report.rows_question else report.shown_cols
    names = [q["name"] for q in found["categories"][0]["quantiles"]] if found["categories"] \
        else []
    how = QUANTILE_METHODS.get(str(found.get("method")), QUANTILE_METHODS["joint_ems"]).format(
        confidence=f"{report.confidence:.0%}")
    notes = [category.get("note") for category in found["categories"]]
    t = report.truth
    truths = t.tables.get(QUANTILES) if t is not None else None
    return Table(f"Quartiles of {number} among those answering each {by} ({how})",
                 [found["by"], *(f"{name} {found['question']}" for name in names),
                  *(["note"] if any(notes) else [])],
                 [[label, *(quantile_cell(q, None if truths is None else truths[i][j])
                            for j, q in enumerate(category["quantiles"])),
                   *([category.get("note") or ""] if any(notes) else [])]
                  for i, (label, category) in enumerate(zip(shown, found["categories"],
                                                            strict=True))])


def quantile_cell(q: Mapping[str, Any], truth: float | None = None) -> str:
    """"41.2 [38.0, 44.9]": the estimate and its interval (and " (true 40.0)" in a
    simulation); "–" when there is none."""
    if q.get("estimate") is None:
        return "–"
    text = num(q["estimate"])
    if q.get("ci_low") is not None and q.get("ci_high") is not None:
        text += f" [{num(q['ci_low'])}, {num(q['ci_high'])}]"
    if truth is not None and math.isfinite(truth):
        text += f" (true {num(truth)})"
    return text


def summary_line(report: CrosstabReport) -> str:
    d = report.document
    source = {"declared": "the survey's declared crosstab aggregate",
              "reports": "one pass over the stored reports",
              "design": "the stored reports, weighted by their sampling design"
              }.get(str(d.get("source")), "")
    return (f"n = {report.n:,} submissions answered both questions; "
            f"{report.confidence:.0%} intervals (±half-width, in points for shares)"
            + (f"; from {source}" if source else ""))


def std_error_line(report: CrosstabReport) -> str:
    """Which variance the intervals use, said in every human-readable format."""
    if report.document.get("design"):
        design = report.document["design"]
        from .design_view import interval_words

        made = interval_words(design, report.confidence)
        return ("Std errors: design-based ("
                + str(design.get("variance_description") or design.get("variance"))
                + "), over the PSUs within strata of the sampling design."
                + (f" {made[0].upper()}{made[1:]}." if made else ""))
    return ("Std errors: the sample variance of the per-submission values, or where marked "
            f"{FLOOR_MARK} the exact variance at the estimate projected to the simplex (the "
            "sample variance was smaller; at small n it can be 0 and is not an interval)."
            if report.uses_floor else
            "Std errors: the sample variance of the per-submission values (never below the "
            "exact variance at the estimate projected to the simplex).")


SMALL_N_MARGIN = 0.10  # the joint-cell margin the small-n sentence says n for


def small_n_line(report: CrosstabReport) -> str | None:
    """At tiny n almost every number is "too noisy": one plain sentence saying so, and the n
    that would make every joint share readable (the planner's worst case, from the document's
    own `variance_bound`, which is the one-report worst case over n). None when most numbers
    can be read."""
    from ..plan.rows import respondents_needed

    cells = report.cells()
    noisy = sum(1 for c in cells if c.get("too_noisy"))
    if not cells or 2 * noisy <= len(cells):
        return None
    bounds = [c["variance_bound"] for row in report.grid(JOINT) for c in row
              if c.get("variance_bound") is not None]
    needed = ""
    if bounds:
        try:
            n = respondents_needed(max(bounds) * report.n, SMALL_N_MARGIN, report.confidence)
        except PlanError:
            n = None
        if n is not None:
            needed = (f" Every joint share within ±{SMALL_N_MARGIN * 100:.0f} points needs "
                      f"about {n:,} respondents (shares within a subgroup need more; "
                      "`ldpsurvey plan --crosstab` says how many).")
    return (f"n = {report.n:,} is too small for these cells: {noisy} of {len(cells)} numbers "
            f"are too noisy to read.{needed}")


EXPLANATION = (
    "A joint share is estimated from each respondent's two randomized reports together: no "
    "extra privacy is spent, but the noise of the two reports multiplies, so a cell's "
    "interval is much wider than a single question's (a disclosed question adds no noise of "
    "its own). Shares among a subgroup divide by the subgroup's size: estimated, and so "
    "noisy, when its question is randomized, exact when it is disclosed; 'too noisy' means "
    "that subgroup's size cannot be told "
    "apart from zero, so the ratio says nothing; an interval wider than every value the number "
    "can take (more than 100 points for a share) is 'too noisy' too: such a number is noise, "
    "not a finding, and is never shown or coloured as one.")


# --- formats -----------------------------------------------------------------------------


def render_crosstab_table(report: CrosstabReport) -> str:
    small = small_n_line(report)
    lines = [report.title, _heading(report), summary_line(report), std_error_line(report),
             *([] if small is None else textwrap.wrap(small, 96)), ""]
    for table in tables(report):
        lines += [table.title(report.name_of, report),
                  *("  " + line for line in text_grid(table.header, table.body)), ""]
    lines += _notes(report)
    return "\n".join(lines) + "\n"


def render_crosstab_markdown(report: CrosstabReport) -> str:
    lines = [f"# {md_escape(report.title)}", "", md_escape(_heading(report)), "",
             md_escape(summary_line(report)), "", md_escape(std_error_line(report)), ""]
    small = small_n_line(report)
    if small is not None:
        lines += [f"**{md_escape(small)}**", ""]
    for table in tables(report):
        lines += [f"## {md_escape(table.title(report.name_of, report))}", "",
                  "| " + " | ".join(md_escape(h) for h in table.header) + " |",
                  "|---" + "|---:" * (len(table.header) - 1) + "|"]
        lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in table.body]
        lines.append("")
    lines += ["## Reading these numbers", "", EXPLANATION, ""]
    lines += [f"- {md_escape(n)}" for n in report.document.get("notes", [])]
    return "\n".join(lines) + "\n"


def render_crosstab_json(report: CrosstabReport) -> str:
    doc = dict(report.document)
    if report.truth is not None:
        doc["truth"] = dict(report.truth.tables)
    if report.text is not None:  # report --lang: the text, beside the unchanged numbers
        from .language import crosstab_labels

        doc["labels"] = crosstab_labels(report)
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


CSV_COLUMNS = ("survey", "version", "rows_question", "cols_question", "table", "row", "col",
               "n", "confidence", *FIELDS, "std_error_method", "too_noisy", "consistent",
               "truth")
# `report --lang` adds these: the questions' texts and the cells' in that language.
LANGUAGE_COLUMNS = ("rows_question_text", "cols_question_text", "row_text", "col_text")


def render_crosstab_csv(report: CrosstabReport) -> str:
    """One line per number: `table` names which (joint, col_given_row, row_shares, ...)."""
    from .crosstab_design import CSV_COLUMNS as DEFF_COLUMNS
    from .crosstab_design import csv_values, designed

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    d = report.document
    lang = report.text is not None  # report --lang: the texts in four more columns
    writer.writerow((*CSV_COLUMNS, *(DEFF_COLUMNS if designed(d) else ()),
                     *(LANGUAGE_COLUMNS if lang else ())))
    rows, cols = report.rows, report.cols
    shown = dict(zip(rows, report.shown_rows, strict=True)), dict(zip(
        cols, report.shown_cols, strict=True))
    base = [d.get("survey", ""), d.get("version", ""), report.rows_question,
            report.cols_question]
    texts = [report.text_of(report.rows_question), report.text_of(report.cols_question)]

    def line(kind: str, r: str, c: str, cell: Mapping[str, Any], truth: float | None,
             consistent: float | None = None) -> None:
        writer.writerow([*base, kind, r, c, report.n, report.confidence,
                         *("" if cell.get(f) is None else repr(cell[f]) for f in FIELDS),
                         cell.get("std_error_method") or "",
                         str(bool(cell.get("too_noisy"))).lower(),
                         "" if consistent is None else repr(consistent),
                         "" if truth is None else repr(truth), *csv_values(d, cell),
                         *((*texts, shown[0].get(r, r), shown[1].get(c, c)) if lang else ())])

    t = report.truth
    consistent = d.get("consistent")
    for kind in (JOINT, COL_GIVEN_ROW, ROW_GIVEN_COL):
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                line(kind, r, c, report.grid(kind)[i][j], t.of(kind, i, j) if t else None,
                     consistent[i][j] if consistent and kind == JOINT else None)
    for kind, labels, row_side in ((ROW_SHARES, rows, True), (COL_SHARES, cols, False),
                                   (COLS_MEAN, rows, True), (ROWS_MEAN, cols, False)):
        for i, cell in enumerate(d.get(kind) or []):
            line(kind, labels[i] if row_side else "", "" if row_side else labels[i], cell,
                 t.of(kind, i) if t else None)
    found = d.get(QUANTILES)
    row_side = bool(found) and found["by"] == report.rows_question
    for i, category in enumerate(found["categories"] if found else []):
        label = (rows if row_side else cols)[i]
        truths = t.tables.get(QUANTILES) if t else None
        if category.get("note"):  # not estimated: the text formats say why; no number here
            continue
        for j, q in enumerate(category["quantiles"]):  # "quantiles_given_category:median"
            line(f"{QUANTILES}:{q['name']}", label if row_side else "",
                 "" if row_side else label, q, None if truths is None else truths[i][j])
    return out.getvalue()


def _heading(report: CrosstabReport) -> str:
    d = report.document
    return (f"survey {d.get('survey', '?')} v{d.get('version', '?')}: rows "
            f"{report.rows_question} ({report.mechanism_of('rows')}), columns "
            f"{report.cols_question} ({report.mechanism_of('cols')})")


def _notes(report: CrosstabReport) -> list[str]:
    out = textwrap.wrap(EXPLANATION, 96)
    for note in report.document.get("notes", []):
        out += textwrap.wrap(f"- {note}", 96, subsequent_indent="  ")
    return out



CROSSTAB_FORMATS: dict[str, str] = {
    "table": "ldpsurvey.analyst.reports.crosstab_view:render_crosstab_table",
    "json": "ldpsurvey.analyst.reports.crosstab_view:render_crosstab_json",
    "csv": "ldpsurvey.analyst.reports.crosstab_view:render_crosstab_csv",
    "md": "ldpsurvey.analyst.reports.crosstab_view:render_crosstab_markdown",
    "html": "ldpsurvey.analyst.reports.crosstab_html:render_crosstab_html",
}


def render_crosstab(report: CrosstabReport, fmt_name: str) -> str:
    """The crosstab report in one format (html imports matplotlib only when asked for)."""
    import importlib

    try:
        module_name, attr = CROSSTAB_FORMATS[fmt_name].split(":")
    except KeyError:
        raise ReportRenderError(f"unknown report format {fmt_name!r}; expected one of "
                                f"{', '.join(CROSSTAB_FORMATS)}") from None
    return getattr(importlib.import_module(module_name), attr)(report)
