"""What every report format shows: one flat list of rows derived from the estimate document.

The estimate document is the server's JSON (`GET /api/surveys/<id>/estimates`); the survey is
the canonical survey dict (question texts, ε, options). Reports never recompute an estimate:
they only format what the estimator produced, so every format shows the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ldpsurvey.shared.errors import ReportRenderError
from ldpsurvey.shared.estimand import CLIP, NORM_SUB
from ldpsurvey.shared.question_types import REGISTRY, QuestionType

from ..plan.rows import respondents_needed

# Row kinds, in the order a question shows them.
OPTION, GROUP, MEAN, DISTRIBUTION = "option", "group", "mean", "distribution"
# Skip logic (docs/skip-logic.md): shares and means among the respondents a question was asked.
ASKED_OPTION, ASKED_GROUP, ASKED_MEAN = "asked_option", "asked_group", "asked_mean"
AMONG_ASKED = (ASKED_OPTION, ASKED_GROUP, ASKED_MEAN)
MEANS = (MEAN, ASKED_MEAN)
# A number's quantiles (median, quartiles: the estimate document's `quantiles`), in the
# answer's units like a mean; each row's label names which.
QUANTILE = "quantile"
NUMBER_KINDS = (*MEANS, QUANTILE)
# A number's CDF at its bins' edges (design-based reports: the estimate document's `cdf`), a
# share per edge ("share below 1000").
CDF = "cdf"
# A distribution is listed in tables and charts when its typical interval is within ±10 points.
INFORMATIVE_HALF_WIDTH = 0.10
TARGET_HALF_WIDTH = 0.05
NUMBER_FIELDS = ("estimate", "std_error", "ci_low", "ci_high", "variance_bound", "consistent")


@dataclass(frozen=True)
class Truth:
    """Known true values (simulations and the demo): per question, label -> true share for
    options, groups and distribution values, and the true mean for integer questions."""

    shares: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    means: Mapping[str, float] = field(default_factory=dict)
    # skip logic: per question, label -> true share among those asked (the mean among those
    # asked of a question with a "not asked" value is its entry in `means`)
    asked_shares: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def of(self, question: str, kind: str, label: str) -> float | None:
        if kind in MEANS:
            return self.means.get(question)
        if kind == QUANTILE:  # no true quantiles are kept
            return None
        if kind in (ASKED_OPTION, ASKED_GROUP):
            return self.asked_shares.get(question, {}).get(label)
        return self.shares.get(question, {}).get(label)


@dataclass(frozen=True)
class Row:
    """One line of a report: an option, a group, a mean or one value of a distribution."""

    question: str
    kind: str
    label: str
    estimate: float | None
    std_error: float | None
    ci_low: float | None
    ci_high: float | None
    variance_bound: float | None
    consistent: float | None
    members: tuple[str, ...] = ()
    # design-based estimates only: {sampling, privacy, total, effective_n} (design_view.py)
    deff: Mapping[str, Any] | None = None
    # report --lang (shared/translations.py): the option's (or group's, region's) text in that
    # language, shown by the table, Markdown and HTML formats; `label` stays the answer's value
    shown: str | None = None
    # report --lang: a group's members (option labels) as their texts in that language
    shown_members: tuple[str, ...] | None = None
    # design-based estimates with population-scaled weights: the row's Horvitz-Thompson total
    # {estimate, std_error, ci_low, ci_high} (design_view.py; None: no total)
    total: Mapping[str, Any] | None = None

    @property
    def display(self) -> str:
        """What the text formats show for this row: its translated text, else its label."""
        return self.shown if self.shown is not None else self.label

    @property
    def display_members(self) -> tuple[str, ...]:
        """A group's members as the text formats show them (translated, else the labels)."""
        return self.shown_members if self.shown_members is not None else self.members

    @property
    def std_error_bound(self) -> float | None:
        """The worst-case standard error: the square root of the variance bound."""
        return None if self.variance_bound is None else math.sqrt(self.variance_bound)


@dataclass(frozen=True)
class QuestionView:
    """One question's estimate joined with its definition from the survey."""

    id: str
    text: str
    type: str
    epsilon: float
    mechanism: str
    n: int
    confidence: float
    optional: bool
    rows: list[Row]
    notes: list[str]
    min: int | None = None
    max: int | None = None
    warnings: list[str] = field(default_factory=list)  # said first, in every format
    # design-based estimates only: Σ w of those who answered (None: not design-based)
    population: float | None = None
    # how the 'consistent' column was made (shared/estimand.py): "norm-sub", "em" or "clip"
    consistent_method: str = NORM_SUB
    # what the rows among those asked are among: those asked (skip logic), or those who gave
    # an answer (a question with special values: "don't know", "prefer not to say")
    among_title: str = "among those asked"
    # asked directly (the definition's `disclosed`): sent as given, no mechanism and no ε
    disclosed: bool = False

    @property
    def overlapping(self) -> bool:
        """Shares of respondents that need not add up to 100% (the estimand's clip rule)."""
        return self.consistent_method == CLIP

    @property
    def design_based(self) -> bool:
        return self.population is not None

    @property
    def unit(self) -> QuestionType:
        """The question's type unit (shared/question_types); a view no type has (a two-server
        crosstab's joint cells) gets the interface's defaults."""
        return unit_of(self.type)

    def of_kind(self, kind: str) -> list[Row]:
        return [r for r in self.rows if r.kind == kind]

    def distribution_half_width(self) -> float | None:
        """The median interval half-width of the distribution's values (None: no distribution)."""
        widths = sorted((r.ci_high - r.ci_low) / 2 for r in self.of_kind(DISTRIBUTION)
                        if r.ci_low is not None and r.ci_high is not None)
        return widths[len(widths) // 2] if widths else None

    def distribution_is_informative(self) -> bool:
        """Whether per-value shares are precise enough to chart and list in a short report.

        Over a wide range at a small ε, each value's share is mostly noise (intervals of
        hundreds of percentage points) even when the mean is precise; short reports then show
        the mean and say how many respondents the distribution would need.
        """
        width = self.distribution_half_width()
        return width is not None and width <= INFORMATIVE_HALF_WIDTH

    def distribution_respondents_for(self, margin: float = TARGET_HALF_WIDTH) -> int | None:
        """Respondents needed for every value's share to be within `margin` (worst case)."""
        bounds = [r.variance_bound for r in self.of_kind(DISTRIBUTION)
                  if r.variance_bound is not None]
        if not bounds or self.n == 0:
            return None
        return respondents_needed(max(bounds) * self.n, margin, self.confidence)

    def distribution_summary(self) -> str:
        """One sentence on a distribution too noisy to list."""
        width = self.distribution_half_width()
        if width is None:
            return ""
        need = self.distribution_respondents_for()
        return (f"The share of each of the {len(self.of_kind(DISTRIBUTION))} possible answers is "
                f"too noisy to read at n = {self.n:,} and epsilon {self.epsilon:g} (typical "
                f"interval ±{width * 100:.0f} percentage points); the mean is far more precise. "
                + (f"About {need:,} respondents would give ±{TARGET_HALF_WIDTH * 100:.0f} points "
                   "per answer. " if need else "")
                + "All values are in the CSV and JSON formats.")


@dataclass(frozen=True)
class Report:
    """An estimate document and its survey; `truth` is shown beside estimates when known."""

    survey: Mapping[str, Any]
    estimates: Mapping[str, Any]
    truth: Truth | None = None
    # design-based reports: today's (simple random sample) estimates of the same version,
    # shown beside the weighted ones (design_view.py)
    unweighted: Mapping[str, Any] | None = None
    # report --lang: the language questions are labelled in (None: the survey's own)
    language: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.estimates.get("questions"), list):
            raise ReportRenderError("the estimate document has no 'questions' list")
        if self.estimates.get("survey") != self.survey.get("id"):
            raise ReportRenderError(f"the estimates are of survey {self.estimates.get('survey')!r}"
                                    f", not {self.survey.get('id')!r}")

    @property
    def text(self) -> Any:
        """The survey's text in `language` (a SurveyText), None without --lang."""
        if self.language is None:
            return None
        from ldpsurvey.shared.translations import SurveyText

        return SurveyText(self.survey, self.language)

    @property
    def title(self) -> str:
        text = self.text
        if text is not None:
            return text.title().text or str(self.survey.get("id"))
        return str(self.survey.get("title") or self.survey.get("id"))

    @property
    def total_epsilon(self) -> float:
        return math.fsum(float(q.get("epsilon", 0.0)) for q in self.survey["questions"])

    @property
    def confidence(self) -> float:
        qs = self.estimates["questions"]
        return float(self.estimates.get("confidence") or (qs[0]["confidence"] if qs else 0.95))

    @property
    def n_submissions(self) -> int:
        return int(self.estimates.get("n_submissions") or 0)

    def question(self, qid: str) -> Mapping[str, Any] | None:
        """The survey's definition of a question (e.g. a location question's background)."""
        return next((q for q in self.survey["questions"] if q.get("id") == qid), None)

    def questions(self) -> list[QuestionView]:
        defs = {q["id"]: q for q in self.survey["questions"]}
        views = []
        for est in self.estimates["questions"]:
            qdef = defs.get(est["question"])
            if qdef is None:
                raise ReportRenderError(f"question {est['question']!r} is not in the survey")
            views.append(_view(qdef, est) if self.text is None else
                         _translated(_view(qdef, est), qdef, self.text))
        return views


def _view(qdef: Mapping[str, Any], est: Mapping[str, Any]) -> QuestionView:
    qid = qdef["id"]
    rows: list[Row] = []
    for c in est.get("categories") or []:
        rows.append(_row(qid, OPTION, answer_label(c["value"]), c))
    for g in est.get("groups") or []:
        rows.append(_row(qid, GROUP, str(g["name"]), g,
                         tuple(answer_label(o) for o in g.get("options", []))))
    if est.get("mean") is not None:
        rows.append(_row(qid, MEAN, unit_of(qdef.get("type")).mean_row_label(qdef), est["mean"]))
    for v in est.get("quantiles") or []:
        rows.append(_row(qid, QUANTILE, str(v["value"]), v))
    for v in est.get("distribution") or []:
        rows.append(_row(qid, DISTRIBUTION, answer_label(v["value"]), v))
    for v in est.get("cdf") or []:
        rows.append(_row(qid, CDF, str(v["value"]), v))
    rows += _among_asked(qid, est, qdef)
    return QuestionView(id=qid, text=str(qdef.get("text", "")), type=str(qdef.get("type")),
                        epsilon=float(est.get("epsilon", qdef.get("epsilon", 0.0))),
                        mechanism=str(est.get("mechanism", qdef.get("mechanism"))),
                        n=int(est.get("n") or 0), confidence=float(est.get("confidence", 0.95)),
                        optional=bool(qdef.get("optional", False)), rows=rows,
                        notes=list(est.get("notes") or []), min=qdef.get("min"),
                        max=qdef.get("max"), warnings=list(est.get("warnings") or []),
                        population=_number(est.get("population")),
                        consistent_method=str(est.get("consistent_method") or NORM_SUB),
                        among_title=among_title(est), disclosed=bool(qdef.get("disclosed")))


def _translated(view: QuestionView, qdef: Mapping[str, Any], text: Any) -> QuestionView:
    """A question's view with its text, option and group (or region) rows in the report's
    language (`text`: a shared/translations.SurveyText; language.py chooses it)."""
    return replace(view, text=text.question(view.id).text,
                   rows=[shown_row(r, qdef, text) for r in view.rows])


def shown_row(row: Row, qdef: Mapping[str, Any], text: Any) -> Row:
    """A report row with its text in `text`'s language: an option's text, a group's name (and
    its members' option texts) or a location question's region name; other rows (means,
    integer values, "not asked", cells) as they are. Which labels are words the languages
    translate is the question's unit's to say."""
    qid, unit = str(qdef["id"]), unit_of(qdef.get("type"))
    options = unit.option_texts(qdef)
    if row.kind in (OPTION, ASKED_OPTION) and row.label in options:
        return replace(row, shown=text.option(qid, row.label).text)
    if row.kind in (GROUP, ASKED_GROUP):
        if row.label in unit.group_texts(qdef):
            return replace(row, shown=text.group(qid, row.label).text, shown_members=tuple(
                text.option(qid, m).text if m in options else m for m in row.members))
        if row.label in (qdef.get("regions") or {}):
            return replace(row, shown=text.region(qid, row.label).text)
    return row


# What a report asks of a view whose type no unit has (a two-server crosstab's joint cells):
# the interface's defaults (a bar chart, rows named as the document names them).
_NO_UNIT = QuestionType()


def unit_of(name: Any) -> QuestionType:
    """The unit of a question type named in a stored document (its defaults for a name no
    unit has)."""
    return REGISTRY.get(str(name), _NO_UNIT)


def _among_asked(qid: str, est: Mapping[str, Any],
                 qdef: Mapping[str, Any] | None = None) -> list[Row]:
    """A question with a "not asked" value (skip logic): the share not asked (an option row
    of its own when the question has no options: an integer one), then the rows among those
    asked."""
    rows = []
    not_asked = est.get("not_asked")
    if not est.get("categories"):  # special values' shares are option rows where there are none
        for special in est.get("special") or []:
            rows.append(_row(qid, OPTION, answer_label(special["value"]), special))
    if not_asked is not None and not est.get("categories"):
        rows.append(_row(qid, OPTION, answer_label(not_asked["value"]), not_asked))
    asked = est.get("among_asked") or {}
    for c in asked.get("categories") or []:
        rows.append(_row(qid, ASKED_OPTION, answer_label(c["value"]), c))
    for g in asked.get("groups") or []:
        rows.append(_row(qid, ASKED_GROUP, str(g["name"]), g,
                         tuple(answer_label(o) for o in g.get("options", []))))
    if asked.get("mean") is not None:
        options = [answer_label(c["value"]) for c in asked.get("categories") or []]
        label = unit_of((qdef or {}).get("type")).asked_mean_row_label(qdef, options)
        rows.append(_row(qid, ASKED_MEAN, label, asked["mean"]))
    return rows


AMONG_ASKED_TITLE = "among those asked"
AMONG_ANSWERED_TITLE = "among those who gave an answer"


def among_title(est: Mapping[str, Any]) -> str:
    """What an estimate's rows among those asked are among: those who gave an answer where
    the question has special values (its `special` shares), else those asked."""
    return AMONG_ANSWERED_TITLE if est.get("special") is not None else AMONG_ASKED_TITLE


def shows_negative(questions: list[QuestionView]) -> bool:
    """Whether a shown share estimate or interval reaches below zero: only then does a report
    explain why an estimate can be negative (a table of shares that are all positive, e.g. a
    location question's EM map, needs no such box)."""
    for q in questions:
        listed, _ = listed_options(q)
        shown = listed + q.of_kind(GROUP) + (
            q.of_kind(DISTRIBUTION) if q.distribution_is_informative() else [])
        if any((r.estimate is not None and r.estimate < 0)
               or (r.ci_low is not None and r.ci_low < 0) for r in shown):
            return True
    return False


def epsilon_cell(question: Mapping[str, Any]) -> str:
    """A question's ε for a privacy-budget table; disclosed questions have none."""
    if question.get("disclosed"):
        return "disclosed (sent as given, no ε)"
    return f"{float(question['epsilon']):g}"


def epsilon_words(q: QuestionView, symbol: str = "epsilon") -> str:
    """"epsilon 2" in a question's heading; a disclosed question has no ε (the privacy-budget
    tables say so too: `epsilon_cell`), not "epsilon 0"."""
    if q.disclosed:
        return f"disclosed (sent as given, no {symbol})"
    return f"{symbol} = {q.epsilon:g}" if symbol == "ε" else f"{symbol} {q.epsilon:g}"


def _row(qid: str, kind: str, label: str, d: Mapping[str, Any],
         members: tuple[str, ...] = ()) -> Row:
    return Row(question=qid, kind=kind, label=label, members=members, deff=d.get("deff"),
               total=d.get("total"),
               **{f: _number(d.get(f)) for f in NUMBER_FIELDS})


def _number(x: Any) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def answer_label(value: Any) -> str:
    """How an answer value is shown: yes/no for binary answers."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# --- number formatting shared by the text formats -------------------------------------------


def pct(x: float | None, digits: int = 1) -> str:
    if x is None:
        return "–"
    text = f"{x * 100:.{digits}f}%"
    return text[1:] if text.startswith("-") and float(text[1:-1]) == 0 else text  # no "-0.0%"


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "–"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text[1:]) == 0 else text


def fmt(question: QuestionView, row: Row, x: float | None) -> str:
    """A value in the row's unit: shares as percentages, means in the answer's units."""
    return num(x) if row.kind in NUMBER_KINDS else pct(x)


def interval(question: QuestionView, row: Row) -> str:
    return f"[{fmt(question, row, row.ci_low)}, {fmt(question, row, row.ci_high)}]"


# --- what the text formats show: one column model, one rule for which options ---------------

MAX_LISTED_OPTIONS = 30  # options a table or chart lists per question; CSV and JSON list all


def listed_options(q: QuestionView) -> tuple[list[Row], int]:
    """(the option rows a table or chart shows, how many are left out).

    One rule for every format that shortens: the `MAX_LISTED_OPTIONS` largest by the consistent
    view (ties by estimate), kept in the question's own order, so a table and its chart list
    the same options.
    """
    options = q.of_kind(OPTION)
    hidden = max(0, len(options) - MAX_LISTED_OPTIONS)
    if not hidden:
        return options, 0
    rank = sorted(range(len(options)),
                  key=lambda i: (-(options[i].consistent or 0), -(options[i].estimate or 0), i))
    keep = set(rank[:MAX_LISTED_OPTIONS])
    return [r for i, r in enumerate(options) if i in keep], hidden


def hidden_options_note(hidden: int) -> str:
    return (f"{hidden:,} more options not shown: the {MAX_LISTED_OPTIONS} largest (consistent "
            "view) are listed; the CSV and JSON formats list all.")


@dataclass(frozen=True)
class Column:
    """One column of a question's table in every text format (terminal, Markdown, HTML)."""

    header: str
    cell: Callable[[QuestionView, Row, Truth | None], str]


COLUMN_NOTES = ("estimate: unbiased, can be negative by noise; consistent: non-negative, sums "
                "to 100% (Norm-Sub), or for a check-all-that-apply question each share clipped "
                "to [0%, 100%] (shares need not sum to 100%); s.e. bound: worst-case standard "
                "error over every possible truth (square root of the variance bound).")


FORMATS: dict[str, str] = {
    "table": "ldpsurvey.analyst.reports.table:render_table",
    "json": "ldpsurvey.analyst.reports.json_format:render_json",
    "csv": "ldpsurvey.analyst.reports.csv_format:render_csv",
    "md": "ldpsurvey.analyst.reports.markdown:render_markdown",
    "html": "ldpsurvey.analyst.reports.html:render_html",
}


def renderer(fmt_name: str) -> Callable[[Report], str]:
    import importlib

    try:
        module_name, attr = FORMATS[fmt_name].split(":")
    except KeyError:
        raise ReportRenderError(f"unknown report format {fmt_name!r}; expected one of "
                                f"{', '.join(FORMATS)}") from None
    return getattr(importlib.import_module(module_name), attr)


def render(report: Report, fmt_name: str) -> str:
    """The report in one format (html imports matplotlib only when asked for)."""
    return renderer(fmt_name)(report)
