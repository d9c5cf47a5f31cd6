"""Survey planning: how many respondents a margin of error needs, or what margin n buys.

For a mechanism whose estimate of one option (or of the mean, for integer questions) has
variance at most V1/n with n reports, whatever the truth, a normal interval has half-width
z·sqrt(V1/n). So a margin m needs n = ceil(z²·V1/m²) respondents, and n respondents give
m = z·sqrt(V1/n). V1 is `mechanisms.margin_variance`: each mechanism's own
`worst_case_variance` (of one option's share, worst case over options and truth; of the mean
for integer questions) or, for ordinal questions, of the mean score: the same code the
estimator's `variance_bound` uses, never a second copy. Rows come in `auto`'s order, which
ranks by the error averaged over options (`selection_variance`), so the row `auto` marks is
not always the one with the smallest worst-case n.

The rows and that arithmetic are rows.py; this module ranks the mechanisms and plans a survey
question by question, asking the planners of location (location.py), multiselect
(multiselect.py) and "not asked" (skip.py) questions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.mechanisms import (
    DESIGNS,
    MECHANISMS,
    candidates,
    choose_mechanism,
    describe_misfits,
    margin_variance,
    mechanism_class,
    mechanism_for,
    misfits,
)
from ldpsurvey.shared.question_types import REGISTRY, unit_for
from ldpsurvey.shared.readable import readable_number
from ldpsurvey.shared.survey import Question, Survey

from .location import describe_location, plan_location
from .median import plan_median
from .multiselect import describe_multiselect, plan_multiselect
from .rows import PlanRow, QuestionPlan, check_k, check_target, format_margin, plan_row
from .skip import (
    DEFAULT_ANSWERED,
    answering_share,
    describe_not_asked,
    describe_special,
    plan_mean_among_asked,
    plan_shares_among_asked,
)

# `plan --type` and `plan_k`: question types planned from (k, ε) alone, those a registered
# mechanism serves (a location question needs its grid: analyst/plan/location.py; a
# multiselect one its max_selected: analyst/plan/multiselect.py, `plan --type multiselect
# --max-selected M`).
PLANNED_TYPES = tuple(name for name in REGISTRY
                      if any(name in cls.question_types for cls in MECHANISMS.values()))


@dataclass(frozen=True)
class SurveyPlan:
    survey: str
    total_epsilon: float
    confidence: float
    questions: list[QuestionPlan]

    @property
    def n_needed(self) -> int:
        """Respondents so that every question's configured mechanism meets the margin (and
        each planned median its margin on the median)."""
        return max([*(r.n for q in self.questions for r in q.rows if r.configured),
                    *(q.median.n for q in self.questions if q.median is not None)], default=0)


def plan_k(k: int, epsilon: float, *, margin: float | None = None, n: int | None = None,
           confidence: float = 0.95, question_type: str = "categorical",
           low: int = 0) -> QuestionPlan:
    """A row per registered mechanism that fits (type, k, ε), best first; `auto`'s choice marked.
    `low` is an integer question's min (its range limits depend on where it lies)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise PlanError(f"k (the number of possible answers) must be an integer >= 2, got {k!r}")
    if (isinstance(epsilon, bool) or not isinstance(epsilon, float | int)
            or not math.isfinite(epsilon) or epsilon <= 0):
        raise PlanError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if question_type not in PLANNED_TYPES:
        raise PlanError(f"unknown question type {question_type!r}; expected one of "
                        f"{', '.join(PLANNED_TYPES)}")
    unit = unit_for(question_type)
    check_k(question_type, k)
    check_target(margin, n, confidence)
    epsilon = float(epsilon)
    ranked = candidates(question_type, k, epsilon, low=low)
    if not ranked:
        why = describe_misfits(misfits(question_type, k, epsilon, low))
        raise PlanError(f"no registered mechanism fits a {question_type} question with k={k} "
                        f"at epsilon={epsilon:g}" + (f" ({why})" if why else ""))
    probe = SimpleNamespace(id="plan", type=question_type, k=k, epsilon=epsilon, min=low,
                            not_asked=False)
    auto_name, _ = choose_mechanism(probe)
    rows = [plan_row(name, _margin_variance(name, question_type, k, epsilon), margin, n,
                     confidence, name == auto_name) for _, name in ranked]
    return QuestionPlan(question="", question_type=question_type, k=k, epsilon=epsilon,
                        confidence=confidence, rows=rows, margin_unit=unit.margin_unit(probe))


def plan_question(question: Question, *, margin: float | None = None, n: int | None = None,
                  confidence: float = 0.95) -> QuestionPlan:
    """Like `plan_k` for a survey question; its configured mechanism is marked (and kept even
    when it is not among `auto`'s candidates, e.g. over the report size limit)."""
    plan = plan_k(question.k, question.epsilon, margin=margin, n=n, confidence=confidence,
                  question_type=question.type, low=question.min or 0)
    rows = [PlanRow(r.mechanism, r.variance_one, r.n, r.margin, r.auto,
                    r.mechanism == question.mechanism) for r in plan.rows]
    if not any(r.configured for r in rows):
        var = (mechanism_for(question).design_worst_case_variance()  # type: ignore[attr-defined]
               if question.mechanism in DESIGNS else
               margin_variance(mechanism_class(question.mechanism), question.type, question.k,
                               question.epsilon))
        if var is not None:  # None: no mean-score variance derived for this mechanism
            rows.append(plan_row(question.mechanism, var, margin, n, confidence, False, True))
    own = question.unit.planned_auto(question)  # a number's estimates and typical range
    return replace(plan, question=question.id,
                   **mark_auto(rows, own, question.type, question.k, question.epsilon,
                               margin, n, confidence))


def mark_auto(rows: list[PlanRow], own: tuple[str, str] | None, question_type: str, k: int,
              epsilon: float, margin: float | None, n: int | None, confidence: float
              ) -> dict[str, Any]:
    """`rows` with auto's mark on `own`'s mechanism (a row added where the probe's ranking
    lacked it) and its reason, where the question tells auto more than (type, k, ε)
    (`QuestionType.planned_auto`); unchanged without it. Keyword arguments of a QuestionPlan."""
    if own is None:
        return {"rows": rows}
    name = own[0]
    if not any(r.mechanism == name for r in rows):
        var = margin_variance(mechanism_class(name), question_type, k, epsilon)
        if var is not None:
            rows = [*rows, plan_row(name, var, margin, n, confidence, False, False)]
    return {"rows": [replace(r, auto=r.mechanism == name) for r in rows], "auto_reason": own[1]}


def plan_survey(survey: Survey, *, margin: float | None = None, n: int | None = None,
                confidence: float = 0.95, mean_margin: float | None = None,
                asked: float = 0.5, answered: float = DEFAULT_ANSWERED,
                median_margin: float | None = None) -> SurveyPlan:
    """Per question, with the survey's own ε per question; the total ε is what one respondent
    spends on all of them. `mean_margin` (default: `margin`) is the margin on the means of
    integer questions (answer units) and ordinal ones (score). A question with a "not asked"
    value is planned among those asked, a share `asked` of respondents, and one with special
    values among those who give an answer, a share `answered` (plan/skip.py).
    A question whose unit has a distribution mechanism (a decimal asking for the distribution)
    also gets the plan of its median (plan/median.py): the respondents `median_margin` (in its
    units) needs, or, with `n`, the margin they give; with `margin` alone, none."""
    check_target(margin, n, confidence)
    for option, value in (("--mean-margin", mean_margin), ("--median-margin", median_margin)):
        if value is not None:
            if margin is None:
                raise PlanError(f"{option} goes with --margin, not with --n")
            check_target(value, None, confidence)
    plans = []
    for q in survey.questions:
        if q.disclosed:  # counted exactly: no margin of error to plan
            continue
        # --mean-margin is the margin of a plan on a mean (integer values, ordinal scores)
        m = (mean_margin if q.unit.margin_unit(q) != "proportion" and mean_margin is not None
             else margin)
        plan = q.unit.visit(q, _Planner(m, n, confidence, asked, answered))
        if median_margin is not None or n is not None:
            median = plan_median(q, margin=median_margin, n=n, confidence=confidence)
            plan = plan if median is None else replace(plan, median=median)
        plans.append(plan)
    return SurveyPlan(survey=survey.id, total_epsilon=survey.total_epsilon,
                      confidence=confidence, questions=plans)


@dataclass(frozen=True)
class _Planner:
    """A survey question's plan per kind of answer (QuestionType.visit); a question with a
    "not asked" value is planned among those asked, a share `asked` of respondents
    (plan/skip.py)."""

    margin: float | None
    n: int | None
    confidence: float
    asked: float
    answered: float = DEFAULT_ANSWERED

    def options(self, q: Question) -> QuestionPlan:
        if q.extended:  # skip logic, special values: shares among those asked (plan/skip.py)
            return plan_shares_among_asked(q, margin=self.margin, n=self.n,
                                           confidence=self.confidence,
                                           asked=answering_share(q, self.asked, self.answered))
        return plan_question(q, margin=self.margin, n=self.n, confidence=self.confidence)

    def number(self, q: Question) -> QuestionPlan:
        if q.extended:  # skip logic, special values: the mean among those asked (plan/skip.py)
            return plan_mean_among_asked(q, margin=self.margin, n=self.n,
                                         confidence=self.confidence,
                                         asked=answering_share(q, self.asked, self.answered))
        return plan_question(q, margin=self.margin, n=self.n, confidence=self.confidence)

    def option_set(self, q: Question) -> QuestionPlan:
        return plan_multiselect(q, margin=self.margin, n=self.n, confidence=self.confidence)

    def cell(self, q: Question) -> QuestionPlan:
        return plan_location(q, margin=self.margin, n=self.n, confidence=self.confidence)


def describe_question(question: Question, plan: QuestionPlan, asked: float,
                      answered: float = DEFAULT_ANSWERED) -> str:
    """The one-line description of a survey question's plan, per kind of answer."""
    if getattr(question, "special", None):  # special values: among those who gave an answer
        return describe_special(question, plan, answering_share(question, asked, answered))
    return question.unit.visit(question, _Describer(plan, asked))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _Describer:
    """`describe_question` per kind of answer (QuestionType.visit)."""

    plan: QuestionPlan
    asked: float

    def options(self, q: Question) -> str:
        return describe_not_asked(self.plan, self.asked) if q.not_asked else describe(self.plan)

    number = options

    def option_set(self, q: Question) -> str:
        return describe_multiselect(q.multiselect, q.epsilon, self.plan.confidence)

    def cell(self, q: Question) -> str:
        return describe_location(q)


# --- text output -------------------------------------------------------------------------------



PICKED_BY = "picked by"  # the column that says which row auto picks and which the survey uses


def format_plan(plan: QuestionPlan) -> str:
    """A plain-text table, one row per mechanism (per region and one cell for a location
    question); every column has a header, every number is written out (no exponents)."""
    header = [plan.row_label, "worst-case var (1 report)", "respondents", "margin of error",
              PICKED_BY]
    body = []
    for r in plan.rows:
        marks = []
        if r.auto:
            marks.append("auto")
        if r.configured:
            marks.append("this survey")
        body.append([r.mechanism, readable_number(r.variance_one), f"{r.n:,}",
                     format_margin(r.margin, plan.margin_unit), ", ".join(marks)])
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)


def format_median(plan: QuestionPlan) -> str:
    """The median's line: its respondents and margin in the question's units, and how they
    were found (plan/median.py)."""
    median = plan.median
    assert median is not None
    return (f"median ({median.mechanism} at ε={median.epsilon:g}, EMS): {median.n:,} "
            f"respondents for a margin of ±{readable_number(median.margin)} on the median, in "
            f"the answer's units (the error's {plan.confidence:.0%} quantile over "
            f"{median.runs} seeded simulated surveys of {median.truth})")


def format_mean_units(step: float, margin: float | None) -> str:
    """The mean's margin in the answer's units where the rows give it in steps of `step`."""
    what = (f"±{readable_number(margin)} steps is ±{readable_number(margin * step)}"
            if margin is not None else "each margin above times that")
    return (f"(on the mean, one grid step is {readable_number(step)} in the answer's units: "
            f"{what})")


def describe(plan: QuestionPlan) -> str:
    what = {"answer units": "the mean, in the answer's units",
            "score": f"the mean score (options scored 1..{plan.k})",
            "proportion": "each option's share, in percentage points"}.get(
        plan.margin_unit, f"the mean, in {plan.margin_unit}")  # a unit's own (a decimal's grid)
    return (f"{plan.question_type}, k={plan.k}, epsilon={plan.epsilon:g}, "
            f"{plan.confidence:.0%} confidence; margin on {what}")


def _margin_variance(name: str, question_type: str, k: int, epsilon: float) -> float:
    var = margin_variance(mechanism_class(name), question_type, k, epsilon)
    assert var is not None  # candidates() lists only mechanisms with a derived variance
    return var
