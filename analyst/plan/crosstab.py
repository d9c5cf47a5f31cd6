"""Planning a crosstab: respondents a margin of error on a joint cell needs, in plain words.

A joint cell's estimate multiplies two reports' noise, so its worst-case one-report variance
V_joint (`shared.crosstab.joint_variance_bound`, the same code the estimator's
`variance_bound` uses) is roughly the product of the two questions' own variances (each + 1):
n = ceil(z²·V_joint/m²), as for one question (`rows.respondents_needed`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ldpsurvey.shared.crosstab import check_size, worst_cell_variance
from ldpsurvey.shared.errors import CrosstabError, PlanError
from ldpsurvey.shared.joint_features import Encoder, encoder_for
from ldpsurvey.shared.joint_values import check_pair
from ldpsurvey.shared.mechanisms import mechanism_for
from ldpsurvey.shared.survey import Survey

from .among_category import DEFAULT_SHARE, AmongCategoryPlan, plan_among_category
from .rows import check_target, margin_for, respondents_needed

SUBGROUP_EXAMPLE = 0.2  # the subgroup share the plain-words sentence uses as an example


@dataclass(frozen=True)
class CrosstabPlan:
    rows: str
    cols: str
    rows_mechanism: str
    cols_mechanism: str
    cells: int
    confidence: float
    joint_variance_one: float
    rows_variance_one: float
    cols_variance_one: float
    n: int  # respondents (needed for the margin, or given)
    margin: float  # joint-cell margin (targeted, or what n gives)
    rows_n: int  # respondents one question's share needs for the same margin
    cols_n: int


def marginal_variance_one(encoder: Encoder) -> float:
    """Worst-case one-report variance of one cell's share of a single question."""
    return float(np.max(encoder.second_moments() - encoder.membership))


def plan_crosstab(survey: Survey, rows: str, cols: str, *, margin: float | None = None,
                  n: int | None = None, confidence: float = 0.95,
                  row_bins: Sequence[int] | None = None,
                  col_bins: Sequence[int] | None = None, median_margin: float | None = None,
                  category_share: float = DEFAULT_SHARE) -> CrosstabPlan | AmongCategoryPlan:
    """Respondents for a margin on every joint cell (or the margin n gives); with a number's
    side, on its mean among each category of the other (plan/among_category.py: `margin` in
    the number's units, `category_share` the category's share of respondents its worst case
    assumes; `median_margin` is refused there, naming why)."""
    check_target(margin, n, confidence)
    (rows, row_option), (cols, col_option) = _side(rows), _side(cols)
    try:
        q1, q2 = survey.question(rows), survey.question(cols)
    except KeyError as exc:
        raise PlanError(f"the survey has no question {exc.args[0]!r}") from None
    if rows == cols:
        raise PlanError("a crosstab needs two different questions")
    try:
        e1 = _option_side(encoder_for(mechanism_for(q1), row_bins), q1, row_option)
        e2 = _option_side(encoder_for(mechanism_for(q2), col_bins), q2, col_option)
        check_size(e1, e2)
    except CrosstabError as exc:
        raise PlanError(exc.message) from None
    if e1.mean_only or e2.mean_only:  # one cell and a mean (shared/joint_values.py)
        try:
            check_pair(e1, e2)
        except CrosstabError as exc:
            raise PlanError(exc.message) from None
        number, by = (e1, e2) if e1.mean_only else (e2, e1)
        return plan_among_category(number, by, margin=margin, median_margin=median_margin,
                                   n=n, confidence=confidence, share=category_share)
    if median_margin is not None:
        raise PlanError("--median-margin goes with a crosstab of a number (a decimal) by a "
                        "question; this one plans joint shares")
    joint = worst_cell_variance(e1, e2)
    v1, v2 = marginal_variance_one(e1), marginal_variance_one(e2)
    if margin is None:
        assert n is not None
        margin = margin_for(joint, n, confidence)
    else:
        n = respondents_needed(joint, margin, confidence)
    rows, cols = (f"{q}:{o}" if o else q for q, o in ((rows, row_option), (cols, col_option)))
    return CrosstabPlan(rows, cols, q1.mechanism, q2.mechanism, len(e1.cells) * len(e2.cells),
                        confidence, joint, v1, v2, n, margin,
                        respondents_needed(v1, margin, confidence),
                        respondents_needed(v2, margin, confidence))


def _side(text: str) -> tuple[str, str | None]:
    """"question" or "question:option" (an option of a multiselect question)."""
    question, sep, option = text.partition(":")
    return question, option if sep else None


def _option_side(encoder: Encoder, question: object, option: str | None) -> Encoder:
    """A multiselect question is crossed one option at a time (shared/joint_sets.py)."""
    from ldpsurvey.shared.joint_sets import option_encoder, whole_question_refused

    if encoder.sets:
        if option is None:
            raise whole_question_refused(encoder.question_id, encoder.cells)
        return option_encoder(encoder, mechanism_for(question), option)
    if option is not None:
        raise CrosstabError(f"{encoder.question_id!r} is not a multiselect question: it is "
                            "crossed whole (':option' names one option of a multiselect one)")
    return encoder


def format_crosstab_plan(plan: CrosstabPlan, targeted: bool) -> str:
    """The plan in plain words."""
    pts = f"±{plan.margin * 100:.1f} percentage points"
    conf = f"{plan.confidence:.0%}"
    single = max(plan.rows_n, plan.cols_n)
    times = plan.n / max(single, 1)
    sub = SUBGROUP_EXAMPLE
    lines = [f"crosstab {plan.rows} ({plan.rows_mechanism}) x {plan.cols} "
             f"({plan.cols_mechanism}): {plan.cells} joint cells, {conf} intervals, worst case "
             "over every possible truth",
             (f"To estimate every joint cell (the share answering both a given {plan.rows} and a "
              f"given {plan.cols}) within {pts}, you need {plan.n:,} respondents."
              if targeted else
              f"With {plan.n:,} respondents, each joint cell is estimated within {pts}."),
             (f"For comparison, {plan.rows} alone needs {plan.rows_n:,} and {plan.cols} alone "
              f"{plan.cols_n:,} respondents for the same margin: the joint cells need about "
              f"{times:,.0f} times as many, because the noise of the two randomized answers "
              "multiplies (one-report variances: joint "
              f"{plan.joint_variance_one:.4g}, {plan.rows} {plan.rows_variance_one:.4g}, "
              f"{plan.cols} {plan.cols_variance_one:.4g})."),
             (f"A share within a subgroup (e.g. the share answering some {plan.cols} among those "
              f"answering one {plan.rows}) divides by the subgroup's size: for a subgroup of "
              f"{sub:.0%} of respondents it needs roughly {1 / sub**2:.0f} times the respondents "
              f"of a joint cell for the same margin (about {plan.n / sub**2:,.0f})."),
             "No extra privacy is spent: the crosstab reuses the reports each question already "
             "sends."]
    return "\n".join(textwrap.fill(line, 96, subsequent_indent="  ") for line in lines)
