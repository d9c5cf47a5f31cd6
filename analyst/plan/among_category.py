"""Planning a crosstab with a number's side: respondents for a margin on the number's mean among
each category of the other question (`plan --crosstab income party --margin 500`).

A number read by its mean (docs/crosstabs.md, "A number's mean among a randomized category")
is one cell, everyone, in a crosstab: what a designer plans is R̂_c, its mean among each
category c of the other side. The plan takes the delta method's n·Var R̂_c at its worst over
every truth in which c holds a share π of respondents (`--category-share`, 0.2 by default),
the same quantity the crosstab's stated interval estimates
(shared/joint_values.mean_given_category_bound), and n = ceil(z²·V/m²) as for one question
(`rows.respondents_needed`). A category's mean divides by its size, so a rarer category needs
more: about 1/π² times as many.

The median among a category is not planned (`--median-margin` with `--crosstab` is refused
naming why): the report reads it by EM over the product of the two channels
(shared/numeric/joint_ems.py), which has no variance formula, and a plan by simulation as one
question's median (plan/median.py) costs about 0.5 s of CPU per simulated survey of n = 2,000
on income.toml's 1,024 square wave points against a 4-category question (measured: 20 draws in
9.6 s), so 200 draws, two steps and one run per category is minutes, not a plan; SQUAREM on the
joint EM did not shorten it (6.3 s for the same 20) and stopped at other points of EMS's flat
likelihood. The number's own median plan (`plan SURVEY --median-margin M`) at n·π respondents
is what the category's median would need were the category disclosed; randomizing the
category only adds to it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

from ldpsurvey.shared.errors import PlanError
from ldpsurvey.shared.joint_encoder import Encoder
from ldpsurvey.shared.joint_values import mean_given_category_bound
from ldpsurvey.shared.readable import readable_number

from .rows import margin_for, respondents_needed

DEFAULT_SHARE = 0.2


@dataclass(frozen=True)
class CategoryRow:
    """One category of the other side: the number's mean among it."""

    category: Any
    variance_one: float  # n·Var of the mean among it, worst case over truths at the share
    n: int  # respondents for the mean's margin (or given)
    margin: float  # the mean's margin (targeted, or what n gives), in the number's units


@dataclass(frozen=True)
class AmongCategoryPlan:
    number: str
    by: str
    number_mechanism: str
    by_mechanism: str
    share: float
    confidence: float
    rows: list[CategoryRow]


MEDIAN_REFUSED = ("--median-margin: the median among each category is not planned (EM over "
                  "both channels, simulated, takes minutes per category): plan the number "
                  "alone with --median-margin, at n times the category's share")


def plan_among_category(number: Encoder, by: Encoder, *, margin: float | None,
                        median_margin: float | None, n: int | None, confidence: float,
                        share: float = DEFAULT_SHARE) -> AmongCategoryPlan:
    """Per category of `by`, the respondents (or margin) of the number's mean among it (module
    docstring); `margin` is in the number's units."""
    if median_margin is not None:
        raise PlanError(MEDIAN_REFUSED)
    if not 0 < share < 1:
        raise PlanError(f"--category-share is a share of respondents in (0, 1), got {share:g}")
    if margin is None and n is None:
        raise PlanError("give --margin (on each category's mean, in the number's units) or --n")
    bound = mean_given_category_bound(number, by, share)
    rows = []
    for c, category in enumerate(by.cells):
        if margin is None:
            assert n is not None
            mean_n, mean_margin = n, margin_for(float(bound[c]), n, confidence)
        else:
            mean_n, mean_margin = respondents_needed(float(bound[c]), margin, confidence), margin
        rows.append(CategoryRow(category, float(bound[c]), mean_n, mean_margin))
    return AmongCategoryPlan(number.question_id, by.question_id, number.mechanism,
                             by.mechanism, share, confidence, rows)


def format_among_category(plan: AmongCategoryPlan, targeted: bool) -> str:
    """The plan in plain words: one line per category, then how it was found."""
    conf = f"{plan.confidence:.0%}"
    pct = f"{plan.share:.0%}"
    lines = [f"crosstab {plan.number} ({plan.number_mechanism}) x {plan.by} "
             f"({plan.by_mechanism}): the mean of {plan.number} among each {plan.by} category, "
             f"{conf} intervals, the category holding {pct} of respondents"]
    for row in plan.rows:
        mean = (f"mean within ±{readable_number(row.margin)} needs {row.n:,} respondents"
                if targeted else
                f"with {row.n:,} respondents the mean is within ±{readable_number(row.margin)}")
        lines.append(f"  {plan.by} = {row.category}: {mean}")
    lines.append(f"The mean's respondents are the worst case over every truth in which the "
                 f"category holds {pct} of respondents (one-report variance of the mean among "
                 f"it: {max(r.variance_one for r in plan.rows):.4g}, in the number's units "
                 "squared); a rarer category needs more: up to 1/share² times everyone's "
                 "mean's respondents, 1/share if the category were disclosed (--category-share).")
    lines.append("No extra privacy is spent: the crosstab reuses the reports each question "
                 "already sends.")
    return "\n".join(textwrap.fill(line, 96, subsequent_indent="    ") for line in lines)
